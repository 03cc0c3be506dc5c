"""What users install: the built wheel in a fresh virtual environment outside the checkout.

The rest of the suite runs the editable checkout, which cannot see a package missing from the wheel
(``rigcheck.gui.pages`` once was) or a resource left out of it. Here the wheel is built, installed with
its dependencies into a new venv in a temporary folder, and every headless command and every page of
the app is run from there, with the checkout nowhere on ``sys.path``. ``packaging/smoke_test.py``
runs the same checks on the PyInstaller bundle.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.installed import check_every_page, check_headless_commands

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow, pytest.mark.installed]


class Installed:
    """A fresh venv holding the wheel; ``run`` calls its ``rigcheck`` from a throw-away folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        bin_dir = folder / "venv" / ("Scripts" if os.name == "nt" else "bin")
        self.python = bin_dir / ("python.exe" if os.name == "nt" else "python")
        self.rigcheck = bin_dir / ("rigcheck.exe" if os.name == "nt" else "rigcheck")
        self.work = folder / "work"
        self.work.mkdir()
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        self.env.update(
            QT_QPA_PLATFORM="offscreen",
            XDG_CONFIG_HOME=str(folder / "config"),  # never the user's settings, catalog overlay or cache
            XDG_CACHE_HOME=str(folder / "cache"),
            XDG_DATA_HOME=str(folder / "data"),
            HOME=str(folder / "home"),
        )

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(self.rigcheck), *args],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.work,
            timeout=180,
            check=False,
        )
        assert "Traceback" not in done.stderr, f"rigcheck {' '.join(args)}:\n{done.stderr}"
        assert done.returncode == 0, f"rigcheck {' '.join(args)} exited {done.returncode}:\n{done.stderr}"
        return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    folder = tmp_path_factory.mktemp("installed")
    assert ROOT not in folder.parents, "the venv must live outside the checkout"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(folder / "dist")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (folder / "dist").glob("rigcheck-*.whl")
    venv.EnvBuilder(with_pip=True).create(folder / "venv")
    box = Installed(folder)
    done = subprocess.run(
        [str(box.python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    yield box


def test_the_installed_package_is_the_wheel_not_the_checkout(installed: Installed) -> None:
    where = subprocess.run(
        [str(installed.python), "-c", "import rigcheck.gui.pages.upgrade as u; print(u.__file__)"],
        capture_output=True,
        text=True,
        env=installed.env,
        cwd=installed.work,
        timeout=60,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(installed.folder / "venv"), where


def test_headless_commands(installed: Installed) -> None:
    check_headless_commands(installed.run, installed.work)


def test_every_page_renders(installed: Installed) -> None:
    check_every_page(installed.run, installed.folder / "shots")
