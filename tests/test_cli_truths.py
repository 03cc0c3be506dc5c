"""Small untruths: the context term names the backend that runs, the RAM sentence's arithmetic is right."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from fakes.cli import run_cli
from fakes.machines import small_machine
from rigcheck.core.estimate.placement.budget import budgets
from rigcheck.core.machine import Memory

FIXTURES = Path(__file__).parent / "fixtures" / "machines"
GIB = 1024**3


def _terms(machine: str) -> list[str]:
    code, out = run_cli(
        "fit", "qwen3-8b", "--machine", str(FIXTURES / machine), "--quant", "Q4_K_M", "--json"
    )
    assert code == 0
    data = json.loads(out)
    return [t["name"] for t in data["estimate"]["terms"]]


def test_cpu_only_estimate_counts_no_cuda_context() -> None:
    names = _terms("cpu-only-32gb.json")
    assert not any("CUDA" in n or "context" in n for n in names), names
    _code, text = run_cli("fit", "qwen3-8b", "--machine", str(FIXTURES / "cpu-only-32gb.json"))
    assert "CUDA context" not in text


@pytest.mark.parametrize(
    ("machine", "backend"), [("rtx4090-64gb.json", "CUDA"), ("m2-ultra-192gb.json", "Metal")]
)
def test_context_named_by_the_backend_that_runs(machine: str, backend: str) -> None:
    assert f"{backend} context and buffers" in _terms(machine)


def _numbers(sentence: str) -> list[float]:
    return [float(x) for x in re.findall(r"(\d+(?:\.\d+)?) GiB", sentence)]


@pytest.mark.parametrize("total_gib", [23.5, 32.0, 7.77, 250.3, 1023.96])
@pytest.mark.parametrize("available_gib", [None, 22.1, 3.0])
def test_ram_sentence_arithmetic_is_visibly_right(total_gib: float, available_gib: float | None) -> None:
    """'22.1 GiB available of 23.5 GiB, keeping 2.4 GiB for the system = 21.2 GiB' read as 23.5 - 2.4 = 21.2."""
    available = int(available_gib * GIB) if available_gib else None
    machine = replace(
        small_machine(), memory=Memory(total_bytes=int(total_gib * GIB), available_bytes=available)
    )
    budget = budgets(machine, live=True)
    sentence = next(r for r in budget.reasons if r.startswith("RAM:"))
    match = re.search(
        r"(\d+(?:\.\d+)?) GiB - (\d+(?:\.\d+)?) GiB kept for the system = (\d+(?:\.\d+)?) GiB", sentence
    )
    assert match, sentence
    total, reserve, rest = (float(g) for g in match.groups())
    assert round(total - reserve, 1) == rest, sentence
    shown_budget = _numbers(sentence)
    assert round(budget.cpu_bytes / GIB, 1) in shown_budget, sentence  # the RAM the estimate uses is stated
