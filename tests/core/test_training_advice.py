"""A fine-tune that does not fit gets computed next steps, each one a fit that runs: the longest context
this stack fits, a leaner stack (Unsloth's fused loss and offloaded checkpoints), with its verdict."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.machine import Machine, load_machine
from rigcheck.core.models.resolve import from_catalog

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "machines"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


@pytest.fixture(scope="module")
def rtx4090() -> Machine:
    return load_machine(FIXTURES / "rtx4090-64gb.json")


def test_qwen3_32b_qlora_on_a_4090_is_told_the_stack_that_fits(catalog: Catalog, rtx4090: Machine) -> None:
    """TRL + PEFT cannot hold Qwen3 32B's NF4 base with fp32 embedding and head in 22.8 GiB at any
    context; Unsloth's fused loss and offloaded checkpoints can, and the advice says so with its speed."""
    qwen = from_catalog(catalog.model("qwen3-32b"))  # type: ignore[arg-type]
    req = Request(workload="qlora")
    result = fit(qwen, rtx4090, req, catalog, live=False)
    assert result.verdict == "does_not_fit"
    step = next(a for a in result.advice if a.startswith("--framework unsloth fits at context 8,192"))
    assert "training tokens/s" in step
    assert not any(a.startswith("at context") for a in result.advice)  # no context fits TRL + PEFT here
    lean = fit(qwen, rtx4090, replace(req, framework="unsloth"), catalog, live=False, advise=False)
    assert lean.verdict != "does_not_fit"


def test_a_shorter_context_is_offered_only_where_it_fits(catalog: Catalog, rtx4090: Machine) -> None:
    qwen = from_catalog(catalog.model("qwen3-8b"))  # type: ignore[arg-type]
    req = Request(workload="lora", context=65536)
    result = fit(qwen, rtx4090, req, catalog, live=False)
    assert result.verdict == "does_not_fit"
    step = next(a for a in result.advice if a.startswith("at context "))
    context = int(re.match(r"at context ([\d,]+)", step).group(1).replace(",", ""))  # type: ignore[union-attr]
    assert 512 <= context < 65536 and context % 256 == 0
    assert fit(qwen, rtx4090, replace(req, context=context), catalog, live=False, advise=False).verdict != (
        "does_not_fit"
    )
    assert fit(
        qwen, rtx4090, replace(req, context=context + 512), catalog, live=False, advise=False
    ).verdict == ("does_not_fit")
    up_to = next(a for a in result.advice if a.startswith("--framework unsloth fits up to context "))
    longer = int(re.search(r"context ([\d,]+)", up_to).group(1).replace(",", ""))  # type: ignore[union-attr]
    assert longer > context
