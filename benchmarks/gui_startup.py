"""GUI speed: time to the first rendered page against a bare PySide6 window, and slider-to-chart time.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/gui_startup.py [--pages]``. Targets (from the
desktop issue): the first page at most 1.3× a bare window's time in the same run; a context-slider move to a
redrawn chart under 16 ms median; the Monitor page, first shown, painted with its first live sample
within 1.5× a bare window's first render (issue 18); with ``--pages``, every page opened first (the app
started on it: its imports, building and first paint) within 1.5× the bare window (issue 26 Build 5), and
whether pyqtgraph was imported by then, and when it is complete: the window first shows each page's title
while the catalog loads on a worker, and the page itself once it is in ("complete": every pool job done,
the page filled in and painted). Each start is a fresh process, so imports are counted.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "tests" / "fixtures" / "machines" / "rtx4090-64gb.json"

BARE = """
import time; t0 = time.perf_counter()
from PySide6.QtWidgets import QApplication, QMainWindow, QLabel
app = QApplication([])
w = QMainWindow(); w.setCentralWidget(QLabel("hello")); w.resize(1280, 800); w.show()
app.processEvents(); w.grab()
print((time.perf_counter() - t0) * 1000)
"""

RIGCHECK = f"""
import time; t0 = time.perf_counter()
from PySide6.QtCore import QSettings
from rigcheck.gui.app import application, create_window
from rigcheck.core.machine import load_machine
app = application()
settings = QSettings({str(ROOT / ".bench-gui.ini")!r}, QSettings.Format.IniFormat); settings.clear()
w = create_window(settings, snapshot=load_machine({str(SNAPSHOT)!r}), snapshot_name="bench")
w.resize(1280, 800); w.show(); app.processEvents(); w.grab()
print((time.perf_counter() - t0) * 1000)
w.close()
"""

MONITOR = f"""
import sys, time
from PySide6.QtCore import QSettings
from rigcheck.gui.app import application, create_window
from rigcheck.core.machine import load_machine
app = application()
settings = QSettings({str(ROOT / ".bench-gui.ini")!r}, QSettings.Format.IniFormat); settings.clear()
w = create_window(settings, snapshot=load_machine({str(SNAPSHOT)!r}), snapshot_name="bench")
w.resize(1280, 800); w.show(); app.processEvents(); w.grab()
deadline = time.perf_counter() + 1.0  # a user's first click comes after the app's background preload
while time.perf_counter() < deadline:
    app.processEvents(); w.state.pool.waitForDone(20)
w.state.set_machine(w.state.machine, "This computer", True)  # live: the real sampler
before = "pyqtgraph" in sys.modules
t0 = time.perf_counter()
w.show_page("monitor"); page = w.pages["monitor"]
while len(page.history) < 1:
    app.processEvents()
app.processEvents(); w.grab()
print((time.perf_counter() - t0) * 1000, int(before), int("pyqtgraph" in sys.modules))
w.close()
"""

PAGE = f"""
import sys, time; t0 = time.perf_counter()
from PySide6.QtCore import QSettings
from rigcheck.gui.app import application, create_window
from rigcheck.core.machine import load_machine
app = application()
settings = QSettings({str(ROOT / ".bench-gui.ini")!r}, QSettings.Format.IniFormat); settings.clear()
w = create_window(settings, snapshot=load_machine({str(SNAPSHOT)!r}), snapshot_name="bench")
w.resize(1280, 800); w.show_page(sys.argv[1]); w.show(); app.processEvents(); w.grab()
first, graph = (time.perf_counter() - t0) * 1000, int("pyqtgraph" in sys.modules)
from rigcheck.gui.app import settle
settle(w); w.grab()
print(first, graph, (time.perf_counter() - t0) * 1000)
w.close()
"""
PAGES = ("overview", "models", "fit", "compat", "monitor", "upgrade", "fleet")

SLIDER = f"""
import statistics, time
from PySide6.QtCore import QSettings
from rigcheck.gui.app import application, create_window
from rigcheck.core.machine import load_machine
app = application()
settings = QSettings({str(ROOT / ".bench-gui.ini")!r}, QSettings.Format.IniFormat); settings.clear()
w = create_window(settings, snapshot=load_machine({str(SNAPSHOT)!r}), snapshot_name="bench")
w.resize(1280, 800); w.show(); w.show_page("fit"); app.processEvents()
page = w.pages["fit"]
times = []
for value in list(range(0, 1000, 10)) * 2:
    t = time.perf_counter()
    page.context.setValue(value)
    page.chart.repaint()
    times.append((time.perf_counter() - t) * 1000)
print(statistics.median(times), max(times))
w.close()
"""


def run(code: str, *args: str) -> str:
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, check=False
    )
    lines = done.stdout.strip().splitlines()
    if not lines:
        raise RuntimeError(done.stderr[-2000:])
    return lines[-1]


def main() -> None:
    bare, ours = [], []
    for _ in range(5):
        bare.append(float(run(BARE)))
        ours.append(float(run(RIGCHECK)))
    b, o = statistics.median(bare), statistics.median(ours)
    ratio = o / b
    print(f"bare PySide6 window, first render:   {b:7.0f} ms median of 5")
    print(f"RigCheck Overview (snapshot), first: {o:7.0f} ms median of 5")
    print(f"ratio: {ratio:.2f}× (target ≤ 1.3×: {'ok' if ratio <= 1.3 else 'MISSED'})")
    monitor = [run(MONITOR).split() for _ in range(5)]
    m = statistics.median(float(line[0]) for line in monitor)
    loaded = any(line[2] == "1" for line in monitor)
    print(f"Monitor page, live, first shown to first painted sample: {m:7.0f} ms median of 5 "
          f"({m / b:.2f}× the bare window; target ≤ 1.5×: {'ok' if m <= 1.5 * b else 'MISSED'}; "
          f"pyqtgraph imported: {'yes' if loaded else 'no'})")  # fmt: skip
    if "--pages" in sys.argv:
        for page in PAGES:
            lines, bares = [], []
            for _ in range(5):  # a bare window beside each start: the box's load changes from page to page
                bares.append(float(run(BARE)))
                lines.append(run(PAGE, page).split())
            b = statistics.median(bares)
            t = statistics.median(float(line[0]) for line in lines)
            graph = any(line[1] == "1" for line in lines)
            whole = statistics.median(float(line[2]) for line in lines)
            print(f"first page {page:<9} {t:7.0f} ms median of 5 ({t / b:.2f}× the bare window; target ≤ 1.5×: "
                  f"{'ok' if t <= 1.5 * b else 'MISSED'}; pyqtgraph imported: {'yes' if graph else 'no'}); "
                  f"complete {whole:5.0f} ms; bare {b:4.0f} ms")  # fmt: skip
    median, worst = map(float, run(SLIDER).split())
    print(f"context slider move → recomputed and repainted: {median:.2f} ms median, {worst:.1f} ms worst "
          f"(target < 16 ms median: {'ok' if median < 16 else 'MISSED'})")  # fmt: skip
    (ROOT / ".bench-gui.ini").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
