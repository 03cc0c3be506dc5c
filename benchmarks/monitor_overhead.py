"""What live monitoring costs: the sampler's CPU time, and the memory a History holds.

Run: ``.venv/bin/python benchmarks/monitor_overhead.py [--seconds 10]``.

1. CPU: :func:`sampler_cpu_per_second` runs the real :class:`~rigcheck.core.monitor.Sampler` on this
   machine at 1 s and at 0.1 s for ``--seconds`` each and divides the process's CPU time
   (``time.process_time``) by the wall time sampled. The GUI's own share (plots, labels) is measured
   by the GUI benchmark, which can reuse this function.
2. Memory: one simulated hour of samples with two fake GPUs (new records every tick, as the real
   sampler makes them) pushed into a one-hour History at 1 s and at 0.1 s, in a fresh process each;
   RSS (psutil) after the first hour is the window's footprint, and a second hour must add nothing
   (goal: flat within 5 MB).

Nothing here is asserted in the test suite: figures belong to this script and BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable

import psutil

from rigcheck.core.monitor import GpuSample, History, ProcessMemory, Sample, Sampler, SampleSource, ticks

MIB = 1024**2
GIB = 1024**3


def sampler_cpu_per_second(
    interval_s: float, seconds: float, factory: Callable[[], SampleSource] = Sampler
) -> float:
    """CPU seconds this process spends per wall second while sampling every ``interval_s``.

    0.002 means 2 ms of CPU per second, 0.2 % of one core. Opening the sampler (NVML start-up) is
    not counted; its first sample is taken before the clock starts, as psutil's CPU figure needs.
    """
    sampler = factory()
    try:
        sampler.sample()
        cpu, wall = time.process_time(), time.perf_counter()
        for _sample in ticks(sampler, interval_s, seconds):
            pass
        return (time.process_time() - cpu) / (time.perf_counter() - wall)
    finally:
        sampler.close()


def fake_sample(tick: int, interval_s: float) -> Sample:
    """Two busy GPUs with their own new values each tick, as the real sampler produces them."""
    t = tick * interval_s
    gpus = tuple(
        GpuSample(
            index=i,
            name=("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 3090")[i],
            utilization_percent=float(90 + tick % 10),
            memory_used_bytes=20 * GIB + tick % 1000 * MIB,
            memory_total_bytes=24 * GIB,
            power_watts=400.0 + tick % 50,
            power_limit_watts=450.0,
            temperature_c=70.0 + tick % 5,
            sm_clock_mhz=2500.0 + tick % 20,
            memory_clock_mhz=10501.0,
            fan_percent=60.0 + tick % 3,
            pcie_rx_bytes_per_s=1e6 + tick,
            pcie_tx_bytes_per_s=5e5 + tick,
            throttle_reasons=("power_cap",) if tick % 7 == 0 else (),
            processes=(ProcessMemory(4242 + i, "python3", 20 * GIB),),
        )
        for i in range(2)
    )
    return Sample(t, 1.8e9 + t, gpus, float(tick % 100), 16 * GIB + tick, 64 * GIB)


def history_rss(interval_s: float, window_s: float = 3600.0) -> dict[str, float]:
    """RSS (MiB) before, after one simulated hour, and after a second one; run in a fresh process."""
    process = psutil.Process()
    history = History(window_s=window_s, interval_s=interval_s)
    per_hour = round(3600 / interval_s)
    gc.collect()
    before = process.memory_info().rss
    started = time.perf_counter()
    for tick in range(per_hour):
        history.append(fake_sample(tick, interval_s))
    append_s = time.perf_counter() - started
    gc.collect()
    one_hour = process.memory_info().rss
    for tick in range(per_hour, 2 * per_hour):
        history.append(fake_sample(tick, interval_s))
    gc.collect()
    two_hours = process.memory_info().rss
    return {
        "samples_kept": len(history),
        "first_hour_mib": (one_hour - before) / MIB,
        "second_hour_mib": (two_hours - one_hour) / MIB,
        "append_us": append_s / per_hour * 1e6,
    }


GUI_CASE = """
import json, os, sys, time
from PySide6.QtCore import QEventLoop, QSettings, QTimer
from rigcheck.gui.app import application
from rigcheck.gui.state import AppState
from rigcheck.gui.main_window import MainWindow
from rigcheck.core.catalog import load_catalog
from rigcheck.core.machine import CPU, Machine, Memory
interval, seconds = float(sys.argv[1]), float(sys.argv[2])
app = application()
settings = QSettings(sys.argv[3], QSettings.Format.IniFormat); settings.clear()
settings.setValue("monitor/interval", interval); settings.setValue("monitor/window", 300)
machine = Machine(cpu=CPU(logical_cores=1), memory=Memory(total_bytes=1), gpus=())
window = MainWindow(AppState(load_catalog(), settings), lambda: machine)
window.resize(1280, 800); window.show(); window.show_page("monitor")
loop = QEventLoop(); QTimer.singleShot(2000, loop.quit); loop.exec()   # settle
cpu0, wall0 = time.process_time(), time.perf_counter()
loop = QEventLoop(); QTimer.singleShot(int(seconds * 1000), loop.quit); loop.exec()
share = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
window.close()
print(json.dumps({"share": share}))
"""


def gui_cpu_per_second(interval_s: float, seconds: float) -> float:
    """CPU share of the whole app process (sampling thread, plots, event loop) with Monitor shown."""
    import tempfile

    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            [sys.executable, "-c", GUI_CASE, str(interval_s), str(seconds), f"{folder}/s.ini"],
            capture_output=True, text=True, env=env, check=False, timeout=600,
        )  # fmt: skip
    lines = done.stdout.strip().splitlines()
    if not lines:
        raise RuntimeError(done.stderr[-1500:])
    return float(json.loads(lines[-1])["share"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="sampling time per interval (default 10)")
    parser.add_argument("--history-case", type=float, help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args()
    if args.history_case is not None:
        print(json.dumps(history_rss(args.history_case)))
        return

    with Sampler() as sampler:
        first = sampler.sample()
        notes = sampler.notes
    if first.gpus:
        print(
            f"Sampling {len(first.gpus)} GPU(s): {', '.join(g.name for g in first.gpus)}, plus CPU and RAM."
        )
    else:
        print("No GPU on this machine: the sampler read CPU and RAM only (NVML absent or no GPUs).")
    for note in notes:
        print(f"  note: {note.probe}: {note.message}")

    print("\nSampler CPU time per sampled second (time.process_time / wall time):")
    print(f"{'interval':>9} {'CPU ms per s':>13} {'% of one core':>14}")
    for interval in (1.0, 0.1):
        share = sampler_cpu_per_second(interval, args.seconds)
        print(f"{interval:>7.1f} s {share * 1000:>13.2f} {share * 100:>13.3f}%")

    print("\nWhole app process with the Monitor page visible (offscreen; plots redrawn every tick):")
    print(f"{'interval':>9} {'% of one core':>14}")
    for interval in (1.0, 0.1):
        share = gui_cpu_per_second(interval, args.seconds)
        goal = " (goal < 1%: " + ("ok)" if share < 0.01 else "MISSED)") if interval == 1.0 else ""
        print(f"{interval:>7.1f} s {share * 100:>13.2f}%{goal}")

    print("\nHistory memory, 2 fake GPUs, one-hour window (RSS, fresh process per case):")
    print(f"{'interval':>9} {'samples kept':>13} {'first hour':>11} {'second hour':>12} {'make+append':>12}")
    for interval in (1.0, 0.1):
        done = subprocess.run(
            [sys.executable, __file__, "--history-case", str(interval)],
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )
        case = json.loads(done.stdout)
        print(
            f"{interval:>7.1f} s {case['samples_kept']:>13,} {case['first_hour_mib']:>8.1f} MB "
            f"{case['second_hour_mib']:>+9.1f} MB {case['append_us']:>9.1f} µs"
        )
    print("(first hour: the window filling up; second hour: growth once full, goal flat within 5 MB)")


if __name__ == "__main__":
    main()
