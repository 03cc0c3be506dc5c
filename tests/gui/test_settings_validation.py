"""Settings validated on read, with fallbacks (issue 30 #15): a hand-edited or damaged settings file
never stops a page from opening."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.core.catalog import load_catalog
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.state import AppState


@pytest.mark.gui
@pytest.mark.parametrize(
    "bad",
    [
        {"monitor/window": 0, "monitor/interval": 0},
        {"monitor/window": "nan", "monitor/interval": -1},
        {"machine/psu_watts": "inf", "fit/context": "nan", "upgrade/kwh": "1e400"},
        {"machine/psu_watts": "nan", "fit/context": -5, "upgrade/kwh": "lots"},
    ],
)
def test_bad_settings_never_stop_a_page_from_opening(
    qtbot: QtBot, tmp_path: Path, bad: dict[str, object]
) -> None:
    """monitor/window=0, an interval <= 0 or psu_watts inf/nan stopped pages opening, on every start."""
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    for key, value in bad.items():
        settings.setValue(key, value)
    state = AppState(load_catalog(use_overlay=False), settings)
    window = MainWindow(state, small_machine)
    qtbot.addWidget(window)
    for key in window.pages:
        window.show_page(key)
    assert state.psu_watts() is None
    assert state.number("monitor/window", 300, 10, 86_400) in (300, 300.0)
