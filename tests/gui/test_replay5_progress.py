"""Progress from the pool is throttled per task: the Monitor's reading bar is updated four times a second,
not twenty (each update is a GUI-thread handler that waits for the reader's GIL)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QThreadPool
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.core.catalog import load_catalog
from rigcheck.core.steps import Steps
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.monitor import READ_PROGRESS_EVERY_S, MonitorPage
from rigcheck.gui.state import AppState
from rigcheck.gui.workers import submit_task

pytestmark = pytest.mark.gui


def progress_count(qtbot: QtBot, every_s: float | None) -> int:
    seen: list[float] = []
    results: list[object] = []

    def work(steps: Steps) -> str:
        start = time.monotonic()
        while time.monotonic() - start < 0.6:
            steps(time.monotonic() - start, 10.0)  # never done: only the clock lets an update through
            time.sleep(0.002)
        return "ok"

    extra = {} if every_s is None else {"progress_every_s": every_s}
    submit_task(
        QThreadPool.globalInstance(), work, results.append, pytest.fail, on_progress=seen.append, **extra
    )
    qtbot.waitUntil(lambda: bool(results), timeout=10000)
    qtbot.wait(50)  # queued progress signals still on their way
    assert seen == sorted(seen)
    return len(seen)


def test_a_task_reports_progress_at_most_as_often_as_asked(qtbot: QtBot) -> None:
    assert progress_count(qtbot, 0.25) <= 4  # 0.6 s: at 0, 0.25 and 0.5 s
    assert progress_count(qtbot, None) >= 6  # the default, 0.05 s: about 12


def test_the_monitor_reads_a_recording_with_the_slower_progress(qtbot: QtBot, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window = MainWindow(AppState(load_catalog(use_overlay=False), settings), small_machine)
    qtbot.addWidget(window)
    page = window.pages["monitor"]
    assert isinstance(page, MonitorPage)
    path = tmp_path / "r.csv"
    path.write_text("time,wall,cpu_percent\n" + "".join(f"{n},{n},5\n" for n in range(100)), encoding="utf-8")
    with qtbot.waitSignal(page.replay_finished, timeout=10000) as finished:
        task = page.open_recording(path)
    assert finished.args == [True] and task.progress_every_s == READ_PROGRESS_EVERY_S >= 0.2
    assert page.recording is not None and len(page.recording) == 100
