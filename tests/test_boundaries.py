"""The Qt boundary: only rigcheck.gui may import PySide6, shiboken6 or pyqtgraph.

Checked three ways: ruff's TID251 rule over the source (and proof that the rule bites), every core
module imported in a fresh interpreter without Qt showing up, and the headless CLI working when Qt
cannot be imported at all, as on a server without PySide6.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
QT_MODULES = ("PySide6", "shiboken6", "pyqtgraph")

pytestmark = pytest.mark.slow


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def ruff(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        input=stdin,
        timeout=120,
        check=False,
    )


def test_ruff_bans_qt_outside_gui() -> None:
    done = ruff("check", "--select", "TID251", "desktop", "tests", "benchmarks")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("module", QT_MODULES)
def test_the_ban_bites(module: str) -> None:
    for path in ("desktop/rigcheck/core/leak.py", "desktop/rigcheck/cli/__init__.py"):
        done = ruff("check", "--select", "TID251", "--stdin-filename", path, "-", stdin=f"import {module}\n")
        assert done.returncode == 1, f"{module} in {path} was not flagged"
        assert "TID251" in done.stdout
    allowed = ruff(
        "check",
        "--select",
        "TID251",
        "--stdin-filename",
        "desktop/rigcheck/gui/ok.py",
        "-",
        stdin=f"import {module}\n",
    )
    assert allowed.returncode == 0


def test_every_core_module_imports_without_qt() -> None:
    done = run_python(
        """
        import importlib, pkgutil, sys
        import rigcheck.core, rigcheck.cli
        for info in pkgutil.walk_packages(rigcheck.core.__path__, "rigcheck.core."):
            importlib.import_module(info.name)
        leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("PySide6", "shiboken6", "pyqtgraph"))
        print("LEAKED", leaked)
        """
    )
    assert done.returncode == 0, done.stderr
    assert "LEAKED []" in done.stdout


BLOCK_QT = """
import sys
from importlib.abc import MetaPathFinder

class BlockQt(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("PySide6", "shiboken6", "pyqtgraph"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, BlockQt())
"""


def test_audit_works_with_pyside6_uninstalled() -> None:
    done = run_python(
        BLOCK_QT
        + """
from rigcheck.cli import main
code = main(["audit"])
print("EXIT", code)
"""
    )
    assert done.returncode == 0, done.stderr
    assert "EXIT 0" in done.stdout
    assert "RigCheck audit" in done.stdout


def test_gui_without_pyside6_is_one_line_and_status_2() -> None:
    done = run_python(
        BLOCK_QT
        + """
from rigcheck.cli import main
print("EXIT", main([]))
"""
    )
    assert "EXIT 2" in done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("rigcheck: error: the desktop app needs PySide6")
    assert "Traceback" not in done.stderr
