"""A large recording is read in a process of its own (issue 30: the GUI thread never waits for the
interpreter a pool thread parsing a gigabyte holds): the same recording comes back, its progress
reaches the reading bar, a bad file is the same one-line message, and Cancel ends the process."""

from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path

import numpy as np
import pytest
from pytestqt.qtbot import QtBot
from test_harden3_responsive import monitor_of, record_csv, window  # noqa: F401 - the fixture

from rigcheck.core.replay import read_recording
from rigcheck.core.steps import Cancelled, Steps
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages import monitor_process, monitor_replay  # read_recording is read there

pytestmark = pytest.mark.gui


def test_the_process_reads_the_same_recording_and_reports_progress(tmp_path: Path) -> None:
    path = record_csv(tmp_path / "run.csv", 10_000)  # the reader reports every 4,096 lines
    seen: list[float] = []
    got = monitor_process.read_in_process(path, Steps(seen.append, every_s=0.0))
    want = read_recording(path)
    assert len(got) == len(want) == 10_000 and got.gpus == want.gpus and got.stride == want.stride
    assert np.array_equal(got.t, want.t)
    for key in want.values:
        assert np.array_equal(got.values[key], want.values[key], equal_nan=True), key
    assert max(seen) > 0  # the child's progress came through the pipe
    assert not multiprocessing.active_children()


def test_a_bad_file_read_in_the_process_is_the_same_input_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("time,cpu_percent\n0,1\nx,2\n", encoding="utf-8")
    with pytest.raises(Exception) as in_thread:
        read_recording(path)
    with pytest.raises(type(in_thread.value)) as in_process:
        monitor_process.read_in_process(path, Steps())
    assert str(in_process.value) == str(in_thread.value)


def test_cancel_ends_the_reading_process(tmp_path: Path) -> None:
    path = record_csv(tmp_path / "long.csv", 2000)
    before = set(multiprocessing.active_children())  # another test's reader may still be ending

    def cancel() -> bool:
        # as soon as the reader has been started: asking after a few polls instead raced a fast box's
        # child, which could read these 2,000 rows and answer within two 0.1 s polls
        return bool(set(multiprocessing.active_children()) - before)

    with pytest.raises(Cancelled):
        monitor_process.read_in_process(path, Steps(cancel=cancel))
    assert not set(multiprocessing.active_children()) - before


def test_the_page_reads_a_large_recording_in_a_process(
    qtbot: QtBot,
    window: MainWindow,  # noqa: F811 - the fixture
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def in_this_process(*_args: object, **_kwargs: object) -> object:
        raise AssertionError("read on a pool thread of the GUI's process")

    monkeypatch.setattr(monitor_process, "PROCESS_MIN_BYTES", 1)
    monkeypatch.setattr(monitor_replay, "read_recording", in_this_process)
    page = monitor_of(window)
    path = record_csv(tmp_path / "run.csv", 500)
    with qtbot.waitSignal(page.replay_finished, timeout=30000) as opened:
        page.open_recording(path)
    assert opened.args == [True] and page.mode == "replay" and len(page.recording) == 500  # type: ignore[arg-type]


def test_a_small_recording_is_read_without_a_process(tmp_path: Path) -> None:
    path = record_csv(tmp_path / "run.csv", 10)
    assert not monitor_process.wants_a_process(path)
    assert not monitor_process.wants_a_process(tmp_path / "missing.csv")


def test_a_child_that_ends_without_answering_leaves_the_reading_to_this_thread(tmp_path: Path) -> None:
    path = record_csv(tmp_path / "run.csv", 50)
    # sys.exit(path, max_cells, pipe): a TypeError in the child, which ends with nothing sent
    got = monitor_process.read_in_process(path, Steps(), target=sys.exit)
    assert len(got) == 50
    assert not multiprocessing.active_children()
