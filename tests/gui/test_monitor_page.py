"""The Monitor page with a fake sampler: samples flow off-thread into the metric cards, pause, record,
clear; replay of a recorded CSV (opened or dropped), and a snapshot offering replay instead of plots."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDropEvent
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.core.catalog import load_catalog
from rigcheck.core.machine import load_machine
from rigcheck.core.monitor import GpuSample, Sample, columns, row
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.monitor import MonitorPage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
GIB = 1024**3
MACHINES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


class FakeSampler:
    """Two GPUs ramping up to their power limits; each call is one tick, 0.1 s apart on a fake clock
    (``step`` makes the clock run faster, so sustained alerts need only a few real ticks)."""

    def __init__(self, step: float = 0.1, gpus: int = 2) -> None:
        self.ticks = itertools.count()
        self.step = step
        self.gpus = gpus
        self.closed = False

    def sample(self) -> Sample:
        n = next(self.ticks)
        return make_sample(n, self.step, self.gpus)

    def close(self) -> None:
        self.closed = True


def replay(qtbot: QtBot, page: MonitorPage, path: Path) -> bool:
    """Open a recording (read on the pool) and wait for the page to say how it went."""
    with qtbot.waitSignal(page.replay_finished, timeout=20000) as blocker:
        page.open_recording(path)
    return bool(blocker.args[0])


def make_sample(n: int, step: float = 0.1, gpus: int = 2) -> Sample:
    cards = tuple(
        GpuSample(
            index=i,
            name=("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 3090")[i % 2],
            utilization_percent=min(100.0, n * 10.0),
            memory_used_bytes=int(min(23.5, 2 + n) * GIB),
            memory_total_bytes=24 * GIB,
            power_watts=min(450.0, 100.0 + n * 50),
            power_limit_watts=450.0,
            temperature_c=40.0 + n + i,
            temperature_slowdown_c=95.0,
            sm_clock_mhz=2520.0,
        )
        for i in range(gpus)
    )
    return Sample(
        t=n * step,
        wall=1_700_000_000 + n * step,
        gpus=cards,
        cpu_percent=12.5,
        ram_used_bytes=8 * GIB,
        ram_total_bytes=64 * GIB,
    )


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path) -> MainWindow:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    settings.setValue("monitor/interval", 0.1)
    state = AppState(load_catalog(use_overlay=False), settings, sampler_factory=FakeSampler)
    win = MainWindow(state, small_machine)
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    return win


def monitor(window: MainWindow) -> MonitorPage:
    window.show_page("monitor")
    page = window.pages["monitor"]
    assert isinstance(page, MonitorPage)
    return page


def record_csv(path: Path, count: int, step: float = 1.0) -> Path:
    """As ``rigcheck monitor --csv`` writes it."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, columns(make_sample(0)), extrasaction="ignore")
        writer.writeheader()
        for n in range(count):
            writer.writerow({k: "" if v is None else v for k, v in row(make_sample(n, step)).items()})
    return path


def test_samples_reach_every_card_off_thread(qtbot: QtBot, window: MainWindow) -> None:
    page = monitor(window)
    qtbot.waitUntil(lambda: len(page.history) >= 5, timeout=5000)
    assert list(page.cards) == ["util", "memory", "power", "temperature", "clock", "host"]
    power = page.cards["power"].chart
    assert len(power.series) == 2  # one line per GPU
    x, y = power.series[0].x, power.series[0].y
    assert len(x) >= 5 and x[-1] == 0.0 and y[0] == 100.0  # newest at the right edge ("now")
    assert [line.value for line in power.lines] == [450.0]  # the shared power limit
    assert power.y_range[1] >= 450.0 * 1.1  # fixed scale above the limit, not autoscaled to the data
    assert page.cards["util"].chart.y_range == (0.0, 100.0)
    memory = page.cards["memory"].chart
    assert memory.lines[0].value == 24.0 and memory.y_range[1] >= 24.0  # capacity line, 0..capacity
    assert page.cards["temperature"].chart.lines[0].value == 95.0  # the slowdown threshold
    # the large current values: one per GPU, each in its colour; the legend names both GPUs
    assert page.cards["util"].value.text().count("■") == 2
    legend = [page.legend.itemAt(i).widget().text() for i in range(page.legend.count())]
    assert any("GPU 0 · NVIDIA GeForce RTX 4090" in t for t in legend)
    assert any("GPU 1 · NVIDIA GeForce RTX 3090" in t for t in legend)
    assert "all GPUs" in page.cards["power"].detail.text()
    window.close()
    assert page._thread is None  # the sampling thread was joined


def test_cards_reflow_with_the_width(qtbot: QtBot, window: MainWindow) -> None:
    page = monitor(window)
    qtbot.waitUntil(lambda: len(page.cards) == 6, timeout=5000)
    window.resize(1024, 700)
    qtbot.waitUntil(lambda: page._columns == 2, timeout=2000)
    window.resize(1920, 1080)
    qtbot.waitUntil(lambda: page._columns == 3, timeout=2000)
    window.close()


def test_pause_record_clear(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    page = monitor(window)
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
    # what the page recorded replays
    assert replay(qtbot, page, target) and page.mode == "replay"
    window.close()


def test_alerts_show_power_at_the_limit(qtbot: QtBot, window: MainWindow) -> None:
    window.state.sampler_factory = lambda: FakeSampler(step=5.0)
    page = monitor(window)
    qtbot.waitUntil(
        lambda: {"vram_nearly_full", "power_at_limit"} <= {a.kind for a in page.alerts}, timeout=10000
    )
    assert "▲" in page.alert_label.text()
    window.close()


def test_window_and_interval_controls(qtbot: QtBot, window: MainWindow) -> None:
    page = monitor(window)
    page.window_combo.setCurrentIndex(page.window_combo.findData(60))
    assert window.state.settings.value("monitor/window") == 60
    page.interval.setValue(0.5)
    assert float(window.state.settings.value("monitor/interval")) == 0.5  # type: ignore[arg-type]
    window.close()


def test_replay_scrubs_through_a_recording(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    path = record_csv(tmp_path / "lab-box.csv", 600)  # ten minutes at 1 s
    page = monitor(window)
    qtbot.waitUntil(lambda: len(page.history) >= 1, timeout=5000)
    assert replay(qtbot, page, path)
    assert page.mode == "replay" and page._thread is None  # live sampling stopped
    assert page.replay_bar.isVisible() and "lab-box.csv" in page.replay_label.text()
    assert page.slider.maximum() == 599 and page.slider.value() == 599
    assert page.position_label.text() == "9:59 / 9:59"
    page.slider.setValue(100)  # scrub back to 1:40
    power = page.cards["power"].chart
    x = power.series[0].x
    assert x[100] == 0.0 and x[0] == -100.0  # the chart ends at the scrubbed moment
    assert page.cards["power"].value.text().count("450 W") == 2  # 100 + 100·50 capped at the limit
    assert page.cards["temperature"].value.text().count("°C") == 2
    assert page.position_label.text() == "1:40 / 9:59"
    page.slider.setValue(2)
    assert "200 W" in page.cards["power"].value.text()
    page.live_button.click()
    assert page.mode == "live" and not page.replay_bar.isVisible()
    qtbot.waitUntil(lambda: page._thread is not None, timeout=2000)
    window.close()


def test_a_bad_recording_is_one_line_and_keeps_the_page(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    bad = tmp_path / "notes.csv"
    bad.write_text("name,size\nllama,7\n", encoding="utf-8")
    page = monitor(window)
    assert not replay(qtbot, page, bad)
    assert page.mode == "live" and page.error_label.isVisible()
    text = page.error_label.text()
    assert str(bad) in text and "not a RigCheck monitor recording" in text and "\n" not in text
    window.close()


def test_dropping_a_csv_opens_it_in_replay(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    path = record_csv(tmp_path / "dropped.csv", 30)
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(
        QPointF(QPoint(400, 300)),
        Qt.DropAction.CopyAction,
        data,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    window.dropEvent(event)
    page = window.pages["monitor"]
    assert isinstance(page, MonitorPage)
    qtbot.waitUntil(lambda: page.recording is not None, timeout=10000)  # read on the pool
    assert window.stack.currentWidget() is page and page.mode == "replay"
    assert page.recording is not None and len(page.recording) == 30
    window.close()


def test_a_snapshot_offers_replay_instead_of_empty_plots(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    snapshot = load_machine(MACHINES / "two-gpus-128gb.json")
    window.state.set_machine(snapshot, "Snapshot two-gpus-128gb.json", False)
    page = monitor(window)
    qtbot.wait(200)
    assert page.mode == "none" and page._thread is None  # nothing sampled for another machine
    assert page.notice.isVisible() and not page.cards_area.isVisible()
    assert "saved snapshot, not this computer" in page.notice_text.text()
    assert not page.scope.isVisible()  # said once, in the notice
    # a recording from that machine replays, named after the snapshot's GPUs
    assert replay(qtbot, page, record_csv(tmp_path / "two.csv", 20))
    assert page.cards_area.isVisible() and not page.notice.isVisible()
    legend = " ".join(page.legend.itemAt(i).widget().text() for i in range(page.legend.count()))
    assert all(gpu.name in legend for gpu in snapshot.gpus)
    np.testing.assert_array_equal(page.cards["util"].chart.series[1].y[:3], [0.0, 10.0, 20.0])
    window.close()
