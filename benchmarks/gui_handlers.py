"""GUI responsiveness: how long each user action holds the GUI thread.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/gui_handlers.py [--it] [--why] [--skip=upgrade]``. Every event Qt
delivers on the GUI thread is timed (``QApplication.notify``), so the figure is what a user feels: the
longest single handler while an action runs, and the action's total time on the GUI thread; work handed
to the pool does not count, its result being applied when ready does. Target (issue 26 / issue 30 #7):
no handler over 50 ms. The machine is the RTX 4090 fixture; with ``--it`` the app runs in Italian. Each
row names the slowest event (its receiver and type); ``--why`` adds, per action, the page functions that
took longest on the GUI thread (a profile of the GUI thread alone: pool threads are not profiled).

``--fleet N`` (default 5,000) and ``--replay-mb M`` (default 1,024) add the lab-scale actions of issue 30
#7: a folder of N reports opened, checked, sorted and a check cancelled on the Fleet page, and an M MB
recording (two GPUs, written into a temporary folder) replayed and scrubbed on the Monitor page, with
the process's peak memory before and after the replay (the reader keeps at most 8 million values).
``--fleet 0`` / ``--replay-mb 0`` leave them out.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "machines"
TARGET_MS = 50.0

from PySide6.QtCore import QEvent, QObject, QSettings, Qt, QTimer  # noqa: E402, TID251 - a GUI benchmark
from PySide6.QtWidgets import QApplication  # noqa: E402, TID251 - a GUI benchmark


class TimedApp(QApplication):
    """Times every event delivery on the GUI thread (nested deliveries count in their outer one)."""

    def __init__(self, argv: list[str]) -> None:
        super().__init__(argv)
        self.longest = 0.0
        self.total = 0.0
        self.slowest = ""
        #: the most CPU time the GUI thread itself spent in one handler (time.thread_time): on a busy
        #: machine wall time also counts the time the thread waited for a core or for the GIL
        self.longest_cpu = 0.0
        self._depth = 0

    def notify(self, receiver: QObject, event: QEvent) -> bool:
        self._depth += 1
        start = time.perf_counter()
        cpu = time.thread_time() if self._depth == 1 else 0.0
        try:
            return super().notify(receiver, event)
        finally:
            self._depth -= 1
            if self._depth == 0:
                spent = time.perf_counter() - start
                if spent > self.longest:
                    self.longest = spent
                    self.slowest = f"{type(receiver).__name__} {event.type().name}"
                self.longest_cpu = max(self.longest_cpu, time.thread_time() - cpu)
                self.total += spent

    def reset(self) -> None:
        self.longest = self.total = self.longest_cpu = 0.0
        self.slowest = ""


def gui_thread_hotspots(profile: cProfile.Profile, shown: int = 4) -> list[str]:
    """The rigcheck functions (pages, not the core they call) with the most cumulative GUI-thread time."""
    stats = pstats.Stats(profile)
    rows = []
    for (path, line, name), (_cc, _nc, _tt, cumulative, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if "/rigcheck/gui/" in path and name not in ("settle", "<lambda>", "notify"):
            rows.append((cumulative, f"{Path(path).parent.name}/{Path(path).name}:{line} {name}"))
    return [f"{ms * 1000:6.0f} ms  {where}" for ms, where in sorted(rows, reverse=True)[:shown]]


def write_reports(folder: Path, count: int) -> None:
    """``count`` reports as ``audit --format json`` writes them (benchmarks/fleet_speed.py's 50, repeated)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from fleet_speed import write_scaled
    from rigcheck.core.catalog import load_catalog

    write_scaled(folder, load_catalog(use_overlay=False), count)


def write_recording(path: Path, megabytes: int) -> int:
    """A two-GPU monitor CSV of about ``megabytes`` MB, as ``monitor --csv`` writes it; returns its rows."""
    from rigcheck.core.monitor import GPU_COLUMNS

    names = ["time", "wall", "cpu_percent", "ram_used_bytes"]
    names += [f"gpu{i}_{suffix}" for i in range(2) for suffix, _field in GPU_COLUMNS]
    gpu = "{u},{m},{p},450.0,{c},2520,10501,30,1048576,524288,25757220864,95"
    template = "{t:.1f},{w:.1f},12.5,8589934592," + gpu + "," + gpu + "\n"
    target = megabytes * 1_000_000
    rows = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        handle.write(",".join(names) + "\n")
        written = 0
        while written < target:
            block = "".join(
                template.format(
                    t=n * 0.1, w=1.7e9 + n * 0.1, u=n % 101, m=2_000_000_000 + n % 9_000, p=100 + n % 350,
                    c=40 + n % 50,
                )
                for n in range(rows, rows + 10_000)
            )  # fmt: skip
            handle.write(block)
            written += len(block)
            rows += 10_000
    return rows


def _peak_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (
        1024 * 1024 if sys.platform == "darwin" else 1024
    )


def _option(name: str, default: int) -> int:
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def open_window(italian: bool) -> tuple[Any, str]:
    """The app's window on the RTX 4090 fixture at 1280×800, settled, and its scratch folder (settings)."""
    from rigcheck.core.machine import load_machine
    from rigcheck.gui.app import create_window, settle

    scratch = tempfile.mkdtemp(prefix="rigcheck-bench-")
    settings = QSettings(str(Path(scratch) / "s.ini"), QSettings.Format.IniFormat)
    settings.setValue("ui/language", "it" if italian else "en")
    window = create_window(settings, snapshot=load_machine(FIXTURES / "rtx4090-64gb.json"), snapshot_name="a")
    window.resize(1280, 800)
    window.show()
    settle(window)
    return window, scratch


def main() -> int:
    italian = "--it" in sys.argv
    fleet_count = _option("--fleet", 5000)
    replay_mb = _option("--replay-mb", 1024)
    app = TimedApp([sys.argv[0]])
    from rigcheck.gui.app import settle

    window, scratch = open_window(italian)
    # --skip upgrade,fleet: those pages are never built, so their handlers are not in the figures (to see
    # what the other pages cost alone)
    skipped = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--skip=")), "").split(",")
    for key in window.pages:  # every page built once: first-show cost is gui_startup.py's
        if key in skipped:
            continue
        window.show_page(key)
        settle(window)
    fit = window.pages["fit"]
    upgrade = window._built.get("upgrade")
    from rigcheck.gui.app import freeze_startup_objects

    freeze_startup_objects()  # as the app's main() does once its window is up

    why = "--why" in sys.argv
    hotspots: dict[str, list[str]] = {}

    def action(name: str, do: Callable[[], Any], timeout_s: float = 30.0) -> tuple[str, float, float, str]:
        app.reset()
        profile = cProfile.Profile() if why else None
        start = time.perf_counter()
        # an action starts in a handler (a click, a key): run it inside one so it is timed as one
        QApplication.postEvent(window, QEvent(QEvent.Type.User))
        window.customEvent = lambda _e: do()  # type: ignore[method-assign]
        if profile is not None:
            profile.enable()
        if not settle(window, timeout_s):
            print(f"  ({name}: still busy after {timeout_s:.0f} s)")
        if profile is not None:
            profile.disable()
            hotspots[name] = gui_thread_hotspots(profile)
        wall = time.perf_counter() - start
        return (
            name,
            app.longest * 1000,
            wall * 1000,
            f"{app.slowest} (most CPU in one: {app.longest_cpu * 1000:.0f} ms)",
        )

    rows = [
        action("open a snapshot (Overview shown)", lambda: (window.show_page("overview"), window.open_snapshot(FIXTURES / "two-gpus-128gb.json"))),
        action("open another snapshot", lambda: window.open_snapshot(FIXTURES / "hgx-h100x8-2tb.json")),
        action("Fit: move the context slider", lambda: (window.show_page("fit"), fit.context.setValue(fit.context.value() + 40))),  # type: ignore[attr-defined]
        action("Fit: change the GPU backend", lambda: fit.backend.setCurrentIndex(fit.backend.count() - 1)),  # type: ignore[attr-defined]
        *([] if "upgrade" in skipped else [action("Upgrade: add a GPU", lambda: (window.show_page("upgrade"), upgrade.catalog_list.setCurrentCell(0, 0), upgrade.add_selected()))]),  # type: ignore[attr-defined]
        action("Compatibility: open the page on a new machine", lambda: (window.open_snapshot(FIXTURES / "m2-ultra-192gb.json"), window.show_page("compat"))),
        action("switch language", lambda: window.set_language("en" if italian else "it")),
    ]  # fmt: skip
    notes: list[str] = []
    if replay_mb:
        monitor = window.pages["monitor"]
        path = Path(scratch) / "run.csv"
        start = time.perf_counter()
        count = write_recording(path, replay_mb)
        size = path.stat().st_size
        notes.append(
            f"recording: {size / 1e6:,.0f} MB, {count:,} rows, written in {time.perf_counter() - start:.0f} s"
        )
        before = _peak_mib()
        rows.append(
            action(
                f"Monitor: replay a {size / 1e9:.1f} GB recording",
                lambda: (window.show_page("monitor"), monitor.open_recording(path)),
                1800,
            )
        )  # type: ignore[attr-defined]
        recording = monitor.recording  # type: ignore[attr-defined]
        kept = (
            f"{len(recording):,} rows kept, one in {recording.stride}"
            if recording is not None
            else "not opened"
        )
        notes.append(f"replay: {kept}; peak memory {before:.0f} MiB before, {_peak_mib():.0f} MiB after")
        rows.append(
            action(
                "Monitor: scrub the recording", lambda: monitor.slider.setValue(monitor.slider.maximum() // 2)
            )
        )  # type: ignore[attr-defined]
        rows.append(
            action(
                "Monitor: start reading it again, then cancel",
                lambda: (monitor.open_recording(path), QTimer.singleShot(300, monitor.cancel_reading)),
                60,
            )
        )  # type: ignore[attr-defined]
        path.unlink()
    if fleet_count:
        fleet = window.pages["fleet"]
        folder = Path(scratch) / "lab"
        start = time.perf_counter()
        write_reports(folder, fleet_count)
        notes.append(f"fleet: {fleet_count:,} reports written in {time.perf_counter() - start:.0f} s")
        rows.append(
            action(
                f"Fleet: open a folder of {fleet_count:,} reports",
                lambda: (window.show_page("fleet"), fleet.open_folder(folder)),
                1800,
            )
        )  # type: ignore[attr-defined]
        rows.append(
            action(f"Fleet: check Llama 3.1 70B on {fleet_count:,} machines", fleet.check_model, 1800)
        )  # type: ignore[attr-defined]
        rows.append(
            action(
                "Fleet: sort the machines by driver",
                lambda: fleet.table.sortByColumn(3, Qt.SortOrder.DescendingOrder),
            )
        )  # type: ignore[attr-defined]
        rows.append(
            action(
                "Fleet: check again, then cancel",
                lambda: (fleet.check_model(), QTimer.singleShot(300, fleet.cancel)),
                60,
            )
        )  # type: ignore[attr-defined]
        rows.append(action("Fleet: open one machine (double-click)", lambda: fleet.open_node(0)))  # type: ignore[attr-defined]
    for note in notes:
        print(note)
    width = max(len(r[0]) for r in rows)
    print(
        f"{'action':<{width}}  longest handler   wall   (target: no handler over {TARGET_MS:.0f} ms)  slowest event"
    )
    worst = 0.0
    for name, longest, wall, slowest in rows:
        worst = max(worst, longest)
        flag = "  " if longest <= TARGET_MS else "✘ "
        print(f"{name:<{width}}  {longest:10.1f} ms  {wall:7.0f} ms  {flag}{slowest}")
        for line in hotspots.get(name, []):
            print(f"{'':<{width}}      {line}")
    window.close()
    import shutil

    shutil.rmtree(scratch, ignore_errors=True)  # the reports and the recording
    return 0 if worst <= TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
