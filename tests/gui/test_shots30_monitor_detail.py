"""Monitor at 1024×700 in Italian with two GPUs replayed (issue 30, screenshots): a card's detail line
("capacità 24,0 GiB ciascuna") takes all the room beside its title and is drawn whole, not elided to
"capacità 24,0 Gi…" by a stretch that took half of it."""

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


def test_card_details_are_whole_at_1024_in_italian(qtbot: QtBot, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    i18n.set_language("it")
    try:
        state = AppState(load_catalog(use_overlay=False), settings, sampler_factory=FakeSampler)
        window = MainWindow(state, small_machine)
        qtbot.addWidget(window)
        window.resize(1024, 700)
        window.show()
        page = monitor(window)
        assert replay(qtbot, page, record_csv(tmp_path / "two.csv", 40))
        qtbot.wait(50)
        for key in ("memory", "power"):
            detail = page.cards[key].detail
            assert detail.text(), key
            assert detail.shown_text() == detail.text(), f"{key}: {detail.shown_text()!r}"
        window.close()
    finally:
        i18n.set_language("en")
