"""The Fleet page's machine table: rows made on the pool, a model the view reads, sorted in one pass.

A QTableWidget of 5,000 machines costs 45,000 items made on the GUI thread and a Python ``__lt__`` per
comparison when sorting (seconds). Here :func:`build_rows` (Qt-free data, run on the pool) makes every
text, tooltip and sort key once; :class:`FleetTableModel` only hands them to the view, and sorts by
permuting an index list with precomputed keys. Column widths come from the longest texts, capped, so a
4096-character name is elided with the whole name in its tooltip instead of widening the table.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics

from rigcheck.core.report.fleet import MISSING, Fleet, version_key
from rigcheck.core.verdict_words import speed_text
from rigcheck.gui.fitview import verdict_view
from rigcheck.gui.i18n import tr
from rigcheck.gui.widgets import tooltip

COLUMNS = ("name", "gpus", "vram", "driver", "cuda", "rocm", "torch", "failing")
HEADERS = ("Machine", "GPUs", "VRAM", "Driver", "CUDA", "ROCm", "PyTorch", "Failing checks")
#: drift fields -> the table column they show in
DRIFT_COLUMNS = {"driver": "driver", "cuda_driver": "cuda", "rocm": "rocm", "torch": "torch", "gpu": "gpus"}
#: columns sorted by the numbers in them (24 GiB before 128 GiB, 550.54 before 570.124)
NUMERIC_COLUMNS = frozenset({"vram", "driver", "cuda", "rocm", "torch", "failing"})
#: columns whose title is set on two lines (a count under two words)
TWO_LINE_HEADERS = frozenset({COLUMNS.index("failing")})
#: the widest a column other than the GPUs' (which takes what is left) is made, in pixels
MAX_COLUMN_PX = 280
#: the verdict, the answer asked for, may be wider ("◔ Funziona, troppo lento per chattare · ~1,6 token/s")
MAX_VERDICT_PX = 440
_PARTS = re.compile(r"\d+|\D+")
_VERDICT_ORDER = {"fits": 0, "fits_with_offload": 1, "does_not_fit": 2}

Verdicts = dict[str, tuple[str, float | None]]


@dataclass(frozen=True)
class Row:
    """One machine: per column its text, sort key, tooltip and whether it is flagged (bold)."""

    node: str
    texts: tuple[str, ...]
    keys: tuple[tuple[Any, ...], ...]
    tips: tuple[str, ...]
    flagged: tuple[bool, ...]
    #: the verdict's colour (the shared tier colour), "" before a model is checked
    verdict_colour: str = ""


def _sort_key(column: str, text: str) -> tuple[Any, ...]:
    if column in NUMERIC_COLUMNS:
        numbers = version_key(text.lstrip("▲✘ "))
        return (0, numbers) if numbers else (1, ())  # "—" (none) after every value
    # names in natural order, as the fleet reads them: node-2 before node-10
    return (
        0,
        tuple(
            (0, int(part), "") if part.isdigit() else (1, 0, part) for part in _PARTS.findall(text.casefold())
        ),
    )


def verdict_text(verdict: tuple[str, float | None] | None) -> str:
    if verdict is None:
        return ""
    name, speed = verdict
    glyph, words, _colour = verdict_view(name, None, speed)
    return f"{glyph} {tr(words)}" + (f" · {speed_text(speed)}" if speed else "")


#: a sort: the column, and whether it is descending
Sort = tuple[int, bool]


@dataclass(frozen=True)
class Table:
    """The rows, per column its few longest texts (what the column's width is measured from) and whether
    no row has a value in it, and the rows' order under ``sorted_by``: made on the pool, so the GUI thread
    swaps them in instead of sorting and scanning 5,000 rows."""

    rows: tuple[Row, ...]
    longest: tuple[tuple[str, ...], ...]
    empty: tuple[bool, ...] = ()
    order: tuple[int, ...] = ()
    sorted_by: Sort | None = None


def build_table(fleet: Fleet, verdicts: Verdicts, sort: Sort | None = None) -> Table:
    """:func:`build_rows`, each column's longest texts and emptiness, and the order under ``sort`` (the
    view's sort when the work was asked for): all of it on the pool."""
    rows = build_rows(fleet, verdicts)
    columns = range(len(COLUMNS) + 1)
    longest = tuple(tuple(heapq.nlargest(8, (r.texts[c] for r in rows), key=len)) for c in columns)
    empty = tuple(bool(rows) and all(r.texts[c] in ("", MISSING) for r in rows) for c in columns)
    order = tuple(sorted_order(rows, sort)) if sort is not None else ()
    return Table(rows, longest, empty, order, sort)


def sorted_order(rows: tuple[Row, ...], sort: Sort) -> list[int]:
    """The rows' indices sorted by a column: stable, one pass over precomputed keys; ties keep the fleet's
    natural name order."""
    column, descending = sort
    return sorted(range(len(rows)), key=lambda i: rows[i].keys[column], reverse=descending)


def build_rows(fleet: Fleet, verdicts: Verdicts) -> tuple[Row, ...]:
    """Every row's texts, keys and tooltips (Qt-free: runs on the pool; linear in the machines)."""
    odd: dict[tuple[str, str], str] = {}
    for d in fleet.drift():
        column = DRIFT_COLUMNS.get(d.field)
        if column:
            for node in d.nodes:
                odd[(node, column)] = f"{tr('differs from the majority')} ({d.majority})"
    rows = []
    for node in fleet.nodes:
        values = fleet.row(node)
        texts, keys, tips, flagged = [], [], [], []
        for key in COLUMNS:
            text = values.get(key, "")
            note = odd.get((node.name, key))
            shown = ("▲ " + text) if note else text
            if key == "failing" and text not in ("", "0"):
                shown = f"✘ {text}"
            texts.append(shown)
            keys.append(_sort_key(key, text))
            tip = note or (text if text not in ("", MISSING) else "")  # a narrowed column elides it
            tips.append(tooltip(tip))
            flagged.append(bool(note))
        verdict = verdicts.get(node.name)
        texts.append(verdict_text(verdict))
        tips.append(tooltip(texts[-1]))
        keys.append((_VERDICT_ORDER.get(verdict[0], 3), -(verdict[1] or 0)) if verdict else (4, 0))
        flagged.append(False)
        colour = verdict_view(verdict[0], None, verdict[1])[2] if verdict else ""
        rows.append(Row(node.name, tuple(texts), tuple(keys), tuple(tips), tuple(flagged), colour))
    return tuple(rows)


class FleetTableModel(QAbstractTableModel):
    """The rows :func:`build_rows` made, shown as they are; sorting permutes an index list."""

    def __init__(self) -> None:
        super().__init__()
        self._rows: tuple[Row, ...] = ()
        self._longest: tuple[tuple[str, ...], ...] = ()
        self._order: list[int] = []
        self._sort: tuple[int, Qt.SortOrder] = (0, Qt.SortOrder.AscendingOrder)
        self._bold = QFont()
        self._bold.setBold(True)
        #: the verdict's speed under its words (a narrow window): see :meth:`set_two_line_verdicts`
        self._two_lines = False

    def set_table(self, table: Table) -> None:
        self.beginResetModel()
        self._rows, self._longest = table.rows, table.longest
        if table.sorted_by == self.sort_state() and len(table.order) == len(table.rows):
            self._order = list(table.order)  # sorted on the pool as the view still is
        else:
            self._order = list(range(len(table.rows)))
            self._apply_sort()
        self.endResetModel()

    def sort_state(self) -> Sort:
        """The view's sort now, as :func:`build_table` takes it."""
        column, order = self._sort
        return column, order == Qt.SortOrder.DescendingOrder

    def row_at(self, row: int) -> Row:
        return self._rows[self._order[row]]

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(COLUMNS) + 1

    def headerData(  # noqa: N802 - Qt's name
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            title = tr(HEADERS[section]) if section < len(HEADERS) else tr("Model verdict")
            # a count under a two-word title ("Verifiche fallite" over "0"): the title on two lines, so
            # the column is as narrow as its words and the verdict keeps the room (Italian at 900 px)
            return title.replace(" ", "\n", 1) if section in TWO_LINE_HEADERS else title
        return None

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid():
            return None
        row = self._rows[self._order[index.row()]]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            text = row.texts[column]
            return text.replace(" · ", "\n", 1) if self._two_lines and column == len(COLUMNS) else text
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.tips[column] or None
        if role == Qt.ItemDataRole.UserRole:
            return row.node
        if role == Qt.ItemDataRole.FontRole and row.flagged[column]:
            return self._bold
        if role == Qt.ItemDataRole.ForegroundRole and column == len(COLUMNS) and row.verdict_colour:
            return QColor(row.verdict_colour)  # the verdict in its tier's colour, as on every other page
        return None

    def set_two_line_verdicts(self, on: bool) -> None:
        """Show each verdict on two lines, its words over its speed (the page sets its rows' height)."""
        if on != self._two_lines:
            self._two_lines = on
            column = len(COLUMNS)
            if self._rows:
                self.dataChanged.emit(self.index(0, column), self.index(len(self._rows) - 1, column))

    def verdict_width(self, font: QFont, *, two_lines: bool = False) -> int:
        """The verdict column's width for its longest texts (bold, as flagged rows are), on one line or
        on two (words over speed), at most :data:`MAX_VERDICT_PX`."""
        bold = QFont(font)
        bold.setBold(True)
        metrics = QFontMetrics(bold)
        column = len(COLUMNS)
        texts = self._longest[column] if column < len(self._longest) else ()
        lines = [part for t in texts for part in (t.split(" · ", 1) if two_lines else [t])]
        title = QFontMetrics(font).horizontalAdvance(tr("Model verdict")) + 12
        return min(max(max((metrics.horizontalAdvance(t[:200]) for t in lines), default=0), title) + 12,
                   MAX_VERDICT_PX)  # fmt: skip

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.layoutAboutToBeChanged.emit()
        self._sort = (column, order)
        self._apply_sort()
        self.layoutChanged.emit()

    def _apply_sort(self) -> None:
        self._order = sorted_order(self._rows, self.sort_state())

    def column_widths(self, font: QFont, header_font: QFont) -> list[int]:
        """Each column's width: its longest texts measured (the few longest by length, not every row),
        at least its header, at most :data:`MAX_COLUMN_PX`."""
        header = QFontMetrics(header_font)
        bold = QFont(font)
        bold.setBold(True)
        wide = QFontMetrics(bold)
        widths = []
        for column in range(self.columnCount()):
            title = str(self.headerData(column, Qt.Orientation.Horizontal))
            longest = self._longest[column] if column < len(self._longest) else ()
            text = max((wide.horizontalAdvance(t[:200]) for t in longest), default=0)
            cap = MAX_COLUMN_PX if column < len(COLUMNS) else MAX_VERDICT_PX
            title_px = max(header.horizontalAdvance(line) for line in title.split("\n"))
            widths.append(min(max(text, title_px + 12) + 12, cap))
        return widths


__all__ = [
    "COLUMNS",
    "HEADERS",
    "FleetTableModel",
    "Row",
    "Table",
    "build_rows",
    "build_table",
    "sorted_order",
    "verdict_text",
]
