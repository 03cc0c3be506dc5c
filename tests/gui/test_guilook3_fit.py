"""Fit (issue 26): the memory bars' words are whole at 900 px (the amounts under the bar when the bar is
too short for them); on unified memory the RAM bar counts what the GPU leaves of the same memory (a DGX
Spark read "1002 MiB / 256 MiB (391%)"); the command to run it sits in the settings card."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QFontMetrics
from pytestqt.qtbot import QtBot

from fakes.windows import FIXTURES, answered, snapshot_window
from rigcheck.gui.pages.fit import FitPage

pytestmark = pytest.mark.gui


def _fit(qtbot: QtBot, tmp_path: Path, snapshot: str | Path, size: tuple[int, int], language: str) -> FitPage:
    window = snapshot_window(qtbot, tmp_path, snapshot, language=language)
    window.setMinimumSize(0, 0)
    window.resize(*size)
    window.show()
    window.show_page("fit")
    answered(qtbot, window)
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    return page


@pytest.mark.parametrize("language", ["it", "en"])
def test_bar_words_are_whole_at_900(qtbot: QtBot, tmp_path: Path, language: str) -> None:
    page = _fit(qtbot, tmp_path, "rtx4090-64gb.json", (900, 600), language)
    chart = page.chart
    metrics = QFontMetrics(chart.font())
    bar = chart.width() - chart._label_width(metrics) - 12
    words = chart.row_words()
    assert len(words) == len(chart.rows()) == 2  # GPU 0 and RAM
    for inside, below in words:
        assert metrics.horizontalAdvance(inside) <= bar - 10
        assert metrics.horizontalAdvance(below) <= chart.width() - 12  # under the bar and its label
        # the amounts are said in full, inside the bar or under it
        assert "/" in inside + below and "%" in inside + below
    # a line under a bar has its own height: the chart grew, nothing is drawn over the legend
    if any(below for _inside, below in words):
        assert chart.height() >= chart._height() and chart._height() > 6 + 24 + 10 + 30 * 2


def test_unified_memory_ram_bar_counts_the_shared_memory(qtbot: QtBot, tmp_path: Path) -> None:
    page = _fit(qtbot, tmp_path, FIXTURES / "platforms" / "dgx-spark.json", (1024, 700), "en")
    _name, budget, used = page.chart.rows()[-1]
    assert used > 0  # llama.cpp's input embedding stays in host memory
    gpu_budget, gpu_used = page.chart.rows()[0][1:]
    assert used <= budget  # 1002 MiB of a memory the GPU leaves ~100 GiB of, not "391%"
    assert budget > gpu_budget - gpu_used  # what the GPU does not use is the CPU's too
    assert all("over by" not in inside + below for inside, below in page.chart.row_words())


def test_a_discrete_gpu_keeps_its_ram_budget(qtbot: QtBot, tmp_path: Path) -> None:
    page = _fit(qtbot, tmp_path, "rtx4090-64gb.json", (1024, 700), "en")
    assert page.result is not None
    _name, budget, _used = page.chart.rows()[-1]
    assert budget == page.result.budget.cpu_bytes  # a card's own memory is never the CPU's


def test_the_command_is_in_the_settings_card(qtbot: QtBot, tmp_path: Path) -> None:
    page = _fit(qtbot, tmp_path, "rtx4090-64gb.json", (1024, 700), "en")
    assert page.command.text()
    settings = page.bench_button.parentWidget()
    assert page.command.parentWidget() is settings
    # under the settings it runs, inside the first screen
    top = page.command.mapTo(page, QPoint(0, page.command.height())).y()
    assert page.bench_button.mapTo(page, QPoint(0, 0)).y() < top < 700


def test_a_shared_ram_bar_says_so(qtbot: QtBot, tmp_path: Path) -> None:
    from rigcheck.core.i18n import tr

    spark = _fit(qtbot, tmp_path, FIXTURES / "platforms" / "dgx-spark.json", (1024, 700), "en")
    assert spark.chart.rows()[-1][0] == tr("RAM (shared)")
