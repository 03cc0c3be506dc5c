"""Shared test set-up: Qt runs offscreen; core tests never create a QApplication.

Tests never touch the user's own folders: the catalog cache and overlay point at throw-away folders
(subprocesses inherit these variables too).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# Before anything imports Qt: no display is needed, in CI or here.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

_scratch = tempfile.mkdtemp(prefix="rigcheck-tests-")
atexit.register(shutil.rmtree, _scratch, ignore_errors=True)
os.environ["RIGCHECK_CACHE_DIR"] = str(Path(_scratch) / "cache")
os.environ["RIGCHECK_CATALOG_OVERLAY"] = str(Path(_scratch) / "overlay")


@pytest.fixture
def fake_probe(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    """Replace the real probe with one returning ``fakes.machines.full_machine``; records its calls."""
    from fakes.machines import full_machine
    from rigcheck.core import probe
    from rigcheck.core.machine import Machine

    calls: list[dict[str, object]] = []

    def probe_machine(psu_watts: float | None = None, pythons: tuple[str, ...] = ()) -> Machine:
        calls.append({"psu_watts": psu_watts, "pythons": pythons})
        machine = full_machine()
        return machine.with_psu(psu_watts) if psu_watts else machine

    monkeypatch.setattr(probe, "probe_machine", probe_machine)
    return calls
