"""Upgrade: the machine now against a candidate (other GPUs, more RAM, a bigger PSU), and what it costs.

The candidate is just another Machine (``core.whatif.upgrade``), so every model is placed on both by the
same estimator; ``core.estimate.upgrade.compare`` does the work (on the worker pool: it takes 0.1–1 s)
and ``core.estimate.cost`` the money. A machine whose GPU is built in (a Mac, a DGX Spark, a laptop)
gets no GPU table, Remove button or PSU field: it is offered other machines instead
(``core.estimate.soldered``). "What would it take?" from any does-not-fit verdict lands in
:meth:`UpgradePage.what_would_it_take`.
"""

from __future__ import annotations

from datetime import date

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from rigcheck.core.catalog import GpuSpec
from rigcheck.core.estimate.chassis import Chassis
from rigcheck.core.estimate.cost import PriceFact, Prices
from rigcheck.core.estimate.soldered import MachineChoice
from rigcheck.core.estimate.upgrade import POPULAR_MODELS, UpgradeReport, compare
from rigcheck.gui.i18n import tr
from rigcheck.gui.pages.upgrade_candidate import Candidate, _machine_text
from rigcheck.gui.pages.upgrade_parts import (
    CostChart,
    OptionsTable,
    outcome_text,
    preload_chart,
)
from rigcheck.gui.pages.upgrade_picker import PICKER_COLUMNS, RELEVANCE, TIER_ROLE, GpuPicker
from rigcheck.gui.pages.upgrade_results import BeforeAfter
from rigcheck.gui.pages.upgrade_ways import WaysToRun
from rigcheck.gui.state import NUMBER_RANGES, AppState
from rigcheck.gui.widgets import (
    Card,
    esc,
    heading,
    muted,
    off_screen,
    scroll_page,
    subheading,
    tooltip,
)
from rigcheck.gui.workers import Job, submit

WORKLOADS = (
    ("inference", "Inference"),
    ("qlora", "QLoRA fine-tune"),
    ("lora", "LoRA fine-tune"),
    ("full", "Full fine-tune"),
)
_outcome_text = outcome_text  # the name other modules and tests knew
__all__ = ["TIER_ROLE", "UpgradePage"]  # TIER_ROLE: read from here by tests


class UpgradePage(Candidate, GpuPicker, WaysToRun, BeforeAfter, QWidget):
    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self.report: UpgradeReport | None = None
        self.added: list[GpuSpec] = []
        self.replacement: list[GpuSpec] | None = None
        #: on a built-in machine: the machine to switch to ("Try this" on a row)
        self.swap: MachineChoice | None = None
        self.box: Chassis | None = None
        self.built_in = False
        #: what "What would it take?" asked: a model id (added to the comparison) and a context
        self.asked_model: str | None = None
        self.question = ""
        self.context: int | None = None
        self._job: Job | None = None
        self._generation = 0
        self._find_job: Job | None = None
        self._find_generation = 0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(120)
        self._timer.timeout.connect(self.recompute)

        content = scroll_page(self)
        page = QVBoxLayout(content)
        page.setContentsMargins(16, 12, 16, 16)
        page.setSpacing(10)
        page.addWidget(heading(tr("Upgrade")))
        self.intro = muted(
            tr("Try other GPUs, more RAM or a bigger PSU: every model is placed on both machines.")
        )
        page.addWidget(self.intro)
        # the comparison in one line, on the first screen ("12 → 15 of 16 models run on the GPU"): the
        # table that says it model by model is further down
        self.headline = QLabel()
        self.headline.setWordWrap(True)
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.headline.setAccessibleName(tr("Models before and after, in short"))
        self.headline.setVisible(False)
        page.addWidget(self.headline)
        self.asked = QLabel()
        self.asked.setWordWrap(True)
        self.asked.setTextFormat(Qt.TextFormat.RichText)
        self.asked.setVisible(False)
        page.addWidget(self.asked)
        # the answer first: what the candidate changes, above the controls (the table is further down)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setAccessibleName(tr("What the candidate changes"))
        progress_row = QHBoxLayout()
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)  # busy: how long it takes is not known in advance
        self.progress.setTextVisible(False)
        self.progress.setMaximumWidth(160)
        self.progress.setMaximumHeight(10)
        self.progress.setAccessibleName(tr("Working"))
        self.progress_text = muted("")
        progress_row.addWidget(self.progress)
        progress_row.addWidget(self.progress_text, 1)
        self.progress.setVisible(False)
        self.progress_text.setVisible(False)
        page.addLayout(progress_row)

        # "What would it take?" first: the cheapest ways to run a model, and their table, above the
        # candidate's controls, so the first screen at 1024×700 holds the question and its answer
        takes = Card()
        self.options_heading = subheading(tr("Cheapest GPUs that run a model"))
        takes.body.addWidget(self.options_heading)
        row = QHBoxLayout()
        self.target = QComboBox()
        self.target.setAccessibleName(tr("Model to run"))
        for spec in state.catalog.models:
            self.target.addItem(spec.name, spec.id)
        self.target.setCurrentIndex(max(self.target.findData("llama-3.3-70b"), 0))
        self.min_speed = QSpinBox()
        self.min_speed.setRange(1, 1000)
        self.min_speed.setValue(10)
        self.min_speed.setSuffix(" " + tr("tokens/s"))
        self.min_speed.setAccessibleName(tr("Minimum tokens per second"))
        self.at_least = QLabel(tr("at least"))
        self.find_button = QPushButton(tr("Find"))
        row.addWidget(self.target, 2)
        row.addWidget(self.at_least)
        row.addWidget(self.min_speed)
        row.addWidget(self.find_button)
        row.addStretch(1)
        takes.body.addLayout(row)
        self.suggestions = QLabel()
        self.suggestions.setWordWrap(True)
        self.suggestions.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        takes.body.addWidget(self.suggestions)
        self.options = OptionsTable(self.try_option)
        self.options.setVisible(False)
        takes.body.addWidget(self.options)
        page.addWidget(takes)

        top = QGridLayout()
        top.setHorizontalSpacing(12)
        page.addLayout(top)
        self.now_card = Card()
        self.now_card.body.addWidget(subheading(tr("Now")))
        self.now_text = QLabel()
        self.now_text.setWordWrap(True)
        self.now_card.body.addWidget(self.now_text)
        self.now_card.body.addStretch(1)
        # the answer beside the controls that change it: under Now, what the candidate changes (the column
        # was an empty frame as tall as the candidate's card)
        self.changes_card = Card()
        self.changes_card.body.addWidget(subheading(tr("What changes")))
        self.changes_card.body.addWidget(self.summary)
        self.left_column = left = QVBoxLayout()
        left.setSpacing(10)
        left.addWidget(self.now_card)
        left.addWidget(self.changes_card)
        left.addStretch(1)
        top.addLayout(left, 0, 0)

        candidate = Card()
        candidate.body.addWidget(subheading(tr("Candidate")))
        self.fixed_text = muted("")
        self.fixed_text.setVisible(False)
        candidate.body.addWidget(self.fixed_text)
        self.gpu_picker = QWidget()
        picker_column = QVBoxLayout(self.gpu_picker)
        picker_column.setContentsMargins(0, 0, 0, 0)
        self.search = QLineEdit()
        self.search.setPlaceholderText(tr("Search GPUs"))
        self.search.setAccessibleName(tr("Search GPUs"))
        self.catalog_list = QTableWidget(0, len(PICKER_COLUMNS))
        self.catalog_list.setHorizontalHeaderLabels(
            [tr(c) if c not in ("", "$/GiB") else c for c in PICKER_COLUMNS]
        )
        self.catalog_list.setColumnHidden(RELEVANCE, True)  # the default order's key, never shown
        self.catalog_list.setAccessibleName(tr("GPUs in the catalog"))
        self.catalog_list.setMinimumHeight(190)
        self.catalog_list.setTabKeyNavigation(False)  # one Tab stop; the arrows move between GPUs
        self.catalog_list.verticalHeader().setVisible(False)
        self.catalog_list.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.catalog_list.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.catalog_list.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        gpu_header = self.catalog_list.horizontalHeader()
        gpu_header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2, 3):
            gpu_header.setSectionResizeMode(column, QHeaderView.ResizeMode.Fixed)  # sized once per fill
        # one line a GPU: a long name ("RTX PRO 6000 Blackwell Workstation Edition") ends in "…", whole in
        # its tooltip, so the rows line up and twice as many fit the table's height
        self.catalog_list.setWordWrap(False)
        self.catalog_list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.catalog_list.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.catalog_list.verticalHeader().setDefaultSectionSize(self.catalog_list.fontMetrics().height() + 8)
        self.catalog_list.setSortingEnabled(True)
        # upgrades first (no step down, newest generation, cheapest first); a header click sorts otherwise
        gpu_header.setSortIndicator(RELEVANCE, Qt.SortOrder.AscendingOrder)
        # the tiers' header rows belong to the default order: another order hides them
        gpu_header.sortIndicatorChanged.connect(lambda *_a: self._show_tiers())
        self.fits_label = muted("")
        self.show_weaker = QCheckBox(tr("Show cards smaller or slower than yours"))
        self.show_weaker.setToolTip(
            tooltip(
                tr("Hidden unless ticked: a card with less memory or bandwidth than yours is no upgrade.")
            )
        )
        self.show_weaker.toggled.connect(lambda _on: self._show_takes())
        self.order_label = muted(tr("Cheapest first in each group; a column's title sorts by it."))
        picker_column.addWidget(self.search)
        picker_column.addWidget(self.order_label)
        picker_column.addWidget(self.catalog_list)
        picker_column.addWidget(self.show_weaker)
        picker_column.addWidget(self.fits_label)
        picker = QHBoxLayout()
        buttons = QVBoxLayout()
        self.add_button = QPushButton(tr("Add →"))
        self.replace_button = QPushButton(tr("Replace all →"))
        self.remove_button = QPushButton(tr("← Remove"))
        for button in (self.add_button, self.replace_button, self.remove_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        picker.addLayout(buttons)
        self.candidate_list = QListWidget()
        self.candidate_list.setAccessibleName(tr("The candidate's GPUs"))
        # the catalog table takes the card's whole width (four columns need it at 1024 px); the buttons
        # and the candidate's GPUs go below it
        self.candidate_list.setMaximumHeight(110)
        picker.addWidget(self.candidate_list, 1)
        picker_column.addLayout(picker)
        candidate.body.addWidget(self.gpu_picker)
        self.swap_text = QLabel()
        self.swap_text.setWordWrap(True)
        self.swap_text.setVisible(False)
        candidate.body.addWidget(self.swap_text)
        reset_row = QHBoxLayout()
        self.reset_button = QPushButton(tr("Reset"))
        reset_row.addWidget(self.reset_button)
        reset_row.addStretch(1)
        candidate.body.addLayout(reset_row)
        self.form = QFormLayout()
        self.ram = QSpinBox()
        self.ram.setRange(1, 65536)
        self.ram.setSuffix(" GiB")
        self.ram.setAccessibleName(tr("Candidate RAM"))
        self.psu = QSpinBox()
        self.psu.setRange(0, 10000)
        self.psu.setSingleStep(50)
        self.psu.setSuffix(" W")
        self.psu.setSpecialValueText(tr("none entered"))
        self.psu.setAccessibleName(tr("Candidate PSU"))
        self.workload = QComboBox()
        self.workload.setAccessibleName(tr("Workload"))
        for key, text in WORKLOADS:
            self.workload.addItem(tr(text), key)
        self.kwh = QDoubleSpinBox()
        self.kwh.setRange(0.0, 2.0)
        self.kwh.setDecimals(3)
        self.kwh.setSingleStep(0.01)
        self.kwh.setPrefix("$ ")
        self.kwh.setSuffix(" / kWh")
        kwh_default = Prices().electricity_usd_per_kwh
        self.kwh.setValue(state.number("upgrade/kwh", kwh_default, *NUMBER_RANGES["upgrade/kwh"]))
        self.kwh.setAccessibleName(tr("Electricity price per kWh"))
        self.utilization = QSpinBox()
        self.utilization.setRange(1, 100)
        self.utilization.setSuffix(" %")
        self.utilization.setValue(round(Prices().utilization * 100))
        self.utilization.setAccessibleName(tr("Utilisation"))
        self.form.addRow(tr("RAM"), self.ram)
        self.form.addRow(tr("PSU"), self.psu)
        self.form.addRow(tr("Workload"), self.workload)
        self.form.addRow(tr("Electricity"), self.kwh)
        self.form.addRow(tr("Utilisation"), self.utilization)
        # the candidate's RAM, PSU and running costs under Now and What changes: the two columns balance
        # (the left one was half empty beside the GPU picker at every width)
        settings = Card()
        settings.body.addWidget(subheading(tr("Candidate settings")))
        settings.body.addLayout(self.form)
        self.left_column.insertWidget(self.left_column.count() - 1, settings)
        candidate.body.addStretch(1)  # its content at the top when the left column is the taller one
        top.addWidget(candidate, 0, 1)
        top.setColumnStretch(1, 2)
        top.setColumnStretch(0, 1)

        page.addWidget(subheading(tr("Models before → after")))
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels([tr("Model"), tr("Now"), tr("Candidate")])
        self.table.setAccessibleName(tr("Models before and after"))
        self.table.setTabKeyNavigation(False)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Fixed)  # sized once per fill, not per layout
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        # rows as tall as their wrapped verdicts, again once the stretched columns have their new widths
        self._rows_timer = QTimer(self)
        self._rows_timer.setSingleShot(True)
        self._rows_timer.setInterval(0)
        self._rows_timer.timeout.connect(self._fit_table_rows)
        header.sectionResized.connect(lambda *_a: self._rows_timer.start())
        self.table.setMinimumHeight(300)
        page.addWidget(self.table)

        self.money = QWidget()
        bottom = QHBoxLayout(self.money)
        bottom.setContentsMargins(0, 0, 0, 0)
        power = Card()
        power.body.addWidget(subheading(tr("Power supply")))
        self.power_text = QLabel()
        self.power_text.setWordWrap(True)
        power.body.addWidget(self.power_text)
        power.body.addStretch(1)
        bottom.addWidget(power, 1)
        costs = Card()
        costs.body.addWidget(subheading(tr("Cost of the new GPUs")))
        self.cost_text = QLabel()
        self.cost_text.setWordWrap(True)
        self.cost_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        costs.body.addWidget(self.cost_text)
        self.chart = CostChart()
        costs.body.addWidget(self.chart)
        # the words at the top when the chart is hidden (no new GPU): the card is as tall as the power one
        # beside it, and the spare height went between the title and its line
        costs.body.addStretch(1)
        bottom.addWidget(costs, 2)
        page.addWidget(self.money)

        page.addStretch(1)

        self.search.textChanged.connect(self._filter)
        self.add_button.clicked.connect(self.add_selected)
        self.replace_button.clicked.connect(self.replace_with_selected)
        self.remove_button.clicked.connect(self.remove_selected)
        self.reset_button.clicked.connect(self.reset)
        for signal in (self.ram.valueChanged, self.psu.valueChanged, self.workload.currentIndexChanged,
                       self.kwh.valueChanged, self.utilization.valueChanged):  # fmt: skip
            signal.connect(self._timer.start)
        self.find_button.clicked.connect(self.find_cheapest)
        state.machine_changed.connect(self._machine_changed)
        # the GPU table and the first comparison come one event after the page is built, so that its
        # first show stays short (the table takes ~30 ms to fill); whatever needs them fills them first
        self._filled = False
        #: a comparison asked for while another page was on screen: made when this one is shown
        self._stale = False
        #: a new machine opened while another page was on screen: this page starts over when shown
        self._machine_pending = False
        #: the language switched while another page was on screen: its texts are written when shown
        self._retranslate_pending = False
        #: each GPU's purchase price (GpuPicker._purchase), for the day they were worked out
        self._prices: dict[str, PriceFact | None] = {}
        self._prices_day: date | None = None
        QTimer.singleShot(0, self._first_fill)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._machine_pending:
            self._machine_pending = False
            if self._retranslate_pending:  # the list in the new language; the rest is reset's
                self._retranslate_pending = False
                self._fill_catalog()
            self.reset()  # which compares again
        elif self._retranslate_pending:
            self.retranslate()
        elif self._stale:
            self.recompute()

    def _machine_changed(self, *_args: object) -> None:
        """A new machine: the page starts over with it, now if on screen, else when next shown (what it
        takes, the GPU list's ranking and the ways to run the model cost ~10 ms on the GUI thread and
        more on the pool, behind the page the user is looking at)."""
        self._machine_pending = self._filled and off_screen(self)
        if not self._machine_pending:
            self.reset()
            return
        self._timer.stop()
        self._generation += 1  # answers still on the pool are of the machine before
        self._find_generation += 1
        self._job = self._find_job = None
        self._show_progress()

    def _first_fill(self) -> None:
        if self._filled:
            return
        self._filled = True
        self._fill_catalog()
        if self.state.machine is not None:
            self.reset()  # which ranks the list for the machine
        else:
            self._rank()

    def retranslate(self) -> None:
        """After a language switch: the candidate stays; prices, what the machine takes and the
        comparison are written again in the new language: now if on screen, else when next shown (the
        GPU list alone is ~15 ms on the GUI thread)."""
        self._retranslate_pending = self._filled and off_screen(self)
        if self._retranslate_pending:
            return
        self._first_fill()
        self._fill_catalog()
        self._show_takes()
        if not self.options.isHidden() or self.suggestions.text():
            self.find_cheapest()
        self.recompute()

    def busy(self) -> bool:
        """A recomputation is queued (the debounce timer) or running on the pool, or the chart is still
        being built: not up to date yet."""
        return (
            not self._filled
            or self._timer.isActive()
            or self._job is not None
            or self._find_job is not None
            or self.chart.busy()
        )

    def _show_progress(self) -> None:
        working = self._job is not None or self._find_job is not None
        self.progress.setVisible(working)
        self.progress_text.setVisible(working)
        if self._job is not None:
            self.progress_text.setText(tr("Working out every model on both machines…"))
        elif self._find_job is not None:
            self.progress_text.setText(tr("Looking for what would run it…"))

    # -- results ---------------------------------------------------------------------------------

    @Slot()
    def recompute(self) -> None:
        """Compare the machine and the candidate on the pool; a newer request wins over an older one. On a
        page in a shown window but not on screen, when it is next shown: a new machine opened on another
        page does not run ~0.2 s of comparisons on the pool behind that page's handlers."""
        self._timer.stop()
        self._stale = self.window().isVisible() and not self.isVisible()
        if self._stale:
            self._generation += 1  # a comparison still on the pool is of the machine before
            self._job = None
            self._show_progress()
            return
        machine, after = self.state.machine, self.candidate()
        if machine is None or after is None:
            return
        psu = self.state.psu_watts()
        if machine.psu.watts is None and psu:
            machine = machine.with_psu(psu)  # the PSU typed on Overview is today's PSU too
        self.now_text.setText(_machine_text(machine, psu, built_in=self.built_in))
        catalog = self.state.catalog
        models = [m for m in POPULAR_MODELS if catalog.model(m) is not None]
        if self.asked_model is not None and self.asked_model not in models:
            models.append(self.asked_model)
        workload, prices, live, context = (
            self.workload.currentData(),
            self.prices(),
            self.state.is_live,
            self.context,
        )
        before = machine
        self._generation += 1
        generation = self._generation

        def work() -> UpgradeReport:
            report = compare(before, after, catalog, models=models, workload=workload, context=context,
                           prices=prices, live_before=live)  # fmt: skip
            if any(c.purchase and c.rent_per_hour for c in report.costs):
                preload_chart()  # the chart's library loads here, not on the GUI thread (~0.3 s)
            return report

        def done(report: UpgradeReport) -> None:
            if generation != self._generation:
                return  # a newer candidate was asked for meanwhile
            self._job = None
            self._show_progress()
            self.report = report
            self._fill_headline(report)
            self._fill_summary(report)
            self._fill_table(report)
            self._fill_power(report)
            self._fill_costs(report)

        def failed(message: str) -> None:
            if generation == self._generation:
                self._job = None
                self._show_progress()
                self.summary.setText(f"✘ {esc(message)}")

        self._job = submit(self.state.pool, work, done, failed, owner=self)
        self._show_progress()
