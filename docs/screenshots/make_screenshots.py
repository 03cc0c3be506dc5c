"""Render the README's screenshots of the Overview, Compatibility, Monitor, Upgrade, Fit and Fleet pages
(issue 18).

Run from the repository root:
``QT_QPA_PLATFORM=offscreen .venv/bin/python docs/screenshots/make_screenshots.py``.
Machines are the snapshots in ``tests/fixtures/machines/``. The Monitor replay plays a *synthetic*
two-GPU recording written here (this machine has no GPU); its curves are made up, its columns are
exactly what ``rigcheck monitor --csv`` writes. Every other figure is the app's own.
"""

from __future__ import annotations

import csv
import math
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QSettings

from rigcheck.core.machine import Drivers, load_machine, save_machine
from rigcheck.core.monitor import GpuSample, Sample, columns, row
from rigcheck.gui import i18n
from rigcheck.gui.app import application, create_window, settle

ROOT = Path(__file__).resolve().parents[2]
MACHINES = ROOT / "tests" / "fixtures" / "machines"
OUT = Path(__file__).resolve().parent
GIB = 1024**3


def synthetic_recording(path: Path, seconds: int = 900) -> Path:
    """Two GPUs under a made-up training load, one row a second, as the CLI writes them."""

    def sample(n: int) -> Sample:
        gpus = tuple(
            GpuSample(
                index=i,
                name="GPU",
                utilization_percent=max(0.0, min(100.0, 55 + 40 * math.sin(n / 45 + i))),
                memory_used_bytes=int((12 + 8 * math.sin(n / 120 + i)) * GIB),
                memory_total_bytes=24 * GIB,
                power_watts=260 + 170 * math.sin(n / 45 + i),
                power_limit_watts=(450.0, 350.0)[i],
                temperature_c=62 + 14 * math.sin(n / 90 + i),
                temperature_slowdown_c=(90.0, 95.0)[i],
                sm_clock_mhz=2300 + 200 * math.sin(n / 30 + i),
            )
            for i in range(2)
        )
        return Sample(n, 1.8e9 + n, gpus, 35 + 20 * math.sin(n / 60), 41 * GIB, 128 * GIB)

    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, columns(sample(0)))
        writer.writeheader()
        for n in range(seconds):
            writer.writerow({k: "" if v is None else v for k, v in row(sample(n)).items()})
    return path


def fleet_folder(folder: Path) -> Path:
    """Six reports: drivers 470, 550 (2) and 580 (3): no majority, still drift."""
    base = load_machine(MACHINES / "rtx4090-64gb.json")
    for i, driver in enumerate(
        ["470.82.01", "550.54.14", "550.54.14", "580.65.06", "580.65.06", "580.65.06"]
    ):
        machine = replace(
            base, host=replace(base.host, hostname=f"lab-{i + 1:02d}"), drivers=Drivers(nvidia=driver)
        )
        save_machine(machine, folder / f"lab-{i + 1:02d}.json")
    return folder


def shoot(
    name: str, machine: str, page: str, size: tuple[int, int], *, language: str = "en", setup=None
) -> None:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory() as scratch:
        settings = QSettings(str(Path(scratch) / "s.ini"), QSettings.Format.IniFormat)
        settings.setValue("ui/language", language)
        window = create_window(settings, snapshot=load_machine(MACHINES / machine), snapshot_name=machine)
        window.setMinimumSize(0, 0)
        window.resize(*size)
        window.show()
        window.show_page(page)
        settle(window)
        if setup is not None:
            setup(window.pages[page], Path(scratch))
            settle(window)
        target = OUT / f"{name}.png"
        if not window.grab().save(str(target), "PNG"):
            raise SystemExit(f"{target}: cannot write")
        print(target.relative_to(ROOT))
        window.close()
    i18n.set_language("en")


def main() -> None:
    application(sys.argv[1:])

    def replay(page, scratch: Path) -> None:  # type: ignore[no-untyped-def]
        from PySide6.QtWidgets import QApplication

        page.open_recording(synthetic_recording(scratch / "lab-box-run.csv"))
        while page.busy():  # read on the pool; its result arrives as a queued signal
            page.state.pool.waitForDone(50)
            QApplication.processEvents()
        page.slider.setValue(700)

    def add_4090(page, _scratch: Path) -> None:  # type: ignore[no-untyped-def]
        page.select_gpu("nvidia-geforce-rtx-4090")
        page.add_button.click()

    def add_4090_and_scroll(page, scratch: Path) -> None:  # type: ignore[no-untyped-def]
        from PySide6.QtWidgets import QApplication, QScrollArea

        add_4090(page, scratch)
        settle(page.window())
        area = page.findChild(QScrollArea)
        QApplication.processEvents()
        area.verticalScrollBar().setValue(area.verticalScrollBar().maximum())

    def open_fleet(page, scratch: Path) -> None:  # type: ignore[no-untyped-def]
        page.open_folder(fleet_folder(scratch))

    def psu_1000(page, _scratch: Path) -> None:  # type: ignore[no-untyped-def]
        page.psu.setValue(1000)

    shoot("overview-rtx4090", "rtx4090-64gb.json", "overview", (1280, 800), setup=psu_1000)
    shoot("overview-m2-ultra", "m2-ultra-192gb.json", "overview", (1280, 800))
    shoot("overview-cpu-only-it-1024", "cpu-only-32gb.json", "overview", (1024, 700), language="it")
    shoot("overview-hgx-1920", "hgx-h100x8-2tb.json", "overview", (1920, 1080))
    shoot("compat-two-gpus", "two-gpus-128gb.json", "compat", (1280, 800))
    shoot("compat-cpu-only-it-1024", "cpu-only-32gb.json", "compat", (1024, 700), language="it")
    shoot("monitor-replay", "two-gpus-128gb.json", "monitor", (1920, 1080), setup=replay)
    shoot(
        "monitor-replay-it-1024", "two-gpus-128gb.json", "monitor", (1024, 700), language="it", setup=replay
    )
    shoot("monitor-snapshot", "m2-ultra-192gb.json", "monitor", (1024, 700))
    shoot("upgrade", "rtx4090-64gb.json", "upgrade", (1280, 800), setup=add_4090)
    shoot("upgrade-costs", "rtx4090-64gb.json", "upgrade", (1280, 800), setup=add_4090_and_scroll)
    shoot("upgrade-hgx-it-1024", "hgx-h100x8-2tb.json", "upgrade", (1024, 700), language="it")
    shoot("fit-rtx4090", "rtx4090-64gb.json", "fit", (1280, 800))
    shoot("fit-hgx-1920", "hgx-h100x8-2tb.json", "fit", (1920, 1080))
    shoot("fit-m2-ultra-it-1024", "m2-ultra-192gb.json", "fit", (1024, 700), language="it")
    shoot("fleet", "rtx4090-64gb.json", "fleet", (1280, 800), setup=open_fleet)
    shoot("fleet-empty-it-1024", "cpu-only-32gb.json", "fleet", (1024, 700), language="it")
    shoot("models-two-gpus-1024", "two-gpus-128gb.json", "models", (1024, 700))
    shoot("overview-m2-ultra-it-1920", "m2-ultra-192gb.json", "overview", (1920, 1080), language="it")
    shoot("compat-hgx-it-1920", "hgx-h100x8-2tb.json", "compat", (1920, 1080), language="it")


if __name__ == "__main__":
    main()
