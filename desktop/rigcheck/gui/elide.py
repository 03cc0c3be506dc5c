"""A one-line label that never widens its window: text too long for it is elided, whole in its tooltip.

A 4096-character GPU, file or model name in a plain QLabel asks for 35,000 px and the window grows to
match (issue 30 #14). :class:`ElidedLabel` asks for a small minimum, draws what fits with "…", and
keeps the whole text (as plain text) in its tooltip and accessible description.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from rigcheck.gui.widgets import tooltip

#: the widest an elided label asks to be (its text is whole in the tooltip)
MAX_HINT_PX = 640


class ElidedLabel(QLabel):
    """A plain-text, one-line label eliding on the right (or in the middle, for paths)."""

    def __init__(
        self,
        text: str = "",
        parent: QWidget | None = None,
        *,
        mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight,
    ) -> None:
        super().__init__(parent)
        self._mode = mode
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(False)
        # Preferred: as wide as its text (up to MAX_HINT_PX) when there is room, down to its minimum when not
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        text = text.replace("\n", " ")
        super().setText(text)
        self._update_tooltip()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._update_tooltip()

    def _update_tooltip(self) -> None:
        """The whole text on hover when it is long, or whenever it is drawn elided (a short detail such as
        "capacità 24,0 GiB ciascuna" in a narrow card had no tooltip to read it whole)."""
        text = self.text()
        elided = bool(text) and self.shown_text() != text
        self.setToolTip(tooltip(text) if len(text) > 40 or elided else "")

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(self.fontMetrics().horizontalAdvance("M…") * 2, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        width = min(self.fontMetrics().horizontalAdvance(self.text()) + 8, MAX_HINT_PX)
        return QSize(width, super().sizeHint().height())

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        rect = self.contentsRect()
        shown = self.fontMetrics().elidedText(self.text(), self._mode, rect.width())
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(rect, int(self.alignment()) | int(Qt.AlignmentFlag.AlignVCenter), shown)

    def shown_text(self) -> str:
        """What is drawn now (tests check it is elided, not the whole 4096 characters)."""
        return self.fontMetrics().elidedText(self.text(), self._mode, self.contentsRect().width())


__all__ = ["ElidedLabel"]
