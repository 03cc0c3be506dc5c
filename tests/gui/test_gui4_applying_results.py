"""Results are applied a step at a time and only where they are seen (issue 26 #5), and the Overview uses
the width at 1920×1080 (issue 26, layout): behaviour, not timings (those are benchmarks/gui_handlers.py's)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from fakes.windows import snapshot_window
from rigcheck.gui.app import settle
from rigcheck.gui.pages.compat import CompatPage
from rigcheck.gui.pages.overview import OverviewPage
from rigcheck.gui.widgets import TileLayout

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


def test_the_overview_puts_answers_and_machine_side_by_side_when_wide(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.setMinimumSize(0, 0)
    window.resize(1920, 1080)
    window.show()
    window.show_page("overview")
    settle(window, timeout_s=20)
    page = window.pages["overview"]
    assert isinstance(page, OverviewPage)
    cards_right = max(c.mapTo(page, c.rect().topRight()).x() for c in page.cards)
    facts_left = min(c.mapTo(page, c.rect().topLeft()).x() for c in page.fact_cards)
    assert cards_right < facts_left, "the machine's cards sit right of the model cards"
    top_card = min(c.mapTo(page, c.rect().topLeft()).y() for c in page.cards)
    top_fact = min(c.mapTo(page, c.rect().topLeft()).y() for c in page.fact_cards)
    assert abs(top_card - top_fact) < 40, "both columns start at the top"
    rows: dict[int, int] = {}
    for card in page.cards:
        rows[card.y()] = rows.get(card.y(), 0) + 1
    assert len(set(rows.values())) == 1, f"every row of model cards is full: {rows}"
    # narrow again: one above the other, as at 1024×700
    window.resize(1024, 700)
    settle(window)
    cards_bottom = max(c.mapTo(page, c.rect().bottomLeft()).y() for c in page.cards)
    assert cards_bottom < min(c.mapTo(page, c.rect().topLeft()).y() for c in page.fact_cards)


def test_tiles_take_as_few_columns_as_give_the_same_rows(qtbot: QtBot) -> None:
    host = QWidget()
    qtbot.addWidget(host)
    layout = TileLayout(host, min_width=100, spacing=10)
    tiles = [QWidget() for _ in range(16)]
    for tile in tiles:
        tile.setMinimumHeight(20)
        layout.addWidget(tile)
    host.resize(560, 200)  # five fit side by side: 16 cards are 4 rows of 4, not 3 of 5 and 1 alone
    host.show()
    layout.setGeometry(host.rect())
    assert len({t.x() for t in tiles}) == 4
    assert len({t.y() for t in tiles}) == 4


def test_a_machine_opened_on_another_page_reaches_hidden_pages_when_shown(
    qtbot: QtBot, tmp_path: Path
) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.resize(1280, 800)
    window.show()
    for key in ("overview", "compat", "fit"):
        window.show_page(key)
        settle(window, timeout_s=20)
    compat, overview = window.pages["compat"], window.pages["overview"]
    assert isinstance(compat, CompatPage) and isinstance(overview, OverviewPage)
    assert window.open_snapshot(FIXTURES / "hgx-h100x8-2tb.json")
    settle(window, timeout_s=20)
    window.show_page("compat")
    settle(window, timeout_s=20)
    titles = [compat.tree.topLevelItem(i).text(0) for i in range(compat.tree.topLevelItemCount())]
    assert any(t.startswith("GPUs 0–7: 8 × H100") for t in titles)
    window.show_page("overview")
    settle(window, timeout_s=20)
    assert len(overview.cards) == 16 and {c.view.where for c in overview.cards} == {"gpu"}
    assert overview.fact_cards[0].findChildren(QWidget)  # the HGX's facts, built on show
    assert "H100" in "".join(
        label.text() for label in overview.fact_cards[0].findChildren(type(compat.summary))
    )


def test_a_language_switch_reaches_every_page(qtbot: QtBot, tmp_path: Path) -> None:
    """The page on screen at once, the others one per event-loop turn or (Overview, Compatibility) when
    next shown: each in Italian when the user looks at it."""
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.resize(1280, 800)
    window.show()
    for key in ("overview", "models", "compat", "fit"):
        window.show_page(key)
        settle(window, timeout_s=20)
    compat, overview = window.pages["compat"], window.pages["overview"]
    assert isinstance(compat, CompatPage) and isinstance(overview, OverviewPage)
    cards = [c.accessibleName() for c in overview.cards]
    try:
        window.set_language("it")
        settle(window, timeout_s=20)
        assert compat.tree.headerItem().text(0) == "Stato"  # fixed strings at once, shown or not
        window.show_page("compat")  # its findings, worked out again, wait until it is shown
        settle(window, timeout_s=20)
        assert compat.summary.text().startswith("Istantanea") and "da sistemare" in compat.summary.text()
        window.show_page("overview")
        settle(window, timeout_s=20)
        assert len(overview.cards) == len(cards)
        assert [c.accessibleName() for c in overview.cards] != cards
        assert any("Funziona" in c.accessibleName() for c in overview.cards)
    finally:
        window.set_language("en")
        settle(window, timeout_s=20)
