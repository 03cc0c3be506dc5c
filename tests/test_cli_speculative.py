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
