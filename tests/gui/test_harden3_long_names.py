"""4096-character names never widen the window (issue 30 #14): a snapshot or report whose GPU name,
host name, CPU model and notes are 4096 characters long, opened on every page, a fleet of such reports
(as ``audit --format json`` writes them, issue 30 #10) and a replay naming such a GPU leave the window
as wide as it was; the names are elided, whole in a tooltip."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QLabel, QWidget
from pytestqt.qtbot import QtBot

from rigcheck import cli
from rigcheck.core.machine import load_machine
from rigcheck.core.monitor import columns, row
from rigcheck.gui.app import create_window, settle
from rigcheck.gui.main_window import MainWindow

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"
LONG = 4096
WIDTH = 1024  # the smallest window the app is laid out for


def long_snapshot(path: Path, stem: str = "W") -> Path:
    data = json.loads((FIXTURES / "rtx4090-64gb.json").read_text(encoding="utf-8"))
    data["gpus"][0]["name"] = "NVIDIA GeForce RTX 4090 " + stem * (LONG - 24)
    data["host"]["hostname"] = stem * LONG
    data["cpu"]["model"] = "AMD Ryzen " + stem * (LONG - 10)
    data["notes"] = [{"probe": "gpu", "level": "info", "message": stem * LONG}]
    path.write_text(json.dumps(data), encoding="utf-8")
    load_machine(path)  # the loader takes it: these are legal snapshots
    return path


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path) -> MainWindow:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    snapshot = load_machine(FIXTURES / "rtx4090-64gb.json")
    win = create_window(settings, snapshot=snapshot, snapshot_name="rtx4090")
    qtbot.addWidget(win)
    win.resize(WIDTH, 700)
    win.show()
    settle(win)
    yield win
    win.close()


def widest(window: QWidget) -> str:
    """The widget whose minimum width is widest, for the failure message."""
    found = max(window.findChildren(QWidget), key=lambda w: w.minimumSizeHint().width())
    text = found.text()[:40] if isinstance(found, QLabel) else ""
    return f"{type(found).__name__} {found.objectName()!r} {text!r}: {found.minimumSizeHint().width()} px"


def assert_not_widened(window: MainWindow, where: str) -> None:
    settle(window)
    screen = QApplication.primaryScreen().availableGeometry().width()
    assert window.width() <= max(WIDTH, screen), f"{where}: the window grew to {window.width()} px"
    assert window.minimumSizeHint().width() <= WIDTH, f"{where}: {widest(window)}"


def test_a_snapshot_with_4096_character_names_widens_no_page(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    assert window.open_snapshot(long_snapshot(tmp_path / "long.json"))
    for key in window.pages:
        window.show_page(key)
        assert_not_widened(window, f"page {key}")


def test_a_fleet_of_audit_reports_with_4096_character_names_widens_nothing(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    folder = tmp_path / "lab"
    folder.mkdir()
    for n, stem in enumerate("WXY"):
        snapshot = long_snapshot(tmp_path / f"snap{n}.json", stem)
        name = f"{'r' * 200}-{n}.json"  # a long file name too (255 bytes is the usual limit)
        code = cli.main(["audit", "--format", "json", "--machine", str(snapshot), "-o", str(folder / name)])
        assert code == 0
    fleet = window.pages["fleet"]
    window.show_page("fleet")
    fleet.open_folder(folder)  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: fleet.fleet is not None, timeout=30000)  # type: ignore[attr-defined]
    assert len(fleet.fleet.nodes) == 3 and not fleet.fleet.problems  # type: ignore[attr-defined]
    fleet.check_model()  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: bool(fleet.verdicts), timeout=30000)  # type: ignore[attr-defined]
    assert_not_widened(window, "fleet")
    model = fleet.table.model()  # type: ignore[attr-defined]
    name = model.index(0, 0)
    assert len(str(name.data())) >= LONG  # the cell holds the whole name, the view elides it
    assert fleet.table.columnWidth(0) <= 300  # type: ignore[attr-defined]
    assert "W" * 100 in str(model.index(0, 1).data(3))  # the GPUs' tooltip (ToolTipRole) has it whole
    # and the page's status names the folder elided, whole in its tooltip
    fleet.open_folder(folder)  # type: ignore[attr-defined]
    assert_not_widened(window, "fleet, reading again")
    window.state.pool.waitForDone()


def test_a_replay_naming_a_4096_character_gpu_widens_nothing(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    from test_monitor_page import make_sample

    assert window.open_snapshot(long_snapshot(tmp_path / "long.json"))
    recording = tmp_path / ("r" * 200 + ".csv")
    with recording.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, columns(make_sample(0, gpus=1)), extrasaction="ignore")
        writer.writeheader()
        for n in range(30):
            writer.writerow({k: "" if v is None else v for k, v in row(make_sample(n, gpus=1)).items()})
    monitor = window.pages["monitor"]
    window.show_page("monitor")
    with qtbot.waitSignal(monitor.replay_finished, timeout=20000) as opened:  # type: ignore[attr-defined]
        monitor.open_recording(recording)  # type: ignore[attr-defined]
    assert opened.args == [True]
    assert_not_widened(window, "monitor replay")
    chips = [w for w in monitor.legend_box.findChildren(QLabel) if "GPU 0" in w.text()]  # type: ignore[attr-defined]
    assert chips and all(len(c.text()) < 300 for c in chips) and "W" * 100 in chips[0].toolTip()
