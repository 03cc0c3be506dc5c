"""The Monitor page with a fake sampler: samples flow off-thread into the plots, pause, record, clear."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.core.catalog import load_catalog
from rigcheck.core.monitor import GpuSample, Sample
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.monitor import MonitorPage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
GIB = 1024**3


class FakeSampler:
    """One GPU ramping up to its power limit; each call is one tick, 0.1 s apart on a fake clock
    (``step`` makes the clock run faster, so sustained alerts need only a few real ticks)."""

    def __init__(self, step: float = 0.1) -> None:
        self.ticks = itertools.count()
        self.step = step
        self.closed = False

    def sample(self) -> Sample:
        n = next(self.ticks)
        gpu = GpuSample(
            index=0,
            name="NVIDIA GeForce RTX 4090",
            utilization_percent=min(100.0, n * 10.0),
            memory_used_bytes=int(min(23.5, 2 + n) * GIB),
            memory_total_bytes=24 * GIB,
            power_watts=min(450.0, 100.0 + n * 50),
            power_limit_watts=450.0,
            temperature_c=40.0 + n,
            sm_clock_mhz=2520.0,
        )
        return Sample(
            t=n * self.step,
            wall=1_700_000_000 + n * self.step,
            gpus=(gpu,),
            cpu_percent=12.5,
            ram_used_bytes=8 * GIB,
            ram_total_bytes=64 * GIB,
        )

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path) -> MainWindow:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    settings.setValue("monitor/interval", 0.1)
    state = AppState(load_catalog(use_overlay=False), settings, sampler_factory=FakeSampler)
    win = MainWindow(state, small_machine)
    qtbot.addWidget(win)
    win.show()
    return win


def test_samples_reach_the_plots_off_thread(qtbot: QtBot, window: MainWindow) -> None:
    window.show_page("monitor")
    page = window.pages["monitor"]
    assert isinstance(page, MonitorPage)
    qtbot.waitUntil(lambda: len(page.history) >= 5, timeout=5000)
    x, y = page._curves["gpu0_power_w"].getData()
    assert len(x) >= 5 and x[-1] == 0.0  # newest at the right edge
    assert y[0] == 100.0
    assert 0 in page._limit_lines and page._limit_lines[0].value() == 450.0
    window.close()
    assert page._thread is None  # the sampling thread was joined


def test_pause_record_clear(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    window.show_page("monitor")
    page = window.pages["monitor"]
    assert isinstance(page, MonitorPage)
    qtbot.waitUntil(lambda: len(page.history) >= 2, timeout=5000)
    target = tmp_path / "run.csv"
    page.record_to(target)
    qtbot.waitUntil(lambda: len(page.history) >= 6, timeout=5000)
    page.pause_button.click()
    assert page.paused and page.pause_button.text() == "Resume"
    qtbot.wait(300)
    held = len(page.history)
    qtbot.wait(300)
    assert len(page.history) == held  # paused: no more ticks
    page.record_button.click()  # stop recording
    rows = list(csv.reader(target.read_text().splitlines()))
    assert rows[0][:2] == ["time", "wall"] and "gpu0_power_w" in rows[0]
    assert len(rows) >= 3
    page.clear_button.click()
    assert len(page.history) == 0
    window.close()


def test_alerts_show_power_at_the_limit(qtbot: QtBot, window: MainWindow) -> None:
    window.state.sampler_factory = lambda: FakeSampler(step=5.0)
    window.show_page("monitor")
    page = window.pages["monitor"]
    assert isinstance(page, MonitorPage)
    qtbot.waitUntil(
        lambda: {"vram_nearly_full", "power_at_limit"} <= {a.kind for a in page.alerts}, timeout=10000
    )
    assert "▲" in page.alert_label.text()
    window.close()


def test_window_and_interval_controls(qtbot: QtBot, window: MainWindow) -> None:
    window.show_page("monitor")
    page = window.pages["monitor"]
    assert isinstance(page, MonitorPage)
    page.window_combo.setCurrentIndex(page.window_combo.findData(60))
    assert window.state.settings.value("monitor/window") == 60
    page.interval.setValue(0.5)
    assert float(window.state.settings.value("monitor/interval")) == 0.5  # type: ignore[arg-type]
    window.close()
