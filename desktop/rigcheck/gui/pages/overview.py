"""Overview: the machine at a glance, and which popular models it can run."""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import QBoxLayout, QLabel, QVBoxLayout, QWidget

from rigcheck.core.catalog import ModelSpec
from rigcheck.core.known_text import in_language
from rigcheck.core.machine import Machine
from rigcheck.gui.fitview import CardAnswer, recommend_cards
from rigcheck.gui.i18n import tr
from rigcheck.gui.overview_summary import SpeedChart, headline
from rigcheck.gui.pages.overview_facts import MachineFacts, _gpu_groups, psu_badge
from rigcheck.gui.pages.overview_model_card import VERDICT_STRIP, ModelCard
from rigcheck.gui.state import BACKEND_NAMES, AppState
from rigcheck.gui.widgets import (
    Card,
    TileLayout,
    esc,
    heading,
    muted,
    plain,
    scroll_page,
    subheading,
)
from rigcheck.gui.workers import Job, submit

#: the models the "what you can run" cards show, small to large: what people run locally at the end of
#: 2026 (the Qwen3.5/3.6, Gemma 4, GLM-4.7, Ministral 3 and Nemotron 3 releases) beside the older ones they
#: still run; sixteen, so the cards fill whole rows at 1024 (four a row) and 1920 px (eight)
POPULAR = (
    "llama-3.2-3b", "qwen3-8b", "qwen3.5-9b", "gemma-3-12b", "ministral-3-14b", "gpt-oss-20b",
    "gemma-4-26b-a4b", "qwen3.6-27b", "glm-4.7-flash", "nemotron-3-nano-30b-a3b", "qwen3.6-35b-a3b",
    "gemma-4-31b", "llama-3.3-70b", "glm-4.5-air", "gpt-oss-120b", "qwen3.5-122b-a10b",
)  # fmt: skip
#: the narrowest a "what you can run" card gets (four side by side at 1024×700, eight at 1920)
MODEL_CARD_WIDTH = 180
#: the narrowest a machine-facts card gets (three side by side at 1024×700)
FACT_CARD_WIDTH = 240
#: model cards built per event-loop turn (~2-6 ms each): sixteen at once held the GUI thread ~50-100 ms
CARDS_PER_TURN = 4
#: from this page width on, the answers and the machine sit side by side (at 1920×1080 the page is ~1730
#: px wide: stacked, the cards took two wide rows and the lower half of the window stayed empty)
SIDE_BY_SIDE_WIDTH = 1500
# read from here by the tests
__all__ = ["POPULAR", "VERDICT_STRIP", "ModelCard", "OverviewPage", "psu_badge"]


class OverviewPage(MachineFacts, QWidget):
    """Answers first: what this machine can run, then its facts in compact cards, the PSU as a badge."""

    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self.content = scroll_page(self)
        self.layout_ = QVBoxLayout(self.content)
        self.layout_.setContentsMargins(16, 12, 16, 16)
        self.layout_.setSpacing(10)
        self.layout_.addWidget(heading(tr("Overview")))
        self.waiting = muted(tr("Probing this computer…"))
        self.layout_.addWidget(self.waiting)
        self.layout_.addStretch(1)
        self.cards: list[ModelCard] = []
        self.fact_cards: list[Card] = []
        self._job: Job | None = None
        self._generation = 0
        #: the generation whose cards' work is queued to start on the next event-loop turn
        self._queued: int | None = None
        #: the model cards being built, CARDS_PER_TURN a turn; ``cards`` becomes them once all are in
        self._building: list[ModelCard] | None = None
        #: a machine that came while another page was on screen: shown when this page next is
        self._pending: tuple[Machine, str, bool] | None = None
        self._label, self._live = state.machine_label, state.is_live
        state.machine_changed.connect(self.show_machine)
        state.backend_changed.connect(self._backend_changed)
        if state.machine is not None:
            self.show_machine(state.machine, state.machine_label, state.is_live)

    def retranslate(self) -> None:
        """After a language switch: the cards and facts again, in the new language."""
        if self.state.machine is not None:
            self.show_machine(self.state.machine, self.state.machine_label, self.state.is_live)

    @Slot(str)
    def _backend_changed(self, _backend: str) -> None:
        """The model cards' speeds assume the backend chosen on Fit: the same answer on both pages. Only the
        hint and the cards are redone; the machine's facts do not depend on the backend."""
        machine = self.state.machine
        if machine is None or not hasattr(self, "cards_host") or self._pending is not None:
            return  # no machine shown yet: its cards will be worked out with the backend chosen
        self.hint.setText(self._hint_text())
        for card in self.cards:
            self.cards_layout.removeWidget(card)
            card.hide()
            card.deleteLater()
        self.cards = []
        self.cards_waiting.setText(tr("Working out what runs here…"))
        self.cards_waiting.show()
        self._work_out_cards(machine, self._live)

    def _hint_text(self) -> str:
        hint = tr(
            "The recommended way to run each at 8k context, as Fit and 'rigcheck fit' give it; "
            "click a card to open it in Fit."
        )
        if self.state.backend is not None:
            # speeds follow the backend chosen on Fit: say so where they are shown
            hint += " " + tr("Speeds assume llama.cpp on {backend}, as chosen on the Fit page.").format(
                backend=BACKEND_NAMES.get(self.state.backend, self.state.backend)
            )
        return hint

    def busy(self) -> bool:
        """The model cards are still to be worked out (queued, or on the pool), or being built."""
        return self._queued == self._generation or self._job is not None or self._building is not None

    def _work_out_cards(self, machine: Machine, is_live: bool) -> None:
        """Each card's recommendation on the pool (~20 ms a model, 0.2–0.4 s in all): the page shows at once
        and the cards follow; a newer machine or backend asked for meanwhile wins."""
        self._generation += 1
        generation = self._generation
        self._drop_building()
        specs, catalog, backend = _popular(self.state), self.state.catalog, self.state.backend

        def work() -> tuple[CardAnswer, ...]:
            return recommend_cards(specs, machine, catalog, live=is_live, backend=backend)

        def done(answers: tuple[CardAnswer, ...]) -> None:
            if generation != self._generation:
                return  # stale: the page shows another machine or backend now
            self._job = None
            self.cards_host.setUpdatesEnabled(False)  # one layout and paint for all the cards, not one each
            self._building = []
            self._build_cards(generation, machine, list(answers))

        def failed(message: str) -> None:
            if generation == self._generation:
                self._job = None
                self.cards_waiting.setText(f"✘ {message}")

        self._job = submit(self.state.pool, work, done, failed, owner=self)

    def _build_cards(self, generation: int, machine: Machine, answers: list[CardAnswer]) -> None:
        """CARDS_PER_TURN cards now, the rest on the next event-loop turns; shown together at the end."""
        building = self._building
        if generation != self._generation or building is None:
            return
        for answer in answers[:CARDS_PER_TURN]:
            card = ModelCard(self.state, answer, machine)
            building.append(card)
            self.cards_layout.addWidget(card)
        rest = answers[CARDS_PER_TURN:]
        if rest:
            QTimer.singleShot(0, self, lambda: self._build_cards(generation, machine, rest))
            return
        self._building = None
        self.cards = building
        self.cards_waiting.hide()
        self.cards_host.setUpdatesEnabled(True)
        self._show_summary(machine, [card.answer for card in building])

    def _show_summary(self, machine: Machine, answers: list[CardAnswer]) -> None:
        """The answer in words over the cards, and every card's speed in one chart below the page."""
        first, second = headline(answers, len(machine.gpus))
        self.answer.setText(first)
        self.answer_more.setText(second)
        self.answer.setVisible(bool(answers))
        self.answer_more.setVisible(bool(answers))
        self.speeds.set_answers(answers)
        self.speeds_box.setVisible(bool(answers))

    def _drop_building(self) -> None:
        """Cards of an older machine or backend still being built: removed, never shown."""
        building, self._building = self._building, None
        for card in building or ():
            if not shiboken6.isValid(card):  # deleted with the page it was built on
                continue
            self.cards_layout.removeWidget(card)
            card.hide()
            card.deleteLater()
        if building is not None:
            self.cards_host.setUpdatesEnabled(True)

    def _clear(self) -> None:
        # the cards first, each on its own: the old page's widgets are deleted over several events, not
        # in one DeferredDelete of the whole card grid (~40-60 ms)
        for card in self.cards:
            card.hide()
            card.setParent(None)  # type: ignore[call-overload]
            card.deleteLater()
        self.cards = []
        while self.layout_.count() > 1:
            item = self.layout_.takeAt(1)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.hide()
                widget.setParent(None)  # type: ignore[call-overload]
                widget.deleteLater()

    def _direction(self) -> QBoxLayout.Direction:
        wide = self.width() >= SIDE_BY_SIDE_WIDTH
        return QBoxLayout.Direction.LeftToRight if wide else QBoxLayout.Direction.TopToBottom

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        columns = getattr(self, "columns", None)
        if columns is not None and columns.direction() != self._direction():
            columns.setDirection(self._direction())

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        pending, self._pending = self._pending, None
        if pending is not None:
            self.show_machine(*pending)

    def show_machine(self, machine: Machine, label: str, is_live: bool) -> None:
        """The machine's facts now and its model cards when the pool has them; on a page in a shown window
        but not on screen (another page is), nothing until it is shown: a snapshot opened or a language
        switched on another page does not pay for this one's cards and facts."""
        if self.window().isVisible() and not self.isVisible():
            self._pending = (machine, label, is_live)
            self._generation += 1  # cards of the machine before still on the pool: dropped
            self._job = None
            self._drop_building()
            return
        self._pending = None
        self._generation += 1  # cards still being built belong to the page torn down next: never shown
        self._drop_building()
        self._clear()
        self._label, self._live = label, is_live
        self.layout_.addWidget(muted(_system_line(machine, label)))

        # the answer first: as many verdict cards as fit the width, the rest one scroll away
        # side by side on a wide page (answers left, the machine right), else one above the other
        columns = QWidget()
        self.columns = QBoxLayout(self._direction(), columns)
        self.columns.setContentsMargins(0, 0, 0, 0)
        self.columns.setSpacing(16)
        answers_host, facts_column = QWidget(), QWidget()
        answers = QVBoxLayout(answers_host)
        answers.setContentsMargins(0, 0, 0, 0)
        answers.setSpacing(10)
        self.columns.addWidget(answers_host, 3)
        self.columns.addWidget(facts_column, 2)
        self.layout_.addWidget(columns)
        # the answer first, in words: how many run where, and the largest on the GPU (filled with the cards)
        self.answer = heading("", 1.25)
        self.answer.setWordWrap(True)
        self.answer.setVisible(False)
        self.answer_more = plain("")
        self.answer_more.setWordWrap(True)
        self.answer_more.setVisible(False)
        # over both columns, so that the cards and the machine's facts start side by side beneath it
        self.layout_.insertWidget(self.layout_.indexOf(columns), self.answer)
        self.layout_.insertWidget(self.layout_.indexOf(columns), self.answer_more)
        answers.addWidget(subheading(tr("What you can run")))
        self.hint = muted(self._hint_text())
        answers.addWidget(self.hint)
        self.cards_host = QWidget()
        self.cards_layout = TileLayout(self.cards_host, min_width=MODEL_CARD_WIDTH, spacing=10)
        self.cards = []
        self.cards_waiting = muted(tr("Working out what runs here…"))
        answers.addWidget(self.cards_waiting)
        answers.addWidget(self.cards_host)
        answers.addStretch(1)

        # then the machine, in compact cards of equal height
        machine_column = QVBoxLayout(facts_column)
        machine_column.setContentsMargins(0, 0, 0, 0)
        machine_column.setSpacing(10)
        machine_column.addWidget(subheading(tr("This machine")))
        facts_host = QWidget()
        facts = TileLayout(facts_host, min_width=FACT_CARD_WIDTH, spacing=10)
        self.fact_cards = [self._gpu_card(machine, group) for group in _gpu_groups(machine.gpus)]
        if not machine.gpus:
            self.fact_cards.append(self._no_gpu_card(machine))
        self.fact_cards += [self._system_card(machine), self._power_card(machine)]
        for card in self.fact_cards:
            card.body.addStretch(1)  # equal heights: the space goes below the content, not around it
            facts.addWidget(card)
        machine_column.addWidget(facts_host)
        machine_column.addStretch(1)

        # every card's speed in one chart, across the page under both columns (at 1920 px the lower 40% of
        # the page was empty; at 1024 it is one scroll away, after the machine's facts)
        self.speeds_box = QWidget()
        speeds_column = QVBoxLayout(self.speeds_box)
        speeds_column.setContentsMargins(0, 6, 0, 0)
        speeds_column.setSpacing(4)
        speeds_column.addWidget(subheading(tr("How fast each one answers")))
        speeds_column.addWidget(
            muted(
                tr(
                    "Decode speed at 8k context, log scale. Right of the dashed line a reply comes faster "
                    "than one reads (~5 tokens/s)."
                )
            )
        )
        self.speeds = SpeedChart()
        speeds_column.addWidget(self.speeds)
        self.speeds_box.setVisible(False)
        self.layout_.addWidget(self.speeds_box)

        if machine.notes:
            self.layout_.addWidget(subheading(tr("Notes from the probes")))
            notes = Card()
            for note in machine.notes:
                message = in_language(note.message, probe_note=True)  # stored in English in the snapshot
                line = QLabel(f"<b>{esc(note.probe)}</b> ({tr(note.level)}): {esc(message)}")
                line.setWordWrap(True)
                line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                notes.body.addWidget(line)
            self.layout_.addWidget(notes)
        self.layout_.addStretch(1)
        # the cards' work goes to the pool on the next turn of the event loop, once this handler is over:
        # started in it, its thread held the interpreter while the handler built the facts, and each
        # return from Qt to Python waited for it (a Fleet double-click: 25 ms of this handler's own work
        # took 180 ms; starting the pool thread alone, 16 ms on a loaded machine)
        self._generation += 1  # a start still queued for an older machine is dropped
        queued = self._queued = self._generation
        QTimer.singleShot(0, self, lambda: self._start_cards(queued, machine, is_live))

    def _start_cards(self, queued: int, machine: Machine, is_live: bool) -> None:
        if queued == self._generation:  # no newer machine or backend since, and the page not hidden
            self._work_out_cards(machine, is_live)


def _popular(state: AppState) -> list[ModelSpec]:
    return [spec for spec in (state.catalog.model(i) for i in POPULAR) if spec is not None]


def _system_line(machine: Machine, label: str) -> str:
    host = machine.host
    parts = [label]
    if host.hostname:
        parts.append(host.hostname)
    if host.os_version or host.os:
        parts.append(host.os_version or host.os or "")
    if machine.taken_at:
        parts.append(tr("read at") + f" {machine.taken_at}")
    return " · ".join(parts)
