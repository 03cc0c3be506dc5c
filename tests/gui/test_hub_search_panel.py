"""The Models page's hub search end to end against the local fake hub of the CLI hub-search tests
(loopback only): results listed through huggingface_hub's list_models, each answered with its fit on the
machine the pages show, progress and cancel on the worker pool, one line offline."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

sys.path.insert(0, str(Path(__file__).parent.parent / "core"))  # the fake hub lives with the core tests

from test_hub_search import Searches, fake
from test_model_hub import FakeHub, go_offline

from fakes.machines import full_machine
from rigcheck.core.catalog import load_catalog
from rigcheck.core.models.hub import Cancelled
from rigcheck.gui import i18n
from rigcheck.gui.pages import hub_search as panel_module
from rigcheck.gui.pages.models import ModelsPage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
__all__ = ["fake"]


@pytest.fixture
def state(tmp_path: Path) -> Iterator[AppState]:
    i18n.set_language("en")
    app_state = AppState(
        load_catalog(use_overlay=False), QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    app_state.set_machine(full_machine(), "box", False)
    yield app_state
    assert app_state.pool.waitForDone(10000), "a hub search was left running"


@pytest.fixture
def page(qtbot: QtBot, state: AppState) -> ModelsPage:
    widget = ModelsPage(state)
    qtbot.addWidget(widget)
    widget.resize(1090, 900)
    widget.show()
    return widget


def fit_text(page: ModelsPage, repo: str) -> str:
    table = page.hub_search.results
    row = next(r for r in range(table.rowCount()) if table.item(r, 0).text() == repo)
    item = table.item(row, 3)
    return item.text() if item is not None else ""


def test_search_lists_results_with_their_fit_and_chooses_one(
    qtbot: QtBot, page: ModelsPage, state: AppState, fake: tuple[FakeHub, Searches]
) -> None:
    panel = page.hub_search
    qtbot.keyClicks(panel.query, "org")
    qtbot.mouseClick(panel.search_button, Qt.MouseButton.LeftButton)
    assert panel.busy and panel.cancel_button.isEnabled() and not panel.search_button.isEnabled()
    qtbot.waitUntil(lambda: not panel.busy, timeout=20000)
    assert panel.results.rowCount() == 3
    assert "tokens/s" in fit_text(page, "org/llama") and "GPU" in fit_text(page, "org/llama")
    assert "gated" in fit_text(page, "org/gated")
    assert panel.status.text().startswith("3 results")
    assert panel.search_button.isEnabled() and not panel.cancel_button.isEnabled()
    _, searches = fake
    assert searches.queries[0]["search"] == ["org"]
    chosen: list[Any] = []
    state.model_chosen.connect(chosen.append)
    row = next(r for r in range(3) if panel.results.item(r, 0).text() == "org/llama")
    panel._choose_row(row, 0)
    assert len(chosen) == 1 and "org/llama" in f"{chosen[0].source} {chosen[0].id}"


def test_offline_is_one_line_and_the_buttons_come_back(
    qtbot: QtBot, page: ModelsPage, fake: tuple[FakeHub, Searches], monkeypatch: pytest.MonkeyPatch
) -> None:
    go_offline(monkeypatch)
    panel = page.hub_search
    qtbot.keyClicks(panel.query, "qwen")
    qtbot.keyClick(panel.query, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not panel.busy, timeout=10000)
    text = panel.status.text()
    assert text.startswith("⚠ hf:search: offline") and "\n" not in text
    assert panel.results.rowCount() == 0 and panel.search_button.isEnabled()


def test_cancel_stops_between_look_ups(
    qtbot: QtBot, page: ModelsPage, fake: tuple[FakeHub, Searches], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = panel_module.answer_hits

    def held(repo_id: str, *, progress: Any, cancel: Any, catalog: Any) -> Any:
        progress("reading config.json")  # a look-up that waits for the user (the hub's side is tested apart)
        while not cancel():
            time.sleep(0.01)
        raise Cancelled()

    monkeypatch.setattr(panel_module, "answer_hits", lambda *a, **k: real(*a, look_up=held, **k))
    panel = page.hub_search
    qtbot.keyClicks(panel.query, "org")
    qtbot.mouseClick(panel.search_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "reading config.json" in panel.status.text(), timeout=10000)
    assert panel.status.text().startswith("1/3 ")
    qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.busy, timeout=10000)
    assert panel.status.text() == "Cancelled" and not panel.answers
    assert panel.results.rowCount() == 3  # the listing stays; no result was answered
