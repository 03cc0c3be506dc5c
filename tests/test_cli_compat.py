"""`rigcheck compat`: the JSON contract, the readable form, and one-line errors for bad snapshots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.cli import one_error_line, run_cli
from rigcheck.core.compat import FRAMEWORKS
from rigcheck.core.machine import CPU, GPU, Drivers, Host, Machine, Memory, Software, save_machine

GIB = 1024**3
KEYS = {"framework", "subject", "gpu_index", "status", "reason", "fix", "source", "command", "installed", "cause",
        "actions", "side_effect", "blocked_by", "bucket"}  # fmt: skip


@pytest.fixture
def rtx5090(tmp_path: Path) -> Path:
    machine = Machine(
        cpu=CPU(logical_cores=16, arch="x86_64", flags=("avx2",)),
        memory=Memory(total_bytes=64 * GIB),
        gpus=(GPU("nvidia", "NVIDIA GeForce RTX 5090", 32 * GIB, index=0, compute_capability="12.0"),),
        host=Host(os="linux", python="3.11.7"),
        drivers=Drivers(nvidia="570.133.07", cuda_driver="12.8"),
        software=Software(python_packages={"torch": "2.5.1+cu124"}),
    )
    path = tmp_path / "rtx5090.json"
    save_machine(machine, path)
    return path


def test_json_contract(rtx5090: Path) -> None:
    code, out = run_cli("compat", "--machine", str(rtx5090), "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"findings", "root_causes", "summary"}
    findings = data["findings"]
    assert findings and all(set(f) == KEYS for f in findings)
    assert all(f["framework"] in FRAMEWORKS for f in findings)
    torch_gpu = next(f for f in findings if f["framework"] == "pytorch" and f["gpu_index"] == 0)
    # torch 2.5 cu124 has no sm_120 cubin (moi90/pytorch_compute_capabilities); cu128 is the first with it
    assert torch_gpu["status"] == "fail" and torch_gpu["cause"] == "wheel-cuda-mismatch"
    # the newest wheel with sm_120 (2.14.1+cu130) and the driver branch that runs it fully (R580)
    assert (
        torch_gpu["command"] == "pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu130"
    )
    assert torch_gpu["actions"] == ["driver:580.65.06", "torch:2.14.1+cu130"]
    assert data["summary"]["actions"] == ["driver:580.65.06", "torch:2.14.1+cu130"]
    assert any(g["cause"] == "wheel-cuda-mismatch" for g in data["root_causes"])


def test_text_groups_by_gpu_failures_first(rtx5090: Path) -> None:
    code, out = run_cli("compat", "--machine", str(rtx5090))
    assert code == 0
    assert out.startswith("RigCheck compatibility: ")
    assert "This machine" in out and "GPU 0 · NVIDIA GeForce RTX 5090 (CC 12.0)" in out
    gpu_part = out.split("GPU 0 ·", 1)[1]
    assert gpu_part.index("FAIL") < gpu_part.index(" ok ")
    assert "$ pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu130" in out
    assert "Root causes" in out and out.index("Root causes") < out.index("This machine")


def test_this_machine_runs() -> None:
    """The live probe path (whatever this machine has) gives findings and a torch answer."""
    code, out = run_cli("compat", "--json")
    assert code == 0
    findings = json.loads(out)["findings"]
    assert any(f["framework"] == "pytorch" for f in findings)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"schema": "rigcheck.machine/0"}', "unsupported version"),
        ("not json", "not valid JSON"),
        ("", "empty file"),
    ],
)
def test_bad_snapshot_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, expected: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    code, out = run_cli("compat", "--machine", str(bad))
    assert code == 2 and out == ""
    assert expected in one_error_line(capsys)


def test_missing_snapshot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run_cli("compat", "--machine", str(tmp_path / "nope.json"))
    assert code == 2
    assert "no such file" in one_error_line(capsys)


PLATFORMS = Path(__file__).resolve().parent / "fixtures" / "machines" / "platforms"


def test_a_broken_torch_is_one_root_cause_end_to_end() -> None:
    """`rigcheck compat --json` on the RTX 5090 with torch 2.6+cu124 (a snapshot without taken_at)."""
    code, out = run_cli("compat", "--machine", str(PLATFORMS / "rtx5090-driver570-cu124.json"), "--json")
    assert code == 0
    data = json.loads(out)
    blocked = [f for f in data["findings"] if f["blocked_by"] == "torch 2.6.0+cu124"]
    assert {f["framework"] for f in blocked} >= {"flash-attn-2", "bitsandbytes", "unsloth"}
    assert all("torch==2.6.0+cu124" not in (f["command"] or "") for f in data["findings"])
    torch_groups = [g for g in data["root_causes"] if g["cause"] == "wheel-cuda-mismatch"]
    assert len(torch_groups) == 1 and "also blocks" in torch_groups[0]["title"]
    driver = next(f for f in data["findings"] if f["framework"] == "nvidia-driver")
    assert "as of today" in driver["reason"]  # no taken_at: judged as of the clock's day, and says so


def test_a_jetson_is_told_about_jetpack_not_driver_branches() -> None:
    code, out = run_cli("compat", "--machine", str(PLATFORMS / "jetson-agx-orin-jp62.json"))
    assert code == 0
    assert "comes with JetPack 6.2" in out and "R580" not in out and "R595" not in out
