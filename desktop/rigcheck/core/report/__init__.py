"""Reports: the machine as text for people and JSON for programs (later: Markdown, HTML, fleets)."""
