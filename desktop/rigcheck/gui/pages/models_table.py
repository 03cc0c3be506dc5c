"""The Models page's catalog: a :class:`CatalogTable` (one row per :class:`ModelSpec`, never changed, and
this machine's answer for each) behind a :class:`CatalogFilter` that searches, filters and sorts it by real
numbers rather than by the text shown; the cells' words and the lock drawn for gated models."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QLineF,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRectF,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPalette, QPen, QPixmap

from rigcheck.core.catalog import ModelSpec
from rigcheck.gui.fitview import FitView
from rigcheck.gui.i18n import num, tr

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
#: an item role carrying the row's ModelSpec
SPEC_ROLE = Qt.ItemDataRole.UserRole + 1
#: an item role carrying the row's FitView on this machine (None while it is worked out)
FIT_ROLE = Qt.ItemDataRole.UserRole + 2


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
