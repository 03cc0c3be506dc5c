"""A page not on screen does not work out a new machine's answers until it is shown (issue 26, no handler
over 50 ms): the Models page's ~100 answers and Upgrade's comparison, made on the pool for a page nobody
looks at, slowed the handlers of the page on screen. Shown, each page has the new machine's answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from fakes.windows import FIXTURES, answered, snapshot_window
from rigcheck.gui import i18n
from rigcheck.gui.pages.models import FIT

pytestmark = pytest.mark.gui


@pytest.fixture(autouse=True)
def english() -> object:
    i18n.set_language("en")
    yield
    i18n.set_language("en")


def fit_cell(page: object, model_id: str) -> str:
    proxy = page.proxy  # type: ignore[attr-defined]
    for row in range(proxy.rowCount()):
        spec = page.source.spec(proxy.mapToSource(proxy.index(row, 0)).row())  # type: ignore[attr-defined]
        if spec.id == model_id:
            return str(proxy.index(row, FIT).data())
    raise AssertionError(model_id)


def test_models_shows_the_new_machines_answers_when_shown_after_a_snapshot_opened_elsewhere(
    qtbot: QtBot, tmp_path: Path
) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.resize(1280, 800)
    window.show()
    window.show_page("models")
    answered(qtbot, window)
    models = window.pages["models"]
    qtbot.waitUntil(lambda: models.source.fit(window.state.catalog.model("llama-3.1-405b")) is not None)  # type: ignore[attr-defined]
    before = fit_cell(models, "llama-3.1-405b")

    window.show_page("overview")
    assert window.open_snapshot(FIXTURES / "hgx-h100x8-2tb.json")  # 640 GB of GPU memory
    answered(qtbot, window)
    window.show_page("models")
    qtbot.waitUntil(lambda: fit_cell(models, "llama-3.1-405b") not in (before, "…"), timeout=20000)
    assert "Does not fit" in before
    assert "On the GPU" in fit_cell(models, "llama-3.1-405b")  # on the eight H100s


def test_upgrade_compares_the_new_machine_when_shown_after_a_snapshot_opened_elsewhere(
    qtbot: QtBot, tmp_path: Path
) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.resize(1280, 800)
    window.show()
    window.show_page("upgrade")
    answered(qtbot, window)
    upgrade = window.pages["upgrade"]
    assert "4090" in upgrade.now_text.text()  # type: ignore[attr-defined]

    window.show_page("overview")
    assert window.open_snapshot(FIXTURES / "hgx-h100x8-2tb.json")
    answered(qtbot, window)
    window.show_page("upgrade")
    answered(qtbot, window)
    assert "H100" in upgrade.now_text.text() and "4090" not in upgrade.now_text.text()  # type: ignore[attr-defined]
    assert upgrade.report is not None and "H100" in upgrade.report.before.gpus[0].name  # type: ignore[attr-defined]
