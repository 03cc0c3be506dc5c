"""`--speculative mtp` on estimate and fit: MTP weights in the JSON contract, one-line errors elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.cli import one_error_line, run_cli

GLM47 = str(Path(__file__).parent / "fixtures" / "configs-2026" / "zai-org--GLM-4.7_config.json")


def test_estimate_adds_the_mtp_weights_only_when_asked() -> None:
    args = ("estimate", GLM47, "--quant", "fp8", "--engine", "vllm", "--json")
    code, plain = run_cli(*args)
    code_mtp, drafted = run_cli(*args, "--speculative", "mtp")
    assert code == code_mtp == 0
    gained = json.loads(drafted)["memory"]["weights_bytes"] - json.loads(plain)["memory"]["weights_bytes"]
    # GLM-4.7's NextN layer less its embedding and head copies (tests/core/test_towers_mtp.py), FP8 bytes
    assert gained == 5_539_962_272 - 2 * 151_552 * 5120


def test_fit_takes_the_flag() -> None:
    args = ("fit", GLM47, "--quant", "fp8", "--engine", "vllm", "--gpu", "nvidia-h100-sxm5")
    code, out = run_cli(*args, "--speculative", "mtp")
    assert code in (0, 1) and "MTP layers (speculative draft)" in out
    assert "MTP layers (speculative draft)" not in run_cli(*args)[1]


def test_mtp_on_an_engine_without_it_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run_cli("estimate", GLM47, "--engine", "ollama", "--speculative", "mtp")
    assert code == 2
    expected = "--speculative: mtp: RigCheck sizes MTP drafting for vllm, sglang, llama.cpp, not ollama"
    assert expected in one_error_line(capsys)


HGX = str(Path(__file__).parent / "fixtures" / "machines" / "hgx-h100x8-2tb.json")


@pytest.mark.parametrize(
    ("engine", "switch"),
    [
        ("vllm", """--speculative-config '{"method":"mtp","num_speculative_tokens":1}'"""),
        ("sglang", "--speculative-algorithm EAGLE --speculative-num-steps 1 --speculative-eagle-topk 1"),
        ("llama.cpp", "--spec-type draft-mtp"),
    ],
)
def test_the_command_turns_mtp_on_only_when_asked(engine: str, switch: str) -> None:
    args = ("fit", GLM47, "--engine", engine, "--machine", HGX, "--json")
    drafted = json.loads(run_cli(*args, "--speculative", "mtp")[1])
    plain = json.loads(run_cli(*args)[1])
    key = engine
    assert switch in drafted["commands"][key]
    assert switch not in plain["commands"].get(key, "")
    assert "speculative" not in " ".join(plain["commands"].values())
    assert drafted["estimate"]["speculative"] == "mtp" and plain["estimate"]["speculative"] is None


def test_a_hub_gguf_is_not_assumed_to_keep_the_mtp_layers() -> None:
    out = json.loads(
        run_cli("fit", GLM47, "--engine", "llama.cpp", "--machine", HGX, "--speculative", "mtp", "--json")[1]
    )
    command = out["commands"]["llama.cpp"]
    assert command.endswith("# needs a GGUF that keeps the MTP layers (nextn_predict_layers)")


def test_the_json_model_block_counts_the_layers_outside_the_decoder() -> None:
    model = json.loads(run_cli("estimate", GLM47, "--quant", "fp8", "--engine", "vllm", "--json")[1])["model"]
    assert model["mtp_params"] == 5_539_962_272 and model["mtp_params_source"] == "config"
    assert model["mtp_shared_params"] == 2 * 151_552 * 5120
    assert model["tower_params"] == 0 and model["tower_params_source"] is None
