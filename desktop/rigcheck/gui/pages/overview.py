"""Overview: the machine at a glance, and which popular models it can run."""

from __future__ import annotations

from dataclasses import replace

import shiboken6
from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtGui import (
    QColor,
    QFocusEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QBoxLayout,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from rigcheck.core.catalog import ModelSpec
from rigcheck.core.estimate.power import PowerBudget, power_budget
from rigcheck.core.estimate.speed import host_bandwidth
from rigcheck.core.known_text import in_language
from rigcheck.core.machine import GPU, Machine
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.said import render
from rigcheck.core.unified import unified_share
from rigcheck.core.units import fmt_bytes, fmt_watts, index_ranges
from rigcheck.core.verdict_words import speed_text
from rigcheck.gui.elide import ElidedLabel
from rigcheck.gui.fitview import CardAnswer, recommend_cards
from rigcheck.gui.i18n import num, tr
from rigcheck.gui.overview_summary import SpeedChart, headline
from rigcheck.gui.pages.models import billions
from rigcheck.gui.state import BACKEND_NAMES, AppState
from rigcheck.gui.what_it_takes import take_button
from rigcheck.gui.widgets import (
    POWER_VERDICTS,
    Card,
    TileLayout,
    esc,
    heading,
    muted,
    plain,
    scroll_page,
    subheading,
    tooltip,
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
#: the width of the verdict's colour strip down a model card's left edge
VERDICT_STRIP = 5
#: past this many characters a GPU card's title is elided on one line (whole in its tooltip), not wrapped
LONG_TITLE = 120
#: the narrowest a machine-facts card gets (three side by side at 1024×700)
FACT_CARD_WIDTH = 240
#: model cards built per event-loop turn (~2-6 ms each): sixteen at once held the GUI thread ~50-100 ms
CARDS_PER_TURN = 4
#: from this page width on, the answers and the machine sit side by side (at 1920×1080 the page is ~1730
#: px wide: stacked, the cards took two wide rows and the lower half of the window stayed empty)
SIDE_BY_SIDE_WIDTH = 1500


class OverviewPage(QWidget):
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

    # -- cards -----------------------------------------------------------------------------------

    def _gpu_card(self, machine: Machine, group: list[GPU]) -> Card:
        """One card per model of GPU: "GPU 0: GeForce RTX 4090", or "GPUs 0–7: 8 × H100 SXM5 80GB"."""
        gpu = group[0]
        card = Card()
        if len(group) == 1:
            title = f"GPU {gpu.index}: {gpu.name}"
        else:
            title = f"{tr('GPUs')} {_indices(group)}: {len(group)} × {gpu.name}"
        name = subheading(title)
        if len(title) > LONG_TITLE:  # a name no card can hold (a hostile or broken snapshot): one elided line
            font = name.font()
            name = ElidedLabel(title)
            name.setFont(font)
        name.setWordWrap(not isinstance(name, ElidedLabel))
        card.body.addWidget(name)
        bar = QProgressBar()
        bar.setAccessibleName(tr("GPU memory"))
        total = sum(g.memory_total_bytes or 0 for g in group)
        frees = [g.memory_free_bytes for g in group]
        each = f" ({fmt_bytes(gpu.memory_total_bytes)} {tr('each')})" if len(group) > 1 else ""
        share = unified_share(gpu, machine.memory.total_bytes) if len(group) == 1 else None
        if share is not None:
            # a unified GPU's size is its platform's rule (core/unified.py), the one the estimates use
            ram = fmt_bytes(machine.memory.total_bytes)
            bar.setRange(0, 1)
            bar.setValue(0)
            bar.setFormat(f"{fmt_bytes(share.bytes)} {tr('of')} {ram} {tr('for the GPU')}")
            bar.setToolTip(tooltip(share.reason))
        elif total and all(g.memory_total_bytes for g in group):
            free = sum(f for f in frees if f is not None) if None not in frees else None
            used = total - free if free is not None else None
            bar.setRange(0, 1000)
            bar.setValue(int(1000 * (used or 0) / total))
            if used is not None and free is not None:
                bar.setFormat(f"{fmt_bytes(free)} {tr('free of')} {fmt_bytes(total)}")
            else:
                bar.setFormat(fmt_bytes(total) + each)
                if gpu.unified_memory:
                    ram = fmt_bytes(machine.memory.total_bytes)
                    bar.setFormat(f"{fmt_bytes(total)} {tr('of')} {ram} {tr('for the GPU')}")
                bar.setToolTip(tr("free memory not reported"))
        else:
            bar.setRange(0, 1)
            bar.setValue(0)
            bar.setFormat(tr("memory size unknown"))
        bar.setTextVisible(True)
        card.body.addWidget(bar)
        form = _form()
        drivers = machine.drivers
        if gpu.unified_memory:
            form.addRow(tr("Memory"), _wrapped(tr("unified, shared with the CPU")))
        if gpu.vendor == "nvidia":
            form.addRow(tr("Driver"), plain(drivers.nvidia or tr("unknown")))
            form.addRow(tr("CUDA (driver)"), plain(drivers.cuda_driver or tr("unknown")))
            form.addRow(tr("Compute capability"), plain(gpu.compute_capability or tr("unknown")))
        elif gpu.vendor == "amd":
            form.addRow(tr("ROCm"), plain(drivers.rocm or tr("not installed")))
            form.addRow(tr("gfx target"), plain(gpu.gfx_target or tr("unknown")))
        power = fmt_watts(gpu.power_limit_watts, tr("not readable"))
        form.addRow(tr("Power limit"), plain(power + (f" {tr('each')}" if len(group) > 1 else "")))
        if gpu.pcie_gen and gpu.pcie_width:
            form.addRow(tr("PCIe link"), plain(f"{gpu.pcie_gen}.0 x{gpu.pcie_width}"))
        card.body.addLayout(form)
        for note in machine.notes:
            if any(f"GPU {g.index} " in note.message or f"GPU {g.index}:" in note.message for g in group):
                card.body.addWidget(muted(in_language(note.message, probe_note=True)))
        return card

    def _no_gpu_card(self, machine: Machine) -> Card:
        card = Card()
        card.body.addWidget(subheading(tr("No GPU found")))
        text = tr("Models run on the CPU, from system RAM, at the speed of its memory.")
        if machine.notes:
            text += " " + tr("The probes' notes below say what they looked for.")
        self.no_gpu_text = muted(text)
        card.body.addWidget(self.no_gpu_text)
        return card

    def _system_card(self, machine: Machine) -> Card:
        card = Card()
        cpu, mem = machine.cpu, machine.memory
        card.body.addWidget(subheading(tr("CPU and memory")))
        model = plain(cpu.model or tr("unknown CPU"))
        model.setWordWrap(True)
        card.body.addWidget(model)
        form = _form()
        cores = f"{cpu.logical_cores} {tr('logical')}" + (
            f", {cpu.physical_cores} {tr('physical')}" if cpu.physical_cores else ""
        )
        form.addRow(tr("Cores"), _wrapped(cores))
        flags = _wrapped(" ".join(cpu.flags) or tr("none of note"))
        form.addRow(tr("Instruction sets"), flags)
        ram = QProgressBar()
        ram.setAccessibleName(tr("RAM"))
        ram.setRange(0, 1000)
        if mem.available_bytes is not None:
            ram.setValue(int(1000 * (mem.total_bytes - mem.available_bytes) / max(mem.total_bytes, 1)))
            # the sentence is longer than the bar at 1024 px: a thin bar, the words wrapped beneath it
            words = f"{fmt_bytes(mem.available_bytes)} {tr('available of')} {fmt_bytes(mem.total_bytes)}"
            ram.setTextVisible(False)
            ram.setMaximumHeight(8)
            ram.setAccessibleDescription(words)
            holder = QWidget()
            column = QVBoxLayout(holder)
            column.setContentsMargins(0, 4, 0, 0)
            column.setSpacing(2)
            column.addWidget(ram)
            column.addWidget(_wrapped(words))
            form.addRow(tr("RAM"), holder)
        else:
            ram.setValue(0)
            ram.setFormat(fmt_bytes(mem.total_bytes))
            form.addRow(tr("RAM"), ram)
        form.addRow(tr("Bandwidth"), self._bandwidth_row(machine))
        for disk in machine.disks:
            form.addRow(
                _wrapped(tr("Disk") + (f" ({disk.purpose})" if disk.purpose else "")),
                _wrapped(f"{fmt_bytes(disk.free_bytes)} {tr('free')} · {disk.path}"),
            )
        card.body.addLayout(form)
        return card

    def _bandwidth_row(self, machine: Machine) -> QWidget:
        """Host memory bandwidth (what offloaded weights are read at), with its source; editable."""
        host = host_bandwidth(machine, self.state.catalog)
        row = QWidget()
        layout = QVBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.bandwidth = QSpinBox()
        self.bandwidth.setRange(1, 5000)
        self.bandwidth.setSuffix(" GB/s")
        self.bandwidth.setAccessibleName(tr("Host memory bandwidth in GB/s"))
        self.bandwidth.setValue(round(host.bytes_per_s / 1e9))
        source = {
            "measured": tr("measured or entered"),
            "catalog": tr("unified memory, from the GPU catalog")
            if any(g.unified_memory for g in machine.gpus)
            else tr("from the CPU platform catalog"),
            "default": tr("default (CPU not in the catalog)"),
        }[host.source]
        self.bandwidth_source = muted(source)
        self.bandwidth_source.setToolTip(render(host.why))
        layout.addWidget(self.bandwidth, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.bandwidth_source)
        self.bandwidth.editingFinished.connect(lambda: self._bandwidth_changed(machine))
        return row

    def _bandwidth_changed(self, machine: Machine) -> None:
        rate = self.bandwidth.value() * 10**9
        if rate == round(host_bandwidth(machine, self.state.catalog).bytes_per_s / 1e9) * 10**9:
            return
        memory = replace(machine.memory, bandwidth_bytes_per_s=rate, bandwidth_source="measured")
        self.state.set_machine(replace(machine, memory=memory), self._label, self._live)

    def _power_card(self, machine: Machine) -> Card:
        """The PSU: its rating (editable), a one-line badge, and the working on demand."""
        card = Card()
        card.body.addWidget(subheading(tr("Power supply")))
        row = QHBoxLayout()
        label = QLabel(tr("Rating"))
        self.psu = QSpinBox()
        self.psu.setRange(0, 5000)
        self.psu.setSingleStep(50)
        self.psu.setSuffix(" W")
        self.psu.setSpecialValueText(tr("not entered"))
        self.psu.setAccessibleName(tr("PSU rating in watts"))
        label.setBuddy(self.psu)
        self.psu.setValue(int(self.state.psu_watts() or machine.psu.watts or 0))
        row.addWidget(label)
        row.addWidget(self.psu)
        row.addStretch(1)
        card.body.addLayout(row)
        self.power_badge = QLabel()
        self.power_badge.setWordWrap(True)
        self.power_badge.setAccessibleName(tr("Power budget"))
        card.body.addWidget(self.power_badge)
        self.power_more = QToolButton()
        self.power_more.setText(tr("How this is worked out"))
        self.power_more.setCheckable(True)
        self.power_more.setArrowType(Qt.ArrowType.RightArrow)
        self.power_more.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.power_more.setAutoRaise(True)
        card.body.addWidget(self.power_more)
        self.power_text = muted("", rich=True)
        self.power_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.power_text.setVisible(False)
        card.body.addWidget(self.power_text)
        self.power_more.toggled.connect(self._show_power_details)
        self.psu.valueChanged.connect(lambda watts: self._psu_changed(machine, watts))
        self._psu_changed(machine, self.psu.value(), save=False)
        return card

    def _show_power_details(self, shown: bool) -> None:
        self.power_text.setVisible(shown)
        self.power_more.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)

    def _psu_changed(self, machine: Machine, watts: int, save: bool = True) -> None:
        if save:
            self.state.settings.setValue("machine/psu_watts", watts or "")
        budget = power_budget(machine, self.state.catalog, psu_watts=float(watts) if watts else None)
        glyph, words, colour = POWER_VERDICTS[budget.verdict]
        verdict = f"{glyph} {esc(tr(words))} · " if budget.psu_watts is not None else f"{glyph} "
        self.power_badge.setText(
            f"<span style='color:{colour}'><b>{verdict}</b></span>{esc(psu_badge(budget))}"
        )
        lines = [
            f"{tr('sustained')} {num(budget.sustained_watts, group=False)} W · {tr('peaks')} "
            f"{num(budget.peak_watts, group=False)} W",
            *(f"• {esc(item.name)}: {esc(item.formula)}" for item in budget.items),
            *(esc(r) for r in budget.reasons),
            *(f"→ {esc(a)}" for a in budget.advice),
        ]
        self.power_text.setText("<br>".join(dict.fromkeys(lines)))  # never the same sentence twice
        sources = tooltip("\n".join(f"{i.name}: {i.source}" for i in budget.items))
        self.power_text.setToolTip(sources)
        self.power_badge.setToolTip(tooltip(tr("Click “How this is worked out” for the parts and sources.")))


def psu_badge(budget: PowerBudget) -> str:
    """The PSU in one line: "1000 W · peak 943 W · 57 W spare" (or "… · 43 W short", "PSU not entered …")."""
    peak = f"{tr('peak')} {budget.peak_watts:.0f} W" + ("" if budget.complete else "+")
    if budget.psu_watts is None:
        return f"{tr('PSU not entered')} · {peak}"
    parts = [f"{budget.psu_watts:.0f} W", peak]
    if budget.headroom_watts is not None:
        spare = budget.headroom_watts
        parts.append(f"{spare:.0f} W {tr('spare')}" if spare >= 0 else f"{-spare:.0f} W {tr('short')}")
    return " · ".join(parts)


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


def _gpu_groups(gpus: tuple[GPU, ...]) -> list[list[GPU]]:
    """GPUs of one model with the same memory and limits, together (an 8-GPU server is one card)."""
    groups: dict[tuple[object, ...], list[GPU]] = {}
    for gpu in gpus:
        key = (gpu.vendor, gpu.name, gpu.memory_total_bytes, gpu.power_limit_watts, gpu.compute_capability,
               gpu.gfx_target, gpu.pcie_gen, gpu.pcie_width, gpu.unified_memory)  # fmt: skip
        groups.setdefault(key, []).append(gpu)
    return list(groups.values())


def _indices(group: list[GPU]) -> str:
    """0–7 for a consecutive run, 0, 2, 5 otherwise."""
    return index_ranges([g.index for g in group])


def _form() -> QFormLayout:
    form = QFormLayout()
    form.setHorizontalSpacing(12)
    form.setVerticalSpacing(4)
    form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)
    return form


def _wrapped(text: str) -> QLabel:
    label = plain(text)
    label.setWordWrap(True)
    return label
