"""The snapshot: JSON round-trip and every refusal a bad file can earn."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from fakes.machines import full_machine
from rigcheck.core.errors import InputError
from rigcheck.core.machine import SCHEMA, Disk, Drivers, Machine, load_machine, save_machine

GIB = 1024**3


def minimal_dict() -> dict[str, object]:
    return {
        "schema": SCHEMA,
        "cpu": {"logical_cores": 8},
        "memory": {"total_bytes": 16 * GIB},
        "gpus": [{"vendor": "apple", "name": "Apple M2", "memory_total_bytes": None}],
    }


def test_round_trip_keeps_every_field() -> None:
    machine = full_machine()
    text = machine.to_json()
    assert Machine.from_json(text) == machine
    data = json.loads(text)
    assert list(data)[:2] == ["schema", "taken_at"]
    assert data["gpus"][0]["compute_capability"] == "8.9"
    assert data["software"]["python_packages"]["torch"] == "2.5.1+cu124"  # local tag kept
    assert data["gpus"][1]["uuid"] is None  # unknown is null, not missing


def test_save_and_load_file(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    save_machine(full_machine(), path)
    assert load_machine(path) == full_machine()
    assert not list(tmp_path.glob(".*.tmp"))


def test_minimal_snapshot_loads_with_unknowns() -> None:
    machine = Machine.from_dict(minimal_dict())
    assert machine.gpus[0].memory_total_bytes is None
    assert machine.host.hostname is None
    assert machine.drivers == Drivers()
    assert machine.psu.watts is None


def test_unknown_keys_are_ignored_within_the_schema() -> None:
    data = minimal_dict()
    data["future_field"] = {"x": 1}
    assert Machine.from_dict(data).cpu.logical_cores == 8


def test_redacted_drops_identifiers() -> None:
    machine = replace(full_machine(), disks=(Disk(str(Path.home() / "models"), 1, 1, "home"),)).redacted()
    assert machine.host.hostname is None
    assert all(g.uuid is None and g.serial is None and g.pci_bus_id is None for g in machine.gpus)
    assert machine.disks[0].path == "~/models"
    assert machine.gpus[0].name == "NVIDIA GeForce RTX 4090"


def _refusal(data: object) -> str:
    with pytest.raises(InputError) as info:
        Machine.from_dict(data, "snap.json")
    return str(info.value)


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d.pop("schema"), "snap.json: schema: missing"),
        (lambda d: d.update(schema="rigcheck.machine/2"), "unsupported version 'rigcheck.machine/2'"),
        (lambda d: d.pop("cpu"), "snap.json: cpu: required field missing"),
        (lambda d: d["cpu"].pop("logical_cores"), "cpu.logical_cores: required field missing"),
        (lambda d: d["cpu"].update(logical_cores="8"), "cpu.logical_cores: expected a whole number"),
        (lambda d: d["cpu"].update(logical_cores=8.5), "cpu.logical_cores: expected a whole number"),
        (lambda d: d["cpu"].update(logical_cores=True), "cpu.logical_cores: expected a whole number"),
        (lambda d: d["memory"].pop("total_bytes"), "memory.total_bytes: required field missing"),
        (lambda d: d["memory"].update(total_bytes=-1), "memory.total_bytes: must not be negative"),
        (lambda d: d.pop("gpus"), "gpus: required field missing"),
        (lambda d: d.update(gpus={}), "gpus: expected a list"),
        (lambda d: d["gpus"][0].pop("vendor"), "gpus[0].vendor: required field missing"),
        (lambda d: d["gpus"][0].update(vendor="3dfx"), "gpus[0].vendor: expected one of"),
        (lambda d: d["gpus"][0].pop("name"), "gpus[0].name: required field missing"),
        (
            lambda d: d["gpus"][0].pop("memory_total_bytes"),
            "gpus[0].memory_total_bytes: required field missing",
        ),
        (
            lambda d: d["gpus"][0].update(memory_total_bytes=-5),
            "gpus[0].memory_total_bytes: must not be negative",
        ),
        (
            lambda d: d["gpus"][0].update(memory_total_bytes="24 GB"),
            "memory_total_bytes: expected a whole number, got the string '24 GB'",
        ),
        (
            lambda d: d["gpus"][0].update(unified_memory="yes"),
            "gpus[0].unified_memory: expected true or false, got the string 'yes'",
        ),
        (lambda d: d["gpus"][0].update(power_limit_watts=float("nan")), "expected a finite number"),
        (lambda d: d["gpus"][0].update(power_limit_watts=-1), "power_limit_watts: must not be negative"),
        (lambda d: d.update(psu={"watts": -850}), "psu.watts: must not be negative"),
        (lambda d: d.update(notes=[{"probe": "x", "level": "fatal", "message": "m"}]), "notes[0].level"),
        (lambda d: d.update(software={"python_packages": {"torch": 2}}), "software.python_packages.torch"),
        (lambda d: d.update(host="lab-7"), "host: expected an object"),
    ],
)
def test_bad_snapshots_are_refused_naming_file_and_field(mutate: object, expected: str) -> None:
    data = minimal_dict()
    mutate(data)  # type: ignore[operator]
    message = _refusal(data)
    assert message.startswith("snap.json: ")
    assert expected in message
    assert "\n" not in message


def test_not_an_object_is_refused() -> None:
    assert "expected a JSON object" in _refusal([1, 2])


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "empty file"),
        (b'{"schema": "rigcheck.machine/1", "cpu": {', "not valid JSON (line 1"),
        (b"\xff\xfe\x00garbage", "not a text file"),
        (b"hello", "not valid JSON"),
    ],
)
def test_bad_files_are_refused(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        load_machine(path)
    assert str(info.value).startswith(f"{path}: ")
    assert expected in str(info.value)


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_machine(tmp_path / "nope.json")
    with pytest.raises(InputError, match="is a folder"):
        load_machine(tmp_path)
