"""GUI responsiveness on the Upgrade page: how long each Upgrade action holds the GUI thread.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/gui_handlers_upgrade.py [--it]``. Every event
Qt delivers on the GUI thread is timed, as in ``gui_handlers.py`` (whose ``TimedApp`` this uses): the
longest single handler while an action runs and the action's wall time until its results are shown.
Target (issue 26): no handler over 50 ms. Machines: the RTX 4090, HGX and M2 Ultra fixtures.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from PySide6.QtCore import QEvent, QObject  # noqa: TID251 - a GUI benchmark
from PySide6.QtWidgets import QApplication  # noqa: TID251 - a GUI benchmark

from gui_handlers import FIXTURES, TARGET_MS, TimedApp, open_window


class CpuTimedApp(TimedApp):
    """Also the GUI thread's own CPU time per handler (``time.thread_time``): on a shared, loaded machine
    the wall time of a handler grows with the load, its CPU time much less."""

    def __init__(self, argv: list[str]) -> None:
        super().__init__(argv)
        self.longest_cpu = 0.0
        self._cpu_depth = 0

    def notify(self, receiver: QObject, event: QEvent) -> bool:
        self._cpu_depth += 1
        start = time.thread_time()
        try:
            return super().notify(receiver, event)
        finally:
            self._cpu_depth -= 1
            if self._cpu_depth == 0:
                self.longest_cpu = max(self.longest_cpu, time.thread_time() - start)

    def reset(self) -> None:
        super().reset()
        self.longest_cpu = 0.0


def main() -> int:
    italian = "--it" in sys.argv
    app = CpuTimedApp([sys.argv[0]])
    from rigcheck.gui.app import settle

    window, _scratch = open_window(italian)

    def action(name: str, do: Callable[[], Any]) -> tuple[str, float, float, float]:
        app.reset()
        start = time.perf_counter()
        failed: list[str] = []

        def run(_event: object) -> None:
            try:
                do()
            except (AttributeError, TypeError) as exc:  # an older page without this action
                failed.append(str(exc))

        QApplication.postEvent(window, QEvent(QEvent.Type.User))
        window.customEvent = run  # type: ignore[method-assign]
        settle(window)
        wall = time.perf_counter() - start
        if failed:
            return name + " (n/a on this version)", 0.0, 0.0, 0.0
        return name, app.longest * 1000, app.longest_cpu * 1000, wall * 1000

    def page() -> Any:
        return window.pages["upgrade"]

    def add(gpu_id: str) -> None:
        assert page().select_gpu(gpu_id), gpu_id
        page().add_selected()

    def replace(gpu_id: str) -> None:
        assert page().select_gpu(gpu_id), gpu_id
        page().replace_with_selected()

    rows = [
        action("Upgrade: first show (RTX 4090)", lambda: window.show_page("upgrade")),
        action("Upgrade: add an RTX 4090", lambda: add("nvidia-geforce-rtx-4090")),
        action("Upgrade: replace with an RTX 5090 (chart drawn)", lambda: replace("nvidia-geforce-rtx-5090")),
        action("Upgrade: workload to QLoRA", lambda: page().workload.setCurrentIndex(1)),
        action("Upgrade: Find the cheapest GPUs", page().find_button.click),
        action("Upgrade: What would it take? (qwen3-235b, 32k)",
               lambda: page().what_would_it_take("qwen3-235b-a22b", "inference", 32768)),
        action("Upgrade: open the HGX snapshot", lambda: window.open_snapshot(FIXTURES / "hgx-h100x8-2tb.json")),
        action("Upgrade: open the M2 Ultra snapshot", lambda: window.open_snapshot(FIXTURES / "m2-ultra-192gb.json")),
        action("Upgrade: Find machines (M2 Ultra)", page().find_button.click),
        action("Upgrade: Try this (first row)", lambda: page().options.cellWidget(0, 4).click()),
    ]  # fmt: skip
    width = max(len(r[0]) for r in rows)
    print(
        f"{'action':<{width}}  longest handler (wall / GUI-thread CPU)   wall   (target: none over {TARGET_MS:.0f} ms)"
    )
    worst = 0.0
    for name, longest, cpu, wall in rows:
        worst = max(worst, longest)
        flag = "" if longest <= TARGET_MS else "  ✘ over target"
        print(f"{name:<{width}}  {longest:8.1f} ms / {cpu:6.1f} ms  {wall:7.0f} ms{flag}")
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())} (wall times grow with it)")
    window.close()
    return 0 if worst <= TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
