"""Fleet: a folder of audit reports side by side; drift highlighted; which machines can run a model.

Reading the folder and fitting a model on every node run off the GUI thread (``workers.submit``);
double-clicking a machine makes it the selected machine of every other page.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QStackedWidget,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from rigcheck.core.report.fleet import VERSION_FIELDS, Fleet, Node, load_fleet, version_key
from rigcheck.core.verdict_words import speed_text
from rigcheck.gui.fitview import verdict_view
from rigcheck.gui.i18n import tr
from rigcheck.gui.state import AppState
from rigcheck.gui.widgets import Card, SortItem, esc, heading, muted, subheading, tooltip
from rigcheck.gui.workers import Job, submit

COLUMNS = ("name", "gpus", "vram", "driver", "cuda", "rocm", "torch", "failing")
HEADERS = ("Machine", "GPUs", "VRAM", "Driver", "CUDA", "ROCm", "PyTorch", "Failing checks")
#: drift fields -> the table column they show in
DRIFT_COLUMNS = {"driver": "driver", "cuda_driver": "cuda", "rocm": "rocm", "torch": "torch", "gpu": "gpus"}
QUANTS = ("q4_k_m", "q8_0", "bf16", "q3_k_m")
#: columns sorted by the numbers in them (24 GiB before 128 GiB, 550.54 before 570.124)
NUMERIC_COLUMNS = frozenset({"vram", "driver", "cuda", "rocm", "torch", "failing"})


def _differ_labels() -> dict[str, str]:
    return {
        "driver": tr("Drivers differ"),
        "cuda_driver": tr("CUDA driver versions differ"),
        "amdgpu": tr("amdgpu driver versions differ"),
        "rocm": tr("ROCm versions differ"),
        "torch": tr("PyTorch versions differ"),
        "gpu": tr("GPUs differ"),
        "gpu_count": tr("GPU counts differ"),
        "ram_gib": tr("RAM differs"),
        "os": tr("Operating systems differ"),
    }


def _sort_key(column: str, text: str) -> tuple[object, ...]:
    if column in NUMERIC_COLUMNS:
        numbers = version_key(text.lstrip("▲✘ "))
        return (0, numbers) if numbers else (1, ())  # "—" (none) after every value
    return (0, text.casefold())


class FleetPage(QWidget):
    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self.fleet: Fleet | None = None
        self.verdicts: dict[str, tuple[str, float | None]] = {}
        self._jobs: set[Job] = set()

        page = QVBoxLayout(self)
        page.setContentsMargins(16, 12, 16, 12)
        page.setSpacing(8)
        page.addWidget(heading(tr("Fleet")))
        row = QHBoxLayout()
        self.open_button = QPushButton(tr("Open a folder of reports…"))
        self.open_button.clicked.connect(self._choose_folder)
        self.status = muted(
            tr("Reports come from 'rigcheck audit --format json' on each machine (see docs/fleet.md).")
        )
        row.addWidget(self.open_button)
        row.addWidget(self.status, 1)
        row.setContentsMargins(0, 0, 0, 0)
        self.top_row = QWidget()
        self.top_row.setLayout(row)
        self.top_row.setVisible(False)  # the empty state says it all until a folder is open
        page.addWidget(self.top_row)

        self.table = QTableWidget(0, len(COLUMNS) + 1)
        self.table.setHorizontalHeaderLabels([tr(h) for h in HEADERS] + [tr("Model verdict")])
        self.table.setAccessibleName(tr("Machines in the fleet"))
        self.table.setTabKeyNavigation(False)  # one Tab stop; the arrows move between machines
        self.table.setSortingEnabled(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # the GPU list takes what is left (elided at 1024 px, whole in its tooltip): the table never
        # scrolls sideways
        self.table.horizontalHeader().setSectionResizeMode(
            COLUMNS.index("gpus"), QHeaderView.ResizeMode.Stretch
        )
        self.table.horizontalHeader().setStretchLastSection(False)
        self.table.cellDoubleClicked.connect(self._open_node)
        header = self.table.horizontalHeader()
        header.setSortIndicatorShown(True)
        header.setSortIndicator(0, Qt.SortOrder.AscendingOrder)  # the arrow and the rows agree from the start

        self.empty = Card()
        self.empty.body.addWidget(subheading(tr("No fleet open yet")))
        steps = QLabel(
            tr("1. On each machine, run: rigcheck audit --format json --output NAME.json")
            + "\n"
            + tr("2. Put the reports in one folder (a shared folder, or copy them with scp).")
            + "\n"
            + tr("3. Open that folder here: one row per machine; versions that differ are flagged.")
        )
        steps.setTextFormat(Qt.TextFormat.PlainText)
        steps.setWordWrap(True)
        steps.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.empty.body.addWidget(steps)
        self.empty_button = QPushButton(tr("Open a folder of reports…"))
        self.empty_button.clicked.connect(self._choose_folder)
        self.empty.body.addWidget(self.empty_button, 0, Qt.AlignmentFlag.AlignLeft)
        empty_page = QWidget()
        empty_column = QVBoxLayout(empty_page)
        empty_column.setContentsMargins(0, 0, 0, 0)
        empty_column.addWidget(self.empty)
        empty_column.addStretch(1)
        self.stack = QStackedWidget()
        self.stack.addWidget(empty_page)
        self.stack.addWidget(self.table)
        page.addWidget(self.stack, 1)

        model_row = QHBoxLayout()
        model_row.addWidget(subheading(tr("Which machines can run")))
        self.model = QComboBox()
        self.model.setAccessibleName(tr("Model"))
        for spec in state.catalog.models:
            self.model.addItem(spec.name, spec.id)
        self.model.setCurrentIndex(max(self.model.findData("llama-3.1-70b"), 0))
        self.quant = QComboBox()
        self.quant.setAccessibleName(tr("Weight format"))
        for quant in QUANTS:
            self.quant.addItem(quant.upper() if "_" in quant else quant, quant)
        self.check_button = QPushButton(tr("Check"))
        self.check_button.clicked.connect(self.check_model)
        model_row.addWidget(self.model, 2)
        model_row.addWidget(self.quant)
        model_row.addWidget(self.check_button)
        model_row.addStretch(1)
        self.model_box = QWidget()
        self.model_box.setLayout(model_row)
        model_row.setContentsMargins(0, 0, 0, 0)
        self.model_box.setVisible(False)  # nothing to ask about until a fleet is open
        page.addWidget(self.model_box)
        self.drift_text = QLabel()
        self.drift_text.setWordWrap(True)
        self.drift_text.setAccessibleName(tr("Drift"))
        page.addWidget(self.drift_text)
        self.problems = muted("", rich=True)
        page.addWidget(self.problems)
        self.hint = muted(tr("Double-click a machine to show it on the other pages."))
        self.hint.setVisible(False)
        page.addWidget(self.hint)

    # -- loading ---------------------------------------------------------------------------------

    def retranslate(self) -> None:
        """After a language switch: the open fleet, its check and its drift, in the new language."""
        fleet = self.fleet
        if fleet is None:
            return
        self._fill()
        if self.verdicts:
            self.status.setText(self._checked_text())
        else:
            self.status.setText(f"{len(fleet.nodes)} {tr('machines')}")
        skipped = "<br>".join(esc(p) for p in fleet.problems)
        self.problems.setText(f"{tr('Skipped')}: <br>{skipped}" if fleet.problems else "")

    def _checked_text(self) -> str:
        runs = sum(1 for verdict, _speed in self.verdicts.values() if verdict == "fits")
        return f"{runs} {tr('of')} {len(self.verdicts)} {tr('machines run it entirely on their GPUs')}"

    @Slot()
    def busy(self) -> bool:
        """Reports are still being read on the pool."""
        return bool(self._jobs)

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, tr("Open a folder of reports"))
        if folder:
            self.open_folder(Path(folder))

    def open_folder(self, folder: Path) -> None:
        self.top_row.setVisible(True)
        self.status.setText(tr("Reading") + f" {folder}…")
        self._jobs.add(submit(self.state.pool, lambda: load_fleet([folder]), self._loaded, self._failed))

    @Slot(object)
    def _loaded(self, fleet: Fleet) -> None:
        self._jobs.clear()
        self.fleet = fleet
        self.verdicts = {}
        self.status.setText(f"{len(fleet.nodes)} {tr('machines')}")
        has_nodes = bool(fleet.nodes)
        self.stack.setCurrentIndex(1 if has_nodes else 0)
        self.top_row.setVisible(True)
        self.model_box.setVisible(has_nodes)
        self.hint.setVisible(has_nodes)
        skipped = "<br>".join(esc(p) for p in fleet.problems)
        self.problems.setText(f"{tr('Skipped')}: <br>{skipped}" if fleet.problems else "")
        self._fill()

    @Slot(str)
    def _failed(self, message: str) -> None:
        self._jobs.clear()
        self.status.setText(f"✘ {message.split(': ', 1)[-1]}")

    def _fill(self) -> None:
        fleet = self.fleet
        if fleet is None:
            return
        drift = fleet.drift()
        odd: dict[tuple[str, str], str] = {}
        for d in drift:
            column = DRIFT_COLUMNS.get(d.field)
            for node in d.nodes:
                if column:
                    odd[(node, column)] = f"{tr('differs from the majority')} ({d.majority})"
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(fleet.nodes))
        bold = QFont(self.table.font())
        bold.setBold(True)
        for r, node in enumerate(fleet.nodes):
            values = fleet.row(node)
            for c, key in enumerate(COLUMNS):
                text = values.get(key, "")
                note = odd.get((node.name, key))
                item = SortItem(("▲ " + text) if note else text, _sort_key(key, text))
                if note:
                    item.setFont(bold)
                    item.setToolTip(tooltip(note))
                if key == "gpus" and not note:
                    item.setToolTip(tooltip(text))
                if key == "failing" and text not in ("", "0"):
                    item.setText(f"✘ {text}")
                item.setData(Qt.ItemDataRole.UserRole, node.name)
                self.table.setItem(r, c, item)
            verdict = self.verdicts.get(node.name)
            order = {"fits": 0, "fits_with_offload": 1, "does_not_fit": 2}
            rank = (order.get(verdict[0], 3), -(verdict[1] or 0)) if verdict else (4, 0)
            self.table.setItem(r, len(COLUMNS), SortItem(_verdict_text(verdict), rank))
        self.table.setSortingEnabled(True)  # re-sorts by the header's indicator: arrow and rows agree
        self.drift_text.setText(drift_html(fleet))

    # -- model -----------------------------------------------------------------------------------

    @Slot()
    def check_model(self) -> None:
        fleet = self.fleet
        if fleet is None:
            return
        model_id, quant = self.model.currentData(), self.quant.currentData()
        catalog = self.state.catalog
        self.check_button.setEnabled(False)
        self._jobs.add(
            submit(
                self.state.pool,
                lambda: fleet.can_run(model_id, catalog, quant=quant),
                self._checked,
                self._failed,
            )
        )

    @Slot(object)
    def _checked(self, results: list[tuple[Node, str, float | None]]) -> None:
        self._jobs.clear()
        self.check_button.setEnabled(True)
        self.verdicts = {node.name: (verdict, speed) for node, verdict, speed in results}
        self._fill()
        self.status.setText(self._checked_text())

    @Slot(int, int)
    def _open_node(self, row: int, _column: int) -> None:
        item = self.table.item(row, 0)
        if item is None or self.fleet is None:
            return
        name = item.data(Qt.ItemDataRole.UserRole)
        node = next((n for n in self.fleet.nodes if n.name == name), None)
        if node is not None:
            self.state.set_machine(node.machine, f"{tr('Fleet')}: {node.name}", False)
            self.state.page_requested.emit("overview")


def drift_html(fleet: Fleet) -> str:
    """What differs across the fleet, in words that match the data.

    Versions: every value with its node count, oldest first ("Drivers differ: 470.82.01 (1),
    550.54.14 (2), 580.65.06 (3)"), and, where a majority exists, the machines off it. GPUs, RAM and OS:
    the majority and the machines that differ from it. Only when nothing differs: a check mark.
    """
    labels = _differ_labels()
    drift = {d.field: d for d in fleet.drift()}
    lines = []
    for spread in fleet.spread():
        listed = ", ".join(f"{html.escape(v)} ({n})" for v, n in spread.values)
        line = f"▲ <b>{labels[spread.field]}</b>: {listed}"
        off = drift.get(spread.field)
        if off is not None:
            names = ", ".join(html.escape(n) for n in off.nodes)
            most = (
                tr("off the majority")
                if off.majority_count * 2 > off.compared
                else tr("off the most common value")
            )
            line += f" — {most}: {names}"
        lines.append(line)
    for field, d in drift.items():
        if field in VERSION_FIELDS:
            continue
        others = ", ".join(
            f"{html.escape(n)} ({html.escape(v)})" for n, v in zip(d.nodes, d.values, strict=True)
        )
        lines.append(
            f"▲ <b>{labels.get(field, field)}</b>: {html.escape(d.majority)} ({d.majority_count} "
            f"{tr('of')} {d.compared}); {tr('the others')}: {others}"
        )
    if lines:
        return "<br>".join(lines)
    return "✔ " + tr("Same drivers, CUDA, ROCm and PyTorch versions, GPUs, RAM and OS on every machine.")


def _verdict_text(verdict: tuple[str, float | None] | None) -> str:
    if verdict is None:
        return ""
    name, speed = verdict
    glyph, words, _colour = verdict_view(name, None, speed)
    return f"{glyph} {tr(words)}" + (f" · {speed_text(speed)}" if speed else "")
