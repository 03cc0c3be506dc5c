"""Never a blocked window (issue 26 Build 5): the Overview's cards and the Fit page's format table are worked
out on the thread pool, shown when ready, and an answer for a machine or setting no longer asked for is
dropped. The RAM bar counts the weights llama.cpp keeps in RAM (the input embedding) that the text names."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from fakes.windows import FIXTURES, answered, snapshot_window
from rigcheck.core.units import fmt_bytes
from rigcheck.gui import i18n
from rigcheck.gui.pages import fit_ladder as fit_module  # commands_for is read there
from rigcheck.gui.pages import overview as overview_module
from rigcheck.gui.pages.fit import FitPage
from rigcheck.gui.pages.overview import OverviewPage

pytestmark = pytest.mark.gui


class Recorder:
    """Wraps a real function: records the thread each call ran on; a call can be held until released."""

    def __init__(self, real: Callable[..., Any]) -> None:
        self.real = real
        self.threads: list[threading.Thread] = []
        self.calls: list[tuple[Any, ...]] = []
        self.hold_first = threading.Event()
        self.hold_first.set()
        self.first_done = threading.Event()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        first = not self.calls
        self.calls.append(args)
        self.threads.append(threading.current_thread())
        if first:
            assert self.hold_first.wait(20), "the held call was never released"
        try:
            return self.real(*args, **kwargs)
        finally:
            if first:
                self.first_done.set()


@pytest.fixture(autouse=True)
def english() -> object:
    i18n.set_language("en")
    yield
    i18n.set_language("en")


def test_overview_cards_are_worked_out_off_the_gui_thread(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = Recorder(overview_module.recommend_cards)
    monkeypatch.setattr(overview_module, "recommend_cards", recorder)
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    page = window.pages["overview"]
    assert isinstance(page, OverviewPage)
    answered(qtbot, window)
    qtbot.waitUntil(lambda: len(page.cards) > 3, timeout=20000)
    assert recorder.threads and all(t is not threading.main_thread() for t in recorder.threads)
    by_id = {card.spec.id: card for card in page.cards}
    assert by_id["qwen3-8b"].view.where == "gpu" and by_id["llama-3.3-70b"].verdict == "fits_with_offload"
    assert page.cards_waiting.isHidden()


def test_a_stale_overview_answer_is_dropped(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first machine's cards are held until the second machine's have been shown: they arrive last and
    must not replace the cards of the machine on screen."""
    recorder = Recorder(overview_module.recommend_cards)
    recorder.hold_first.clear()
    monkeypatch.setattr(overview_module, "recommend_cards", recorder)
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    page = window.pages["overview"]
    assert isinstance(page, OverviewPage)
    qtbot.waitUntil(lambda: len(recorder.calls) == 1, timeout=10000)
    assert page.cards == [] and page.cards_waiting.isVisibleTo(page), "the page shows, the cards follow"
    assert window.open_snapshot(FIXTURES / "cpu-only-32gb.json")
    qtbot.waitUntil(lambda: len(page.cards) > 3, timeout=20000)  # the CPU-only box's answer
    recorder.hold_first.set()
    assert recorder.first_done.wait(20)
    answered(qtbot, window)
    qtbot.wait(50)  # the stale result's queued delivery has been handled
    assert {card.view.where for card in page.cards} <= {"cpu", None}, "the 4090's cards were not applied"


def test_fit_format_table_is_worked_out_off_the_gui_thread_and_stale_tables_dropped(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.show_page("fit")
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    answered(qtbot, window)
    recorder = Recorder(fit_module.commands_for)
    recorder.hold_first.clear()
    monkeypatch.setattr(fit_module, "commands_for", recorder)
    page.quant.setCurrentIndex(page.quant.findData("q8_0"))  # its table is held
    qtbot.waitUntil(lambda: len(recorder.calls) == 1, timeout=10000)
    assert page.busy()
    page.quant.setCurrentIndex(page.quant.findData("q2_k"))  # the one asked for last
    qtbot.waitUntil(lambda: len(recorder.calls) == 2, timeout=10000)
    qtbot.waitUntil(lambda: page._ladder_job is None, timeout=20000)
    recorder.hold_first.set()
    assert recorder.first_done.wait(20)
    answered(qtbot, window)
    qtbot.wait(50)
    assert all(t is not threading.main_thread() for t in recorder.threads)
    selected = page.ladder.selectionModel().selectedRows()
    assert [page.ladder.item(i.row(), 0).text().removeprefix("▶ ") for i in selected] == ["Q2_K"]
    assert page.commands is not None and "Q2_K" in page.command.text()
    # each format's download beside the memory it needs here (the LM Studio question before a download)
    rec = page.recommendation
    assert rec is not None and page.ladder.horizontalHeaderItem(3).text() == "Download"
    for row, rung in enumerate(rec.ladder):
        assert page.ladder.item(row, 3).text() == fmt_bytes(rung.result.estimate.total("weights"))


def test_ram_bar_counts_the_embedding_the_text_says_is_in_ram(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.show_page("fit")
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    page.quant.setCurrentIndex(page.quant.findData("q4_k_m"))
    result = page.result
    assert result is not None and result.placement.cpu_bytes == 0  # every layer on the GPU
    embedding = result.estimate.host_weight_bytes
    assert embedding > 0
    assert any(f"({fmt_bytes(embedding)}) stays in RAM" in reason for reason in result.reasons)
    name, _budget, used = page.chart.rows()[-1]
    assert name == "RAM" and used == embedding, "the RAM bar shows what the text says sits in RAM"
    assert fmt_bytes(embedding) in page.chart.accessibleDescription()


def test_ram_bar_and_text_agree_on_a_cpu_only_box(qtbot: QtBot, tmp_path: Path) -> None:
    """Everything in RAM: the text's figure is the bar's, the embedding included (it said 0.2 GiB less)."""
    window = snapshot_window(qtbot, tmp_path, "cpu-only-32gb.json")
    window.show_page("fit")
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    page.quant.setCurrentIndex(page.quant.findData("q4_k_m"))
    result = page.result
    assert result is not None and not any(result.placement.gpu_bytes)
    assert result.estimate.host_weight_bytes > 0
    _name, _budget, used = page.chart.rows()[-1]
    assert used == result.placement.cpu_bytes + result.estimate.host_weight_bytes
    assert f"runs on the CPU from RAM ({fmt_bytes(used)})" in result.reasons
