"""Render the README's screenshots of the Overview, Compatibility, Monitor, Upgrade, Fit and Fleet pages
(issue 18), the curated review set beside them (issue 26), or the whole review set into a folder.

Run from the repository root:
``QT_QPA_PLATFORM=offscreen .venv/bin/python docs/screenshots/make_screenshots.py`` (README and curated set,
into docs/screenshots/), or ``… make_screenshots.py --all FOLDER [--machines a,b] [--langs it]
[--sizes 1024,2x] [--pages fit,models]``: every page for the eight review machines (the five fixtures, a
DGX Spark whose GPU reports no memory, a Strix Halo and an RTX 4060 laptop) in English and Italian at
1024×700, 1920×1080, 1366×768 at 2× scale in a dark palette, and 900×600, named
``<machine>-<lang>-<size>-<page>.png``. The 2× renders run in a child process (Qt's scale factor is set
before the application starts).

Machines are the snapshots in ``tests/fixtures/machines/`` (and its ``platforms/``); the laptop is the
catalog's RTX 4060 Laptop GPU on a 32 GB host (``rigcheck upgrade``'s simulation of it, labelled so).
The Monitor replay plays a *synthetic* two-GPU recording written here (this machine has no GPU); its
curves are made up, its columns are exactly what ``rigcheck monitor --csv`` writes. Every other figure is
the app's own.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from rigcheck.core.catalog import load_catalog
from rigcheck.core.machine import CPU, Drivers, Host, Machine, Memory, load_machine, save_machine
from rigcheck.core.monitor import GpuSample, Sample, columns, row
from rigcheck.core.whatif import simulate
from rigcheck.gui import i18n
from rigcheck.gui.app import application, create_window, settle

ROOT = Path(__file__).resolve().parents[2]
MACHINES = ROOT / "tests" / "fixtures" / "machines"
OUT = Path(__file__).resolve().parent
GIB = 1024**3
PAGES = ("overview", "models", "fit", "compat", "monitor", "upgrade", "fleet")
#: the review machines: name -> snapshot (None: built here)
REVIEW_MACHINES: dict[str, Path | None] = {
    "rtx4090": MACHINES / "rtx4090-64gb.json",
    "two-gpus": MACHINES / "two-gpus-128gb.json",
    "hgx": MACHINES / "hgx-h100x8-2tb.json",
    "m2-ultra": MACHINES / "m2-ultra-192gb.json",
    "cpu-only": MACHINES / "cpu-only-32gb.json",
    "dgx-spark": MACHINES / "platforms" / "dgx-spark.json",
    "strix-halo": MACHINES / "platforms" / "strix-halo-rocm7.json",
    "rtx4060-laptop": None,
}
#: size name -> (width, height, scale, dark palette)
REVIEW_SIZES: dict[str, tuple[int, int, int, bool]] = {
    "1024": (1024, 700, 1, False),
    "1920": (1920, 1080, 1, False),
    "2x": (1366, 768, 2, True),
    "900": (900, 600, 1, False),
}
#: the review set committed beside the README's pictures: every page at every size, every machine and
#: both languages at least once (machine, language, size, page)
CURATED: tuple[tuple[str, str, str, str], ...] = (
    *(("rtx4090", "en", "1024", p) for p in PAGES),
    *(("two-gpus", "it", "1024", p) for p in PAGES),
    *(("hgx", "en", "1920", p) for p in PAGES),
    *(("m2-ultra", "it", "1920", p) for p in PAGES),
    *(("rtx4060-laptop", "en", "2x", p) for p in PAGES),
    *(("strix-halo", "it", "2x", p) for p in ("overview", "fit")),
    *(("cpu-only", "it", "900", p) for p in PAGES),
    *(("dgx-spark", "en", "900", p) for p in ("overview", "models", "fit", "upgrade")),
    ("dgx-spark", "it", "1920", "overview"),
    ("dgx-spark", "en", "1024", "fit"),
    ("strix-halo", "en", "1024", "models"),
    ("rtx4060-laptop", "it", "1024", "fit"),
)


def laptop_machine() -> Machine:
    """The catalog's RTX 4060 Laptop GPU (8 GB) on a 16-thread, 32 GB host, as ``rigcheck upgrade``
    simulates it (no probe of a real laptop is in the fixtures)."""
    catalog = load_catalog(use_overlay=False)
    gpu = catalog.gpu("nvidia-geforce-rtx-4060-laptop")
    assert gpu is not None
    bare = Machine(
        cpu=CPU(logical_cores=16, model="laptop CPU (simulated)"),
        memory=Memory(total_bytes=32 * GIB),
        gpus=(),
        host=Host(hostname="rtx4060-laptop (simulated)", os="windows", os_version="Windows 11"),
    )
    return simulate(bare, [gpu], 32)


def review_machine(name: str) -> Machine:
    path = REVIEW_MACHINES[name]
    return load_machine(path) if path is not None else laptop_machine()


def dark_palette() -> QPalette:
    """A dark palette as a desktop's dark theme sets it (the colours tests/gui/test_layouts.py checks)."""
    palette = QPalette()
    for role, colour in (
        (QPalette.ColorRole.Window, "#1f2125"), (QPalette.ColorRole.WindowText, "#e6e6e6"),
        (QPalette.ColorRole.Base, "#17181b"), (QPalette.ColorRole.AlternateBase, "#202226"),
        (QPalette.ColorRole.Text, "#e6e6e6"), (QPalette.ColorRole.Button, "#2a2d32"),
        (QPalette.ColorRole.ButtonText, "#e6e6e6"), (QPalette.ColorRole.PlaceholderText, "#9aa0a6"),
        (QPalette.ColorRole.Highlight, "#3d7bd9"), (QPalette.ColorRole.HighlightedText, "#ffffff"),
        (QPalette.ColorRole.ToolTipBase, "#2a2d32"), (QPalette.ColorRole.ToolTipText, "#e6e6e6"),
        (QPalette.ColorRole.Mid, "#4a4e55"), (QPalette.ColorRole.Dark, "#111214"),
        (QPalette.ColorRole.Light, "#3a3d43"), (QPalette.ColorRole.Midlight, "#33363c"),
        (QPalette.ColorRole.Shadow, "#000000"),
    ):  # fmt: skip
        palette.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6f747c"))  # greyed, still legible
    return palette


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
        _settle(window, name)
        if setup is not None:
            setup(window.pages[page], Path(scratch))
            _settle(window, name)
        target = OUT / f"{name}.png"
        if not window.grab().save(str(target), "PNG"):
            raise SystemExit(f"{target}: cannot write")
        print(target.relative_to(ROOT))
        window.close()
    i18n.set_language("en")


def _settle(window, what: str) -> None:  # type: ignore[no-untyped-def]
    """Wait for the window's work (the probe, pool jobs, every built page's deferred steps); a page still
    busy after two minutes (a loaded machine) is said on stderr, never grabbed silently half-drawn."""
    if not settle(window, 120.0):
        print(
            f"warning: {what}: the page's work had not finished; this picture may be stale", file=sys.stderr
        )


def render_set(
    folder: Path, shots: list[tuple[str, str, str, str]], recording: Path, fleet: Path, names: str = "review"
) -> list[Path]:
    """Render ``shots`` (machine, language, size, page) into ``folder``: one window per machine, language
    and size, every page of it asked for shown once its work has finished. All sizes share this process's
    scale factor. ``names``: "review" (machine-lang-size-page) or "curated" (page-machine-lang-size)."""
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    groups: dict[tuple[str, str, str], list[str]] = {}
    for machine, language, size, page in shots:
        groups.setdefault((machine, language, size), []).append(page)
    for (machine, language, size), pages in groups.items():
        width, height, _scale, dark = REVIEW_SIZES[size]
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        app.setPalette(dark_palette() if dark else app.style().standardPalette())
        with tempfile.TemporaryDirectory() as scratch:
            settings = QSettings(str(Path(scratch) / "s.ini"), QSettings.Format.IniFormat)
            settings.setValue("ui/language", language)
            window = create_window(settings, snapshot=review_machine(machine), snapshot_name=machine)
            window.setMinimumSize(0, 0)
            window.resize(width, height)
            window.show()
            _settle(window, f"{machine} {language} {size}")
            for page in pages:
                window.show_page(page)
                _settle(window, f"{machine} {language} {size} {page}")
                if page == "monitor" and machine in ("two-gpus", "hgx", "rtx4090"):
                    window.pages[page].open_recording(recording)  # type: ignore[attr-defined]
                    # read on the pool: the slider has its range once the rows are in (set before, the
                    # value was dropped and every replay showed its last second)
                    _settle(window, f"{machine} {language} {size} {page}")
                    window.pages[page].slider.setValue(700)  # type: ignore[attr-defined]
                    _settle(window, f"{machine} {language} {size} {page}")
                if page == "models":
                    _select_model(window.pages[page], "qwen3.6-27b")
                if page == "fleet":
                    window.pages[page].open_folder(fleet)  # type: ignore[attr-defined]
                    _settle(window, f"{machine} {language} {size} {page}")
                stem = (
                    f"{machine}-{language}-{size}-{page}"
                    if names == "review"
                    else f"{page}-{machine}-{language}-{size}"
                )
                target = folder / f"{stem}.png"
                if not window.grab().save(str(target), "PNG"):
                    raise SystemExit(f"{target}: cannot write")
                written.append(target)
                print(target)
            window.close()
        i18n.set_language("en")
    return written


def _select_model(page, model_id: str) -> None:  # type: ignore[no-untyped-def]
    """Select ``model_id`` in the Models table and wait for its detail pane (worked out on the pool)."""
    import time

    from PySide6.QtCore import QItemSelectionModel

    chosen = None
    for index in range(page.proxy.rowCount()):
        if page.proxy.spec(index).id == model_id:
            flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            page.table.selectionModel().select(page.proxy.index(index, 0), flags)
            chosen = page.proxy.index(index, 0)
            break
    deadline = time.monotonic() + 30
    while page.detail.busy() and time.monotonic() < deadline:
        QApplication.processEvents()
        page.state.pool.waitForDone(20)
    settle(page.window())
    page.table.scrollTo(chosen, page.table.ScrollHint.PositionAtCenter)
    QApplication.processEvents()


def _fleet(scratch: Path) -> Path:
    folder = scratch / "fleet"
    folder.mkdir()
    return fleet_folder(folder)


def _render_child(args: argparse.Namespace, folder: Path, shots: list[tuple[str, str, str, str]]) -> None:
    """The 2× renders, in a child process started with QT_SCALE_FACTOR=2."""
    spec = ";".join(",".join(s) for s in shots)
    env = dict(os.environ, QT_SCALE_FACTOR="2")
    command = [sys.executable, __file__, "--child", str(folder), "--shots", spec, "--names", args.names]
    subprocess.run(command, env=env, check=True)  # noqa: S603 - this script, with arguments made here


def review(args: argparse.Namespace) -> None:
    """--all FOLDER / --curated: the review shots, the 2× ones in a child process."""
    if args.curated:
        shots = list(CURATED)
        folder = OUT
        args.names = "curated"
    else:
        machines = args.machines.split(",") if args.machines else list(REVIEW_MACHINES)
        langs = args.langs.split(",") if args.langs else ["en", "it"]
        sizes = args.sizes.split(",") if args.sizes else list(REVIEW_SIZES)
        pages = args.pages.split(",") if args.pages else list(PAGES)
        shots = [(m, lang, size, p) for m in machines for lang in langs for size in sizes for p in pages]
        folder = Path(args.all)
        args.names = "review"
    here = [s for s in shots if REVIEW_SIZES[s[2]][2] == 1]
    scaled = [s for s in shots if REVIEW_SIZES[s[2]][2] != 1]
    with tempfile.TemporaryDirectory() as scratch:
        recording = synthetic_recording(Path(scratch) / "lab-box-run.csv")
        render_set(folder, here, recording, _fleet(Path(scratch)), args.names)
    if scaled:
        _render_child(args, folder, scaled)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", metavar="FOLDER", help="every page, machine, language and size, into FOLDER")
    parser.add_argument(
        "--curated", action="store_true", help="only the curated review set, into docs/screenshots"
    )
    parser.add_argument("--machines", help="with --all: these review machines only (comma-separated)")
    parser.add_argument("--langs", help="with --all: en, it or en,it")
    parser.add_argument("--sizes", help="with --all: 1024, 1920, 2x, 900 (comma-separated)")
    parser.add_argument("--pages", help="with --all: these pages only (comma-separated)")
    parser.add_argument("--child", metavar="FOLDER", help=argparse.SUPPRESS)
    parser.add_argument("--shots", help=argparse.SUPPRESS)
    parser.add_argument("--names", default="review", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    application(rest)
    if args.child:
        shots = [tuple(s.split(",")) for s in args.shots.split(";")]
        with tempfile.TemporaryDirectory() as scratch:
            recording = synthetic_recording(Path(scratch) / "lab-box-run.csv")
            render_set(Path(args.child), shots, recording, _fleet(Path(scratch)), args.names)  # type: ignore[arg-type]
        return
    if args.all or args.curated:
        review(args)
        return
    readme_set()
    review(argparse.Namespace(**{**vars(args), "curated": True}))


def readme_set() -> None:
    """The README's pictures (their names are the README's)."""

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
