"""Fleet: a folder of audit reports side by side; drift highlighted; which machines can run a model.

Reading the folder, checking a model on every node and making the table's rows all run off the GUI thread
(``workers.submit_task``: a progress bar and a Cancel button while they run); only the finished rows
reach the GUI thread, where a model hands them to the view (:mod:`rigcheck.gui.fleet_table`), so 5,000
machines open, sort and check without freezing the window. A newer request drops the older one's
result. Double-clicking a machine makes it the selected machine of every other page.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import QModelIndex, Qt, Slot
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from rigcheck.core.known_text import in_language
from rigcheck.core.report.fleet import VERSION_FIELDS, Fleet, load_fleet
from rigcheck.core.steps import Steps
from rigcheck.gui.elide import ElidedLabel
from rigcheck.gui.fleet_table import COLUMNS, FleetTableModel, Sort, Table, Verdicts, build_table
from rigcheck.gui.i18n import tr
from rigcheck.gui.state import AppState
from rigcheck.gui.widgets import Card, esc, heading, muted, subheading
from rigcheck.gui.workers import Task, held_past_next_turn, submit_task

QUANTS = ("q4_k_m", "q8_0", "bf16", "q3_k_m")
#: the narrowest the GPU column (which takes what is left) and any other column are made, in pixels
MIN_GPU_PX, MIN_COLUMN_PX, MIN_VERDICT_PX = 140, 72, 180
#: versions hidden when no machine of the fleet reports them
OPTIONAL_COLUMNS = frozenset({"cuda", "rocm", "torch"})
#: seconds between two updates of the progress bar while a fleet is read or checked: each one is a
#: GUI-thread handler that waits for the interpreter the pool thread holds (as the Monitor's replay)
PROGRESS_EVERY_S = 0.25
#: machine names listed in one drift line, and skipped files listed, before "and N more"
MAX_LISTED = 12


def _differ_labels() -> dict[str, str]:
    return {
        "driver": tr("Drivers differ"),
        "cuda_driver": tr("CUDA driver versions differ"),
        "amdgpu": tr("amdgpu driver versions differ"),
        "rocm": tr("ROCm versions differ"),
        "torch": tr("PyTorch versions differ"),
        "gpu": tr("GPUs differ"),
        "gpu_count": tr("GPU counts differ"),
        "gpu_mix": tr("GPU models differ within a node"),
        "ram_gib": tr("RAM differs"),
        "os": tr("Operating systems differ"),
    }


def _listed(items: list[str], sep: str = ", ") -> str:
    """At most :data:`MAX_LISTED` of ``items`` (already escaped), then how many more."""
    shown = sep.join(items[:MAX_LISTED])
    more = len(items) - MAX_LISTED
    return shown + (f"{sep}{tr('and {n} more').format(n=more)}" if more > 0 else "")


class FleetPage(QWidget):
    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self.fleet: Fleet | None = None
        self.verdicts: Verdicts = {}
        self._nodes: dict[str, Any] = {}
        #: the work in flight (reading, checking or making rows) and its number: a result whose number
        #: is not the latest is stale (the user opened another folder, checked again, or cancelled)
        self._task: Task | None = None
        self._generation = 0

        page = QVBoxLayout(self)
        page.setContentsMargins(16, 12, 16, 12)
        page.setSpacing(8)
        page.addWidget(heading(tr("Fleet")))
        row = QHBoxLayout()
        self.open_button = QPushButton(tr("Open a folder of reports…"))
        self.open_button.clicked.connect(self._choose_folder)
        self.status = ElidedLabel(
            tr("Reports come from 'rigcheck audit --format json' on each machine (see docs/fleet.md)."),
            mode=Qt.TextElideMode.ElideMiddle,  # a long folder keeps its start and its name
        )
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumWidth(200)
        self.progress.setAccessibleName(tr("Progress"))
        self.progress.setVisible(False)
        self.cancel_button = QPushButton(tr("Cancel"))
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setVisible(False)
        row.addWidget(self.open_button)
        row.addWidget(self.status, 1)
        row.addWidget(self.progress)
        row.addWidget(self.cancel_button)
        row.setContentsMargins(0, 0, 0, 0)
        self.top_row = QWidget()
        self.top_row.setLayout(row)
        self.top_row.setVisible(False)  # the empty state says it all until a folder is open
        page.addWidget(self.top_row)

        self.table_model = FleetTableModel()
        self.table = QTableView()
        self.table.setModel(self.table_model)
        self.table.setAccessibleName(tr("Machines in the fleet"))
        self.table.setTabKeyNavigation(False)  # one Tab stop; the arrows move between machines
        self.table.setEditTriggers(QTableView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        # fixed row heights: the view never asks 5,000 rows how tall they are
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        # the GPU list takes what is left (elided, whole in its tooltip): the table never scrolls sideways;
        # the other columns are as wide as their longest texts, capped (a 4096-character name is elided)
        header.setSectionResizeMode(COLUMNS.index("gpus"), QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(False)
        header.setSortIndicatorShown(True)
        header.setSortIndicator(0, Qt.SortOrder.AscendingOrder)  # the arrow and the rows agree from the start
        self.table.setSortingEnabled(True)
        self.table.doubleClicked.connect(self._open_index)

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
        self.model.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.model.setMinimumContentsLength(24)  # an overlay's 4096-character model name does not widen it
        for spec in state.catalog.models:
            self.model.addItem(spec.name, spec.id)
        self.model.setCurrentIndex(max(self.model.findData("llama-3.1-70b"), 0))
        self.quant = QComboBox()
        self.quant.setAccessibleName(tr("Weight format"))
        for quant in QUANTS:
            self.quant.addItem(quant.upper() if "_" in quant else quant, quant)
        self.check_button = QPushButton(tr("Check"))
        self.check_button.clicked.connect(self.check_model)
        # another model or format is checked at once: the verdict column always answers what the boxes say
        self.model.currentIndexChanged.connect(lambda _i: self.check_model())
        self.quant.currentIndexChanged.connect(lambda _i: self.check_model())
        model_row.addWidget(self.model, 2)
        model_row.addWidget(self.quant)
        model_row.addWidget(self.check_button)
        model_row.addStretch(1)
        self.model_box = QWidget()
        self.model_box.setLayout(model_row)
        model_row.setContentsMargins(0, 0, 0, 0)
        self.model_box.setVisible(False)  # nothing to ask about until a fleet is open
        # the question and what differs above the table whose last column answers it
        page.insertWidget(page.indexOf(self.stack), self.model_box)
        self.drift_text = QLabel()
        self.drift_text.setWordWrap(True)
        self.drift_text.setAccessibleName(tr("Drift"))
        page.insertWidget(page.indexOf(self.stack), self.drift_text)
        self.problems = muted("", rich=True)
        page.addWidget(self.problems)
        self.hint = muted(tr("Double-click a machine to show it on the other pages."))
        self.hint.setVisible(False)
        page.addWidget(self.hint)

    # -- work on the pool ------------------------------------------------------------------------

    def _start(self, work: Any, on_done: Any, status: str) -> None:
        """Run ``work(steps)`` on the pool, dropping whatever ran before; ``on_done(result)`` on the GUI
        thread unless a newer request (or Cancel) came first."""
        if self._task is not None:
            self._task.cancel()
        self._generation += 1
        generation = self._generation

        def done(result: object) -> None:
            if generation == self._generation:
                self._finish()
                on_done(result)

        def failed(message: str) -> None:
            if generation == self._generation:
                self._finish()
                self.status.setText(f"✘ {message.split(': ', 1)[-1]}")

        def progressed(fraction: float) -> None:
            if generation == self._generation:
                self.progress.setValue(round(fraction * 1000))

        self.status.setText(status)
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.cancel_button.setVisible(True)
        self.check_button.setEnabled(False)
        self._task = submit_task(
            self.state.pool, work, done, failed, on_progress=progressed, progress_every_s=PROGRESS_EVERY_S
        )

    def _finish(self) -> None:
        self._task = None
        self.progress.setVisible(False)
        self.cancel_button.setVisible(False)
        self.check_button.setEnabled(True)

    @Slot()
    def cancel(self) -> None:
        """Stop the reading or the check under way; what the page showed before stays."""
        if self._task is None:
            return
        self._task.cancel()
        self._generation += 1  # its result, if it still comes, is stale
        self._finish()
        self.status.setText(tr("Cancelled"))

    def shutdown(self) -> None:
        """The window is closing: stop the work under way at its next step."""
        if self._task is not None:
            self._task.cancel()
            self._generation += 1
            self._task = None

    @Slot()
    def busy(self) -> bool:
        """Reports are still being read, or a model checked, on the pool."""
        return self._task is not None

    # -- loading ---------------------------------------------------------------------------------

    def retranslate(self) -> None:
        """After a language switch: the open fleet, its check and its drift, in the new language."""
        fleet, verdicts = self.fleet, dict(self.verdicts)
        self.table_model.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(COLUMNS))
        if fleet is None:
            return

        sort = self.table_model.sort_state()

        def rows(_steps: Steps) -> tuple[Table, str, str]:
            return build_table(fleet, verdicts, sort), drift_html(fleet), _problems_html(fleet)

        def apply(result: tuple[Table, str, str]) -> None:
            self._show_rows(result[0])
            self.drift_text.setText(result[1])
            self.problems.setText(result[2])
            self.status.setText(self._checked_text() if self.verdicts else self._count_text())

        self._start(rows, apply, self.status.text())

    def _count_text(self) -> str:
        fleet = self.fleet
        return f"{len(fleet.nodes) if fleet else 0} {tr('machines')}"

    def _checked_text(self) -> str:
        runs = sum(1 for verdict, _speed in self.verdicts.values() if verdict == "fits")
        return f"{runs} {tr('of')} {len(self.verdicts)} {tr('machines run it entirely on their GPUs')}"

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, tr("Open a folder of reports"))
        if folder:
            self.open_folder(Path(folder))

    def open_folder(self, folder: Path) -> None:
        self.top_row.setVisible(True)
        catalog = self.state.catalog
        sort = self.table_model.sort_state()
        self._start(
            lambda steps: _load(folder, catalog, sort, steps), self._loaded, tr("Reading") + f" {folder}…"
        )

    def _loaded(self, result: tuple[Fleet, dict[str, Any], Table, str, str]) -> None:
        fleet, self._nodes, rows, drift, problems = result
        self.fleet = fleet
        self.verdicts = {}
        self.status.setText(self._count_text())
        has_nodes = bool(fleet.nodes)
        self.stack.setCurrentIndex(1 if has_nodes else 0)
        self.top_row.setVisible(True)
        self.model_box.setVisible(has_nodes)
        self.hint.setVisible(has_nodes)
        self.problems.setText(problems)
        self.drift_text.setText(drift)
        self._show_rows(rows)
        if has_nodes:
            self.check_model()  # the verdict column answers at once, for the model shown, not after a click

    def _show_rows(self, table: Table) -> None:
        self.table_model.set_table(table)
        # a column no machine reports (ROCm on an NVIDIA fleet) is hidden: its room goes to the verdict
        for column, key in enumerate(COLUMNS):
            empty = column < len(table.empty) and table.empty[column]
            self.table.setColumnHidden(column, empty and key in OPTIONAL_COLUMNS)
        header = self.table.horizontalHeader()
        self._widths = self.table_model.column_widths(self.table.font(), header.font())
        self._fit_columns()

    def _fit_columns(self) -> None:
        """The columns at their texts' widths, the widest ones narrowed (their texts elided, whole in the
        tooltips) until the GPU column keeps :data:`MIN_GPU_PX` and the table never scrolls sideways."""
        widths = list(getattr(self, "_widths", []))
        if not widths:
            return
        gpus = COLUMNS.index("gpus")
        # the GPU column keeps MIN_GPU_PX, or less when its names are shorter ("RTX 4090"): the rest is room
        # for the verdict's words
        room = self.table.viewport().width() - min(MIN_GPU_PX, widths[gpus])
        widths = [0 if self.table.isColumnHidden(c) else w for c, w in enumerate(widths)]
        others = [w for c, w in enumerate(widths) if c != gpus]
        fitted_widths = _narrowed(others, room)
        # a verdict still too wide ("Funziona, troppo lento per chattare · ~1,6 token/s" at 900 px in
        # Italian) goes on two lines, its speed under its words, rather than losing its end
        two_lines = fitted_widths[-1] < others[-1]
        if two_lines:
            others[-1] = self.table_model.verdict_width(self.table.font(), two_lines=True)
            fitted_widths = _narrowed(others, room)
        self.table_model.set_two_line_verdicts(two_lines)
        lines = 2 if two_lines else 1
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().lineSpacing() * lines + 10)
        others = fitted_widths
        header = self.table.horizontalHeader()
        # room to spare once every text is whole (1920 px, "RTX 4090"): the verdict, the answer, takes it;
        # the GPU list stretched over ~850 px of nothing beside a verdict squeezed to the right edge
        verdict = len(widths) - 1
        spare = verdict >= len(COLUMNS) and sum(widths) < self.table.viewport().width()
        header.setSectionResizeMode(
            gpus, QHeaderView.ResizeMode.Interactive if spare else QHeaderView.ResizeMode.Stretch
        )
        if verdict >= len(COLUMNS):
            mode = QHeaderView.ResizeMode.Stretch if spare else QHeaderView.ResizeMode.Interactive
            header.setSectionResizeMode(verdict, mode)
        if spare:
            header.resizeSection(gpus, widths[gpus])
        fitted = iter(others)
        for column in range(len(widths)):
            if column != gpus:
                width = next(fitted)
                if not self.table.isColumnHidden(column) and not (spare and column == verdict):
                    header.resizeSection(column, width)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_columns()

    # -- model -----------------------------------------------------------------------------------

    @Slot()
    def check_model(self) -> None:
        fleet = self.fleet
        if fleet is None:
            return
        model_id, quant = self.model.currentData(), self.quant.currentData()
        catalog = self.state.catalog
        sort = self.table_model.sort_state()
        self._start(
            lambda steps: _check(fleet, model_id, quant, catalog, steps, sort=sort),
            self._checked,
            tr("Checking") + f" {self.model.currentText()}…",
        )

    def _checked(self, result: tuple[Verdicts, Table]) -> None:
        self.verdicts, rows = result
        self._show_rows(rows)
        self.status.setText(self._checked_text())

    def node_at(self, row: int) -> str:
        """The machine shown in ``row`` of the table (as sorted now)."""
        return self.table_model.row_at(row).node

    @Slot(QModelIndex)
    def _open_index(self, index: QModelIndex) -> None:
        self.open_node(index.row())

    def open_node(self, row: int) -> None:
        """Make the machine in ``row`` the selected machine of every page (a double-click does this)."""
        if self.fleet is None or not 0 <= row < self.table_model.rowCount():
            return
        node = self._nodes.get(self.node_at(row))
        if node is None:
            return

        def show_overview() -> None:
            if shiboken6.isValid(self):
                self.state.page_requested.emit("overview")

        # Overview is shown on the next turn of the event loop, not in this handler: every page
        # answering the new machine and then the switch (Overview's layout, its first paint) in one
        # handler added up to one long freeze; two shorter handlers let input and paints in between.
        # The pages' work for the machine starts after the switch: run against it, the pool's Python
        # made the switch wait for the interpreter (wall time twice its CPU time).
        with held_past_next_turn(show_overview):
            self.state.set_machine(node.machine, f"{tr('Fleet')}: {node.name}", False)


def _short(value: str, limit: int = 60) -> str:
    """A foreign value for the drift label: escaped, cut to ``limit`` characters (a 4096-character name
    cannot wrap, so it would widen the window; the table's tooltip has it whole)."""
    value = " ".join(value.split())
    return html.escape(value if len(value) <= limit else value[: limit - 1] + "…")


def drift_html(fleet: Fleet) -> str:
    """What differs across the fleet, in words that match the data.

    Versions: every value with its node count, oldest first ("Drivers differ: 470.82.01 (1),
    550.54.14 (2), 580.65.06 (3)"), and, where a majority exists, the machines off it. GPUs, RAM and OS:
    the majority and the machines that differ from it. Only when nothing differs: a check mark. Each
    list stops after :data:`MAX_LISTED` names ("and 1,488 more"): the table flags every one.
    """
    labels = _differ_labels()
    drift = {d.field: d for d in fleet.drift()}
    lines = []
    for spread in fleet.spread():
        listed = _listed([f"{_short(v)} ({n})" for v, n in spread.values])
        line = f"▲ <b>{labels[spread.field]}</b>: {listed}"
        off = drift.get(spread.field)
        if off is not None:
            names = _listed([_short(n) for n in off.nodes])
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
        others = _listed([f"{_short(n)} ({_short(v)})" for n, v in zip(d.nodes, d.values, strict=True)])
        majority = tr(d.majority) if field == "gpu_mix" else d.majority  # ours, not the data's
        lines.append(
            f"▲ <b>{labels.get(field, esc(field))}</b>: {_short(majority)} ({d.majority_count} "
            f"{tr('of')} {d.compared}); {tr('the others')}: {others}"
        )
    if lines:
        return "<br>".join(lines)
    return "✔ " + tr("Same drivers, CUDA, ROCm and PyTorch versions, GPUs, RAM and OS on every machine.")


def _problems_html(fleet: Fleet) -> str:
    if not fleet.problems:
        return ""
    return f"{tr('Skipped')}: <br>" + _listed([_short(in_language(p), 200) for p in fleet.problems], "<br>")


def _load(
    folder: Path, catalog: Any, sort: Sort, steps: Steps
) -> tuple[Fleet, dict[str, Any], Table, str, str]:
    """On the pool: the fleet, its nodes by name, its rows (in the view's ``sort``), drift and
    skipped-files texts."""
    fleet = load_fleet([folder], catalog, steps=steps)
    nodes = {node.name: node for node in fleet.nodes}
    return fleet, nodes, build_table(fleet, {}, sort), drift_html(fleet), _problems_html(fleet)


def _check(
    fleet: Fleet, model_id: str, quant: str, catalog: Any, steps: Steps, *, sort: Sort
) -> tuple[Verdicts, Table]:
    """On the pool: every node's verdict for the model, and the rows showing them (in ``sort``)."""
    results = fleet.can_run(model_id, catalog, quant=quant, steps=steps)
    verdicts = {node.name: (verdict, speed) for node, verdict, speed in results}
    return verdicts, build_table(fleet, verdicts, sort)


def _narrowed(wanted: list[int], room: int) -> list[int]:
    """The columns (the verdict last) narrowed until they fit ``room``: the others first (their texts
    elide, whole in the tooltips), the verdict, the answer asked for, only when they are all at their
    least (cutting the widest first cut the verdict's speed off at 900 px)."""
    widths = list(wanted)
    least = [MIN_COLUMN_PX] * (len(widths) - 1) + [MIN_VERDICT_PX]
    while sum(widths) > room:
        slack = [w - m for w, m in zip(widths, least, strict=True)]
        if max(slack[:-1], default=0) > 0:
            slack[-1] = 0  # the verdict keeps its width while another column can give some
        if max(slack) <= 0:
            break
        widest = slack.index(max(slack))
        widths[widest] = max(least[widest], widths[widest] - max(1, min(8, sum(widths) - room)))
    return widths
