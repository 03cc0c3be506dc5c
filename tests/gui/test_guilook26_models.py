"""The Models detail pane's formats (issue 26): a grid of badges that line up in columns, as many as the
pane's width holds, none broken inside (a "tok/s" used to wrap after its "/")."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QTextDocument
from pytestqt.qtbot import QtBot

from gui.test_model_detail import open_models, select
from rigcheck.gui.pages.model_detail import BADGE_PX


@pytest.mark.parametrize("width", [1024, 1920])
def test_badges_line_up_in_as_many_columns_as_fit(qtbot: QtBot, tmp_path: Path, width: int) -> None:
    page = open_models(qtbot, tmp_path)
    window = page.window()
    window.setMinimumSize(0, 0)
    window.resize(width, 800)
    window.show()
    select(page, "qwen3.6-27b")
    detail = page.detail
    qtbot.waitUntil(lambda: detail.detail is not None and not detail.busy(), timeout=20000)
    qtbot.wait(10)
    columns = detail._columns
    assert columns == max(1, min(len(detail.detail.badges), (detail.width() - 24) // BADGE_PX))
    assert (columns >= 4) if width >= 1920 else (2 <= columns <= 3)
    assert detail.legend.isVisible()
    # each badge laid out alone at the column width takes one line: no break inside it
    for cell in detail._cells:
        document = QTextDocument()
        document.setDefaultFont(detail.badges.font())
        document.setHtml(cell)
        document.setTextWidth(BADGE_PX)
        assert document.lineCount() == 1 or document.documentLayout().documentSize().height() < 2 * (
            detail.badges.fontMetrics().lineSpacing()
        ), cell


def test_the_search_box_keeps_its_room_at_900_in_italian(qtbot: QtBot, tmp_path: Path) -> None:
    from fakes.windows import snapshot_window

    window = snapshot_window(qtbot, tmp_path, "cpu-only-32gb.json", language="it")
    try:
        window.setMinimumSize(0, 0)
        window.resize(900, 600)
        window.show()
        window.show_page("models")
        page = window.pages["models"]
        qtbot.wait(20)
        assert window.minimumSizeHint().width() <= 900 and window.width() == 900
        assert page.search.width() >= 300  # the filters went to a second row
        assert (
            page.search.geometry().bottom()
            < page.family.mapTo(page.search.parentWidget(), page.family.rect().topLeft()).y()
        )
        window.resize(1920, 1080)
        qtbot.wait(20)
        row = page.search.mapTo(page, page.search.rect().topLeft()).y()
        assert abs(page.family.mapTo(page, page.family.rect().topLeft()).y() - row) < 12  # one row again
    finally:
        from rigcheck.gui import i18n

        i18n.set_language("en")
