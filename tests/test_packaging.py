"""The wheel carries the catalog and resources, and the code finds them there as in a checkout."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rigcheck.core.catalog import load_catalog

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def test_catalog_loads_from_a_built_wheel(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(tmp_path / "dist")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("rigcheck-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "catalog").rglob("*.toml"))
    assert (
        sorted(
            n.removeprefix("rigcheck/")
            for n in names
            if n.startswith("rigcheck/catalog/") and n.endswith(".toml")
        )
        == shipped
    )
    assert "rigcheck/resources/translations/it.toml" in names
    assert "rigcheck/resources/icons/rigcheck.svg" in names
    assert not [n for n in names if n.startswith("tests/")]

    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)
    env = dict(os.environ, PYTHONPATH=str(unpacked))
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import rigcheck, sys; from rigcheck.core.catalog import load_catalog;"
            "c = load_catalog(use_overlay=False, use_cache=False);"
            "print(rigcheck.__file__); print(len(c.gpus), len(c.models), len(c.quants))",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    where, counts = done.stdout.splitlines()
    assert where.startswith(str(unpacked)), "the test must exercise the unpacked wheel, not the checkout"
    here = load_catalog(use_overlay=False)
    assert counts == f"{len(here.gpus)} {len(here.models)} {len(here.quants)}"
