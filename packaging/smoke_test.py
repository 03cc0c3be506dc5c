"""Smoke test of a frozen RigCheck bundle: it starts, renders, audits, and says nothing alarming.

Not part of the normal suite (pytest's testpaths is ``tests/``, and every test here is marked
``bundle`` and skipped unless ``RIGCHECK_BUNDLE`` names a built bundle folder). ``make dist`` and
``python packaging/build.py`` run it on the bundle they have just built:

    RIGCHECK_BUNDLE=dist/rigcheck python -m pytest -m bundle packaging/smoke_test.py
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# The checks shared with tests/test_installed.py (the wheel in a fresh venv) live in tests/fakes.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from fakes.installed import check_every_page, check_headless_commands

BUNDLE = os.environ.get("RIGCHECK_BUNDLE", "")
# Resolved now: the runs below start in throw-away folders, where a relative path would not lead back.
EXE = Path(BUNDLE).resolve() / ("rigcheck.exe" if sys.platform == "win32" else "rigcheck")

pytestmark = [
    pytest.mark.bundle,
    pytest.mark.skipif(not BUNDLE, reason="RIGCHECK_BUNDLE is not set to a built bundle folder"),
]

# What must never reach stderr: a Python traceback or warning ("x.py:12: DeprecationWarning: …"), or
# Qt's own diagnostics ("qt.qpa.plugin: …", "QPainter::begin: …", "Warning: …"), e.g. from a platform
# or image-format plugin missing in the bundle.
ALARMING = re.compile(
    r"Traceback \(most recent call last\)"
    r"|^\S+:\d+: \w*Warning: "
    r"|^qt\.[\w.]+:"
    r"|^Q[A-Z]\w*(::\w+)?: "
    r"|^(Warning|Critical|Fatal)\b",
    re.MULTILINE,
)
# The offscreen platform says this whenever a window is shown; it is not the bundle's fault.
HARMLESS = ("This plugin does not support propagateSizeHints()",)


def run(*args: str, tmp_path: Path, lang: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    if lang is not None:  # the app follows the system language when none is chosen
        env.update(LANG=lang, LC_ALL=lang, LANGUAGE=lang.split(".")[0])
    env.pop("PYTHONPATH", None)  # the bundle must not borrow the checkout's modules
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")  # nor read or write the user's settings
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    done = subprocess.run(  # noqa: S603
        [str(EXE), *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False
    )
    stderr = "\n".join(line for line in done.stderr.splitlines() if line.strip() not in HARMLESS)
    assert not ALARMING.search(stderr), f"rigcheck {' '.join(args)} wrote to stderr:\n{done.stderr}"
    assert done.returncode == 0, f"rigcheck {' '.join(args)} exited {done.returncode}:\n{done.stderr}"
    return done


def test_the_bundle_is_there() -> None:
    assert EXE.is_file(), f"no executable at {EXE}"


def test_the_bundle_carries_the_xcb_libraries_qt_needs() -> None:
    from rigcheck.gui.display import BUNDLED_XCB

    if not sys.platform.startswith("linux"):
        pytest.skip("X11 libraries are a Linux bundle's")
    inside = {p.name for p in EXE.parent.rglob("libxcb-*.so.*")}
    assert set(BUNDLED_XCB) <= inside, f"missing from the bundle: {sorted(set(BUNDLED_XCB) - inside)}"


def test_version_matches_the_project(tmp_path: Path) -> None:
    import tomllib

    root = Path(__file__).resolve().parent.parent
    version = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert run("--version", tmp_path=tmp_path).stdout.strip() == f"rigcheck {version}"


def test_every_page_renders(tmp_path: Path) -> None:
    # A page that fails to build makes 'gui --screenshot' exit non-zero, which run() reports.
    check_every_page(lambda *args: run(*args, tmp_path=tmp_path), tmp_path / "shots")


def test_headless_commands(tmp_path: Path) -> None:
    # monitor and estimate FILE.gguf load numpy (its OpenBLAS broke once when the bundle was stripped)
    check_headless_commands(lambda *args: run(*args, tmp_path=tmp_path), tmp_path)


def test_audit_summary(tmp_path: Path) -> None:
    assert "RigCheck audit of" in run("audit", tmp_path=tmp_path).stdout


def test_every_page_renders_in_italian(tmp_path: Path) -> None:
    # Italian numbers and month names come from Babel's CLDR data, which the spec trims to the app's
    # languages: a missing file would surface here as an error line from a page.
    done = run("gui", "--screenshot", str(tmp_path / "it"), tmp_path=tmp_path, lang="it_IT.UTF-8")
    assert len(done.stdout.splitlines()) == 7
    assert "rigcheck: error" not in done.stderr, done.stderr
