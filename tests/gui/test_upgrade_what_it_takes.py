"""Upgrade as a buyer uses it (issue 26): "What would it take?" from every does-not-fit verdict, work off
the GUI thread with stale answers dropped, "Try this" per row, and built-in machines offered machines."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from fakes.windows import snapshot_window
from rigcheck.core.catalog import load_catalog
from rigcheck.core.estimate import upgrade as core_upgrade
from rigcheck.core.estimate.soldered import MachineChoice
from rigcheck.core.estimate.upgrade import Option
from rigcheck.core.models.resolve import from_catalog
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages import upgrade as upgrade_module
from rigcheck.gui.pages.overview import ModelCard
from rigcheck.gui.pages.upgrade import UpgradePage

pytestmark = pytest.mark.gui
HUGE = "qwen3-235b-a22b"  # does not fit a 32 GiB office PC, even from RAM


def _upgrade(window: MainWindow) -> UpgradePage:
    page = window.pages["upgrade"]
    assert isinstance(page, UpgradePage)
    return page


def _answered(qtbot: QtBot, page: UpgradePage, model_id: str) -> None:
    qtbot.waitUntil(
        lambda: (
            not page.busy()
            and page.report is not None
            and any(c.model_id == model_id for c in page.report.models)
            and not page.options.isHidden()
        ),
        timeout=20000,
    )


def test_fit_offers_what_would_it_take_and_upgrade_answers_it(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "cpu-only-32gb.json")
    catalog = window.state.catalog
    window.show_page("fit")
    fit = window.pages["fit"]
    spec = catalog.model(HUGE)
    assert spec is not None
    window.state.choose_model(from_catalog(spec), context=16384)
    qtbot.waitUntil(lambda: fit.result is not None and fit.result.verdict == "does_not_fit", timeout=20000)  # type: ignore[attr-defined]
    button = fit.take_button  # type: ignore[attr-defined]
    assert not button.isHidden()
    context = fit.result.estimate.context  # type: ignore[attr-defined]
    button.click()
    assert window.stack.currentWidget() is window.pages["upgrade"]
    page = _upgrade(window)
    assert page.asked_model == HUGE and page.context == context
    assert page.target.currentData() == HUGE
    _answered(qtbot, page, HUGE)
    assert spec.name in page.asked.text()
    assert page.report is not None and page.report.context == context
    # every row is a way to run it, each with its own Try this
    assert page.options.rowCount() > 0
    assert all(page.options.cellWidget(r, 4) is not None for r in range(page.options.rowCount()))


def test_a_model_that_fits_offers_no_such_button(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.show_page("fit")
    fit = window.pages["fit"]
    spec = window.state.catalog.model("llama-3.1-8b")
    assert spec is not None
    window.state.choose_model(from_catalog(spec))
    qtbot.waitUntil(lambda: fit.result is not None and fit.result.verdict != "does_not_fit", timeout=20000)  # type: ignore[attr-defined]
    assert fit.take_button.isHidden()  # type: ignore[attr-defined]


def test_an_overview_card_that_does_not_fit_opens_upgrade(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "cpu-only-32gb.json")
    window.show_page("overview")
    overview = window.pages["overview"]

    def failing() -> list[ModelCard]:
        return [c for c in overview.findChildren(ModelCard) if c.verdict == "does_not_fit"]

    qtbot.waitUntil(lambda: bool(failing()), timeout=20000)
    card = failing()[0]
    fitting = [c for c in overview.findChildren(ModelCard) if c.verdict != "does_not_fit"]
    assert fitting and not any(hasattr(c, "take") for c in fitting)
    card.take.click()
    page = _upgrade(window)
    assert window.stack.currentWidget() is page
    assert page.asked_model == card.spec.id
    _answered(qtbot, page, card.spec.id)


def test_a_models_row_that_does_not_fit_opens_upgrade(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "cpu-only-32gb.json")
    window.show_page("models")
    models = window.pages["models"]
    window.state.pool.waitForDone()
    qtbot.waitUntil(lambda: models.source.fit(models.proxy.spec(0)) is not None, timeout=20000)  # type: ignore[attr-defined]
    models.search.setText(HUGE)  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: models.proxy.rowCount() >= 1, timeout=5000)  # type: ignore[attr-defined]
    row = next(r for r in range(models.proxy.rowCount()) if models.proxy.spec(r).id == HUGE)  # type: ignore[attr-defined]
    assert not models.take_button.isEnabled()  # type: ignore[attr-defined]
    models.table.selectRow(row)  # type: ignore[attr-defined]
    assert models.take_button.isEnabled()  # type: ignore[attr-defined]
    models.take_button.click()  # type: ignore[attr-defined]
    page = _upgrade(window)
    assert window.stack.currentWidget() is page and page.asked_model == HUGE
    _answered(qtbot, page, HUGE)


def test_comparisons_run_off_the_gui_thread_and_stale_ones_are_dropped(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []
    real = core_upgrade.compare

    def recording(*args: object, **kwargs: object) -> core_upgrade.UpgradeReport:
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(upgrade_module, "compare", recording)
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.show_page("upgrade")
    page = _upgrade(window)
    qtbot.waitUntil(lambda: page.report is not None and not page.busy(), timeout=20000)
    assert page.select_gpu("nvidia-geforce-rtx-4090")
    page.add_selected()
    page.recompute()  # asked at once, then asked again for another candidate before it is shown
    assert page.busy() and not page.progress.isHidden()
    assert page.select_gpu("nvidia-geforce-rtx-5090")
    page.replace_with_selected()
    page.recompute()
    qtbot.waitUntil(lambda: not page.busy(), timeout=20000)
    assert page.report is not None
    assert [g.catalog_id for g in page.report.after.gpus] == ["nvidia-geforce-rtx-5090"]
    assert page.progress.isHidden()
    assert threads and threading.main_thread().name not in threads


def test_try_this_for_one_more_card_like_the_owned_one_adds_one(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.show_page("upgrade")
    page = _upgrade(window)
    page.what_would_it_take("llama-3.3-70b")
    _answered(qtbot, page, "llama-3.3-70b")
    rows = [r for r, o in enumerate(page.options.rows) if isinstance(o, Option) and o.owned]
    assert rows, "one more RTX 4090 holds a 70B at Q4_K_M"
    option = page.options.rows[rows[0]]
    assert isinstance(option, Option)
    assert page.options.item(rows[0], 0).text().startswith("1 more")
    page.options.cellWidget(rows[0], 4).click()
    assert page.replacement is None and [s.id for s in page.added] == [option.gpu_id]
    qtbot.waitUntil(lambda: not page.busy() and len(page.report.after.gpus) == 2, timeout=20000)  # type: ignore[union-attr]
    # no GPU smaller or slower than the RTX 4090 is offered
    catalog = load_catalog(use_overlay=False)
    for other in page.options.rows:
        assert isinstance(other, Option)
        spec = catalog.gpu(other.gpu_id or "")
        assert spec is not None and max(spec.memory_gb) >= 23 and (spec.bandwidth_gbs or 1e9) >= 1008


@pytest.mark.parametrize("snapshot", ["m2-ultra-192gb.json", "platforms/dgx-spark.json"])
def test_a_built_in_machine_shows_what_can_change(qtbot: QtBot, tmp_path: Path, snapshot: str) -> None:
    window = snapshot_window(qtbot, tmp_path, snapshot)
    window.show_page("upgrade")
    page = _upgrade(window)
    qtbot.waitUntil(lambda: page.report is not None and not page.busy(), timeout=20000)
    assert page.built_in
    # no GPU table, no Remove, no PSU or RAM field, no GPU cost; the reason instead
    assert page.gpu_picker.isHidden() and page.money.isHidden()
    assert not page.form.isRowVisible(page.psu) and not page.form.isRowVisible(page.ram)
    assert "nothing can be added or swapped" in page.fixed_text.text() and not page.fixed_text.isHidden()
    assert "PSU" not in page.now_text.text()
    page.what_would_it_take(HUGE)
    _answered(qtbot, page, HUGE)
    choices = page.options.rows
    assert choices and all(isinstance(c, MachineChoice) for c in choices)
    before = page.report.before.memory.total_bytes  # type: ignore[union-attr]
    first = choices[0]
    assert isinstance(first, MachineChoice) and first.memory_gib * 1024**3 > before
    page.options.cellWidget(0, 4).click()
    qtbot.waitUntil(
        lambda: not page.busy() and page.report is not None and page.report.after.memory.total_bytes > before,
        timeout=20000,
    )
    assert page.swap is first and first.name in page.swap_text.text()
