"""Compatibility page (being written)."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from rigcheck.gui.i18n import tr
from rigcheck.gui.state import AppState


class CompatPage(QWidget):
    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        QVBoxLayout(self).addWidget(QLabel(tr("Compatibility")))
