"""Monitor at 900×600 in Italian with two GPUs replayed (issue 26): every metric card fits the window (the
CPU and RAM values used to widen the right column past it), and the limit labels stay apart."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from gui.test_monitor_page import FakeSampler, monitor, record_csv, replay
from rigcheck.core.catalog import load_catalog
from rigcheck.gui import i18n
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui


@pytest.mark.parametrize("language", ["en", "it"])
def test_cards_fit_the_window_at_900(qtbot: QtBot, tmp_path: Path, language: str) -> None:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    i18n.set_language(language)
    try:
        state = AppState(load_catalog(use_overlay=False), settings, sampler_factory=FakeSampler)
        window = MainWindow(state, small_machine)
        qtbot.addWidget(window)
        window.setMinimumSize(0, 0)
        window.resize(900, 600)
        window.show()
        page = monitor(window)
        assert replay(qtbot, page, record_csv(tmp_path / "two.csv", 40))
        qtbot.wait(50)
        viewport = page.cards_area.viewport()
        assert page.cards_area.widget().width() <= viewport.width() + 1
        for card in page.cards.values():
            right = card.mapTo(viewport, card.rect().topRight()).x()
            assert right <= viewport.width(), f"{card.title.text()} ends at {right} > {viewport.width()}"
            boxes = card.chart.reference_label_boxes()
            assert all(not a.intersects(b) for n, a in enumerate(boxes) for b in boxes[n + 1 :])
        window.close()
    finally:
        i18n.set_language("en")
