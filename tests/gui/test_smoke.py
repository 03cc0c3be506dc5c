"""The window opens, shows a machine probed off the GUI thread, opens snapshots, and closes."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.core.machine import Machine, save_machine
from rigcheck.gui.main_window import MainWindow

pytestmark = pytest.mark.gui


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot: QtBot, settings: QSettings) -> MainWindow:
    win = MainWindow(probe=small_machine, settings=settings)
    qtbot.addWidget(win)
    return win


def test_window_opens_probes_and_closes(qtbot: QtBot, window: MainWindow) -> None:
    window.show()
    window.start_probe()
    qtbot.waitUntil(lambda: window.machine is not None, timeout=5000)
    assert "RigCheck audit of test-box" in window.overview.text.toPlainText()
    assert window.windowTitle() == "RigCheck — This computer"
    assert window.save_action.isEnabled()
    window.close()


def test_probe_failure_is_shown_not_raised(qtbot: QtBot, settings: QSettings) -> None:
    def broken() -> Machine:
        raise OSError("sysfs vanished")

    win = MainWindow(probe=broken, settings=settings)
    qtbot.addWidget(win)
    win.start_probe()
    qtbot.waitUntil(lambda: "Probing failed" in win.overview.status.text(), timeout=5000)
    assert "sysfs vanished" in win.overview.status.text()


def test_open_snapshot_labels_it_not_this_computer(window: MainWindow, tmp_path: Path) -> None:
    path = tmp_path / "lab.json"
    save_machine(small_machine("lab-9"), path)
    assert window.open_snapshot(path)
    assert "not this computer" in window.overview.heading.text()
    assert "lab-9" in window.overview.text.toPlainText()


def test_bad_snapshot_gets_a_message(
    window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda _parent, _title, text: shown.append(text))
    path = tmp_path / "bad.json"
    path.write_text("{")
    assert not window.open_snapshot(path)
    assert shown and shown[0].startswith(f"{path}: not valid JSON")
    assert window.machine is None


def test_geometry_and_page_persist(qtbot: QtBot, settings: QSettings) -> None:
    first = MainWindow(probe=small_machine, settings=settings)
    qtbot.addWidget(first)
    first.resize(701, 502)
    first.close()
    second = MainWindow(probe=small_machine, settings=settings)
    qtbot.addWidget(second)
    assert (second.size().width(), second.size().height()) == (701, 502)
