"""The pages of the main window; each takes the shared AppState."""
