"""The compiled record decoders (issue 30, fleet at lab scale) accept, build and refuse exactly what the
reference decoder does, with the same error naming the same field.

Real snapshots and reports are mutated at random (a field set to a wrong type, a negative size, NaN,
a huge number, a list where an object goes, a key dropped or added) and decoded twice: once as shipped,
once with every record going through :func:`rigcheck.core.records._record` (the field-by-field
reference path) instead of its compiled decoder.
"""

from __future__ import annotations

import copy
import json
import random
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest

from rigcheck.core import records
from rigcheck.core.catalog import GpuSpec
from rigcheck.core.compat import Finding
from rigcheck.core.errors import InputError
from rigcheck.core.machine import Machine
from rigcheck.core.records import decode
from rigcheck.core.report.report import ModelFit

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"

ODD_VALUES: list[Any] = [
    None, True, False, 0, -1, -0.0, 1.5, -2.5, float("nan"), float("inf"), 2**63, 2**63 + 1, -(2**64),
    10**400, "", "x", "fits", "nvidia", "linux", [], ["a"], [1], [{}], {}, {"a": "b"}, {"a": 1}, {1: "a"},
    OrderedDict(a="b"), ("a", "b"),
]  # fmt: skip


def _reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every record decoded by the reference path (the compiled one is looked up at each call)."""
    monkeypatch.setattr(
        records, "_compiled", lambda cls: lambda v, w, s, st: records._record(cls, v, w, s, st)
    )


def _outcome(cls: type[Any], data: object, strict: bool) -> tuple[str, object]:
    try:
        return "ok", decode(cls, data, "src", where="top", strict=strict)
    except InputError as exc:
        return "error", str(exc)


def _paths(value: object, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_paths(item, (*path, key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found.extend(_paths(item, (*path, i)))
    return found


def _mutated(rng: random.Random, data: object) -> object:
    data = copy.deepcopy(data)
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(_paths(data)[1:] or [()])
        if not path:
            return rng.choice(ODD_VALUES)
        parent: Any = data
        for step in path[:-1]:
            parent = parent[step]
        key = path[-1]
        roll = rng.random()
        if roll < 0.15 and isinstance(parent, dict):
            del parent[key]
        elif roll < 0.25 and isinstance(parent, dict):
            parent[f"extra_{rng.randint(0, 9)}"] = rng.choice(ODD_VALUES)
        else:
            parent[key] = copy.deepcopy(rng.choice(ODD_VALUES))
    return data


def _cases() -> list[tuple[type[Any], object]]:
    from rigcheck.core.catalog import load_catalog
    from rigcheck.core.machine import load_machine
    from rigcheck.core.report.report import build_report, report_to_dict

    catalog = load_catalog(use_overlay=False)
    cases: list[tuple[type[Any], object]] = []
    for name in ("rtx4090-64gb.json", "two-gpus-128gb.json", "hgx-h100x8-2tb.json", "m2-ultra-192gb.json"):
        machine_data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
        cases.append((Machine, machine_data))
    report = report_to_dict(build_report(load_machine(FIXTURES / "rtx4090-64gb.json"), catalog))
    cases.extend((Finding, f) for f in report["findings"][:6])
    cases.extend((ModelFit, f) for f in report["fits"][:4])
    gpu = catalog.gpu("nvidia-geforce-rtx-4090")
    assert gpu is not None
    from dataclasses import asdict

    cases.append((GpuSpec, json.loads(json.dumps(asdict(gpu)))))
    return cases


@pytest.mark.parametrize("strict", [False, True])
def test_compiled_decoders_agree_with_the_reference(monkeypatch: pytest.MonkeyPatch, strict: bool) -> None:
    rng = random.Random(3030 + strict)  # noqa: S311 - a reproducible test input, not a secret
    inputs = []
    for cls, data in _cases():
        inputs.append((cls, data))
        inputs.extend((cls, _mutated(rng, data)) for _ in range(150))
    compiled = [_outcome(cls, data, strict) for cls, data in inputs]
    _reference(monkeypatch)
    reference = [_outcome(cls, data, strict) for cls, data in inputs]
    kinds = {kind for kind, _ in compiled}
    assert kinds == {"ok", "error"}  # the mutations reach both outcomes
    for (cls, data), got, want in zip(inputs, compiled, reference, strict=True):
        assert got == want, (cls.__name__, data)
        if got[0] == "ok":
            assert repr(got[1]) == repr(want[1])  # same types too (1 and 1.0 compare equal)


def test_compiled_decoders_name_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    data = json.loads((FIXTURES / "hgx-h100x8-2tb.json").read_text(encoding="utf-8"))
    data["gpus"][3]["memory_total_bytes"] = -1
    with pytest.raises(InputError, match=r"machine\.gpus\[3\]\.memory_total_bytes: must not be negative"):
        decode(Machine, data, "src", where="machine")
    del data["gpus"][3]["name"]
    with pytest.raises(InputError, match=r"machine\.gpus\[3\]\.name: required field missing"):
        decode(Machine, data, "src", where="machine")


def test_prepare_writes_every_decoder_a_snapshot_needs_ahead_of_it() -> None:
    """records.prepare(Machine) (the GUI runs it on a worker at start-up): a snapshot opened afterwards,
    its first or its second, writes no decoder (~9 ms on the GUI thread that opened it, before)."""
    records._compiled.cache_clear()
    records.prepare(Machine)
    written = records._compiled.cache_info().currsize
    assert written >= 5  # the machine and the records it holds (GPUs, CPU, memory, ...)
    for name in ("two-gpus-128gb.json", "hgx-h100x8-2tb.json", "m2-ultra-192gb.json", "rtx4090-64gb.json"):
        for _ in range(2):
            decode(Machine, json.loads((FIXTURES / name).read_text(encoding="utf-8")), name)
    assert records._compiled.cache_info().misses == written  # nothing written while decoding
