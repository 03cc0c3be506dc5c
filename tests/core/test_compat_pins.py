"""Pins that resolve: every version pin the checks propose agrees with the packages' own metadata.

catalog/compat/wheels.toml is written by tools/read_wheels.py from each release's PyPI files and wheel METADATA
(the day it was read is in each row). A command pinning ``pkg==X torch==Y`` ships only when release X of pkg
requires a torch that Y satisfies — so ``pip install vllm==0.33.0 torch==2.13.0`` (vLLM 0.33.0 requires
torch==2.14.0) cannot come back.
"""

from __future__ import annotations

import json
import re
import shlex
from datetime import date
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from fakes.machines import AUDIT_MACHINES
from rigcheck.core.catalog import Catalog, WheelRecord, load_catalog
from rigcheck.core.compat import check_compat, recommend_torch
from rigcheck.core.compat._rules import PACKAGES
from rigcheck.core.machine import Machine, load_machine

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"
TODAY = date(2026, 12, 1)
_PIN = re.compile(r"^(?P<name>[A-Za-z0-9_.\-]+)==(?P<version>[^\s;]+)$")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def machines() -> dict[str, Machine]:
    found = {name: make() for name, make in AUDIT_MACHINES.items()}
    found |= {path.stem: load_machine(path) for path in sorted(FIXTURES.glob("*.json"))}
    return found


MACHINES = machines()


def record(catalog: Catalog, package: str, version: str) -> WheelRecord | None:
    return next((w for w in catalog.wheels if w.package == package and w.version == version), None)


def pins(command: str) -> dict[str, str]:
    """``pip install a==1 torch==2.14.1+cu126 --index-url …`` -> {"a": "1", "torch": "2.14.1+cu126"}."""
    words = shlex.split(command)
    assert words[:2] == ["pip", "install"], command
    found = {}
    for word in words[2:]:
        match = _PIN.match(word)
        if match:
            found[match.group("name").lower()] = match.group("version")
    return found


def test_every_catalogued_torch_pin_is_what_the_metadata_says(catalog: Catalog) -> None:
    """A [[framework]] latest/torch_pin pair is the release's own Requires-Dist (or a narrower pin inside it)."""
    checked = 0
    for rule in catalog.frameworks:
        if not (rule.latest and rule.torch_pin):
            continue
        package = PACKAGES.get(rule.framework, (rule.framework,))[0]
        row = record(catalog, package, rule.latest)
        assert row is not None, f"{package} {rule.latest}: not in wheels.toml (rerun tools/read_wheels.py)"
        assert row.torch is not None, row
        recorded = SpecifierSet(row.torch)
        for release in catalog.torch_releases:
            patch = release.latest_patch
            if patch and SpecifierSet(rule.torch_pin).contains(patch, prereleases=True):
                assert recorded.contains(patch, prereleases=True), (rule.id, patch, row.torch)
        exact = [s.version for s in SpecifierSet(rule.torch_pin) if s.operator == "=="]
        assert all(recorded.contains(v, prereleases=True) for v in exact), (
            rule.id,
            rule.torch_pin,
            row.torch,
        )
        checked += 1
    assert checked >= 4  # vLLM, SGLang, xformers, TensorRT-LLM, Unsloth


def test_the_pypi_default_variant_is_the_cuda_the_wheel_depends_on(catalog: Catalog) -> None:
    """torch 2.14.1's PyPI wheel depends on cuda-toolkit==13.0.3: cu130, not cu132; 2.15.0's on 13.2.2."""
    checked = 0
    for release in catalog.torch_releases:
        row = record(catalog, "torch", release.latest_patch or "")
        if row is None or row.cuda is None:
            continue
        major, minor_ = row.cuda.split(".")[:2]
        assert release.default_variant == f"cu{major}{minor_}", (release.version, row.cuda)
        assert row.cuda_os == "linux"  # Windows and macOS PyPI wheels carry no CUDA
        checked += 1
    assert checked >= 3


def test_every_recorded_row_says_when_it_was_read(catalog: Catalog) -> None:
    for row in catalog.wheels:
        assert date.fromisoformat(row.read) <= TODAY, row
        assert row.source == f"https://pypi.org/project/{row.package}/{row.version}/"


def _commands(machine: Machine, catalog: Catalog) -> list[tuple[str, str]]:
    found = [(f.framework, f.command) for f in check_compat(machine, catalog, TODAY) if f.command]
    wheel = recommend_torch(machine, catalog, TODAY)
    if wheel is not None:
        found.append(("pytorch", wheel.command))
    return [(framework, command) for framework, command in found if command.startswith("pip install")]


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_every_proposed_command_resolves_against_the_recorded_requirements(
    catalog: Catalog, name: str
) -> None:
    machine = MACHINES[name]
    python = Version(machine.host.python) if machine.host.python else None
    for _framework, command in _commands(machine, catalog):
        pinned = pins(command)
        torch = pinned.get("torch")
        for package, version in pinned.items():
            if package == "torch":
                continue
            row = record(catalog, package, version)
            assert row is not None, f"{name}: {command}: {package} {version} has no recorded metadata"
            if row.torch is not None and torch is not None:
                assert SpecifierSet(row.torch).contains(Version(torch).public, prereleases=True), (
                    f"{name}: {command}: {package} {version} requires torch{row.torch}"
                )
            if row.requires_python and python is not None:
                assert SpecifierSet(row.requires_python).contains(python.public), (name, command, python)
        if torch is not None:
            base = Version(torch).public
            patches = {r.latest_patch for r in catalog.torch_releases} | {
                s.version
                for rule in catalog.frameworks
                if rule.torch_pin
                for s in SpecifierSet(rule.torch_pin)
            }
            assert base in patches, f"{name}: {command}: torch {base} is not a release the catalog knows"
            row = record(catalog, "torch", base)
            if row is not None and row.requires_python and python is not None:
                assert SpecifierSet(row.requires_python).contains(python.public), (name, command)


def test_the_old_unresolvable_vllm_pin_is_gone(catalog: Catalog) -> None:
    every = [c for m in MACHINES.values() for _f, c in _commands(m, catalog)]
    assert not any("vllm==0.33.0" in c and "torch==2.13.0" in c for c in every)
    assert any(c == "pip install vllm==0.33.0 torch==2.14.0" for c in every)


def test_the_generated_table_matches_the_script_output_format() -> None:
    """wheels.toml is the script's, not hand-edited: its header names the script."""
    text = (Path(__file__).resolve().parents[2] / "catalog" / "compat" / "wheels.toml").read_text("utf-8")
    assert text.startswith("# Generated by tools/read_wheels.py")
    assert json.dumps("==2.14.0") in text  # vllm 0.33.0's Requires-Dist
