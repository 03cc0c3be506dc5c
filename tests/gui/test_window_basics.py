"""The Qt basics a user meets first: page shortcuts, a language switch that keeps every page and thread,
a clean quit with the live Monitor open (issue 26, broken basics)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.core.catalog import load_catalog
from rigcheck.gui import i18n
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
KEYS = ["overview", "models", "fit", "compat", "monitor", "upgrade", "fleet"]


@pytest.fixture(autouse=True)
def english() -> object:
    i18n.set_language("en")
    yield
    i18n.set_language("en")


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path) -> MainWindow:
    from test_monitor_page import FakeSampler  # the Monitor tests' fake: two GPUs ramping up

    made: list[FakeSampler] = []

    def factory() -> FakeSampler:
        sampler = FakeSampler()
        made.append(sampler)
        return sampler

    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    settings.setValue("monitor/interval", 0.1)
    state = AppState(load_catalog(use_overlay=False), settings, sampler_factory=factory)
    win = MainWindow(state, small_machine)
    win.samplers = made  # type: ignore[attr-defined]
    qtbot.addWidget(win)
    win.resize(1280, 800)
    return win


def _view_actions(window: MainWindow) -> list[object]:
    view = next(a.menu() for a in window.menuBar().actions() if a.menu() and "View" in a.text())
    return [a for a in view.actions() if a.shortcut().toString().startswith("Ctrl+")]


def test_ctrl_number_and_the_view_menu_open_each_page(qtbot: QtBot, window: MainWindow) -> None:
    window.show()
    actions = _view_actions(window)
    assert [a.shortcut().toString() for a in actions] == [f"Ctrl+{n}" for n in range(1, 8)]
    for key, action in reversed(list(zip(KEYS, actions, strict=True))):
        action.trigger()  # what the shortcut and the menu item do: triggered(checked=False)
        assert window.stack.currentWidget().objectName() == f"page-{key}"
        assert window.nav.currentItem().data(0x0100) == key
    window.close()


def test_language_switch_keeps_pages_settings_and_the_live_monitor(qtbot: QtBot, window: MainWindow) -> None:
    window.show()
    window.start_probe()
    qtbot.waitUntil(lambda: window.state.machine is not None, timeout=5000)
    fit = window.pages["fit"]
    fit.batch.setValue(4)  # type: ignore[attr-defined]
    fit.workload.setCurrentIndex(fit.workload.findData("lora"))  # type: ignore[attr-defined]
    upgrade = window.pages["upgrade"]
    upgrade.select_gpu("rtx-4090") or upgrade.catalog_list.setCurrentCell(0, 0)  # type: ignore[attr-defined]
    upgrade.add_selected()  # type: ignore[attr-defined]
    added = list(upgrade.added)  # type: ignore[attr-defined]
    assert added
    window.show_page("monitor")
    monitor = window.pages["monitor"]
    qtbot.waitUntil(lambda: len(monitor.history) >= 2, timeout=5000)  # type: ignore[attr-defined]
    thread = monitor._thread  # type: ignore[attr-defined]
    assert thread is not None and thread.isRunning()
    built = {key: window.pages[key] for key in KEYS}

    window.set_language("it")

    assert {key: window.pages[key] for key in KEYS} == built, "every page is the same widget"
    assert monitor._thread is thread and thread.isRunning(), "the sampling thread goes on"  # type: ignore[attr-defined]
    assert fit.batch.value() == 4  # type: ignore[attr-defined]
    assert fit.workload.currentData() == "lora"  # type: ignore[attr-defined]
    assert fit.workload.currentText() == "Fine-tuning LoRA"  # type: ignore[attr-defined]
    assert upgrade.added == added  # type: ignore[attr-defined]
    assert window.nav.item(0).text() == "Panoramica"
    assert "Questo computer" in window.windowTitle()
    assert "Questo computer" in window.machine_label.text()
    assert window.this_computer.text() == "Questo computer"
    texts = {label.text() for label in fit.findChildren(QLabel)}
    assert "Impostazioni" in texts and "Settings" not in texts
    monitor_texts = {label.text() for label in monitor.findChildren(QLabel)}
    assert "Finestra" in monitor_texts and "Window" not in monitor_texts
    assert monitor.interval.text().startswith("0,1")  # type: ignore[attr-defined] - Italian decimals

    window.set_language("en")
    assert fit.workload.currentText() == "LoRA fine-tune"  # type: ignore[attr-defined]
    assert monitor.interval.text().startswith("0.1")  # type: ignore[attr-defined]
    assert "This computer" in window.windowTitle()
    window.close()
    assert not thread.isRunning(), "closing the window joins the sampling thread"
    assert all(s.closed for s in window.samplers)  # type: ignore[attr-defined]


def test_snapshot_label_follows_the_language(qtbot: QtBot, window: MainWindow) -> None:
    assert window.open_snapshot(FIXTURES / "machines" / "rtx4090-64gb.json")
    window.set_language("it")
    assert window.windowTitle() == "RigCheck — Istantanea rtx4090-64gb.json"
    assert "non è questo computer" in window.machine_label.text()
    window.set_language("en")
    assert window.windowTitle() == "RigCheck — Snapshot rtx4090-64gb.json"
