"""Overview: the machine at a glance, and which popular models it can run."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import (
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from rigcheck.core.catalog import ModelSpec
from rigcheck.core.estimate.power import power_budget
from rigcheck.core.estimate.recommend import recommend
from rigcheck.core.estimate.speed import host_bandwidth
from rigcheck.core.machine import GPU, Machine
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.units import fmt_bytes, fmt_watts
from rigcheck.gui.fitview import fit_view
from rigcheck.gui.i18n import num, sig, tr
from rigcheck.gui.state import AppState
from rigcheck.gui.widgets import (
    POWER_VERDICTS,
    Card,
    FlowLayout,
    esc,
    heading,
    muted,
    plain,
    scroll_page,
    subheading,
    tooltip,
)

#: the models the "what you can run" cards show, small to large
POPULAR = (
    "llama-3.2-3b", "llama-3.1-8b", "qwen3-8b", "gemma-3-12b", "mistral-nemo-12b", "phi-4",
    "qwen3-14b", "gpt-oss-20b", "qwen3-30b-a3b", "qwen3-32b", "llama-3.3-70b", "gpt-oss-120b",
)  # fmt: skip


class OverviewPage(QWidget):
    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self.content = scroll_page(self)
        self.layout_ = QVBoxLayout(self.content)
        self.layout_.setContentsMargins(16, 12, 16, 16)
        self.layout_.setSpacing(12)
        self.layout_.addWidget(heading(tr("Overview")))
        self.waiting = muted(tr("Probing this computer…"))
        self.layout_.addWidget(self.waiting)
        self.layout_.addStretch(1)
        self.cards: list[ModelCard] = []
        self._label, self._live = state.machine_label, state.is_live
        state.machine_changed.connect(self.show_machine)
        if state.machine is not None:
            self.show_machine(state.machine, state.machine_label, state.is_live)

    def _clear(self) -> None:
        while self.layout_.count() > 1:
            item = self.layout_.takeAt(1)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.hide()
                widget.setParent(None)  # type: ignore[call-overload]
                widget.deleteLater()

    def show_machine(self, machine: Machine, label: str, is_live: bool) -> None:
        self._clear()
        self._label, self._live = label, is_live
        self.layout_.addWidget(muted(_system_line(machine, label)))
        hardware = QGridLayout()
        hardware.setSpacing(12)
        column = len(machine.gpus)
        for position, gpu in enumerate(machine.gpus):
            hardware.addWidget(self._gpu_card(machine, gpu), position // 2, position % 2)
        if not machine.gpus:
            card = Card()
            card.body.addWidget(subheading(tr("No GPU found")))
            card.body.addWidget(muted(tr("Models run on the CPU from RAM; see the notes below for why.")))
            hardware.addWidget(card, 0, 0)
            column = 1
        hardware.addWidget(self._system_card(machine), column // 2, column % 2)
        column += 1
        hardware.addWidget(self._power_card(machine), column // 2, column % 2)
        wrapper = QWidget()
        wrapper.setLayout(hardware)
        self.layout_.addWidget(wrapper)

        self.layout_.addWidget(subheading(tr("What you can run")))
        self.layout_.addWidget(
            muted(
                tr(
                    "The recommended way to run each at 8k context, as Fit and 'rigcheck fit' give it; "
                    "click a card to open it in Fit."
                )
            )
        )
        flow_host = QWidget()
        flow = FlowLayout(flow_host)
        self.cards = [ModelCard(self.state, spec, machine, is_live) for spec in _popular(self.state)]
        for card in self.cards:
            flow.addWidget(card)
        self.layout_.addWidget(flow_host)

        if machine.notes:
            self.layout_.addWidget(subheading(tr("Notes from the probes")))
            notes = Card()
            for note in machine.notes:
                line = QLabel(f"<b>{esc(note.probe)}</b> ({tr(note.level)}): {esc(note.message)}")
                line.setWordWrap(True)
                line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                notes.body.addWidget(line)
            self.layout_.addWidget(notes)
        self.layout_.addStretch(1)

    # -- cards -----------------------------------------------------------------------------------

    def _gpu_card(self, machine: Machine, gpu: GPU) -> Card:
        card = Card()
        card.setMinimumWidth(380)
        card.body.addWidget(subheading(f"GPU {gpu.index}: {gpu.name}"))
        bar = QProgressBar()
        bar.setAccessibleName(tr("GPU memory"))
        total, free = gpu.memory_total_bytes, gpu.memory_free_bytes
        if total:
            used = total - free if free is not None else None
            bar.setRange(0, 1000)
            bar.setValue(int(1000 * (used or 0) / total))
            if used is not None:
                bar.setFormat(
                    f"{fmt_bytes(used)} {tr('used of')} {fmt_bytes(total)} · {fmt_bytes(free)} {tr('free')}"
                )
            else:
                bar.setFormat(f"{fmt_bytes(total)} · {tr('free memory not reported')}")
        else:
            bar.setRange(0, 1)
            bar.setValue(0)
            bar.setFormat(tr("memory size unknown"))
        bar.setTextVisible(True)
        card.body.addWidget(bar)
        form = QFormLayout()
        form.setHorizontalSpacing(16)
        drivers = machine.drivers
        if gpu.vendor == "nvidia":
            form.addRow(tr("Driver"), plain(drivers.nvidia or tr("unknown")))
            form.addRow(tr("CUDA (driver)"), plain(drivers.cuda_driver or tr("unknown")))
            form.addRow(tr("Compute capability"), plain(gpu.compute_capability or tr("unknown")))
        elif gpu.vendor == "amd":
            form.addRow(tr("ROCm"), plain(drivers.rocm or tr("not installed")))
            form.addRow(tr("gfx target"), plain(gpu.gfx_target or tr("unknown")))
        elif gpu.unified_memory:
            form.addRow(tr("Memory"), QLabel(tr("unified, shared with the CPU")))
        power = fmt_watts(gpu.power_limit_watts, tr("not readable"))
        form.addRow(tr("Power limit"), QLabel(power))
        if gpu.pcie_gen and gpu.pcie_width:
            form.addRow(tr("PCIe link"), QLabel(f"{gpu.pcie_gen}.0 x{gpu.pcie_width}"))
        card.body.addLayout(form)
        for note in machine.notes:
            if f"GPU {gpu.index} " in note.message or f"GPU {gpu.index}:" in note.message:
                card.body.addWidget(muted(note.message))
        return card

    def _system_card(self, machine: Machine) -> Card:
        card = Card()
        card.setMinimumWidth(380)
        cpu, mem = machine.cpu, machine.memory
        card.body.addWidget(subheading(cpu.model or tr("CPU")))
        form = QFormLayout()
        cores = f"{cpu.logical_cores} {tr('logical')}" + (
            f", {cpu.physical_cores} {tr('physical')}" if cpu.physical_cores else ""
        )
        form.addRow(tr("Cores"), QLabel(cores))
        flags = plain(" ".join(cpu.flags) or tr("none of note"))
        flags.setWordWrap(True)
        form.addRow(tr("Instruction sets"), flags)
        ram = QProgressBar()
        ram.setAccessibleName(tr("RAM"))
        ram.setRange(0, 1000)
        if mem.available_bytes is not None:
            ram.setValue(int(1000 * (mem.total_bytes - mem.available_bytes) / max(mem.total_bytes, 1)))
            ram.setFormat(
                f"{fmt_bytes(mem.available_bytes)} {tr('available of')} {fmt_bytes(mem.total_bytes)}"
            )
        else:
            ram.setValue(0)
            ram.setFormat(fmt_bytes(mem.total_bytes))
        form.addRow(tr("RAM"), ram)
        form.addRow(tr("Memory bandwidth"), self._bandwidth_row(machine))
        for disk in machine.disks:
            form.addRow(
                plain(tr("Disk") + f" ({disk.purpose or ''})"),
                plain(f"{fmt_bytes(disk.free_bytes)} {tr('free')} · {disk.path}"),
            )
        card.body.addLayout(form)
        return card

    def _bandwidth_row(self, machine: Machine) -> QWidget:
        """Host memory bandwidth (what offloaded weights are read at), with its source; editable."""
        host = host_bandwidth(machine, self.state.catalog)
        row = QWidget()
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        self.bandwidth = QSpinBox()
        self.bandwidth.setRange(1, 5000)
        self.bandwidth.setSuffix(" GB/s")
        self.bandwidth.setAccessibleName(tr("Host memory bandwidth in GB/s"))
        self.bandwidth.setValue(round(host.bytes_per_s / 1e9))
        source = {
            "measured": tr("measured or entered"),
            "catalog": tr("from the CPU platform catalog"),
            "default": tr("default (CPU not in the catalog)"),
        }[host.source]
        self.bandwidth_source = muted(source)
        self.bandwidth_source.setToolTip(host.why)
        layout.addWidget(self.bandwidth)
        layout.addWidget(self.bandwidth_source, 1)
        self.bandwidth.editingFinished.connect(lambda: self._bandwidth_changed(machine))
        return row

    def _bandwidth_changed(self, machine: Machine) -> None:
        rate = self.bandwidth.value() * 10**9
        if rate == round(host_bandwidth(machine, self.state.catalog).bytes_per_s / 1e9) * 10**9:
            return
        memory = replace(machine.memory, bandwidth_bytes_per_s=rate, bandwidth_source="measured")
        self.state.set_machine(replace(machine, memory=memory), self._label, self._live)

    def _power_card(self, machine: Machine) -> Card:
        card = Card()
        card.setMinimumWidth(380)
        card.body.addWidget(subheading(tr("Power supply")))
        row = QHBoxLayout()
        label = QLabel(tr("PSU rating"))
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
        self.power_text = muted("", rich=True)
        card.body.addWidget(self.power_text)
        self.psu.valueChanged.connect(lambda watts: self._psu_changed(machine, watts))
        self._psu_changed(machine, self.psu.value(), save=False)
        return card

    def _psu_changed(self, machine: Machine, watts: int, save: bool = True) -> None:
        if save:
            self.state.settings.setValue("machine/psu_watts", watts or "")
        budget = power_budget(machine, self.state.catalog, psu_watts=float(watts) if watts else None)
        glyph, words, colour = POWER_VERDICTS[budget.verdict]
        lines = [
            f"<span style='color:{colour}'><b>{glyph} {tr(words)}</b></span> · "
            f"{tr('sustained')} {num(budget.sustained_watts, group=False)} W · {tr('peaks')} "
            f"{num(budget.peak_watts, group=False)} W"
            + (
                f" · {tr('headroom')} {num(budget.headroom_watts, group=False)} W"
                if budget.headroom_watts is not None
                else ""
            )
        ]
        lines += [f"• {esc(item.name)}: {esc(item.formula)}" for item in budget.items]
        lines += [esc(r) for r in budget.reasons]
        lines += [f"→ {esc(a)}" for a in budget.advice]
        self.power_text.setText("<br>".join(lines))
        self.power_text.setToolTip(tooltip("\n".join(f"{i.name}: {i.source}" for i in budget.items)))


class ModelCard(Card):
    """One popular model: the best format that fits, the speed, and a verdict in words and colour."""

    def __init__(self, state: AppState, spec: ModelSpec, machine: Machine, is_live: bool) -> None:
        super().__init__()
        self.state = state
        self.spec = spec
        self.setFixedWidth(250)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        model = from_catalog(spec)
        # the one answer every surface gives (docs/recommendation.md): format, where, speed
        rec = recommend(model, machine, "inference", state.catalog, live=is_live)
        view = fit_view(rec)
        self.view = view
        self.verdict = rec.result.verdict
        self.quant = rec.best.quant_id if rec.best is not None and rec.best.quant_id else ""
        #: the context the card was judged at: Fit opens with it, not with its last-used one
        self.context = rec.result.estimate.context
        glyph, words, colour = view.glyph, view.words, view.colour
        self.setStyleSheet(f"ModelCard {{ border-left: 5px solid {colour}; }}")
        title = subheading(spec.name)
        title.setWordWrap(True)
        self.body.addWidget(title)
        size = f"{sig(spec.params_b, 6)}B" if spec.params_b else ""
        if spec.is_moe and spec.active_params_b:
            size += f" ({sig(spec.active_params_b, 6)}B {tr('active')})"
        self.body.addWidget(muted(size))
        status = QLabel(f"<b>{glyph} {tr(words)}</b>")
        status.setStyleSheet(f"color: {colour};")
        self.body.addWidget(status)
        speed = view.tokens_per_s
        detail = (view.quant or "") if view.where is not None else tr("too large even from RAM")
        if speed is not None:
            detail += f" · ~{num(speed, group=False)} {tr('tokens/s')}"
        self.body.addWidget(plain(detail))
        self.setToolTip(tr("Open in Fit"))
        self.setAccessibleName(f"{spec.name}: {tr(words)}, {detail}")

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        if event.button() == Qt.MouseButton.LeftButton:
            self.open()

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
