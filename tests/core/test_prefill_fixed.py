"""Issue 28 prefill: each prompt micro-batch runs every layer's kernels once, so it pays the layer's fixed
cost (launches and synchronisation, SpeedFactor.per_layer_us) once per micro-batch, whatever the FLOPs.

The factors are fitted (benchmarks/fit_speed.py); these tests pin how the estimator applies the cost, with
the class factor's fixed cost set by the test, not fitted values.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes.archs import LLAMA_31_8B, dense, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.speed.fixed import prompt_fixed_seconds
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.whatif import simulate

GIB = 1024**3
GPU = "nvidia-geforce-rtx-4090"
#: a Llama-3.2-1B-shaped decoder: 16 layers of hidden 2048
SMALL = dense(hidden=2048, layers=16, heads=32, kv_heads=8, intermediate=8192, vocab=128256, tied=True)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def with_fixed_cost(catalog: Catalog, us: float) -> Catalog:
    """The catalog with the RTX 4090's class × CUDA fixed cost per layer set to ``us``."""
    factors = tuple(
        replace(f, per_layer_us=us) if (f.hw_class, f.backend) == ("nvidia-consumer", "cuda") else f
        for f in catalog.speed_factors
    )
    return replace(catalog, speed_factors=factors)


def machine(catalog: Catalog) -> Machine:
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=128 * GIB), gpus=())
    return simulate(bare, [catalog.gpu(GPU)], 128)  # type: ignore[list-item]


def prompt_seconds(catalog: Catalog, arch: object, context: int = 512) -> float:
    result = fit(model(arch), machine(catalog), Request(quant="q4_k_m", context=context), catalog, live=False)  # type: ignore[arg-type]
    assert result.speed.prefill_tokens_per_s
    return 1 / result.speed.prefill_tokens_per_s


def test_the_fixed_cost_is_paid_once_per_layer_and_micro_batch() -> None:
    factor = replace(
        speed.speed_factor(load_catalog(use_overlay=False), "nvidia-consumer", "cuda"),  # type: ignore[type-var]
        per_layer_us=100.0,
    )
    # 16 layers × 100 µs per 512-token micro-batch: 3.125 µs per prompt token
    assert prompt_fixed_seconds(16, factor, 512) == pytest.approx(16 * 100e-6 / 512)
    # a 128-token prompt runs one micro-batch of 128 tokens: four times the cost per token
    assert prompt_fixed_seconds(16, factor, 128) == pytest.approx(4 * prompt_fixed_seconds(16, factor, 512))
    assert prompt_fixed_seconds(16, replace(factor, per_layer_us=0.0), 512) == 0.0


def test_a_prompt_pays_its_layers_fixed_cost_per_micro_batch(catalog: Catalog) -> None:
    """The cost adds the same seconds per token to a small model as to a large one with as many layers, so
    it weighs most where the GEMMs are short."""
    bare, costly = with_fixed_cost(catalog, 0.0), with_fixed_cost(catalog, 200.0)
    added_small = prompt_seconds(costly, SMALL) - prompt_seconds(bare, SMALL)
    assert added_small == pytest.approx(16 * 200e-6 / 512, rel=1e-6)
    added_8b = prompt_seconds(costly, LLAMA_31_8B) - prompt_seconds(bare, LLAMA_31_8B)
    assert added_8b == pytest.approx(32 * 200e-6 / 512, rel=1e-6)
    # the 1B model slows by a larger share of its time than the 8B one
    assert added_small / prompt_seconds(bare, SMALL) > added_8b / prompt_seconds(bare, LLAMA_31_8B)


def test_the_estimate_says_what_the_fixed_cost_adds(catalog: Catalog) -> None:
    costly = with_fixed_cost(catalog, 200.0)
    result = fit(model(SMALL), machine(costly), Request(quant="q4_k_m", context=512), costly, live=False)
    lines = [line for line in result.speed.explanation if "micro-batch" in line and "launches" in line]
    assert len(lines) == 1
    assert "16 layers" in lines[0] and "200 µs" in lines[0]
    bare = with_fixed_cost(catalog, 0.0)
    quiet = fit(model(SMALL), machine(bare), Request(quant="q4_k_m", context=512), bare, live=False)
    assert not any("launches" in line and "micro-batch" in line for line in quiet.speed.explanation)


def test_a_larger_micro_batch_spreads_the_fixed_cost_over_more_tokens(catalog: Catalog) -> None:
    """llama-bench -ub 2048 (Request.ubatch) runs a 2,048-token prompt as one micro-batch, not four of 512:
    the layers' fixed cost is paid once, so per prompt token it is a quarter of the default's."""
    costly = with_fixed_cost(catalog, 200.0)
    free = with_fixed_cost(catalog, 0.0)

    def seconds(cat: Catalog, ubatch: int | None) -> float:
        request = Request(quant="q4_k_m", context=2048, ubatch=ubatch)
        result = fit(model(SMALL), machine(cat), request, cat, live=False)
        assert result.speed.prefill_tokens_per_s
        return 1 / result.speed.prefill_tokens_per_s

    default_fixed = seconds(costly, None) - seconds(free, None)
    large_fixed = seconds(costly, 2048) - seconds(free, 2048)
    assert default_fixed == pytest.approx(seconds(costly, 512) - seconds(free, 512))
    assert large_fixed == pytest.approx(default_fixed / 4, rel=0.02)
    # a micro-batch never exceeds the prompt: -ub 4096 on a 2,048-token prompt is one of 2,048
    assert seconds(costly, 4096) == pytest.approx(seconds(costly, 2048))
