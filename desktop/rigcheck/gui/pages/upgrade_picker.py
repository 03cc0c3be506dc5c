"""The Upgrade page's GPU picker: one row per card one can buy (memory, price, $/GiB), in tiers for this
machine (upgrades, older or no better, step downs: ``core.estimate.buying.picker_rank``) under a bold
header row each."""

from __future__ import annotations

import math
from datetime import date
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QCheckBox, QTableWidget

from rigcheck.core.catalog import GpuSpec
from rigcheck.core.estimate.buying import (
    OTHERS,
    STEP_DOWNS,
    UPGRADES,
    best_owned,
    generation_years,
    picker_rank,
)
from rigcheck.core.estimate.cost import PriceFact, gpu_cost
from rigcheck.core.estimate.upgrade import buyable_gpus
from rigcheck.gui.i18n import num, sig, tr
from rigcheck.gui.state import AppState
from rigcheck.gui.widgets import SortItem, tooltip

#: the GPU picker's columns; the last, hidden, holds the default order's key (buying.picker_rank)
PICKER_COLUMNS = ("GPU", "Memory", "Price", "$/GiB", "")
RELEVANCE = len(PICKER_COLUMNS) - 1
#: the picker's tiers in its default order (buying.picker_rank's groups): a header row each
TIERS = (
    (UPGRADES, "Upgrades: newest generation, more memory or bandwidth than yours"),
    (OTHERS, "Older generations, or no better than yours"),
    (STEP_DOWNS, "Smaller or slower than yours"),
)
#: the same for a machine without a GPU (every card is an upgrade; only the generation differs)
TIERS_NO_GPU = {UPGRADES: "Newest generation", OTHERS: "Older generations"}
#: a header row's tier (its cells hold no GPU)
TIER_ROLE = Qt.ItemDataRole.UserRole + 1


class GpuPicker:
    """UpgradePage's picker table (``catalog_list``): filling it, ranking it, reading its selection."""

    state: AppState
    catalog_list: QTableWidget
    show_weaker: QCheckBox
    _prices: dict[str, PriceFact | None]
    _prices_day: date | None

    if TYPE_CHECKING:  # UpgradePage's

        def _first_fill(self) -> None: ...

    def _fill_catalog(self) -> None:
        """One row per GPU one can buy: name, memory in GiB, purchase price and price per GiB; ranked for
        the machine by _rank (_show_takes), which the caller runs next."""
        specs = buyable_gpus(self.state.catalog)
        sorting = self.catalog_list.isSortingEnabled()
        self.catalog_list.setSortingEnabled(False)
        self.catalog_list.setRowCount(len(specs) + len(TIERS))
        self._fill_tier_rows(len(specs))
        for row, spec in enumerate(specs):
            memory = max(spec.memory_gb) if spec.memory_gb else None
            purchase = self._purchase(spec)
            price = purchase.usd if purchase else None
            per_gib = price / memory if price and memory else None
            name = SortItem(spec.name, (spec.name.casefold(),))
            name.setToolTip(tooltip(spec.name))
            name.setData(Qt.ItemDataRole.UserRole, spec.id)
            label = f"${num(price)}" if price else "—"
            cells = (
                name,
                SortItem(f"{sig(memory, 6)} GiB" if memory else "?", (memory is None, memory or 0.0)),
                SortItem(label, (price is None, price or 0.0)),
                SortItem(f"${num(per_gib)}" if per_gib else "—", (per_gib is None, per_gib or 0.0)),
            )
            if purchase is not None:
                when = purchase.date or (
                    tr("launch price, {year}", year=spec.release_year)
                    if purchase.kind == "launch" and spec.release_year
                    else tr("undated")
                )
                cells[2].setToolTip(tooltip(f"{when}: {purchase.source}"))
            for column, cell in enumerate(cells):
                if column:
                    cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.catalog_list.setItem(row, column, cell)
        self.catalog_list.setSortingEnabled(sorting)
        for column in (1, 2, 3):  # once per fill: a layout pass no longer measures every cell
            self.catalog_list.resizeColumnToContents(column)
        price_header = self.catalog_list.horizontalHeaderItem(2)
        if price_header is not None:
            price_header.setToolTip(
                tr("A dated market price where the catalog has one, else the launch price (MSRP)")
            )

    def _fill_tier_rows(self, first: int) -> None:
        """A header row per tier from row ``first`` on: bold, not selectable, first of its tier in the
        default order (its key sorts before every card of the tier); its words are set by _show_tiers."""
        bold = QFont(self.catalog_list.font())
        bold.setBold(True)
        shade = self.catalog_list.palette().alternateBase()
        for n, (group, _words) in enumerate(TIERS):
            row = first + n
            keys: tuple[tuple[object, ...], ...] = (
                ("",),
                (True, math.inf),
                (True, math.inf),
                (True, math.inf),
            )
            for column, key in enumerate(keys):
                cell = SortItem("", key)
                cell.setFlags(Qt.ItemFlag.ItemIsEnabled)  # a title: never selected, never added
                cell.setData(TIER_ROLE, group)
                cell.setBackground(shade)
                cell.setFont(bold)
                self.catalog_list.setItem(row, column, cell)
            self.catalog_list.setItem(row, RELEVANCE, SortItem("", (group, False, -1.0, "")))

    def _show_tiers(self) -> None:
        """Each tier's header row over its cards, with how many are listed; shown only in the default
        order and when its tier lists a card."""
        table = self.catalog_list
        relevance = table.horizontalHeader().sortIndicatorSection() == RELEVANCE
        counts: dict[int, int] = {}
        headers: list[tuple[int, int]] = []
        for row in range(table.rowCount()):
            item = table.item(row, 0)
            if item is None:
                continue
            group = item.data(TIER_ROLE)
            if group is not None:
                headers.append((row, int(group)))
                continue
            rank = table.item(row, RELEVANCE)
            if not table.isRowHidden(row) and isinstance(rank, SortItem):
                counts[int(rank.key[0])] = counts.get(int(rank.key[0]), 0) + 1  # type: ignore[call-overload]
        machine = self.state.machine
        no_gpu = machine is None or not machine.gpus
        names = dict(TIERS)
        table.clearSpans()
        for row, group in headers:
            count = counts.get(group, 0)
            words = TIERS_NO_GPU.get(group, names[group]) if no_gpu else names[group]
            table.item(row, 0).setText(f"{tr(words)} ({count})")
            table.setRowHidden(row, not relevance or not count)
            if relevance and count:
                table.setSpan(row, 0, 1, RELEVANCE)  # across the shown columns, never cut at the first

    def _rank(self) -> None:
        """Each row's place in the default order for this machine (buying.picker_rank): better cards of the
        newest generation first, older and no-better ones next, step downs last; re-sorted when that order
        is shown."""
        catalog, machine = self.state.catalog, self.state.machine
        owned = best_owned(machine, catalog) if machine is not None else (None, None)
        generations = generation_years(catalog)
        sorting = self.catalog_list.isSortingEnabled()
        self.catalog_list.setSortingEnabled(False)
        for row in range(self.catalog_list.rowCount()):
            gpu_id = self.catalog_list.item(row, 0).data(Qt.ItemDataRole.UserRole)
            spec = catalog.gpu(gpu_id) if gpu_id else None
            if spec is None:
                continue  # a tier's header row keeps its key
            key = picker_rank(spec, owned, generations, self._purchase_usd(spec))
            self.catalog_list.setItem(row, RELEVANCE, SortItem("", key))
        self.catalog_list.setSortingEnabled(sorting)
        header = self.catalog_list.horizontalHeader()
        if header.sortIndicatorSection() == RELEVANCE:
            self.catalog_list.sortItems(RELEVANCE, header.sortIndicatorOrder())

    def _purchase_usd(self, spec: GpuSpec) -> float | None:
        purchase = self._purchase(spec)
        return purchase.usd if purchase else None

    def _purchase(self, spec: GpuSpec) -> PriceFact | None:
        """A GPU's purchase price as gpu_cost gives it, worked out once a day per GPU: ranking the ~120
        cards again for each machine opened, or listing them again for a language switch, held the GUI
        thread ~5-15 ms each."""
        today = date.today()
        if self._prices_day != today:
            self._prices, self._prices_day = {}, today
        if spec.id not in self._prices:
            self._prices[spec.id] = gpu_cost(spec).purchase
        return self._prices[spec.id]

    def _selected_spec(self) -> GpuSpec | None:
        self._first_fill()
        table = self.catalog_list
        row = table.currentRow()
        item = table.item(row, 0) if row >= 0 else None
        if item is not None and item.data(TIER_ROLE) is not None:
            # a tier's title stands for its first card
            below = (r for r in range(row + 1, table.rowCount()) if not table.isRowHidden(r))
            item = next((table.item(r, 0) for r in below), None)
        gpu_id = item.data(Qt.ItemDataRole.UserRole) if item else None
        return self.state.catalog.gpu(gpu_id) if gpu_id else None

    def select_gpu(self, gpu_id: str) -> bool:
        """Select a listed GPU; False when it is not listed (unknown, or the machine cannot take it)."""
        self._first_fill()
        for row in range(self.catalog_list.rowCount()):
            if self.catalog_list.item(row, 0).data(Qt.ItemDataRole.UserRole) == gpu_id:
                if self.catalog_list.isRowHidden(row) and not self.show_weaker.isChecked():
                    self.show_weaker.setChecked(True)  # a step down asked for by name is shown
                if self.catalog_list.isRowHidden(row):
                    return False
                self.catalog_list.setCurrentCell(row, 0)
                return True
        return False
