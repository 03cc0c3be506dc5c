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
from rigcheck.gui.pages.upgrade import UpgradePage

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
