#!/usr/bin/env python3
"""Set up and run RigCheck from a checkout, on Linux, Windows or macOS.

    python3 dev.py app      create/refresh .venv, then open the desktop app
    python3 dev.py test     create/refresh .venv, then run the whole test suite (extra args go to pytest)
    python3 dev.py audit …  create/refresh .venv, then run any ``rigcheck`` command, e.g. ``audit --json``
    python3 dev.py setup    create/refresh .venv and stop (``make dist`` starts with it)

The virtual environment is (re)installed when it is missing or when ``pyproject.toml`` changed since
the last install, so both commands work on a fresh clone and stay fast afterwards. Only the standard
library is used here: this script runs before anything is installed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".rigcheck-installed"
MIN_PYTHON = (3, 11)


def _venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _wanted_stamp() -> str:
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    return f"{digest} {sys.version_info.major}.{sys.version_info.minor}"


def ensure_venv() -> Path:
    python = _venv_python()
    if not python.exists():
        print(f"dev.py: creating the virtual environment in {VENV}", file=sys.stderr)
        venv.EnvBuilder(with_pip=True, clear=VENV.exists()).create(VENV)
    if not STAMP.exists() or STAMP.read_text(encoding="utf-8").strip() != _wanted_stamp():
        print("dev.py: installing RigCheck and its dependencies into .venv", file=sys.stderr)
        subprocess.run(  # noqa: S603 - fixed arguments
            [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", "-e", f"{ROOT}[dev]"],
            check=True,
            cwd=ROOT,
        )
        STAMP.write_text(_wanted_stamp() + "\n", encoding="utf-8")
    return python


def main(argv: list[str]) -> int:
    if sys.version_info < MIN_PYTHON:
        print(f"dev.py: RigCheck needs Python {'.'.join(map(str, MIN_PYTHON))} or newer", file=sys.stderr)
        return 2
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(__doc__)
        return 0
    what, rest = argv[0], argv[1:]
    try:
        python = ensure_venv()
    except subprocess.CalledProcessError as exc:
        print(f"dev.py: installing dependencies failed (exit status {exc.returncode})", file=sys.stderr)
        return 1
    if what == "setup":
        return 0
    if what == "app":
        command = [str(python), "-m", "rigcheck", *rest]
    elif what == "test":
        env_note = {"QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
        os.environ.update(env_note)
        command = [str(python), "-m", "pytest", *rest]
    else:
        command = [str(python), "-m", "rigcheck", what, *rest]
    return subprocess.call(command, cwd=ROOT)  # noqa: S603 - our own interpreter and module


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
