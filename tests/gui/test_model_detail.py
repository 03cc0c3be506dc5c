"""The Models page's detail pane (issue 26 Build 4, the LM Studio flow): the selected model's formats on
this machine, each with where it runs, the memory it needs here, its download and speed, and the command
that runs the recommended one; worked out off the GUI thread, a stale answer dropped."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from fakes.windows import FIXTURES, snapshot_window
from rigcheck.core.estimate.recommend import recommend
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.units import fmt_bytes
from rigcheck.gui import i18n
from rigcheck.gui.pages import model_detail
from rigcheck.gui.pages.models import ModelsPage

pytestmark = pytest.mark.gui


@pytest.fixture(autouse=True)
def english() -> object:
    i18n.set_language("en")
    yield
    i18n.set_language("en")


def select(page: ModelsPage, model_id: str) -> None:
    for row in range(page.proxy.rowCount()):
        if page.proxy.spec(row).id == model_id:
            index = page.proxy.index(row, 0)
            flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            page.table.selectionModel().select(index, flags)
            return
    raise AssertionError(model_id)


def open_models(qtbot: QtBot, tmp_path: Path, snapshot: str = "rtx4090-64gb.json") -> ModelsPage:
    window = snapshot_window(qtbot, tmp_path, snapshot)
    window.resize(1280, 800)
    window.show_page("models")
    page = window.pages["models"]
    assert isinstance(page, ModelsPage)
    return page


def test_detail_shows_each_format_with_memory_download_and_the_command(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[threading.Thread] = []
    real = model_detail.work_out_detail

    def recorded(*args: object, **kwargs: object) -> model_detail.Detail:
        threads.append(threading.current_thread())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(model_detail, "work_out_detail", recorded)
    page = open_models(qtbot, tmp_path)
    select(page, "qwen3-8b")
    qtbot.waitUntil(lambda: page.detail.detail is not None and not page.detail.busy(), timeout=20000)
    assert threads and all(t is not threading.main_thread() for t in threads)
    detail = page.detail.detail
    assert detail is not None and detail.spec.id == "qwen3-8b"
    # the badges are the recommendation's ladder, as Fit and 'rigcheck fit' give it
    catalog = page.state.catalog
    machine = page.state.machine
    assert machine is not None
    rec = recommend(from_catalog(detail.spec), machine, "inference", catalog, live=False)
    assert [b.quant for b in detail.badges] == [r.quant for r in rec.ladder]
    best = next(b for b in detail.badges if b.recommended)
    assert rec.best is not None and best.quant == rec.best.quant
    assert best.memory_bytes == rec.best.result.estimate.total_bytes
    assert best.download_bytes == rec.best.result.estimate.total("weights") < best.memory_bytes
    shown = page.detail.badges.text()
    assert f"▶&nbsp;{best.quant}" in shown and fmt_bytes(best.download_bytes).replace(" ", "&nbsp;") in shown
    # the Run it command for the recommended format, copyable
    assert page.detail.engine.count() > 0 and page.detail.command.text()
    page.detail.copy_button.click()
    assert QGuiApplication.clipboard().text() == page.detail.command.text()


def test_a_stale_detail_is_dropped(qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first model's answer is held until the second's is shown; it arrives last and is not shown."""
    release, first_done = threading.Event(), threading.Event()
    real = model_detail.work_out_detail
    calls: list[str] = []

    def held(spec, *args: object, **kwargs: object) -> model_detail.Detail:  # type: ignore[no-untyped-def]
        calls.append(spec.id)
        if len(calls) == 1:
            assert release.wait(20)
            try:
                return real(spec, *args, **kwargs)  # type: ignore[arg-type]
            finally:
                first_done.set()
        return real(spec, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(model_detail, "work_out_detail", held)
    page = open_models(qtbot, tmp_path)
    select(page, "llama-3.3-70b")
    qtbot.waitUntil(lambda: calls == ["llama-3.3-70b"], timeout=10000)
    select(page, "qwen3-8b")
    qtbot.waitUntil(lambda: page.detail.detail is not None, timeout=20000)
    release.set()
    assert first_done.wait(20)
    qtbot.wait(100)
    assert page.detail.detail is not None and page.detail.detail.spec.id == "qwen3-8b"
    assert "Qwen3 8B" in page.detail.title.text()


def test_detail_follows_a_new_machine(qtbot: QtBot, tmp_path: Path) -> None:
    page = open_models(qtbot, tmp_path)
    select(page, "llama-3.3-70b")
    qtbot.waitUntil(lambda: page.detail.detail is not None, timeout=20000)
    on_4090 = page.detail.detail
    window = page.window()
    assert window.open_snapshot(FIXTURES / "cpu-only-32gb.json")  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: page.detail.detail not in (None, on_4090), timeout=20000)
    detail = page.detail.detail
    assert detail is not None and detail.spec.id == "llama-3.3-70b"
    assert all(b.words in ("On the CPU", "Too slow", "Does not fit") for b in detail.badges)
