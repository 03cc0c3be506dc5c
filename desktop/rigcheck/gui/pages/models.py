"""Models page: pick a model from the catalog, or look one up on the Hugging Face hub.

The catalog is a :class:`CatalogTable` (one row per :class:`ModelSpec`, never changed) behind a
:class:`CatalogFilter` that searches, filters and sorts it by real numbers rather than by the text shown.
Choosing a row (double-click, Enter, or the button) hands ``from_catalog(spec)`` to
:meth:`AppState.choose_model`; the window then shows the Fit page.

A hub look-up runs :func:`load_hub_model` on the thread pool as a :class:`HubLookup`. The worker only
emits signals (queued to the GUI thread) and reads a :class:`threading.Event` that the Cancel button
sets; it never touches a widget. Errors are shown inline, in one line: no dialog blocks the page.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QLineF,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRectF,
    QRunnable,
    QSortFilterProxyModel,
    Qt,
    Signal,
    Slot,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QGuiApplication,
    QIcon,
    QPainter,
    QPalette,
    QPen,
    QPixmap,
    QResizeEvent,
    QShowEvent,
)
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
    QStyle,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from rigcheck.core.catalog import Catalog, ModelSpec
from rigcheck.core.errors import InputError
from rigcheck.core.known_text import in_language
from rigcheck.core.machine import Machine
from rigcheck.core.models.hub import Cancelled, load_hub_model
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ModelInfo
from rigcheck.gui.elide import ElidedLabel
from rigcheck.gui.fitview import FitView, recommend_catalog
from rigcheck.gui.i18n import num, tr
from rigcheck.gui.pages.hub_search import HubSearchPanel
from rigcheck.gui.pages.model_detail import ModelDetail
from rigcheck.gui.state import AppState
from rigcheck.gui.what_it_takes import take_button
from rigcheck.gui.workers import Job, submit

AnyIndex = QModelIndex | QPersistentModelIndex

NAME, FIT, FAMILY, PARAMS, ACTIVE, CONTEXT, LICENCE, HF_ID = range(8)
#: English source strings (translated when shown) for the header and its tooltip
HEADERS = (
    ("Name", "Gated models carry a lock: accept their licence on Hugging Face first"),
    (
        "On this machine",
        "The recommended way to run it here: where, the best format and the generation speed "
        "(the same answer as Fit, Overview and 'rigcheck fit')",
    ),
    ("Family", "Model family"),
    ("Parameters", "Total parameters, in billions"),
    ("Active", "Parameters used for each token (mixture-of-experts models only)"),
    ("Context", "Longest context the model supports, in tokens"),
    ("Licence", "Licence, as named on Hugging Face"),
    ("Hugging Face id", "Repository on the Hugging Face hub"),
)
NUMERIC = (PARAMS, ACTIVE, CONTEXT)
#: columns given up, in this order, when the window is too narrow for all (no sideways scrolling at
#: 1024 px): each is in the row's tooltip and in Fit
NARROW_HIDES = (LICENCE, ACTIVE, CONTEXT, FAMILY)
#: the least the hub id column keeps (elided in the middle below its full width)
HF_ID_MIN = 110
#: below this page width the Models filters take two rows (the search box keeps its room)
WRAP_FILTERS_PX = 1000
#: an item role carrying the row's ModelSpec
SPEC_ROLE = Qt.ItemDataRole.UserRole + 1
#: an item role carrying the row's FitView on this machine (None while it is worked out)
FIT_ROLE = Qt.ItemDataRole.UserRole + 2
PAGE_MARGIN = 16


# -- formatting -----------------------------------------------------------------------------------


def billions(value: float | None) -> str:
    """``8.03`` → ``"8.0B"``; unknown → ``"—"``."""
    return "—" if value is None else f"{num(value, 1, group=False)}B"


def tokens(value: int | None) -> str:
    """Context lengths as people say them: 131072 → ``"128k"``, 1048576 → ``"1M"``, 128000 → ``"128k"``."""
    if value is None:
        return "—"
    for unit, size in (("M", 1_000_000), ("M", 1 << 20), ("k", 1000), ("k", 1024)):
        if value >= size and value % size == 0:
            return f"{value // size}{unit}"
    return f"{num(value / 1000, group=False)}k" if value >= 1000 else str(value)


def sort_key(spec: ModelSpec, column: int, fit: FitView | None = None) -> tuple[Any, ...]:
    """What a column sorts by: numbers as numbers (unknown first), ties broken by size then name."""
    size = spec.params_b if spec.params_b is not None else -1.0
    name = spec.name.lower()
    if column == FIT:  # runs on the GPU first, faster first; not yet known last
        return (*(fit.sort_key() if fit else (9, 0.0)), size, name)
    if column == FAMILY:
        return (spec.family.lower(), size, name)
    if column == PARAMS:
        return (size, name)
    if column == ACTIVE:
        return (spec.active_params_b if spec.active_params_b is not None else -1.0, size, name)
    if column == CONTEXT:
        return (spec.max_context or -1, size, name)
    if column == LICENCE:
        return (spec.license or "", name)
    if column == HF_ID:
        return (spec.hf_id.lower(),)
    return (name, size)


def _lock_icon(color: QColor) -> QIcon:
    """A padlock drawn in ``color``: no emoji font needed, and it follows the palette."""
    size, ratio = 16, 2.0
    pixmap = QPixmap(int(size * ratio), int(size * ratio))
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(color, 1.7))
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.drawArc(QRectF(4.5, 1.5, 7.0, 8.0), 0, 180 * 16)
    painter.drawLine(QLineF(4.5, 5.5, 4.5, 7.5))
    painter.drawLine(QLineF(11.5, 5.5, 11.5, 7.5))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(color)
    painter.drawRoundedRect(QRectF(2.5, 7.0, 11.0, 8.0), 1.5, 1.5)
    painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Clear)
    painter.drawEllipse(QRectF(7.0, 9.3, 2.0, 2.0))
    painter.drawRect(QRectF(7.5, 10.5, 1.0, 2.6))
    painter.end()
    return QIcon(pixmap)


# -- the table ------------------------------------------------------------------------------------


class CatalogTable(QAbstractTableModel):
    """The catalog's models, one row each, in catalog order (the proxy sorts)."""

    def __init__(self, specs: tuple[ModelSpec, ...], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._specs = specs
        self._lock: QIcon | None = None
        self._blank: QIcon | None = None
        self._fits: dict[str, FitView] = {}

    def spec(self, row: int) -> ModelSpec:
        return self._specs[row]

    def fit(self, spec: ModelSpec) -> FitView | None:
        return self._fits.get(spec.id)

    def set_fits(self, fits: dict[str, FitView]) -> None:
        """This machine's answer for each model (from a worker); repaints the fit column."""
        self._fits = dict(fits)
        if self._specs:
            self.dataChanged.emit(self.index(0, FIT), self.index(len(self._specs) - 1, FIT))

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's API
        return 0 if parent.isValid() else len(self._specs)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's API
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(  # noqa: N802 - Qt's API
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(HEADERS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return tr(HEADERS[section][0])
        if role == Qt.ItemDataRole.ToolTipRole:
            return tr(HEADERS[section][1])
        if role == Qt.ItemDataRole.TextAlignmentRole and section in NUMERIC:
            return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        spec, column = self._specs[index.row()], index.column()
        if column == FIT:
            return self._fit_data(spec, role)
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(spec, column)
        if role == SPEC_ROLE:
            return spec
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(spec, column)
        if role == Qt.ItemDataRole.DecorationRole and column == NAME:
            # every name gets an icon, blank when not gated, so the names line up
            return self.lock_icon() if spec.gated else self._blank_icon()
        if role == Qt.ItemDataRole.AccessibleTextRole and column == NAME and spec.gated:
            return f"{spec.name}, {tr('gated')}"
        if role == Qt.ItemDataRole.TextAlignmentRole and column in NUMERIC:
            return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        return None

    def _fit_data(self, spec: ModelSpec, role: int) -> Any:
        view = self._fits.get(spec.id)
        if role == SPEC_ROLE:
            return spec
        if role == FIT_ROLE:
            return view
        if view is None:
            return "…" if role == Qt.ItemDataRole.DisplayRole else None
        if role == Qt.ItemDataRole.DisplayRole:
            detail = view.detail().replace("tokens/s", tr("tok/s"))
            return f"{view.glyph} {tr(view.short_words)}" + (f" · {detail}" if detail else "")
        if role == Qt.ItemDataRole.ForegroundRole:
            return QColor(view.colour)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{tr(view.words)}\n{tr('Double-click to see it in Fit')}"
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{tr(view.words)}, {view.detail()}"
        return None

    @staticmethod
    def _text(spec: ModelSpec, column: int) -> str:
        if column == NAME:
            return spec.name
        if column == FAMILY:
            return spec.family
        if column == PARAMS:
            return billions(spec.params_b)
        if column == ACTIVE:
            return billions(spec.active_params_b) if spec.is_moe else ""
        if column == CONTEXT:
            return tokens(spec.max_context)
        if column == LICENCE:
            return spec.license or tr("unknown")
        return spec.hf_id

    @staticmethod
    def _tooltip(spec: ModelSpec, column: int) -> str:
        gated = (
            tr("gated: accept the licence on Hugging Face before downloading the weights")
            if spec.gated
            else ""
        )
        if column == NAME:
            return f"{spec.name} ({spec.id})" + (f"\n{gated}" if gated else "")
        if column == PARAMS and spec.params_exact is not None:
            return tr("{count} parameters").format(count=f"{num(spec.params_exact)}")
        if column == ACTIVE and not spec.is_moe:
            return tr("Dense model: every parameter is used for each token")
        if column == CONTEXT and spec.max_context is not None:
            return tr("{count} tokens").format(count=f"{num(spec.max_context)}")
        if column == HF_ID:
            return spec.hf_id + (f"\n{gated}" if gated else "")
        return ""

    def _blank_icon(self) -> QIcon:
        if self._blank is None:
            blank = QPixmap(32, 32)
            blank.setDevicePixelRatio(2.0)
            blank.fill(Qt.GlobalColor.transparent)
            self._blank = QIcon(blank)
        return self._blank

    def lock_icon(self) -> QIcon:
        if self._lock is None:
            self._lock = _lock_icon(QGuiApplication.palette().color(QPalette.ColorRole.Text))
        return self._lock


class CatalogFilter(QSortFilterProxyModel):
    """Search words (all must appear), one family or all, MoE only, runs on this GPU only; sorts by
    :func:`sort_key`."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._words: tuple[str, ...] = ()
        self._family = ""
        self._moe_only = False
        self._gpu_only = False

    def set_filter(self, text: str, family: str, moe_only: bool, gpu_only: bool = False) -> None:
        begin = getattr(self, "beginFilterChange", None)  # Qt ≥ 6.9; invalidateFilter is deprecated
        if begin is not None:
            begin()
        self._words = tuple(text.lower().split())
        self._family = family
        self._moe_only = moe_only
        self._gpu_only = gpu_only
        if begin is not None:
            self.endFilterChange()
        else:
            self.invalidateFilter()

    def spec(self, proxy_row: int) -> ModelSpec:
        spec = self.index(proxy_row, 0).data(SPEC_ROLE)
        assert isinstance(spec, ModelSpec)
        return spec

    def filterAcceptsRow(self, source_row: int, source_parent: AnyIndex) -> bool:  # noqa: N802
        spec = self.sourceModel().index(source_row, 0, source_parent).data(SPEC_ROLE)
        if not isinstance(spec, ModelSpec):
            return False
        if self._family and spec.family != self._family:
            return False
        if self._moe_only and not spec.is_moe:
            return False
        if self._gpu_only:
            view = self.sourceModel().index(source_row, FIT, source_parent).data(FIT_ROLE)
            if not isinstance(view, FitView) or view.where != "gpu":
                return False
        haystack = " ".join((spec.id, spec.name, spec.family, spec.hf_id, *spec.tags)).lower()
        return all(word in haystack for word in self._words)

    def lessThan(self, left: AnyIndex, right: AnyIndex) -> bool:  # noqa: N802 - Qt's API
        a, b = left.data(SPEC_ROLE), right.data(SPEC_ROLE)
        assert isinstance(a, ModelSpec) and isinstance(b, ModelSpec)
        if left.column() == FIT:
            return sort_key(a, FIT, left.data(FIT_ROLE)) < sort_key(b, FIT, right.data(FIT_ROLE))
        return sort_key(a, left.column()) < sort_key(b, left.column())


# -- the hub look-up ------------------------------------------------------------------------------


class _LookupSignals(QObject):
    progress = Signal(str)
    found = Signal(object)
    failed = Signal(str)
    cancelled = Signal()


class HubLookup(QRunnable):
    """``load(repo_id, progress=…, cancel=…, catalog=…)`` on a pool thread, reported through signals.

    It holds no widget: ``stop`` is the only thing the GUI shares with it, and the GUI only sets it.
    """

    def __init__(
        self, repo_id: str, load: Callable[..., ModelInfo], catalog: Catalog, stop: threading.Event
    ) -> None:
        super().__init__()
        self.repo_id = repo_id
        self.signals = _LookupSignals()
        self._load = load
        self._catalog = catalog
        self._stop = stop

    def run(self) -> None:
        try:
            model = self._load(
                self.repo_id,
                progress=self.signals.progress.emit,
                cancel=self._stop.is_set,
                catalog=self._catalog,
            )
        except Cancelled:
            self.signals.cancelled.emit()
        except InputError as exc:
            self.signals.failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - anything else is shown to the user, never lost
            self.signals.failed.emit(f"hf:{self.repo_id}: {type(exc).__name__}: {exc}")
        else:
            if self._stop.is_set():  # finished just as the user said stop: honour the stop
                self.signals.cancelled.emit()
            else:
                self.signals.found.emit(model)


# -- the page -------------------------------------------------------------------------------------


class ModelsPage(QWidget):
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

    def _wrap_filters(self) -> None:
        """The filters on one row when the page is wide, on two when it is narrow."""
        wrap = self.width() < WRAP_FILTERS_PX
        if wrap == self._filters_wrapped:
            return
        self._filters_wrapped = wrap
        self._filters_top.removeWidget(self._filters_host)
        self._filters_outer.removeWidget(self._filters_host)
        if wrap:
            self._filters_outer.addWidget(self._filters_host, 0, Qt.AlignmentFlag.AlignLeft)
        else:
            self._filters_top.addWidget(self._filters_host)

    def _fit_columns(self) -> None:
        """Hide the least needed columns while the rest would not fit the table's width. Column widths
        are measured once per content (a resize only compares numbers)."""
        if not self._column_widths:
            self._column_widths = self._measure_columns()
            header = self.table.horizontalHeader()
            for column, width in self._column_widths.items():
                header.resizeSection(column, width)
        room = self.table.viewport().width() - HF_ID_MIN
        hidden: set[int] = set()
        for column in (None, *NARROW_HIDES):
            if column is not None:
                hidden.add(column)
            if sum(w for c, w in self._column_widths.items() if c not in hidden) <= room:
                break
        # still too wide (900 px, Italian): the hub id would be squeezed to "Q…B"; the detail pane below
        # names it whole, so the column goes rather than show a stub
        squeezed = sum(w for c, w in self._column_widths.items() if c not in hidden) > room
        for column in NARROW_HIDES:
            self.table.setColumnHidden(column, column in hidden)
        self.table.setColumnHidden(HF_ID, squeezed)

    def _measure_columns(self) -> dict[int, int]:
        """Each column's width from its texts' font metrics: what ``sizeHintForColumn`` gives, without its
        dozen model calls per cell (~90 ms for the catalog on the GUI thread, under 5 ms this way)."""
        table, header, source = self.table, self.table.horizontalHeader(), self.source
        metrics = table.fontMetrics()
        style = table.style()
        # the cell's margins, and a few pixels more than sizeHintForColumn (which rounds up: a text measured
        # to the pixel is elided)
        padding = 2 * style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, table) + 8
        icon = style.pixelMetric(QStyle.PixelMetric.PM_SmallIconSize, None, table) + 7
        # a Fixed section's sectionSizeHint is not its title's width: measure the title, its margins and the
        # sort arrow (a title a few pixels short is clipped: "ontesto")
        header_metrics = header.fontMetrics()
        margin = style.pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
        arrow = style.pixelMetric(QStyle.PixelMetric.PM_HeaderMarkSize, None, header)

        def title(column: int) -> int:
            text = str(source.headerData(column, Qt.Orientation.Horizontal) or "")
            return header_metrics.horizontalAdvance(text) + 2 * margin + arrow + 8

        widths = {}
        for column in range(source.columnCount()):
            if column == HF_ID:
                continue
            texts = {str(source.data(source.index(row, column)) or "") for row in range(source.rowCount())}
            text = max((metrics.horizontalAdvance(t) for t in texts), default=0)
            widths[column] = max(text + padding + (icon if column == NAME else 0), title(column))
        return widths

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

    # -- the hub ---------------------------------------------------------------------------------

    @Slot()
    def start_lookup(self) -> None:
        if self._running:
            return
        repo_id = self.hub_id.text().strip()
        if not repo_id:
            self._show_message(tr("Type a Hugging Face id such as org/name"), error=True)
            self.hub_id.setFocus()
            return
        self._stop = stop = threading.Event()
        self.destroyed.connect(lambda *_: stop.set())  # a look-up outliving the page stops at its next step
        job = HubLookup(repo_id, load_hub_model, self.state.catalog, self._stop)
        queued = Qt.ConnectionType.QueuedConnection
        job.signals.progress.connect(self._lookup_progress, queued)
        job.signals.found.connect(self._lookup_found, queued)
        job.signals.failed.connect(self._lookup_failed, queued)
        job.signals.cancelled.connect(self._lookup_cancelled, queued)
        self._lookup = job  # kept until the next look-up, so its signals outlive every queued emit
        self._repo_id = repo_id
        self._show_message("")
        self.step.setText(tr("Looking up {repo}…").format(repo=repo_id))
        self._set_busy(True)
        self.state.pool.start(job)

    @Slot()
    def cancel_lookup(self) -> None:
        if self._running:
            self._stop.set()
            if self.cancel_button.hasFocus():
                self.hub_id.setFocus()
            self.cancel_button.setEnabled(False)
            self.step.setText(tr("Cancelling…"))

    @Slot(str)
    def _lookup_progress(self, step: str) -> None:
        if self._running and not self._stop.is_set():
            self.step.setText(tr("Looking up {repo}: {step}…").format(repo=self._repo_id, step=step))

    @Slot(object)
    def _lookup_found(self, model: ModelInfo) -> None:
        self._set_busy(False)
        self.state.choose_model(model)

    @Slot(str)
    def _lookup_failed(self, message: str) -> None:
        self._set_busy(False)
        self._show_message(in_language(message), error=True)

    @Slot()
    def _lookup_cancelled(self) -> None:
        self._set_busy(False)
        self._show_message(tr("Cancelled"))

    def _set_busy(self, busy: bool) -> None:
        # a button losing its focus as it is disabled hands it to the one the user needs next
        if busy:
            focus_on_lookup = self.lookup_button.hasFocus()
            self.cancel_button.setEnabled(True)
            if focus_on_lookup:
                self.cancel_button.setFocus()
            self.lookup_button.setEnabled(False)
        else:
            focus_on_cancel = self.cancel_button.hasFocus()
            self.lookup_button.setEnabled(True)
            if focus_on_cancel:
                self.hub_id.setFocus()
            self.cancel_button.setEnabled(False)
        self._running = busy
        self.activity.setVisible(busy)

    def _show_message(self, text: str, *, error: bool = False) -> None:
        line = text.strip().splitlines()[0] if text.strip() else ""
        self.message.setText(f"⚠ {line}" if line and error else line)
        self.message.setVisible(bool(line))
