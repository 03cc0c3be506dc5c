"""The Overview's "what you can run" card: one popular model's best format here, its speed and its
verdict in words and colour (a strip down its left edge); a click, Enter or Space opens it in Fit."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFocusEvent, QMouseEvent, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QLabel

from rigcheck.core.machine import Machine
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.verdict_words import speed_text
from rigcheck.gui.fitview import CardAnswer
from rigcheck.gui.i18n import tr
from rigcheck.gui.pages.models import billions
from rigcheck.gui.state import AppState
from rigcheck.gui.what_it_takes import take_button
from rigcheck.gui.widgets import Card, esc, muted, plain, subheading

#: the width of the verdict's colour strip down a model card's left edge
VERDICT_STRIP = 5


class ModelCard(Card):
    """One popular model: the best format that fits, the speed, and a verdict in words and colour."""

    def __init__(self, state: AppState, answer: CardAnswer, machine: Machine) -> None:
        super().__init__()
        self.state = state
        self.answer = answer
        spec = self.spec = answer.spec
        self.body.setContentsMargins(12 + VERDICT_STRIP, 8, 10, 8)
        self.body.setSpacing(3)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        # the one answer every surface gives (docs/recommendation.md): format, where, speed; worked out on
        # the pool (recommend_cards), painted here
        view = self.view = answer.view
        self.verdict = answer.verdict
        self.quant = answer.quant_id
        #: the context the card was judged at: Fit opens with it, not with its last-used one
        self.context = answer.context
        glyph, words, colour = view.glyph, view.words, view.colour
        # the verdict's colour as a strip down the left edge, painted (a style sheet per card costs ~10 ms
        # of style polishing each, a dozen cards a visible pause)
        self.colour = QColor(colour)
        title = subheading(spec.name)
        title.setWordWrap(True)
        self.body.addWidget(title)
        size = billions(spec.params_b) if spec.params_b else ""
        if spec.is_moe and spec.active_params_b:
            size += f" ({billions(spec.active_params_b)} {tr('active')})"
        self.size_label = muted(size)
        self.body.addWidget(self.size_label)
        if view.where == "gpu" and len(machine.gpus) > 1:
            words = "Runs on the GPUs"
        status = QLabel(f"<b style='color:{colour}'>{glyph} {esc(tr(words))}</b>")
        status.setWordWrap(True)
        self.body.addWidget(status)
        speed = view.tokens_per_s
        detail = (view.quant or "") if view.where is not None else tr("too large even from RAM")
        if view.where is not None:
            detail += f" · {speed_text(speed)}"  # rounded once, as Fit, the CLI and the reports say it
        self.detail = plain(detail)
        self.detail.setWordWrap(True)
        self.body.addWidget(self.detail)
        if self.verdict == "does_not_fit":  # the way on: what it would take
            self.take = take_button(state, lambda: (spec.id, "inference", self.context), flat=True)
            self.body.addWidget(self.take)
        self.body.addStretch(1)
        self.setToolTip(tr("Open in Fit"))
        self.setAccessibleName(f"{spec.name}: {tr(words)}, {detail}")

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        if event.button() == Qt.MouseButton.LeftButton:
            self.open()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        super().paintEvent(event)
        painter = QPainter(self)
        painter.fillRect(0, 0, VERDICT_STRIP, self.height(), self.colour)
        painter.end()
        if self.hasFocus():  # the keyboard's place: a highlight ring, as buttons have
            painter = QPainter(self)
            pen = QPen(self.palette().color(QPalette.ColorRole.Highlight), 2)
            painter.setPen(pen)
            painter.drawRect(self.rect().adjusted(1, 1, -2, -2))
            painter.end()

    def focusInEvent(self, event: QFocusEvent) -> None:  # noqa: N802 - Qt's name
        super().focusInEvent(event)
        self.update()

    def focusOutEvent(self, event: QFocusEvent) -> None:  # noqa: N802 - Qt's name
        super().focusOutEvent(event)
        self.update()

    def keyPressEvent(self, event: object) -> None:  # noqa: N802 - Qt's name
        from PySide6.QtGui import QKeyEvent

        if isinstance(event, QKeyEvent) and event.key() in (
            Qt.Key.Key_Return,
            Qt.Key.Key_Enter,
            Qt.Key.Key_Space,
        ):
            self.open()
        else:
            super().keyPressEvent(event)  # type: ignore[arg-type]

    def open(self) -> None:
        self.state.choose_model(from_catalog(self.spec), quant=self.quant or None, context=self.context)
