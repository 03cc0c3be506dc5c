"""Overview (issue 26): the answer in words over the cards, and every card's speed in one chart that uses
the lower part of the page at 1920×1080."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from rigcheck.core.machine import load_machine
from rigcheck.gui.app import create_window, settle
from rigcheck.gui.pages.overview import OverviewPage

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


def overview_at(qtbot: QtBot, tmp_path: Path, snapshot: str, size: tuple[int, int]) -> OverviewPage:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window = create_window(settings, snapshot=load_machine(FIXTURES / snapshot), snapshot_name="m")
    qtbot.addWidget(window)
    window.setMinimumSize(0, 0)
    window.resize(*size)
    window.show()
    window.show_page("overview")
    settle(window, timeout_s=30)
    page = window.pages["overview"]
    assert isinstance(page, OverviewPage)
    qtbot.waitUntil(lambda: not page.busy(), timeout=30000)
    return page


@pytest.mark.parametrize("snapshot", ["rtx4090-64gb.json", "cpu-only-32gb.json"])
def test_the_headline_counts_every_card_once(qtbot: QtBot, tmp_path: Path, snapshot: str) -> None:
    page = overview_at(qtbot, tmp_path, snapshot, (1024, 700))
    counts = [int(n) for n in re.findall(r"(?:^|· )(\d+)", page.answer.text())]
    assert sum(counts) == len(page.cards) == 16, page.answer.text()
    tiers = [card.answer.view.tier or card.answer.verdict for card in page.cards]
    assert counts[0] == tiers.count("gpu" if "GPU" in page.answer.text() else "cpu")
    assert page.answer_more.text()  # the largest on the GPU, or the fastest here


@pytest.mark.parametrize("snapshot", ["rtx4090-64gb.json", "cpu-only-32gb.json"])
def test_the_speed_chart_fills_the_lower_page_at_1920(qtbot: QtBot, tmp_path: Path, snapshot: str) -> None:
    page = overview_at(qtbot, tmp_path, snapshot, (1920, 1080))
    chart = page.speeds
    assert chart.isVisible() and len(chart.rows) == len(page.cards)
    # below the cards, and reaching into the lower 40% of the window
    cards_bottom = max(card.mapTo(page, card.rect().bottomLeft()).y() for card in page.cards)
    top = chart.mapTo(page, chart.rect().topLeft()).y()
    bottom = chart.mapTo(page, chart.rect().bottomLeft()).y()
    assert top > cards_bottom and bottom > 0.6 * page.height()
    assert bottom <= page.height()  # and no scrolling needed to see it whole
    bars = chart.bar_rects()
    speeds = [tps for _name, tps, _colour, _quant in chart.rows]
    assert speeds == sorted(speeds, key=lambda s: -(s or 0.0))  # fastest first
    widths = [bar.width() for bar, tps in zip(bars, speeds, strict=True) if tps]
    assert widths == sorted(widths, reverse=True)
    assert all(bar.left() >= 0 and bar.right() <= chart.width() for bar in bars if not bar.isNull())


def test_probe_notes_from_a_snapshot_read_in_italian(qtbot: QtBot, tmp_path: Path) -> None:
    from dataclasses import replace

    from PySide6.QtWidgets import QLabel

    from rigcheck.core.machine import Note
    from rigcheck.gui import i18n

    machine = load_machine(FIXTURES / "rtx4090-64gb.json")
    notes = (
        Note("nvidia", "info", "GPU 0: power limit could not be read"),
        Note(
            "host",
            "info",
            "running inside a docker container: GPUs and RAM seen here may be a subset of the host's",
        ),
        Note("nvidia", "warning", "nvidia-smi said: Unable to determine the device handle"),
    )
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    settings.setValue("ui/language", "it")
    try:
        window = create_window(settings, snapshot=replace(machine, notes=notes), snapshot_name="m")
        qtbot.addWidget(window)
        window.show()
        window.show_page("overview")
        settle(window, timeout_s=30)
        page = window.pages["overview"]
        texts = [label.text() for label in page.findChildren(QLabel) if label.isVisible()]
        window.close()
    finally:
        i18n.set_language("en")
    shown = "\n".join(texts)
    assert "impossibile leggere il limite di potenza" in shown
    assert "in esecuzione in un container docker" in shown
    assert "power limit could not be read" not in shown
    assert (
        "Unable to determine the device handle (come l&#x27;ha scritto il rilevamento, in inglese)" in shown
    )
