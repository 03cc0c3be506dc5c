"""The GUI never waits on a fleet or a recording: Fleet's reading and "Check" and the Monitor's replay run
on the pool with progress and Cancel, stale results are dropped, and the Monitor's own recording goes
through the same safe writer as ``monitor --csv`` (issue 30 #7, #11)."""

from __future__ import annotations

import csv
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt, QThreadPool
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.core import replay as replay_module
from rigcheck.core.catalog import load_catalog
from rigcheck.core.machine import Drivers, load_machine, save_machine
from rigcheck.core.monitor import columns, row
from rigcheck.core.report import fleet as fleet_module
from rigcheck.core.steps import Cancelled, Steps
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages import fleet as fleet_page
from rigcheck.gui.pages import monitor_record, monitor_replay  # the save dialog, read_recording
from rigcheck.gui.pages.fleet import FleetPage
from rigcheck.gui.pages.monitor import MonitorPage
from rigcheck.gui.state import AppState
from rigcheck.gui.workers import submit_task

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path) -> MainWindow:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    win = MainWindow(AppState(load_catalog(use_overlay=False), settings), small_machine)
    qtbot.addWidget(win)
    win.resize(1024, 700)
    win.show()
    yield win
    win.close()


def write_fleet(folder: Path, count: int, prefix: str = "node") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    base = load_machine(FIXTURES / "rtx4090-64gb.json")
    for i in range(count):
        machine = replace(
            base,
            host=replace(base.host, hostname=f"{prefix}-{i}"),
            drivers=Drivers(nvidia="550.54.14" if i == 1 else "570.124.04", cuda_driver="12.8"),
        )
        save_machine(machine, folder / f"{prefix}-{i}.json")


def fleet_of(window: MainWindow) -> FleetPage:
    window.show_page("fleet")
    page = window.pages["fleet"]
    assert isinstance(page, FleetPage)
    return page


def record_csv(path: Path, count: int) -> Path:
    from test_monitor_page import make_sample

    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, columns(make_sample(0)), extrasaction="ignore")
        writer.writeheader()
        for n in range(count):
            writer.writerow({k: "" if v is None else v for k, v in row(make_sample(n)).items()})
    return path


# -- the pool's tasks ------------------------------------------------------------------------------


def test_a_task_reports_progress_and_its_result_from_another_thread(qtbot: QtBot) -> None:
    pool = QThreadPool()
    seen: list[float] = []
    results: list[object] = []

    def work(steps: Steps) -> int:
        for i in range(50):
            steps(i, 50)
            time.sleep(0.004)
        return threading.get_ident()

    task = submit_task(pool, work, results.append, pytest.fail, on_progress=seen.append)
    qtbot.waitUntil(lambda: bool(results), timeout=10000)
    assert results[0] == task.thread_id and task.thread_id != threading.get_ident()
    assert seen and all(0.0 <= f <= 1.0 for f in seen) and seen == sorted(seen)


def test_a_cancelled_task_stops_at_its_next_step_and_delivers_nothing(qtbot: QtBot) -> None:
    pool = QThreadPool()
    steps_taken: list[int] = []
    delivered: list[object] = []
    cancelled: list[bool] = []

    def forever(steps: Steps) -> None:
        n = 0
        while True:  # only a cancel ends it
            steps(n, 10**9)
            steps_taken.append(n)
            n += 1
            time.sleep(0.001)

    task = submit_task(
        pool, forever, delivered.append, pytest.fail, on_cancelled=lambda: cancelled.append(True)
    )
    qtbot.waitUntil(lambda: len(steps_taken) > 5, timeout=10000)
    task.cancel()
    qtbot.waitUntil(lambda: bool(cancelled), timeout=10000)
    assert pool.waitForDone(5000) and not delivered


def test_steps_raise_when_cancelled_and_throttle_progress() -> None:
    calls: list[float] = []
    steps = Steps(calls.append, lambda: False, every_s=3600)
    for i in range(1000):
        steps(i, 1000)
    steps(1000, 1000)
    assert calls == [0.0, 1.0]  # the first, then only the end within the hour
    with pytest.raises(Cancelled):
        Steps(None, lambda: True)(1, 2)


# -- Fleet -----------------------------------------------------------------------------------------


def test_fleet_reads_and_checks_off_the_gui_thread(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: dict[str, int] = {}
    real_load, real_can_run = fleet_page.load_fleet, fleet_module.Fleet.can_run

    def load(*args: object, **kwargs: object) -> object:
        threads["load"] = threading.get_ident()
        return real_load(*args, **kwargs)  # type: ignore[arg-type]

    def can_run(self: object, *args: object, **kwargs: object) -> object:
        threads["check"] = threading.get_ident()
        return real_can_run(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(fleet_page, "load_fleet", load)
    monkeypatch.setattr(fleet_module.Fleet, "can_run", can_run)
    write_fleet(tmp_path / "lab", 6)
    page = fleet_of(window)
    page.open_folder(tmp_path / "lab")
    assert page.busy() and page.progress.isVisible() and page.cancel_button.isVisible()
    # the verdicts of the model shown are checked as soon as the folder is read (issue 26): both done
    qtbot.waitUntil(lambda: page.fleet is not None and not page.busy(), timeout=20000)
    assert page.table.model().rowCount() == 6 and not page.progress.isVisible()
    page.model.setCurrentIndex(page.model.findData("llama-3.1-70b"))
    page.check_model()
    assert not page.check_button.isEnabled()  # one check at a time
    qtbot.waitUntil(lambda: bool(page.verdicts) and not page.busy(), timeout=20000)
    assert set(page.verdicts) == {f"node-{i}" for i in range(6)}
    verdict_column = page.table.model().columnCount() - 1
    assert all(page.table.model().index(r, verdict_column).data() for r in range(6))
    main = threading.get_ident()
    assert threads["load"] != main and threads["check"] != main
    assert page.check_button.isEnabled() and not page.busy()


def test_cancel_stops_a_fleet_check_and_keeps_what_was_shown(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_fleet(tmp_path / "lab", 4)
    page = fleet_of(window)
    page.open_folder(tmp_path / "lab")
    qtbot.waitUntil(lambda: page.fleet is not None and not page.busy(), timeout=20000)
    shown = dict(page.verdicts)  # the model shown, checked as soon as the folder was read
    started = threading.Event()
    stopped: list[bool] = []
    real_column = fleet_module.Fleet.column

    def slow_column(self: object, *args: object, steps: object = None, **kwargs: object) -> object:
        def slow(done: float, total: float) -> None:
            started.set()
            time.sleep(0.5)  # a slow node: the cancel arrives while it runs
            try:
                steps(done, total)  # type: ignore[operator]
            except Cancelled:
                stopped.append(True)
                raise

        return real_column(self, *args, steps=slow, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(fleet_module.Fleet, "column", slow_column)
    page.model.blockSignals(True)  # another model, checked by the click below (not by the change itself)
    page.model.setCurrentIndex(page.model.findData("llama-3.2-3b"))
    page.model.blockSignals(False)
    page.check_model()
    assert started.wait(10)
    page.cancel()
    assert page.status.text() == "Cancelled" and page.check_button.isEnabled() and not page.busy()
    assert window.state.pool.waitForDone(10000)
    qtbot.wait(50)
    assert stopped == [True]  # the worker stopped at its next step, not after every node
    assert page.verdicts == shown  # nothing from the cancelled check was applied
    assert page.table.model().rowCount() == 4


def test_a_newer_folder_wins_over_an_older_one_still_reading(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    write_fleet(tmp_path / "old", 30, prefix="old")
    write_fleet(tmp_path / "new", 3, prefix="new")
    page = fleet_of(window)
    page.open_folder(tmp_path / "old")
    page.open_folder(tmp_path / "new")
    qtbot.waitUntil(lambda: page.fleet is not None and not page.busy(), timeout=20000)
    assert window.state.pool.waitForDone(20000)
    qtbot.wait(50)
    assert page.fleet is not None and {n.name for n in page.fleet.nodes} == {f"new-{i}" for i in range(3)}
    names = {page.node_at(r) for r in range(page.table.model().rowCount())}
    assert names == {f"new-{i}" for i in range(3)}


def test_fleet_table_sorts_by_the_header(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    write_fleet(tmp_path / "lab", 12)
    page = fleet_of(window)
    page.open_folder(tmp_path / "lab")
    qtbot.waitUntil(lambda: page.fleet is not None, timeout=20000)
    model = page.table.model()
    names = [page.node_at(r) for r in range(model.rowCount())]
    assert names == sorted(names, key=lambda n: int(n.split("-")[1]))  # node-2 before node-10
    page.table.sortByColumn(3, Qt.SortOrder.DescendingOrder)
    drivers = [str(model.index(r, 3).data()).lstrip("▲ ") for r in range(model.rowCount())]
    assert drivers[0] == "570.124.04" and drivers[-1] == "550.54.14"


# -- Monitor replay --------------------------------------------------------------------------------


def monitor_of(window: MainWindow) -> MonitorPage:
    window.show_page("monitor")
    page = window.pages["monitor"]
    assert isinstance(page, MonitorPage)
    return page


def test_a_replay_is_read_off_the_gui_thread(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[int] = []
    real = monitor_replay.read_recording

    def read(*args: object, **kwargs: object) -> object:
        threads.append(threading.get_ident())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(monitor_replay, "read_recording", read)
    page = monitor_of(window)
    path = record_csv(tmp_path / "run.csv", 120)
    with qtbot.waitSignal(page.replay_finished, timeout=20000) as opened:
        page.open_recording(path)
        assert page.reading_bar.isVisible() and page.busy()
    assert opened.args == [True] and page.mode == "replay" and len(page.recording) == 120  # type: ignore[arg-type]
    assert threads and threads[0] != threading.get_ident()
    assert not page.reading_bar.isVisible() and not page.busy()


def test_cancel_stops_reading_a_recording(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = monitor_of(window)
    path = record_csv(tmp_path / "long.csv", 40_000)
    stopped: list[bool] = []
    real = replay_module.read_recording

    def read(target: object, *, steps: Steps, **kwargs: object) -> object:
        def slow(done: float, total: float) -> None:
            time.sleep(0.05)
            try:
                steps(done, total)
            except Cancelled:
                stopped.append(True)
                raise

        return real(target, steps=slow, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(monitor_replay, "read_recording", read)
    with qtbot.waitSignal(page.replay_finished, timeout=20000) as finished:
        page.open_recording(path)
        qtbot.wait(100)
        page.cancel_reading()
    assert finished.args == [False]
    assert window.state.pool.waitForDone(20000)
    qtbot.wait(50)
    assert stopped == [True] and page.recording is None and page.mode != "replay"


def test_a_newer_recording_wins_over_an_older_one(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    page = monitor_of(window)
    old = record_csv(tmp_path / "old.csv", 20_000)
    new = record_csv(tmp_path / "new.csv", 30)
    page.open_recording(old)
    with qtbot.waitSignal(page.replay_finished, timeout=20000):
        page.open_recording(new)
    assert window.state.pool.waitForDone(20000)
    qtbot.wait(50)
    assert page.recording is not None and len(page.recording) == 30 and "new.csv" in page.replay_label.text()


# -- the Monitor's own recording -------------------------------------------------------------------


def test_record_to_csv_keeps_an_existing_recording_unless_confirmed(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = monitor_of(window)
    target = tmp_path / "run.csv"
    target.write_text("time,wall\n1,2\n", encoding="utf-8")
    assert not page.record_to(target)  # as `monitor --csv` without --force
    assert "already exists" in page.alert_label.text() and not page.record_button.isChecked()
    assert target.read_text(encoding="utf-8") == "time,wall\n1,2\n"
    # the button: a save dialog, then the page's own question; "No" keeps the file
    monkeypatch.setattr(monitor_record.QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    answers = iter([False, True])
    monkeypatch.setattr(page, "confirm_replace", lambda _path: next(answers))
    page.record_button.setChecked(True)
    assert not page.record_button.isChecked() and target.read_text(encoding="utf-8") == "time,wall\n1,2\n"
    page.record_button.setChecked(True)  # "Yes": replaced, and recording
    assert page.record_button.isChecked() and target.read_text(encoding="utf-8").startswith("time,")
    assert "1,2" not in target.read_text(encoding="utf-8")
    page.record_button.setChecked(False)


def test_record_to_csv_refuses_a_file_another_monitor_writes(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    from rigcheck.core.fileio import LineFile

    target = tmp_path / "shared.csv"
    other = LineFile(target)  # `rigcheck monitor --csv shared.csv` already running
    try:
        page = monitor_of(window)
        assert not page.record_to(target, force=True)
        assert "another rigcheck monitor" in page.alert_label.text()
    finally:
        other.close()


def test_the_gpu_mix_drift_has_its_own_label_in_both_languages(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    """A node with an RTX 3090 beside a 4090 among single-model nodes: the drift line names the field in
    words (it showed the raw key 'gpu_mix' and the core's English 'one GPU model per node')."""
    from test_fleet_page import write_fleet as write_mixed_fleet

    from rigcheck.core import i18n

    folder = tmp_path / "mixed"
    folder.mkdir()
    write_mixed_fleet(folder)
    page = fleet_of(window)
    page.open_folder(folder)
    qtbot.waitUntil(lambda: page.fleet is not None, timeout=20000)
    text = page.drift_text.text()
    assert "GPU models differ within a node" in text and "gpu_mix" not in text, text
    assert "node-big" in text and "one GPU model per node" in text
    try:
        window.set_language("it")
        qtbot.waitUntil(
            lambda: "Modelli di GPU diversi nello stesso nodo" in page.drift_text.text(), timeout=20000
        )
        assert "un solo modello di GPU per nodo" in page.drift_text.text()
    finally:
        window.set_language("en")
        i18n.set_language("en")


def test_the_checked_fleet_table_never_scrolls_sideways_at_1024_px(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    """With the verdict column filled, the columns narrow (elided, whole in tooltips) to fit 1024 px."""
    write_fleet(tmp_path / "lab", 6)
    page = fleet_of(window)
    page.open_folder(tmp_path / "lab")
    qtbot.waitUntil(lambda: page.fleet is not None, timeout=20000)
    page.check_model()
    qtbot.waitUntil(lambda: bool(page.verdicts) and not page.busy(), timeout=20000)
    qtbot.wait(50)
    assert page.table.horizontalScrollBar().maximum() == 0
    model = page.table.model()
    verdict = model.columnCount() - 1
    assert page.table.columnWidth(verdict) >= 180
    assert all(model.index(r, verdict).data(Qt.ItemDataRole.ToolTipRole) for r in range(model.rowCount()))
