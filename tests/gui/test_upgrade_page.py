"""The Upgrade page as a buyer uses it: add a GPU, see models become runnable, see the cost."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from rigcheck.core.catalog import load_catalog
from rigcheck.core.machine import load_machine
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.upgrade import UpgradePage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


@pytest.fixture
def page(qtbot: QtBot, tmp_path: Path) -> UpgradePage:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    state = AppState(load_catalog(use_overlay=False), settings)
    window = MainWindow(state, lambda: load_machine(FIXTURES / "rtx4090-64gb.json"))
    qtbot.addWidget(window)
    window.open_snapshot(FIXTURES / "rtx4090-64gb.json")
    window.show_page("upgrade")
    upgrade_page = window.pages["upgrade"]
    assert isinstance(upgrade_page, UpgradePage)
    qtbot.waitUntil(lambda: upgrade_page.report is not None, timeout=5000)
    return upgrade_page


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
    assert page.candidate_list.count() == 1


def test_adding_a_gpu_makes_a_70b_runnable_and_shows_its_cost(qtbot: QtBot, page: UpgradePage) -> None:
    page.search.setText("4090")
    page.select_gpu("nvidia-geforce-rtx-4090")
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


def test_replacing_with_an_h100_draws_the_break_even_chart(qtbot: QtBot, page: UpgradePage) -> None:
    page.select_gpu("nvidia-h100-sxm5")
    page.replace_button.click()
    qtbot.waitUntil(
        lambda: page.report is not None and page.report.after.gpus[0].catalog_id == "nvidia-h100-sxm5",
        timeout=5000,
    )
    x, _y = page.rent_curve.getData()
    # the catalog has the H100's purchase ($25,000) and rent ($3.15/h) from the cost-per-TFLOP seed
    assert x is not None and len(x) == 37  # months 0..36
    assert "$25,000" in page.cost_text.text()
    page.reset_button.click()
    qtbot.waitUntil(
        lambda: page.report is not None and page.report.after.gpus[0].catalog_id != "nvidia-h100-sxm5",
        timeout=5000,
    )


def test_ram_field_and_cheapest_gpus(qtbot: QtBot, page: UpgradePage) -> None:
    page.ram.setValue(1536)
    page.workload.setCurrentIndex(page.workload.findData("full"))
    qtbot.waitUntil(lambda: page.report is not None and page.report.workload == "full", timeout=5000)
    page.target.setCurrentIndex(page.target.findData("llama-3.1-8b"))
    page.min_speed.setValue(30)
    page.find_button.click()
    assert page.suggestions.text()
