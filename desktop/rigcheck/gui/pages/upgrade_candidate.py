"""The Upgrade page's candidate: what this machine takes (the GPUs listed, a built-in GPU's other
controls), the GPUs added, replaced or removed, another machine tried, and the candidate Machine built
from them (``core.whatif.upgrade``); the machine now in a few lines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QWidget,
)

from rigcheck.core.catalog import GpuSpec
from rigcheck.core.estimate.buying import STEP_DOWNS
from rigcheck.core.estimate.chassis import Chassis, chassis
from rigcheck.core.estimate.cost import Prices
from rigcheck.core.estimate.soldered import MachineChoice, choice_label, why_built_in
from rigcheck.core.estimate.upgrade import Option
from rigcheck.core.machine import GPU, Machine
from rigcheck.core.units import fmt_bytes, index_ranges
from rigcheck.core.whatif import upgrade
from rigcheck.gui.i18n import num, tr
from rigcheck.gui.pages.upgrade_picker import RELEVANCE
from rigcheck.gui.state import AppState
from rigcheck.gui.widgets import SortItem, esc

GIB = 1024**3


class Candidate:
    """UpgradePage's candidate: the GPUs kept, ``added`` or a ``replacement`` (``candidate_list``), or a
    machine to ``swap`` to, with ``ram``, ``psu`` and the prices (``kwh``, ``utilization``)."""

    state: AppState
    box: Chassis | None
    built_in: bool
    added: list[GpuSpec]
    replacement: list[GpuSpec] | None
    swap: MachineChoice | None
    intro: QLabel
    options_heading: QLabel
    fixed_text: QLabel
    gpu_picker: QWidget
    search: QLineEdit
    catalog_list: QTableWidget
    fits_label: QLabel
    show_weaker: QCheckBox
    add_button: QPushButton
    replace_button: QPushButton
    candidate_list: QListWidget
    swap_text: QLabel
    form: QFormLayout
    ram: QSpinBox
    psu: QSpinBox
    kwh: QDoubleSpinBox
    utilization: QSpinBox
    money: QWidget
    _timer: QTimer
    _filled: bool

    if TYPE_CHECKING:  # UpgradePage's, GpuPicker's and WaysToRun's

        def _first_fill(self) -> None: ...

        def _rank(self) -> None: ...

        def _show_tiers(self) -> None: ...

        def _selected_spec(self) -> GpuSpec | None: ...

        def find_cheapest(self) -> None: ...

    def _show_takes(self) -> None:
        """Only the GPUs this machine can take are listed (step downs from its best GPU only with "Show
        cards smaller or slower"); the label says what it takes and why. A built-in machine shows what can
        change instead (no GPU table, Remove or PSU)."""
        machine = self.state.machine
        box = chassis(machine, self.state.catalog) if machine is not None else None
        self.box = box
        if self._filled:
            self._rank()
        words = self.search.text().lower().split()
        weaker_shown = self.show_weaker.isChecked()
        weaker = 0
        for row in range(self.catalog_list.rowCount()):
            item = self.catalog_list.item(row, 0)
            gpu_id = item.data(Qt.ItemDataRole.UserRole)
            if not gpu_id:
                continue  # a tier's header row: _show_tiers
            spec = self.state.catalog.gpu(gpu_id)
            haystack = f"{item.text()} {item.data(Qt.ItemDataRole.UserRole)}".lower()
            fits = spec is not None and (box is None or box.takes(spec))
            rank = self.catalog_list.item(row, RELEVANCE)
            step_down = isinstance(rank, SortItem) and rank.key[0] == STEP_DOWNS
            weaker += fits and step_down
            hidden = not fits or not all(w in haystack for w in words) or (step_down and not weaker_shown)
            self.catalog_list.setRowHidden(row, hidden)
        self._show_tiers()
        self.show_weaker.setVisible(bool(weaker))
        if box is not None:
            self.fits_label.setText(tr("This machine is") + " " + tr(box.why) + ".")
        can_add = box is None or box.max_gpus > 0
        for button in (self.add_button, self.replace_button):
            button.setEnabled(can_add)
        self.built_in = bool(
            machine is not None and machine.gpus and box is not None and box.kind == "built_in"
        )
        self._apply_kind()

    def _apply_kind(self) -> None:
        """Show the controls that apply to this kind of machine."""
        built_in = self.built_in
        machine = self.state.machine
        self.gpu_picker.setVisible(not built_in)
        self.fixed_text.setVisible(built_in)
        if built_in and machine is not None:
            self.fixed_text.setText(why_built_in(machine, self.state.catalog))
        unified = machine is not None and any(g.unified_memory for g in machine.gpus)
        # a laptop's RAM may sit in slots (its GPU memory never does); unified memory is the chip's
        self.form.setRowVisible(self.ram, not (built_in and unified))
        self.form.setRowVisible(self.psu, not built_in)
        for field in (self.kwh, self.utilization):  # they price new GPUs: there are none to price
            self.form.setRowVisible(field, not built_in)
        self.money.setVisible(not built_in)
        self.intro.setText(
            tr("A built-in GPU cannot change: try another machine, every model is placed on both.")
            if built_in
            else tr("Try other GPUs, more RAM or a bigger PSU: every model is placed on both machines.")
        )
        self.options_heading.setText(
            tr("Machines that run a model") if built_in else tr("Cheapest GPUs that run a model")
        )

    @Slot(str)
    def _filter(self, _text: str) -> None:
        self._show_takes()

    def _room(self) -> int:
        """How many more GPUs the machine holds."""
        box = getattr(self, "box", None)
        if box is None:
            return 1 << 30
        kept = len(self.replacement) if self.replacement is not None else len(self._machine_gpus())
        return box.max_gpus - kept - len(self.added)

    @Slot()
    def add_selected(self) -> None:
        spec = self._selected_spec()
        if spec is None:
            return
        if self._room() <= 0:
            why = tr(self.box.why) if self.box is not None else ""
            self.fits_label.setText("▲ " + tr("No room for another GPU: this machine is") + f" {why}.")
            return
        self.added.append(spec)
        self._candidate_changed()

    @Slot()
    def replace_with_selected(self) -> None:
        spec = self._selected_spec()
        if spec is not None:
            self.replacement = [spec]
            self.added = []
            self._candidate_changed()

    @Slot()
    def remove_selected(self) -> None:
        row = self.candidate_list.currentRow()
        kept = len(self.replacement) if self.replacement is not None else len(self._machine_gpus())
        if row >= kept and self.added:
            del self.added[row - kept]
        elif 0 <= row < kept:
            current = self.replacement if self.replacement is not None else self._as_specs()
            self.replacement = [s for i, s in enumerate(current) if i != row]
        self._candidate_changed()

    def try_option(self, choice: object) -> None:
        """ "Try this" on a row: the candidate becomes that option (GPUs bought, or another machine)."""
        if isinstance(choice, MachineChoice):
            self.swap = choice
        elif isinstance(choice, Option) and not choice.rent_only and choice.gpu_id:
            spec = self.state.catalog.gpu(choice.gpu_id)
            if spec is None:
                return
            self.swap = None
            if choice.owned:
                self.replacement, self.added = None, [spec] * (choice.count - choice.owned)
            else:
                self.replacement, self.added = [spec] * choice.count, []
        else:
            return
        self._candidate_changed()

    @Slot()
    def reset(self) -> None:
        if not self._filled:
            self._first_fill()  # which resets
            return
        machine = self.state.machine
        self.added = []
        self.replacement = None
        self.swap = None
        self._show_takes()
        if machine is not None:
            self.ram.blockSignals(True)
            self.ram.setValue(max(1, round(machine.memory.total_bytes / GIB)))
            self.ram.blockSignals(False)
            self.psu.blockSignals(True)
            self.psu.setValue(int(self.state.psu_watts() or machine.psu.watts or 0))
            self.psu.blockSignals(False)
        self._candidate_changed()
        if machine is not None:
            # "What would run it" answered for the model shown, on the pool, without a click on Find: the
            # section below the table (other machines, for a built-in GPU) was empty until then
            self.find_cheapest()

    def _machine_gpus(self) -> list[str]:
        machine = self.state.machine
        return [g.name for g in machine.gpus] if machine else []

    def _as_specs(self) -> list[GpuSpec]:
        machine = self.state.machine
        specs = []
        for gpu in machine.gpus if machine else ():
            spec = self.state.catalog.spec_for(gpu)
            if spec is not None:
                specs.append(spec)
        return specs

    def _candidate_changed(self) -> None:
        self.candidate_list.clear()
        kept = [s.name for s in self.replacement] if self.replacement is not None else self._machine_gpus()
        for name in kept:
            self.candidate_list.addItem(name)
        for spec in self.added:
            item = QListWidgetItem(f"+ {spec.name}")
            font = QFont(item.font())
            font.setBold(True)
            item.setFont(font)
            self.candidate_list.addItem(item)
        self.swap_text.setVisible(self.built_in)
        if self.built_in:
            self.swap_text.setText(
                "<b>" + esc(choice_label(self.swap)) + "</b>"
                if self.swap is not None
                else esc(tr("The same machine: pick one above and press Try it."))
            )
        self._timer.start()

    def candidate(self) -> Machine | None:
        machine = self.state.machine
        if machine is None:
            return None
        if self.built_in:
            if self.swap is not None:
                return self.swap.machine
            unified = any(g.unified_memory for g in machine.gpus)
            return machine if unified else upgrade(machine, ram_gb=float(self.ram.value()))
        return upgrade(
            machine,
            gpus=self.replacement,
            add_gpus=self.added,
            ram_gb=float(self.ram.value()),
            psu_watts=float(self.psu.value()) or None,
        )

    def prices(self) -> Prices:
        self.state.settings.setValue("upgrade/kwh", self.kwh.value())
        return Prices(electricity_usd_per_kwh=self.kwh.value(), utilization=self.utilization.value() / 100)


def _machine_text(machine: Machine, psu: float | None, *, built_in: bool = False) -> str:
    """The machine in a few lines; consecutive identical GPUs in one ("GPUs 0–7: 8 × H100 SXM5 80GB · 80.0
    GiB each")."""
    runs: list[list[GPU]] = []
    for gpu in machine.gpus:
        last = runs[-1][-1] if runs else None
        if last is not None and (last.name, last.memory_total_bytes) == (gpu.name, gpu.memory_total_bytes):
            runs[-1].append(gpu)
        else:
            runs.append([gpu])
    lines = []
    for run in runs:
        first = run[0]
        if len(run) == 1:
            lines.append(f"GPU {first.index}: {esc(first.name)} · {fmt_bytes(first.memory_total_bytes)}")
        else:
            indices = index_ranges([g.index for g in run if g.index is not None])
            lines.append(
                f"{tr('GPUs')} {indices}: {len(run)} × {esc(first.name)} · "
                f"{fmt_bytes(first.memory_total_bytes)} {tr('each')}"
            )
    gpus = "<br>".join(lines)
    watts = psu or machine.psu.watts
    if built_in:  # no PSU to speak of: the power brick or the laptop's own
        return gpus + f"<br>{tr('RAM')}: {fmt_bytes(machine.memory.total_bytes)}"
    return (
        (gpus or tr("No GPU"))
        + f"<br>{tr('RAM')}: {fmt_bytes(machine.memory.total_bytes)}"
        + "<br>"
        + (f"{tr('PSU')}: {num(watts, group=False)} W" if watts else tr("PSU: not entered"))
    )
