"""`rigcheck estimate` and `rigcheck fit`: the JSON contract scripts rely on, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.cli import one_error_line, run_cli
from fakes.machines import small_machine
from rigcheck.core import probe
from rigcheck.core.machine import Machine, save_machine

MEMORY_KEYS = {
    "weights_bytes",
    "kv_cache_bytes",
    "activations_bytes",
    "overhead_bytes",
    "gradients_bytes",
    "optimizer_bytes",
    "total_bytes",
}


def test_estimate_json_contract() -> None:
    code, out = run_cli("estimate", "llama-3.1-8b", "--quant", "Q4_K_M", "--context", "4096", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["model"]["id"] == "llama-3.1-8b"
    assert data["model"]["architecture"] == "llama"
    assert data["model"]["params_total"] == 8_030_261_248
    assert data["model"]["params_active"] == data["model"]["params_total"]  # dense: every parameter counts
    assert data["model"]["layers"] == 32
    assert data["model"]["source"] == "catalog:llama-3.1-8b"
    assert (data["quant"], data["context"], data["batch"], data["workload"]) == (
        "Q4_K_M",
        4096,
        1,
        "inference",
    )
    assert data["kv_cache_bytes_per_token"] == 131072
    assert set(data["memory"]) == MEMORY_KEYS
    assert all(isinstance(v, int) for v in data["memory"].values())
    assert data["memory"]["kv_cache_bytes"] == 4096 * 131072
    assert data["memory"]["total_bytes"] == sum(v for k, v in data["memory"].items() if k != "total_bytes")
    assert all(t["provenance"] in ("file", "config", "catalog", "estimate") for t in data["terms"])


def test_estimate_training_and_names_are_case_insensitive() -> None:
    code, out = run_cli("estimate", "Qwen3-8B", "--workload", "qlora", "--context", "2048", "--json")
    assert code == 0
    memory = json.loads(out)["memory"]
    assert memory["optimizer_bytes"] > 0 and memory["gradients_bytes"] > 0


def test_estimate_lora_targets_on_a_hybrid_wrap_by_layer_kind() -> None:
    """--lora-targets q,k,v,o on Qwen3.5-27B trains the 16 full-attention layers' projections only;
    all (PEFT's all-linear) adds the 48 Gated DeltaNet layers' in_proj_* and out_proj."""
    base = (
        "estimate",
        "qwen3.5-27b",
        "--workload",
        "lora",
        "--lora-rank",
        "16",
        "--context",
        "2048",
        "--json",
    )
    code, out = run_cli(*base, "--lora-targets", "q,k,v,o")
    assert code == 0
    named = json.loads(out)["training"]
    assert {m["module"]: m["layers"] for m in named["lora_modules"]} == {
        "q_proj": 16, "k_proj": 16, "v_proj": 16, "o_proj": 16,
    }  # fmt: skip
    assert named["trainable_params"] == 16 * 16 * ((5120 + 12288) + 2 * (5120 + 1024) + (6144 + 5120))
    code, out = run_cli(*base, "--lora-targets", "all")
    every = json.loads(out)["training"]
    assert every["lora_targets"] == ["all-linear"]
    assert {"in_proj_qkv", "in_proj_z", "in_proj_a", "in_proj_b", "out_proj"} <= {
        m["module"] for m in every["lora_modules"]
    }
    assert every["trainable_params"] > 10 * named["trainable_params"]


def test_estimate_text_shows_formulas_and_sources() -> None:
    code, out = run_cli("estimate", "gpt-oss-20b", "--quant", "mxfp4")
    assert code == 0
    assert "[estimate]" in out and "source:" in out
    assert "sliding-window layers capped" in out


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ("estimate", "no-such-model"),
            "no-such-model: not a file, a catalog model id, or a Hugging Face id",
        ),
        (("estimate", "llama-3.1-8b", "--quant", "Q9_K"), "--quant: unknown quantization 'Q9_K'"),
        (("estimate", "llama-3.1-8b", "--kv-cache-type", "q3"), "--kv-cache-type: unknown KV cache type"),
        (("estimate", "llama-3.1-8b", "--context", "-5"), "must be between 1 and"),
        (("estimate", "missing.gguf"), "missing.gguf: no such file"),
        (("fit", "llama-3.1-8b", "--gpu", "rtx-9999"), "--gpu: unknown catalog GPU 'rtx-9999'"),
        (("fit", "llama-3.1-8b", "--ram-gb", "0"), "RAM must be between 0.0625 and 65536 GiB"),
        (("fit", "llama-3.1-8b", "--ram-gb", "1e-300"), "RAM must be between"),
        (("fit", "llama-3.1-8b", "--ram-gb", "nan"), "RAM must be between"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], expected: str
) -> None:
    code, _ = run_cli(*argv)
    assert code == 2
    assert expected in one_error_line(capsys)


def test_bad_files_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.json"
    config.write_text('{"model_type": "llama", "hidden_size": 4096')
    assert run_cli("estimate", str(config))[0] == 2
    assert str(config) in one_error_line(capsys)
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 7)
    assert run_cli("estimate", str(gguf))[0] == 2
    assert str(gguf) in one_error_line(capsys)


@pytest.fixture
def cpu_only(monkeypatch: pytest.MonkeyPatch) -> Machine:
    machine = small_machine()
    monkeypatch.setattr(probe, "probe_machine", lambda **_kw: machine)
    return machine


def test_fit_json_contract_on_this_machine(cpu_only: Machine) -> None:
    code, out = run_cli("fit", "llama-3.2-1b", "--quant", "q4_k_m", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["verdict"] == "fits_with_offload"  # no GPU: runs on the CPU from RAM
    assert set(data["placement"]) >= {"gpu_bytes", "cpu_bytes", "gpu_layers", "total_layers", "offload"}
    assert data["placement"]["gpu_bytes"] == [] and data["placement"]["cpu_bytes"] > 0
    assert set(data["speed"]) >= {
        "decode_tokens_per_s",
        "prefill_tokens_per_s",
        "train_tokens_per_s",
        "bound_by",
    }
    assert data["speed"]["bound_by"] == "ram_bandwidth"
    assert set(data["estimate"]["memory"]) == MEMORY_KEYS
    assert data["reasons"] and isinstance(data["advice"], list)


def test_fit_what_if_and_snapshot(cpu_only: Machine, tmp_path: Path) -> None:
    code, out = run_cli(
        "fit",
        "llama-3.1-70b",
        "--gpu",
        "nvidia-h100-sxm5",
        "--gpu",
        "nvidia-h100-sxm5",
        "--quant",
        "bf16",  # 141 GB of weights: needs both H100s
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    assert data["verdict"] == "fits"
    assert len(data["placement"]["gpu_bytes"]) == 2 and all(b > 0 for b in data["placement"]["gpu_bytes"])
    assert data["speed"]["bound_by"] == "memory_bandwidth"
    snapshot = tmp_path / "lab.json"
    save_machine(small_machine("lab"), snapshot)
    code, out = run_cli(
        "fit", "llama-3.1-8b", "--machine", str(snapshot), "--ram-gb", "4", "--quant", "bf16", "--json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["verdict"] == "does_not_fit"
    assert data["advice"]


def test_fit_megatrain_from_the_command_line(cpu_only: Machine) -> None:
    code, out = run_cli(
        "fit",
        "qwen2.5-72b",
        "--gpu",
        "nvidia-h200",
        "--ram-gb",
        "1536",
        "--workload",
        "full",
        "--context",
        "1024",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    assert data["verdict"] == "fits_with_offload"
    assert data["placement"]["offload"] == "full"
    assert data["speed"]["train_tokens_per_s"] > 0
    assert data["speed"]["bound_by"] in ("compute", "pcie", "cpu_optimizer")


def test_fit_defaults_to_the_released_format(cpu_only: Machine) -> None:
    """gpt-oss ships in MXFP4: without --quant it is sized so, and fits one H100."""
    code, out = run_cli("fit", "gpt-oss-120b", "--gpu", "nvidia-h100-sxm5", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["estimate"]["quant"] == "MXFP4"
    assert data["verdict"] == "fits"


def test_fit_expert_offload_from_the_command_line(cpu_only: Machine) -> None:
    code, out = run_cli(
        "fit", "gpt-oss-120b", "--gpu", "nvidia-geforce-rtx-3090", "--ram-gb", "64",
        "--offload", "experts", "--n-cpu-moe", "30", "--json",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert data["verdict"] == "fits_with_offload"
    assert data["placement"]["offload"] == "experts"
    assert data["placement"]["cpu_expert_layers"] == 30
    code, _ = run_cli("fit", "gpt-oss-120b", "--n-cpu-moe", "30")
    assert code == 2  # --n-cpu-moe without --offload experts


def test_fit_takes_llama_cpp_multi_gpu_and_layer_flags(
    cpu_only: Machine, capsys: pytest.CaptureFixture[str]
) -> None:
    two = ("--gpu", "nvidia-geforce-rtx-4090", "--gpu", "nvidia-geforce-rtx-4090")
    code, out = run_cli("fit", "llama-3.1-8b", *two, "--quant", "q4_k_m", "--json")
    assert code == 0
    spread = json.loads(out)["placement"]
    assert all(b > 0 for b in spread["gpu_bytes"])  # llama.cpp's default: both GPUs
    code, out = run_cli("fit", "llama-3.1-8b", *two, "--quant", "q4_k_m", "--split-mode", "none", "--json")
    assert code == 0
    assert json.loads(out)["placement"]["gpu_bytes"][1] == 0
    code, out = run_cli("fit", "llama-3.1-8b", *two, "--quant", "q4_k_m", "--tensor-split", "3,1", "--json")
    assert code == 0
    first, second = json.loads(out)["placement"]["gpu_bytes"]
    assert first > 2 * second > 0
    code, out = run_cli("fit", "llama-3.1-8b", *two[:2], "--quant", "q4_k_m", "--gpu-layers", "10", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["placement"]["gpu_layers"] == 10 and data["verdict"] == "fits_with_offload"
    assert run_cli("fit", "llama-3.1-8b", "--gpu-layers", "4", "--offload", "experts")[0] == 2
    assert "--gpu-layers needs --offload layers" in one_error_line(capsys)
    assert run_cli("fit", "llama-3.1-8b", "--tensor-split", "0,0")[0] == 2
    assert "--tensor-split" in one_error_line(capsys)


def test_fit_threads_reach_the_command(cpu_only: Machine) -> None:
    code, out = run_cli("fit", "llama-3.2-1b", "--quant", "q4_k_m", "--threads", "2")
    assert code == 0
    assert "-t 2" in out
    code, out = run_cli("fit", "llama-3.2-1b", "--quant", "q4_k_m")
    assert code == 0 and " -t " not in out


def test_fit_power_limit_holds_prompt_processing(cpu_only: Machine) -> None:
    gpu = ("--gpu", "nvidia-geforce-rtx-4090", "--quant", "bf16", "--json")
    code, out = run_cli("fit", "llama-3.1-8b", *gpu)
    assert code == 0
    free = json.loads(out)["speed"]
    code, out = run_cli("fit", "llama-3.1-8b", *gpu, "--power-limit", "150")
    assert code == 0
    held = json.loads(out)["speed"]
    assert held["prefill_tokens_per_s"] < free["prefill_tokens_per_s"]
    assert held["decode_tokens_per_s"] == free["decode_tokens_per_s"]  # decode is bound by memory
    assert any("150 W power limit" in line for line in held["explanation"])


def test_linear_kernels_torch_costs_a_hybrid_memory_and_speed_from_the_command_line(
    cpu_only: Machine,
) -> None:
    """--linear-kernels torch: Qwen3.5's Gated DeltaNet layers on transformers' pure-torch delta rule."""
    base = ("qwen3.5-27b", "--workload", "lora", "--context", "2048", "--json")
    fla = json.loads(run_cli("estimate", *base)[1])["memory"]["activations_bytes"]
    code, out = run_cli("estimate", *base, "--linear-kernels", "torch")
    assert code == 0 and json.loads(out)["memory"]["activations_bytes"] > fla
    fit = ("fit", *base[:-1], "--gpu", "nvidia-h200", "--json")
    fast = json.loads(run_cli(*fit)[1])["speed"]["train_tokens_per_s"]
    slow = json.loads(run_cli(*fit, "--linear-kernels", "torch")[1])["speed"]["train_tokens_per_s"]
    assert slow < 0.8 * fast
