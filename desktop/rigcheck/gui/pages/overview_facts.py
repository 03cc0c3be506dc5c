"""The Overview's machine facts: a card per model of GPU (its memory, driver, link), the CPU and memory
card with the host bandwidth (editable), and the power supply card with its one-line badge and, on
demand, how its budget is worked out."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from rigcheck.core.estimate.power import PowerBudget, power_budget
from rigcheck.core.estimate.speed import host_bandwidth
from rigcheck.core.known_text import in_language
from rigcheck.core.machine import GPU, Machine
from rigcheck.core.said import render
from rigcheck.core.unified import unified_share
from rigcheck.core.units import fmt_bytes, fmt_watts, index_ranges
from rigcheck.gui.elide import ElidedLabel
from rigcheck.gui.i18n import num, tr
from rigcheck.gui.state import AppState
from rigcheck.gui.widgets import POWER_VERDICTS, Card, esc, muted, plain, subheading, tooltip

#: past this many characters a GPU card's title is elided on one line (whole in its tooltip), not wrapped
LONG_TITLE = 120


class MachineFacts:
    """OverviewPage's fact cards: the GPUs', the CPU and memory (``bandwidth``), the PSU (``psu``,
    ``power_badge``, ``power_text``)."""

    state: AppState
    _label: str
    _live: bool
    no_gpu_text: QLabel
    bandwidth: QSpinBox
    bandwidth_source: QLabel
    psu: QSpinBox
    power_badge: QLabel
    power_more: QToolButton
    power_text: QLabel

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
