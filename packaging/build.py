"""Build the RigCheck bundle for this OS with PyInstaller, check it, and say how big and how fast it is.

    python packaging/build.py            # icons (if missing), bundle in dist/rigcheck/, smoke test
    python packaging/build.py icons      # re-render resources/icons/hicolor/*/apps/*.png from the SVG
    python packaging/build.py --no-test  # bundle only

Needs the ``build`` extra (``pip install -e '.[build,dev]'``). The result is ``dist/rigcheck/`` (one
folder with the ``rigcheck`` executable) and, on Linux, ``dist/rigcheck-<version>-linux-<arch>.tar.gz``;
on macOS also ``dist/RigCheck.app``. See packaging/README.md for Windows and macOS.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "packaging" / "rigcheck.spec"
SVG = ROOT / "resources" / "icons" / "rigcheck.svg"
HICOLOR = ROOT / "resources" / "icons" / "hicolor"
APP_ID = "io.github.rigcheck.RigCheck"
ICON_SIZES = (16, 32, 48, 64, 128, 256)


def project() -> tuple[str, str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return meta["name"], meta["version"]


def render_icons() -> list[Path]:
    """Render the app's SVG into the hicolor theme's PNG sizes, plus the scalable SVG itself."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt  # noqa: TID251 - a build step, not the app
    from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: TID251
    from PySide6.QtSvg import QSvgRenderer  # noqa: TID251

    _app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])
    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        raise SystemExit(f"build.py: cannot read {SVG}")
    written = []
    for size in ICON_SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        target = HICOLOR / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(target), "PNG", 9):
            raise SystemExit(f"build.py: cannot write {target}")
        written.append(target)
    scalable = HICOLOR / "scalable" / "apps" / f"{APP_ID}.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SVG, scalable)
    written.append(scalable)
    return written


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def timed(command: list[str], env: dict[str, str], runs: int = 5) -> float:
    """Median wall-clock seconds of ``command`` over fresh processes (after one warm-up run)."""
    times = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        subprocess.run(command, env=env, capture_output=True, check=True, timeout=120)  # noqa: S603
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:])


def measure(bundle: Path) -> None:
    exe = bundle / ("rigcheck.exe" if sys.platform == "win32" else "rigcheck")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    size = folder_size(bundle)
    print(f"bundle: {bundle} — {size / 2**20:.1f} MiB in {sum(1 for _ in bundle.rglob('*'))} entries")
    with tempfile.TemporaryDirectory() as shots:
        gui = [str(exe), "gui", "--screenshot", shots, "--page", "overview"]
        print(f"start: --version {timed([str(exe), '--version'], env) * 1000:.0f} ms, ", end="")
        print(f"audit --json {timed([str(exe), 'audit', '--json'], env) * 1000:.0f} ms, ", end="")
        print(f"GUI to the Overview PNG {timed(gui, env) * 1000:.0f} ms (medians of 5)")


def archive(bundle: Path, name: str, version: str) -> Path:
    machine = platform.machine().lower() or "unknown"
    target = bundle.parent / f"{name}-{version}-linux-{machine}.tar.gz"
    with tarfile.open(target, "w:gz") as tar:
        tar.add(bundle, arcname=f"{name}-{version}")
    print(f"archive: {target} — {target.stat().st_size / 2**20:.1f} MiB")
    return target


def smoke_test(bundle: Path) -> int:
    env = dict(os.environ, RIGCHECK_BUNDLE=str(bundle))
    command = [sys.executable, "-m", "pytest", "-m", "bundle", "-p", "no:cacheprovider", "-q"]
    command.append(str(ROOT / "packaging" / "smoke_test.py"))
    return subprocess.run(command, env=env, cwd=ROOT, check=False).returncode  # noqa: S603


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("what", nargs="?", choices=("bundle", "icons"), default="bundle")
    parser.add_argument("--no-test", action="store_true", help="skip the smoke test")
    parser.add_argument("--no-measure", action="store_true", help="skip the size and start-time figures")
    args = parser.parse_args(argv)

    if args.what == "icons" or not all(
        (HICOLOR / f"{s}x{s}" / "apps" / f"{APP_ID}.png").exists() for s in ICON_SIZES
    ):
        for path in render_icons():
            print(f"icon: {path.relative_to(ROOT)}")
        if args.what == "icons":
            return 0

    name, version = project()
    dist, work = ROOT / "dist", ROOT / "build" / "pyinstaller"
    print(f"building {name} {version} for {sys.platform} with {sys.executable}")
    command = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN"]
    command += ["--distpath", str(dist), "--workpath", str(work), str(SPEC)]
    if subprocess.run(command, cwd=ROOT, check=False).returncode != 0:  # noqa: S603
        return 1
    bundle = dist / name
    if sys.platform.startswith("linux"):
        archive(bundle, name, version)
    if not args.no_measure:
        measure(bundle)
    return 0 if args.no_test else smoke_test(bundle)


if __name__ == "__main__":
    raise SystemExit(main())
