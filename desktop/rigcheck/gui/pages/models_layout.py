"""The Models page at any width: its filters on one row or, narrow, two; the catalog's columns measured
once per content, and the least needed given up while the rest would not fit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QStyle, QTableView, QVBoxLayout, QWidget

from rigcheck.gui.pages.models_table import ACTIVE, CONTEXT, FAMILY, HF_ID, LICENCE, NAME, CatalogTable

#: columns given up, in this order, when the window is too narrow for all (no sideways scrolling at
#: 1024 px): each is in the row's tooltip and in Fit
NARROW_HIDES = (LICENCE, ACTIVE, CONTEXT, FAMILY)
#: the least the hub id column keeps (elided in the middle below its full width)
HF_ID_MIN = 110
#: below this page width the Models filters take two rows (the search box keeps its room)
WRAP_FILTERS_PX = 1000


class CatalogLayout:
    """ModelsPage's filter rows (``_filters_top``, ``_filters_host``) and the catalog's columns
    (``table``)."""

    table: QTableView
    source: CatalogTable
    _filters_top: QHBoxLayout
    _filters_host: QWidget
    _filters_outer: QVBoxLayout
    _filters_wrapped: bool
    _column_widths: dict[int, int]

    if TYPE_CHECKING:  # QWidget's

        def width(self) -> int: ...

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
