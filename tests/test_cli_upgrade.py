"""`rigcheck upgrade`: the JSON contract, the text a person reads, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.cli import one_error_line, run_cli
from fakes.machines import full_machine
from rigcheck.core import probe
from rigcheck.core.machine import Machine

FIXTURES = Path(__file__).parent / "fixtures" / "machines"
BOX = str(FIXTURES / "rtx4090-64gb.json")
OUTCOME_KEYS = {"verdict", "quant", "decode_tokens_per_s", "train_tokens_per_s"}
COST_KEYS = {
    "gpu_id",
    "name",
    "purchase",
    "rent_per_hour",
    "usd_per_tflop_hour",
    "usd_per_gb_vram",
    "electricity_usd_per_year",
    "ownership_usd_per_hour",
    "breakeven_hours",
    "breakeven_months",
    "formulas",
    "notes",
}


@pytest.fixture
def this_machine(monkeypatch: pytest.MonkeyPatch) -> Machine:
    machine = full_machine()
    monkeypatch.setattr(probe, "probe_machine", lambda **_kw: machine)
    return machine


def test_upgrade_json_contract(this_machine: Machine) -> None:
    del this_machine  # --machine is given: the probe must not matter
    code, out = run_cli(
        "upgrade",
        "--machine",
        BOX,
        "--add-gpu",
        "nvidia-geforce-rtx-4090",
        "--psu-watts",
        "1200",
        "--models",
        "llama-3.2-1b",
        "llama-3.3-70b",
        "--context",
        "8192",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    assert set(data) >= {
        "before",
        "after",
        "workload",
        "models",
        "power_before",
        "power_after",
        "costs",
        "suggestions",
        "alternatives",
        "purchase_usd",
    }
    assert data["before"]["schema"] == data["after"]["schema"] == "rigcheck.machine/1"
    assert len(data["before"]["gpus"]) == 1 and len(data["after"]["gpus"]) == 2
    assert data["workload"] == "inference" and data["context"] == 8192
    big, small = data["models"]  # newly runnable first
    assert small["model_id"] == "llama-3.2-1b" and big["model_id"] == "llama-3.3-70b"
    assert set(big["before"]) >= OUTCOME_KEYS and set(big["after"]) >= OUTCOME_KEYS
    assert big["before"]["verdict"] == "fits_with_offload"
    assert big["after"] == big["after"] | {"verdict": "fits", "quant": "Q4_K_M"}
    assert big["newly_runnable"] is True and small["newly_runnable"] is False
    # the PSU given is today's (the snapshot records none) and the upgrade's
    assert data["power_before"]["psu_watts"] == data["power_after"]["psu_watts"] == 1200
    assert data["power_after"]["headroom_watts"] < data["power_before"]["headroom_watts"]
    (cost,) = data["costs"]
    assert set(cost) >= COST_KEYS
    assert cost["gpu_id"] == "nvidia-geforce-rtx-4090"
    assert set(cost["purchase"]) >= {"usd", "date", "source"}
    assert data["purchase_usd"] == cost["purchase"]["usd"]
    assert all(isinstance(s, str) for s in data["suggestions"])


def test_upgrade_on_this_machine_by_default(this_machine: Machine) -> None:
    code, out = run_cli("upgrade", "--ram-gb", "128", "--models", "llama-3.2-1b", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["before"]["host"]["hostname"] == this_machine.host.hostname
    assert data["before"]["memory"]["total_bytes"] == this_machine.memory.total_bytes
    assert data["after"]["memory"]["total_bytes"] == 128 * 1024**3
    assert data["power_before"]["psu_watts"] == 850  # the machine's own PSU is kept


def test_5090_or_rent_an_h100_for_a_70b_qlora() -> None:
    code, out = run_cli(
        "upgrade",
        "--machine",
        BOX,
        "--gpu",
        "nvidia-geforce-rtx-5090",
        "--models",
        "llama-3.3-70b",
        "--workload",
        "qlora",
    )
    assert code == 0
    assert "Before: GeForce RTX 4090" in out and "After:  GeForce RTX 5090" in out
    assert "does not fit" in out
    assert "Costs of the new GPUs" in out and "purchase" in out and "break-even" in out
    assert "$/TFLOP-hour" in out and "$/GiB VRAM" in out and "electricity/year" in out and "ownership" in out
    assert "Power:" in out and "before:" in out
    assert "H100 SXM5" in out
    assert "Rent instead:" in out


def test_default_models_text() -> None:
    code, out = run_cli("upgrade", "--machine", BOX, "--add-gpu", "nvidia-geforce-rtx-4090")
    assert code == 0
    assert "Llama 3.3 70B" in out and "Qwen3 235B-A22B" in out and "new" in out


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("upgrade", "--machine", BOX, "--gpu", "rtx-9999"), "--gpu: unknown catalog GPU 'rtx-9999'"),
        (("upgrade", "--machine", BOX, "--add-gpu", "rtx-4090"), "--add-gpu: unknown catalog GPU 'rtx-4090'"),
        (("upgrade", "--machine", BOX, "--models", "no-such-model"), "no-such-model: not a catalog model id"),
        (("upgrade", "--machine", BOX, "--workload", "pretrain"), "invalid choice: 'pretrain'"),
        (("upgrade", "--machine", BOX, "--ram-gb", "0"), "RAM must be between"),
        (("upgrade", "--machine", BOX, "--psu-watts", "1e-300"), "PSU watts must be between 10 and 100000"),
        (("upgrade", "--machine", BOX, "--psu-watts", "-1"), "PSU watts must be between"),
        (("upgrade", "--machine", "missing.json"), "missing.json"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], expected: str
) -> None:
    code, _ = run_cli(*argv)
    assert code == 2
    assert expected in one_error_line(capsys)
