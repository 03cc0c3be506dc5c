"""Issue 30: the GUI thread's handlers do less (benchmarks/gui_handlers.py measures them).

The Monitor lays its page out once when it switches to a replay, not once per widget it shows; the
Overview's tile layouts measure a width once until a child changes; a chart repaints from its picture
until its data, size or scale change; the Overview starts its cards' pool work after building the page;
a Fleet double-click uses the report already read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import QRect, QSettings
from PySide6.QtGui import QImage, QPainter, QPalette
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

import rigcheck.core.report.fleet as fleet_core
from fakes.machines import small_machine
from fakes.windows import open_fleet, snapshot_window
from rigcheck.core.catalog import load_catalog
from rigcheck.core.machine import load_machine, save_machine
from rigcheck.gui.app import settle
from rigcheck.gui.charts import RefLine, Series, TimeChart
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages import overview as overview_module
from rigcheck.gui.pages.monitor import MonitorPage
from rigcheck.gui.pages.overview import OverviewPage
from rigcheck.gui.state import AppState
from rigcheck.gui.widgets import TileLayout, one_layout_pass

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


class CountingLayout(QVBoxLayout):
    """Counts the times Qt lays it out (``QLayout::activate`` ends in ``setGeometry``)."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.passes = 0

    def setGeometry(self, rect: QRect) -> None:
        self.passes += 1
        super().setGeometry(rect)


def _page_with_hidden_labels(qtbot: QtBot, count: int) -> tuple[QWidget, CountingLayout, list[QLabel]]:
    page = QWidget()
    layout = CountingLayout(page)
    labels = []
    for n in range(count):
        label = QLabel(f"line {n}")
        label.setVisible(False)
        layout.addWidget(label)
        labels.append(label)
    qtbot.addWidget(page)
    page.resize(300, 400)
    page.show()
    qtbot.waitExposed(page)
    qtbot.wait(50)  # the first layout's posted events
    return page, layout, labels


def test_children_shown_in_one_layout_pass_are_laid_out_once(qtbot: QtBot) -> None:
    _page, layout, labels = _page_with_hidden_labels(qtbot, 6)
    layout.passes = 0
    for label in labels[:3]:  # without: Qt lays the page out for each child shown
        label.setVisible(True)
    assert layout.passes >= 3
    layout.passes = 0
    with one_layout_pass(_page):
        for label in labels[3:]:
            label.setVisible(True)
    assert layout.passes == 1
    assert layout.isEnabled()
    # and the children shown in the block have their places, one below the other
    tops = [label.geometry().top() for label in labels]
    assert tops == sorted(tops) and len(set(tops)) == len(tops)
    assert all(label.height() > 0 for label in labels)


def test_the_monitor_shows_a_replay_with_its_page_laid_out(qtbot: QtBot, tmp_path: Path) -> None:
    from test_monitor_page import record_csv, replay

    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.resize(1280, 800)
    window.show()
    window.show_page("monitor")
    page = window.pages["monitor"]
    assert isinstance(page, MonitorPage)
    assert page.mode == "none" and not page.cards_area.isVisible()
    assert replay(qtbot, page, record_csv(tmp_path / "run.csv", 120))
    settle(window)
    assert page.layout().isEnabled()
    assert page.replay_bar.isVisible() and page.cards_area.isVisible() and not page.notice.isVisible()
    assert page.cards_area.height() > 200 and page.cards_area.width() > 600
    assert page.replay_bar.geometry().bottom() < page.cards_area.geometry().top()
    assert all(card.chart.width() > 0 and card.isVisible() for card in page.cards.values())


def test_tiles_measure_a_width_once_until_a_child_changes(qtbot: QtBot) -> None:
    host = QWidget()
    layout = TileLayout(host, min_width=120, spacing=10)
    labels = [QLabel("short") for _ in range(4)]
    for label in labels:
        label.setWordWrap(True)
        layout.addWidget(label)
    qtbot.addWidget(host)
    measured: list[int] = []
    arrange = layout._arrange

    def counting(rect: QRect, *, move: bool) -> int:
        if not move:
            measured.append(rect.width())
        return arrange(rect, move=move)

    layout._arrange = counting  # type: ignore[method-assign]
    before = layout.heightForWidth(260)
    assert layout.heightForWidth(260) == before and measured == [260]  # the second answer is remembered
    labels[0].setText("a much longer text that wraps over several lines in a tile this narrow " * 3)
    after = layout.heightForWidth(260)
    assert measured == [260, 260]  # the child changed: measured again
    assert after > before
    layout._arrange = arrange  # type: ignore[method-assign]
    assert after == layout._arrange(QRect(0, 0, 260, 0), move=False)  # the same as measuring afresh


def _chart(qtbot: QtBot) -> TimeChart:
    chart = TimeChart(y_range=(0.0, 100.0))
    qtbot.addWidget(chart)
    chart.resize(400, 160)
    x = np.linspace(-300.0, 0.0, 300)
    chart.set_data(
        [Series("#4f7fd9", x, 50 + 40 * np.sin(x / 7))], [RefLine(80.0, "#c8433a", "limit")], 300.0
    )
    return chart


def _image(chart: TimeChart) -> QImage:
    return chart.grab().toImage().convertToFormat(QImage.Format.Format_ARGB32)


def test_a_chart_repaints_from_its_picture_until_its_data_or_size_change(qtbot: QtBot) -> None:
    chart = _chart(qtbot)
    drawn: list[int] = []
    draw = chart._draw
    chart._draw = lambda painter: (drawn.append(1), draw(painter))  # type: ignore[method-assign]
    first = _image(chart)
    assert _image(chart) == first and len(drawn) == 1  # a repaint (the page moved) blits the picture
    chart.set_cursor(-150.0)
    with_cursor = _image(chart)
    assert len(drawn) == 1 and with_cursor != first  # the cursor is drawn over the same picture
    chart.set_cursor(None)
    assert _image(chart) == first
    chart.y_range = (0.0, 200.0)  # a new scale is a new picture even before set_data
    assert _image(chart) != first and len(drawn) == 2
    chart.set_data(chart.series, chart.lines, 60.0)
    _image(chart)
    assert len(drawn) == 3
    chart.resize(300, 160)
    assert _image(chart).width() == 300 and len(drawn) == 4


def test_a_chart_from_its_picture_looks_as_one_drawn_afresh(qtbot: QtBot) -> None:
    chart = _chart(qtbot)
    chart.set_cursor(-100.0)
    cached = _image(chart)
    fresh = QImage(cached.size(), QImage.Format.Format_ARGB32)
    fresh.fill(chart.palette().color(QPalette.ColorRole.Window))  # what grab() puts under a window

    painter = QPainter(fresh)
    chart._draw(painter)
    painter.end()
    # the picture holds everything but the cursor: the columns away from it are the same pixels
    rect = chart._plot_rect()
    cursor_x = round(rect.right() - 100.0 / 300.0 * rect.width())
    for x in range(fresh.width()):
        if abs(x - cursor_x) <= 2:
            continue
        for y in range(0, fresh.height(), 3):
            a, b = cached.pixelColor(x, y), fresh.pixelColor(x, y)
            assert max(abs(a.red() - b.red()), abs(a.green() - b.green()), abs(a.blue() - b.blue())) <= 2


def test_the_overview_starts_the_cards_work_after_building_the_page(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[object, bool]] = []
    real_submit = overview_module.submit

    def spy(pool: Any, *args: Any, **kwargs: Any) -> Any:
        page = window.pages["overview"]
        assert isinstance(page, OverviewPage)
        seen.append((getattr(page, "fact_cards", None), hasattr(page, "speeds_box")))
        return real_submit(pool, *args, **kwargs)

    window = snapshot_window(qtbot, tmp_path, "two-gpus-128gb.json")
    window.resize(1280, 800)
    window.show()
    window.show_page("overview")
    settle(window, timeout_s=20)
    monkeypatch.setattr(overview_module, "submit", spy)
    window.open_snapshot(FIXTURES / "hgx-h100x8-2tb.json")
    settle(window, timeout_s=20)
    page = window.pages["overview"]
    assert isinstance(page, OverviewPage)
    assert seen and seen[-1][0] is page.fact_cards and seen[-1][1]  # this machine's facts were built first
    assert len(page.fact_cards) == 3  # one GPU card (8 × H100), the system, the power supply
    assert page.cards  # and the cards still came


def test_a_fleet_double_click_uses_the_report_already_read(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "lab"
    folder.mkdir()
    base = load_machine(FIXTURES / "two-gpus-128gb.json")
    from dataclasses import replace

    for n in range(3):
        save_machine(replace(base, host=replace(base.host, hostname=f"node-{n}")), folder / f"node-{n}.json")
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window = MainWindow(AppState(load_catalog(use_overlay=False), settings), small_machine)
    qtbot.addWidget(window)
    window.show()
    page = open_fleet(qtbot, window, folder)
    reads: list[Path] = []
    real_read = fleet_core._read_node

    def counting(path: Path, *args: Any) -> Any:
        reads.append(path)
        return real_read(path, *args)

    monkeypatch.setattr(fleet_core, "_read_node", counting)
    row = next(r for r in range(page.table_model.rowCount()) if page.node_at(r) == "node-2")
    page.table.doubleClicked.emit(page.table.model().index(row, 0))
    settle(window, timeout_s=20)
    assert reads == []  # nothing read again: the machine is the one the folder's reading made
    machine = page.state.machine
    assert machine is not None and machine.host.hostname == "node-2"
    assert machine == page._nodes["node-2"].machine
    assert window.stack.currentWidget() is window.pages["overview"]
    page.open_folder(folder)  # the spy does see a reading: opening the folder again reads every report
    qtbot.waitUntil(lambda: len(reads) == 3 and not page.busy(), timeout=20000)


def test_the_startup_preload_prepares_what_reads_stored_sentences() -> None:
    from rigcheck.core import known_text
    from rigcheck.gui import app

    known_text._patterns.cache_clear()
    known_text._translation_starts.cache_clear()
    app._preload()
    assert known_text._patterns.cache_info().currsize == 1  # compiled on the pool, not on first use
    assert known_text._translation_starts.cache_info().currsize == 1  # Italian's, asked for in Italian
    assert known_text.translated("no such file") == "no such file"  # and they still recognise a sentence


def test_the_overview_is_busy_while_its_cards_work_is_queued(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "two-gpus-128gb.json")
    window.resize(1280, 800)
    window.show()
    window.show_page("overview")
    settle(window, timeout_s=20)
    page = window.pages["overview"]
    assert isinstance(page, OverviewPage) and not page.busy()
    page.show_machine(load_machine(FIXTURES / "hgx-h100x8-2tb.json"), "b", False)
    assert page.busy() and page._job is None  # queued for the next turn, and said so to settle()
    page.show_machine(load_machine(FIXTURES / "m2-ultra-192gb.json"), "c", False)  # a newer one wins
    settle(window, timeout_s=20)
    assert not page.busy() and page.cards
    assert "M2 Ultra" in " ".join(label.text() for label in page.findChildren(QLabel))


def test_a_new_page_while_the_cards_are_being_built_drops_them_without_touching_deleted_ones(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CI failure of 2026-12-02: a language switch rebuilt the Overview while its cards were built a
    few per event-loop turn; the old cards died with the old page, and the next start removed them."""
    window = snapshot_window(qtbot, tmp_path, "two-gpus-128gb.json")
    window.resize(1280, 800)
    window.show()
    window.show_page("overview")
    settle(window, timeout_s=20)
    page = window.pages["overview"]
    assert isinstance(page, OverviewPage)
    monkeypatch.setattr(overview_module, "CARDS_PER_TURN", 1)  # every card on its own turn
    built: list[int] = []
    real_build = page._build_cards

    def build_then_rebuild(generation: int, machine: Any, answers: list[Any]) -> None:
        real_build(generation, machine, answers)
        if not built and page._building:  # the first card is in; the page is rebuilt under the rest
            built.append(len(page._building))
            page.show_machine(machine, "again", False)

    monkeypatch.setattr(page, "_build_cards", build_then_rebuild)
    window.open_snapshot(FIXTURES / "hgx-h100x8-2tb.json")
    settle(window, timeout_s=20)
    assert built == [1], "the rebuild came while the cards were half built"
    assert page.cards and not page.busy()
    assert all(card.isVisible() for card in page.cards)
