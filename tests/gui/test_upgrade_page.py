"""The Upgrade page as a buyer uses it: add a GPU, see models become runnable, see the cost."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from rigcheck.core.catalog import load_catalog
from rigcheck.core.machine import load_machine
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.upgrade import UpgradePage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


def open_page(qtbot: QtBot, tmp_path: Path, snapshot: str) -> UpgradePage:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    state = AppState(load_catalog(use_overlay=False), settings)
    window = MainWindow(state, lambda: load_machine(FIXTURES / snapshot))
    qtbot.addWidget(window)
    window.open_snapshot(FIXTURES / snapshot)
    window.show_page("upgrade")
    upgrade_page = window.pages["upgrade"]
    assert isinstance(upgrade_page, UpgradePage)
    qtbot.waitUntil(lambda: upgrade_page.report is not None, timeout=5000)
    return upgrade_page


@pytest.fixture
def page(qtbot: QtBot, tmp_path: Path) -> UpgradePage:
    return open_page(qtbot, tmp_path, "rtx4090-64gb.json")


def listed(page: UpgradePage) -> list[str]:
    table = page.catalog_list
    return [
        table.item(r, 0).data(Qt.ItemDataRole.UserRole)
        for r in range(table.rowCount())
        if not table.isRowHidden(r) and table.item(r, 0).data(Qt.ItemDataRole.UserRole)  # not a tier's title
    ]


def rows(page: UpgradePage) -> dict[str, tuple[str, str]]:
    return {
        page.table.item(r, 0).text().removeprefix("★ "): (
            page.table.item(r, 1).text(),
            page.table.item(r, 2).text(),
        )
        for r in range(page.table.rowCount())
    }


def test_unchanged_candidate_changes_nothing(page: UpgradePage) -> None:
    assert page.report is not None
    assert not any(change.newly_runnable for change in page.report.models)
    assert all(before == after for before, after in rows(page).values())
    assert "changes nothing yet" in page.summary.text()
    assert page.candidate_list.count() == 1


def test_adding_a_gpu_makes_a_70b_runnable_and_shows_its_cost(qtbot: QtBot, page: UpgradePage) -> None:
    page.search.setText("4090")
    assert page.select_gpu("nvidia-geforce-rtx-4090")
    page.add_button.click()
    qtbot.waitUntil(
        lambda: page.report is not None and page.report.after.gpus and len(page.report.after.gpus) == 2,
        timeout=5000,
    )
    assert page.candidate_list.count() == 2
    assert any(change.newly_runnable for change in page.report.models)  # type: ignore[union-attr]
    assert "★" in "".join(page.table.item(r, 0).text() for r in range(page.table.rowCount()))
    assert "GeForce RTX 4090" in page.cost_text.text()
    assert "Now" in page.power_text.text() and "Candidate" in page.power_text.text()


def test_a_desktop_lists_pcie_cards_only_and_holds_two(qtbot: QtBot, page: UpgradePage) -> None:
    ids = listed(page)
    assert "nvidia-geforce-rtx-5090" in ids and "nvidia-h100-pcie" in ids
    assert "nvidia-h100-sxm5" not in ids and "amd-instinct-mi300x" not in ids  # modules need a server board
    assert not page.select_gpu("nvidia-h100-sxm5")
    assert "desktop" in page.fits_label.text()
    assert page.select_gpu("nvidia-geforce-rtx-5090")
    page.add_button.click()
    page.add_button.click()  # a third GPU: no room in a desktop
    assert page.candidate_list.count() == 2
    assert "No room for another GPU" in page.fits_label.text()


def test_candidate_gpus_sort_by_price_memory_and_price_per_gib(page: UpgradePage) -> None:
    table = page.catalog_list
    header = table.horizontalHeader()
    assert [table.horizontalHeaderItem(c).text() for c in range(4)] == ["GPU", "Memory", "Price", "$/GiB"]
    # by default upgrades first (test_guilook26_picker); a click on Price sorts cheapest first
    assert header.sortIndicatorSection() == table.columnCount() - 1 and table.isColumnHidden(4)
    table.sortItems(2, Qt.SortOrder.AscendingOrder)

    def column(c: int) -> list[str]:
        return [table.item(r, c).text() for r in range(table.rowCount()) if not table.isRowHidden(r)]

    prices = [float(t.strip("$").replace(",", "")) for t in column(2) if t != "—"]
    assert prices == sorted(prices) and column(2)[-1] == "—"  # unknown prices last
    table.sortItems(1, Qt.SortOrder.DescendingOrder)
    memory = [float(t.split()[0]) for t in column(1)]
    assert memory == sorted(memory, reverse=True) and all(t.endswith(" GiB") for t in column(1))
    table.sortItems(3, Qt.SortOrder.AscendingOrder)
    per_gib = [float(t.strip("$").replace(",", "")) for t in column(3) if t != "—"]
    assert per_gib == sorted(per_gib)


def test_a_card_without_prices_draws_no_chart(qtbot: QtBot, page: UpgradePage) -> None:
    assert page.select_gpu("nvidia-h100-pcie")  # the catalog has no purchase or rent price for it
    page.replace_button.click()
    qtbot.waitUntil(
        lambda: page.report is not None and page.report.after.gpus[0].catalog_id == "nvidia-h100-pcie",
        timeout=5000,
    )
    assert page.chart.isHidden()


def test_newly_runnable_models_come_first(qtbot: QtBot, page: UpgradePage) -> None:
    assert page.select_gpu("nvidia-geforce-rtx-4090")
    page.add_button.click()
    qtbot.waitUntil(lambda: page.report is not None and len(page.report.after.gpus) == 2, timeout=5000)
    names = [page.table.item(r, 0).text() for r in range(page.table.rowCount())]
    starred = [n.startswith("★") for n in names]
    assert any(starred) and starred == sorted(starred, reverse=True)  # every ★ row above the others
    # and the answer above the controls, where a 1024x700 window shows it
    assert "newly runnable" in page.summary.text() and names[0].removeprefix("★ ") in page.summary.text()


def test_an_hgx_server_lists_sxm_and_draws_the_break_even_chart(qtbot: QtBot, tmp_path: Path) -> None:
    page = open_page(qtbot, tmp_path, "hgx-h100x8-2tb.json")
    # "Now" says the eight identical GPUs in one line, not eight
    assert page.now_text.text().startswith("GPUs 0–7: 8 × H100 SXM5 80GB · 80.0 GiB each<br>RAM")
    ids = listed(page)
    assert "nvidia-h100-sxm5" in ids and "nvidia-geforce-rtx-5090" not in ids
    assert page.select_gpu("nvidia-h200")
    page.replace_button.click()
    qtbot.waitUntil(
        lambda: page.report is not None and page.report.after.gpus[0].catalog_id == "nvidia-h200",
        timeout=5000,
    )
    # the catalog has the H200's rent ($3.50/h, a dated public page) but no followable purchase price:
    # no break-even to draw, and the page says the rent
    assert "$3.50" in page.cost_text.text()
    assert page.chart.isHidden()


def test_a_mac_can_add_no_gpu(qtbot: QtBot, tmp_path: Path) -> None:
    page = open_page(qtbot, tmp_path, "m2-ultra-192gb.json")
    assert listed(page) == []
    assert not page.add_button.isEnabled() and "built in" in page.fits_label.text()


def test_ram_field_and_cheapest_gpus(qtbot: QtBot, page: UpgradePage) -> None:
    page.ram.setValue(1536)
    page.workload.setCurrentIndex(page.workload.findData("full"))
    qtbot.waitUntil(lambda: page.report is not None and page.report.workload == "full", timeout=5000)
    page.target.setCurrentIndex(page.target.findData("llama-3.1-8b"))
    page.min_speed.setValue(30)
    page.find_button.click()
    qtbot.waitUntil(lambda: not page.busy() and not page.options.isHidden(), timeout=10000)
    assert page.suggestions.text() and page.options.rowCount() > 0
