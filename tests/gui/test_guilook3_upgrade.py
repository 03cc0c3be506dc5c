"""Upgrade (issue 26): the comparison in one line on the first screen ("Now → candidate: 12 → 13 of 17
models run on the GPU"), the ways table's prices whole at 900 px in Italian (a price over its standing,
rows as tall as their wrapped notes), the GPU picker's cards in tiers with a header row each."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from pytestqt.qtbot import QtBot

from fakes.windows import answered, snapshot_window
from rigcheck.core.i18n import set_language, tr
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.upgrade import TIER_ROLE, UpgradePage

pytestmark = pytest.mark.gui


def _upgrade(
    qtbot: QtBot, tmp_path: Path, snapshot: str, size: tuple[int, int], language: str = "en"
) -> tuple[MainWindow, UpgradePage]:
    window = snapshot_window(qtbot, tmp_path, snapshot, language=language)
    window.setMinimumSize(0, 0)
    window.resize(*size)
    window.show()
    window.show_page("upgrade")
    page = window.pages["upgrade"]
    assert isinstance(page, UpgradePage)
    answered(qtbot, window)
    qtbot.waitUntil(lambda: not page.busy() and page.report is not None, timeout=30000)
    return window, page


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_comparison_is_summed_up_in_the_first_700_px(qtbot: QtBot, tmp_path: Path, language: str) -> None:
    window, page = _upgrade(qtbot, tmp_path, "rtx4090-64gb.json", (1024, 700), language)
    try:
        assert page.select_gpu("nvidia-geforce-rtx-5090") or page.select_gpu(_first_listed(page))
        page.replace_with_selected()
        qtbot.waitUntil(lambda: not page.busy(), timeout=30000)
        report = page.report
        assert report is not None
        on_gpu = [
            sum(o.verdict == "fits" and o.where in (None, "gpu") for o in side)
            for side in ([c.before for c in report.models], [c.after for c in report.models])
        ]
        words = tr(
            "Now → candidate: {before} → {after} of {total} models run on the GPU",
            before=on_gpu[0],
            after=on_gpu[1],
            total=len(report.models),
        )
        assert page.headline.isVisible() and words in page.headline.text().replace("&gt;", ">")
        # inside the first screen, unscrolled, above the ways table and the full before → after table
        bottom = page.headline.mapTo(page, QPoint(0, page.headline.height())).y()
        assert 0 < bottom < 700
        assert bottom < page.table.mapTo(page, QPoint(0, 0)).y()
    finally:
        window.close()
        set_language("en")


def _first_listed(page: UpgradePage) -> str:
    from PySide6.QtCore import Qt

    table = page.catalog_list
    for row in range(table.rowCount()):
        gpu = table.item(row, 0).data(Qt.ItemDataRole.UserRole)
        if gpu and not table.isRowHidden(row):
            return str(gpu)
    raise AssertionError("no GPU listed")


def test_prices_are_whole_at_900_px_in_italian(qtbot: QtBot, tmp_path: Path) -> None:
    window, page = _upgrade(qtbot, tmp_path, "rtx4090-64gb.json", (900, 600), "it")
    try:
        page.what_would_it_take("llama-3.3-70b")
        qtbot.waitUntil(lambda: not page.busy() and not page.options.isHidden(), timeout=30000)
        table = page.options
        metrics = table.fontMetrics()
        assert table.rowCount() > 0
        for row in range(table.rowCount()):
            price = table.item(row, 1).text()
            lines = price.split("\n")
            assert all(metrics.horizontalAdvance(line) <= table.columnWidth(1) - 6 for line in lines), price
            assert table.rowHeight(row) >= len(lines) * metrics.lineSpacing()
        # the table is as tall as its rows and never sideways
        rows = sum(table.rowHeight(r) for r in range(table.rowCount()))
        assert table.height() >= min(560, rows)
        assert sum(table.columnWidth(c) for c in range(table.columnCount())) <= table.viewport().width() + 2
    finally:
        window.close()
        set_language("en")


def _tiers(page: UpgradePage) -> list[tuple[int, str]]:
    """The shown header rows, top to bottom: (tier, words)."""
    table = page.catalog_list
    return [
        (int(table.item(r, 0).data(TIER_ROLE)), table.item(r, 0).text())
        for r in range(table.rowCount())
        if not table.isRowHidden(r) and table.item(r, 0).data(TIER_ROLE) is not None
    ]


def test_the_picker_groups_its_cards_under_tier_headers(qtbot: QtBot, tmp_path: Path) -> None:
    from PySide6.QtCore import Qt

    from rigcheck.core.estimate.buying import OTHERS, STEP_DOWNS, UPGRADES

    window, page = _upgrade(qtbot, tmp_path, "rtx4090-64gb.json", (1024, 700))
    try:
        table = page.catalog_list
        assert [t for t, _w in _tiers(page)] == [UPGRADES, OTHERS]  # step downs hidden until asked for
        page.show_weaker.setChecked(True)
        tiers = _tiers(page)
        assert [t for t, _w in tiers] == [UPGRADES, OTHERS, STEP_DOWNS]
        assert tiers[0][1].startswith(tr("Upgrades: newest generation, more memory or bandwidth than yours"))
        # every card sits under its own tier's header, each header counts its cards
        current, counted = None, {}
        for row in range(table.rowCount()):
            if table.isRowHidden(row):
                continue
            tier = table.item(row, 0).data(TIER_ROLE)
            if tier is not None:
                current = int(tier)
                assert table.columnSpan(row, 0) >= 4  # across the shown columns
                assert not table.item(row, 0).flags() & Qt.ItemFlag.ItemIsSelectable
                continue
            assert current is not None
            assert table.item(row, table.columnCount() - 1).key[0] == current
            counted[current] = counted.get(current, 0) + 1
        for tier, words in tiers:
            assert words.endswith(f"({counted[tier]})")
        # another order has no tiers: their titles are hidden, and come back with the default order
        table.sortItems(2, Qt.SortOrder.AscendingOrder)
        assert _tiers(page) == []
    finally:
        window.close()


def test_a_gpu_less_machine_gets_generation_tiers(qtbot: QtBot, tmp_path: Path) -> None:
    window, page = _upgrade(qtbot, tmp_path, "cpu-only-32gb.json", (1024, 700), "it")
    try:
        words = [w for _t, w in _tiers(page)]
        assert words and words[0].startswith(tr("Newest generation"))
        assert all("tua" not in w for w in words)  # no "della tua" ("than yours") without a GPU of one's own
    finally:
        window.close()
        set_language("en")
