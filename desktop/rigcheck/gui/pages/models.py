"""Models page: pick a model from the catalog, or look one up on the Hugging Face hub.

The catalog is a :class:`CatalogTable` (one row per :class:`ModelSpec`, never changed) behind a
:class:`CatalogFilter` that searches, filters and sorts it by real numbers rather than by the text shown
(``models_table.py``; its widths at any window size in ``models_layout.py``). Choosing a row
(double-click, Enter, or the button) hands ``from_catalog(spec)`` to :meth:`AppState.choose_model`; the
window then shows the Fit page.

A hub look-up runs :func:`load_hub_model` on the thread pool as a :class:`HubLookup`
(``models_lookup.py``). The worker only emits signals (queued to the GUI thread) and reads a
:class:`threading.Event` that the Cancel button sets; it never touches a widget. Errors are shown inline,
in one line: no dialog blocks the page.
"""

from __future__ import annotations

import itertools
import threading

from PySide6.QtCore import QModelIndex, Qt, Slot
from PySide6.QtGui import QFont, QPalette, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from rigcheck.core.catalog import ModelSpec
from rigcheck.core.errors import InputError
from rigcheck.core.known_text import in_language
from rigcheck.core.machine import Machine
from rigcheck.core.models.resolve import from_catalog
from rigcheck.gui.elide import ElidedLabel
from rigcheck.gui.fitview import FitView, recommend_catalog
from rigcheck.gui.i18n import tr
from rigcheck.gui.pages.hub_search import HubSearchPanel
from rigcheck.gui.pages.model_detail import ModelDetail
from rigcheck.gui.pages.models_layout import HF_ID_MIN, CatalogLayout
from rigcheck.gui.pages.models_lookup import HubLookup, HubLookupControls
from rigcheck.gui.pages.models_table import (
    CONTEXT,
    FAMILY,
    FIT,
    HF_ID,
    NAME,
    PARAMS,
    CatalogFilter,
    CatalogTable,
    billions,
    sort_key,
    tokens,
)
from rigcheck.gui.state import AppState
from rigcheck.gui.what_it_takes import take_button
from rigcheck.gui.workers import Job, submit

PAGE_MARGIN = 16

# read from here by Overview and the tests
__all__ = [
    "CONTEXT",
    "FAMILY",
    "FIT",
    "HF_ID",
    "HF_ID_MIN",
    "NAME",
    "PARAMS",
    "CatalogFilter",
    "CatalogTable",
    "HubLookup",
    "ModelsPage",
    "billions",
    "sort_key",
    "tokens",
]


# -- the page -------------------------------------------------------------------------------------


class ModelsPage(CatalogLayout, HubLookupControls, QWidget):
    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self._lookup: HubLookup | None = None
        self._repo_id = ""
        self._stop = threading.Event()
        self._running = False

        heading = QLabel(tr("Models"))
        heading.setObjectName("pageHeading")
        font = QFont(heading.font())
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.6)
        heading.setFont(font)
        intro = QLabel(tr("Pick a model from the catalog, or look one up on Hugging Face."))

        # -- filters ---------------------------------------------------------------------------
        self.search = QLineEdit()
        self.search.setPlaceholderText(tr("Name, family, tag or Hugging Face id"))
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName(tr("Search models"))
        search_label = QLabel(tr("&Search:"))
        search_label.setBuddy(self.search)

        self.family = QComboBox()
        self.family.addItem(tr("All families"), "")
        for family in sorted({m.family for m in state.catalog.models}, key=str.lower):
            self.family.addItem(family, family)
        self.family.setAccessibleName(tr("Model family"))
        self.family.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        family_label = QLabel(tr("Famil&y:"))
        family_label.setBuddy(self.family)

        self.moe_only = QCheckBox(tr("Mixture of &experts only"))
        self.moe_only.setAccessibleName(tr("Mixture of experts only"))
        self.moe_only.setToolTip(tr("Models that use only some of their parameters for each token"))
        self.gpu_only = QCheckBox(tr("Runs on my &GPU"))
        self.gpu_only.setAccessibleName(tr("Runs on my GPU"))
        self.gpu_only.setToolTip(
            tr("Only models whose recommended format runs entirely on this machine's GPU")
        )

        # one row when wide; below WRAP_FILTERS_PX the family and the two check boxes go to a second row,
        # so that the search box keeps room for its words (at 900 px in Italian it was "No…")
        filters = QVBoxLayout()
        filters.setSpacing(6)
        self._filters_top = QHBoxLayout()
        self._filters_top.addWidget(search_label)
        self._filters_top.addWidget(self.search, 1)
        self._filters_rest = QHBoxLayout()
        self._filters_rest.setContentsMargins(0, 0, 0, 0)
        self._filters_rest.addWidget(family_label)
        self._filters_rest.addWidget(self.family)
        self._filters_rest.addSpacing(12)
        self._filters_rest.addWidget(self.moe_only)
        self._filters_rest.addSpacing(12)
        self._filters_rest.addWidget(self.gpu_only)
        self._filters_host = QWidget()
        self._filters_host.setLayout(self._filters_rest)
        self._filters_top.addSpacing(12)
        self._filters_top.addWidget(self._filters_host)
        filters.addLayout(self._filters_top)
        self._filters_outer = filters
        self._filters_wrapped = False

        # -- the catalog -----------------------------------------------------------------------
        self.source = CatalogTable(state.catalog.models, self)
        self.proxy = CatalogFilter(self)
        self.proxy.setSourceModel(self.source)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setAccessibleName(tr("Model catalog"))
        self.table.setAccessibleDescription(
            tr("Double-click a model or press Enter to see whether it fits this machine")
        )
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setSortingEnabled(True)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # keeps the size at the end of ids
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 10)
        self.table.setTabKeyNavigation(False)  # Tab leaves the table; arrows move inside it
        self.table.verticalHeader().hide()
        self.table.sortByColumn(FAMILY, Qt.SortOrder.AscendingOrder)
        header = self.table.horizontalHeader()
        header.setHighlightSections(False)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        # Names and this machine's answer are read in full; the hub id, last and least needed, takes what
        # is left and is elided in the middle when the window is narrow (1024 px), never the names.
        # the columns are as wide as their texts, measured once per content (_measure_columns): Qt's
        # ResizeToContents would ask every cell again on each change of the fit column (~0.2 s)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(HF_ID, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(48)
        self.table.activated.connect(self._choose_index)
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)

        self.count = QLabel()
        self.count.setAccessibleName(tr("Models shown"))
        legend_icon = QLabel()
        legend_icon.setPixmap(self.source.lock_icon().pixmap(16, 16))
        legend = QLabel(tr("gated: accept the licence on Hugging Face before downloading the weights"))
        legend.setWordWrap(True)  # beside two buttons at 1024 px (longer in Italian): wraps, never widens
        legend_icon.setAccessibleName(legend.text())
        self.fit_button = QPushButton(tr("Fi&t this model"))
        self.fit_button.setAccessibleName(tr("Fit this model"))
        self.fit_button.setToolTip(tr("See whether the selected model fits this machine (Enter)"))
        self.fit_button.setEnabled(False)
        self.fit_button.clicked.connect(self._choose_selected)
        self.take_button = take_button(state, self._upgrade_question)  # a selected model that does not fit
        self.take_button.setEnabled(False)
        footer = QHBoxLayout()
        footer.addWidget(self.count)
        footer.addSpacing(16)
        footer.addWidget(legend_icon)
        footer.addWidget(legend, 1)  # all the room there is: one line at 1920 px (a stretch kept it wrapped)
        footer.addWidget(self.take_button)
        footer.addWidget(self.fit_button)

        # -- the hub ---------------------------------------------------------------------------
        rule = QFrame()
        rule.setFrameShape(QFrame.Shape.HLine)
        rule.setFrameShadow(QFrame.Shadow.Sunken)
        hub_heading = QLabel(tr("Not in the catalog?"))
        bold = QFont(hub_heading.font())
        bold.setBold(True)
        hub_heading.setFont(bold)

        self.hub_id = QLineEdit()
        self.hub_id.setPlaceholderText(tr("org/name or org/name:TAG, e.g. Qwen/Qwen3-8B"))
        self.hub_id.setClearButtonEnabled(True)
        self.hub_id.setAccessibleName(tr("Hugging Face model id"))
        self.hub_id.setToolTip(
            tr(
                "Reads config.json and the safetensors headers only, or a GGUF file's header "
                "(org/name:TAG as llama.cpp -hf, e.g. unsloth/Qwen3-30B-A3B-GGUF:UD-Q4_K_XL, or "
                "org/name/file.gguf): no weights are downloaded"
            )
        )
        self.hub_id.returnPressed.connect(self.start_lookup)
        hub_label = QLabel(tr("Hugging Face &id:"))
        hub_label.setBuddy(self.hub_id)
        self.lookup_button = QPushButton(tr("&Look up"))
        self.lookup_button.setAccessibleName(tr("Look up on Hugging Face"))
        self.lookup_button.clicked.connect(self.start_lookup)
        self.cancel_button = QPushButton(tr("C&ancel"))
        self.cancel_button.setAccessibleName(tr("Cancel the look-up"))
        self.cancel_button.clicked.connect(self.cancel_lookup)
        self.cancel_button.setEnabled(False)

        self.spinner = QProgressBar()
        self.spinner.setRange(0, 0)
        self.spinner.setTextVisible(False)
        self.spinner.setMaximumWidth(160)
        self.spinner.setAccessibleName(tr("Looking up"))
        self.step = QLabel()
        self.step.setAccessibleName(tr("Look-up step"))
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setAccessibleName(tr("Message"))
        self.message.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

        hub = QHBoxLayout()
        hub.addWidget(hub_label)
        hub.addWidget(self.hub_id, 1)
        hub.addWidget(self.lookup_button)
        hub.addWidget(self.cancel_button)
        # shown only while looking up; a hidden widget takes no room in a box layout
        self.activity = QWidget()
        activity = QHBoxLayout(self.activity)
        activity.setContentsMargins(0, 0, 0, 0)
        activity.addWidget(self.spinner)
        activity.addWidget(self.step, 1)

        # on the heading's line, not a line of its own: at 900×600 the catalog table kept four rows
        hint = ElidedLabel(tr("Drop a .gguf, config.json or model folder anywhere on the window"))
        grey = hint.palette()
        grey.setColor(QPalette.ColorRole.WindowText, grey.color(QPalette.ColorRole.PlaceholderText))
        hint.setPalette(grey)
        hub_title = QHBoxLayout()
        hub_title.addWidget(hub_heading)
        hub_title.addSpacing(12)
        hub_title.addWidget(hint, 1)

        page = QVBoxLayout(self)
        page.setContentsMargins(PAGE_MARGIN, PAGE_MARGIN, PAGE_MARGIN, PAGE_MARGIN)
        page.setSpacing(8)
        page.addWidget(heading)
        page.addWidget(intro)
        page.addSpacing(4)
        page.addLayout(filters)
        page.addWidget(self.table, 1)
        page.addLayout(footer)
        # the selected model on this machine: a badge per format and the command (gui/pages/model_detail.py)
        self.detail = ModelDetail(state)
        page.addWidget(self.detail)
        page.addSpacing(4)
        page.addWidget(rule)
        page.addLayout(hub_title)
        page.addLayout(hub)
        page.addWidget(self.activity)
        page.addWidget(self.message)
        # the hub as a live catalog: search it, each result with its fit here (gui/pages/hub_search.py)
        self.hub_search = HubSearchPanel(state)
        page.addWidget(self.hub_search)

        chain = (
            self.search,
            self.family,
            self.moe_only,
            self.gpu_only,
            self.table,
            self.fit_button,
            self.hub_id,
            self.lookup_button,
            self.cancel_button,
        )
        for first, second in itertools.pairwise(chain):
            QWidget.setTabOrder(first, second)

        self.search.textChanged.connect(self._refilter)
        self.search.returnPressed.connect(self._search_entered)
        self.family.currentIndexChanged.connect(self._refilter)
        self.moe_only.toggled.connect(self._refilter)
        self.gpu_only.toggled.connect(self._refilter)
        self._set_busy(False)
        self._show_message("")
        self._refilter()
        self._fit_job: Job | None = None
        self._fit_generation = 0
        #: the generation whose answers are still on the pool (None: the fit column is up to date)
        self._fits_pending: int | None = None
        self._column_widths: dict[int, int] = {}
        #: a machine or backend came while another page was on screen: worked out when this one is shown
        self._stale = False
        state.machine_changed.connect(self._machine_changed)
        # the fit column assumes the backend chosen on Fit, as the Overview's cards do
        state.backend_changed.connect(self._backend_changed)
        if state.machine is not None:
            self._machine_changed(state.machine, state.machine_label, state.is_live)

    # -- the catalog -----------------------------------------------------------------------------

    def retranslate(self) -> None:
        """After a language switch: the column titles, the count and every model's answer again."""
        self.source.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, self.source.columnCount() - 1)
        self._refilter()
        if self.state.machine is not None:
            self._machine_changed(self.state.machine, self.state.machine_label, self.state.is_live)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._stale and self.state.machine is not None:
            self._machine_changed(self.state.machine, self.state.machine_label, self.state.is_live)

    @Slot(str)
    def _backend_changed(self, _backend: str) -> None:
        if self.state.machine is not None:
            self._machine_changed(self.state.machine, self.state.machine_label, self.state.is_live)

    @Slot(object, str, bool)
    def _machine_changed(self, machine: Machine, _label: str, is_live: bool) -> None:
        """Work out every model's answer on this machine off the GUI thread (~3 ms a model, ~0.5 s in all);
        on a page in a shown window but not on screen, when it is next shown: that much Python on the pool
        slowed every GUI-thread handler of the page that is on screen."""
        self._fit_generation += 1
        generation = self._fit_generation
        self._stale = self.window().isVisible() and not self.isVisible()
        if self._stale:
            self._fit_job = None
            self._fits_pending = None
            return
        specs, catalog, backend = self.state.catalog.models, self.state.catalog, self.state.backend
        self.source.set_fits({})
        self.detail.refresh()  # the selected model on the new machine or backend

        def done(fits: dict[str, FitView]) -> None:
            if generation == self._fits_pending:
                self._fits_pending = None
            if generation == self._fit_generation:  # a newer machine has been asked for since
                self.source.set_fits(fits)
                self._refilter()
                self._column_widths = {}
                self._fit_columns()
                self._selection_changed()  # "What would it take?" needs the selected row's answer

        def failed(message: str) -> None:
            if generation == self._fits_pending:
                self._fits_pending = None
            self._show_message(message, error=True)

        self._fits_pending = generation
        self._fit_job = submit(
            self.state.pool,
            lambda: recommend_catalog(specs, machine, catalog, live=is_live, backend=backend),
            done,
            failed,
            owner=self,
        )

    def busy(self) -> bool:
        """Every model's answer on this machine is still on the pool, or the selected model's detail is:
        what the window waits for before a screenshot (the fit column and its widths). A hub search the
        user started is not waited for (the network's time, not the page's work)."""
        return self._fits_pending is not None or self.detail.busy()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._wrap_filters()
        self._fit_columns()

    @Slot()
    def _refilter(self) -> None:
        self.proxy.set_filter(
            self.search.text(),
            str(self.family.currentData() or ""),
            self.moe_only.isChecked(),
            self.gpu_only.isChecked(),
        )
        self.count.setText(
            tr("{shown} of {total} models").format(shown=self.proxy.rowCount(), total=self.source.rowCount())
        )
        self._selection_changed()

    @Slot()
    def _search_entered(self) -> None:
        """Enter in the search: the only match opens in Fit; with several, the first is selected and the
        arrows go on from there in the table."""
        rows = self.proxy.rowCount()
        if rows == 1:
            self.choose_spec(self.proxy.spec(0))
        elif rows > 1:
            self.table.setFocus(Qt.FocusReason.ShortcutFocusReason)
            self.table.selectRow(0)

    @Slot()
    def _selection_changed(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        self.fit_button.setEnabled(bool(rows))
        self.take_button.setEnabled(self._upgrade_question() is not None)
        spec = self.proxy.spec(rows[0].row()) if rows else None
        if spec is not self.detail.spec:
            self.detail.show_spec(spec)

    def _upgrade_question(self) -> tuple[str, str, int | None] | None:
        """The selected model, when it does not fit this machine: what Upgrade is asked about."""
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        spec = self.proxy.spec(rows[0].row())
        view = self.source.fit(spec)
        return (spec.id, "inference", None) if view is not None and view.where is None else None

    @Slot(QModelIndex)
    def _choose_index(self, index: QModelIndex) -> None:
        if index.isValid():
            self.choose_spec(self.proxy.spec(index.row()))

    @Slot()
    def _choose_selected(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows:
            self.choose_spec(self.proxy.spec(rows[0].row()))

    def choose_spec(self, spec: ModelSpec) -> None:
        try:
            model = from_catalog(spec)
        except InputError as exc:
            self._show_message(in_language(str(exc)))
            return
        self._show_message("")
        self.state.choose_model(model)
