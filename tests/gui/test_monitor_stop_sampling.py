"""Opening a replay, or another machine's snapshot, never waits on the live sampler closing (issue 30 #7:
no GUI-thread handler over 50 ms). NVML's shutdown and a sample under way take their time on a GPU
machine; the sampling thread closes its sampler and ends on its own, and the window's close still
joins it, with the sampler closed."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import ClassVar

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot
from test_monitor_page import FakeSampler, record_csv, replay

from fakes.machines import small_machine
from rigcheck.core.catalog import load_catalog
from rigcheck.core.machine import load_machine
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.monitor import MonitorPage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
MACHINES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


class SlowToClose(FakeSampler):
    """A sampler whose close() waits until the test lets it go (an NVML shutdown that takes its time)."""

    instances: ClassVar[list[SlowToClose]] = []

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.closing = threading.Event()
        SlowToClose.instances.append(self)

    def close(self) -> None:
        self.closing.set()
        self.release.wait(10)
        super().close()


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path) -> MainWindow:
    SlowToClose.instances.clear()
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    settings.setValue("monitor/interval", 0.1)
    state = AppState(load_catalog(use_overlay=False), settings, sampler_factory=SlowToClose)
    win = MainWindow(state, small_machine)
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    yield win
    for sampler in SlowToClose.instances:
        sampler.release.set()
    win.close()


def live_page(qtbot: QtBot, window: MainWindow) -> MonitorPage:
    window.show_page("monitor")
    page = window.pages["monitor"]
    assert isinstance(page, MonitorPage)
    qtbot.waitUntil(lambda: len(page.history) >= 2, timeout=5000)
    return page


def test_a_replay_shows_while_the_sampler_is_still_closing(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    page = live_page(qtbot, window)
    sampler = SlowToClose.instances[-1]
    assert replay(qtbot, page, record_csv(tmp_path / "run.csv", 120))
    qtbot.waitUntil(sampler.closing.is_set, timeout=5000)
    # the sampler has not finished closing, and the replay is on screen all the same
    assert not sampler.closed
    assert page.mode == "replay" and page.replay_bar.isVisible() and "run.csv" in page.replay_label.text()
    assert page.position_label.text() == "1:59 / 1:59"
    shown = len(page.history)
    sampler.release.set()
    qtbot.waitUntil(lambda: sampler.closed and not page._ending, timeout=5000)  # joined once it ended
    assert len(page.history) == shown  # nothing sampled after live sampling stopped


def test_another_machine_opens_while_the_sampler_is_still_closing(qtbot: QtBot, window: MainWindow) -> None:
    page = live_page(qtbot, window)
    sampler = SlowToClose.instances[-1]
    window.state.set_machine(load_machine(MACHINES / "two-gpus-128gb.json"), "lab box", False)
    qtbot.waitUntil(sampler.closing.is_set, timeout=5000)
    assert not sampler.closed and page.mode == "none" and page.notice.isVisible()
    # back to this computer before the old sampler is done: a new one samples, the old one still closes
    window.state.set_machine(small_machine(), "This computer", True)
    qtbot.waitUntil(lambda: len(SlowToClose.instances) == 2, timeout=5000)
    assert page.mode == "live" and not sampler.closed
    sampler.release.set()
    SlowToClose.instances[-1].release.set()
    window.close()  # joins both threads: each sampler closed
    assert all(s.closed for s in SlowToClose.instances)
    assert page._thread is None and not page._ending
