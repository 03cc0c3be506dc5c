"""The extra fixed cost of a mixture-of-experts layer (SpeedFactor.moe_layer_us, speed/fixed.py): a MoE layer
runs the router, top-k, expert-weighting and expert-sum kernels of llama.cpp's build_moe_ffn on top of a dense
layer's, so on a class × backend whose factor carries that cost a MoE model decodes slower than its bytes
and layer count alone say, and the explanation says why."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.speed.fixed import fixed_seconds, moe_layers_between
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate

GIB = 1024**3
GPU_ID = "nvidia-geforce-rtx-4090"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def with_moe_cost(catalog: Catalog, us: float) -> Catalog:
    """The catalog with ``us`` µs more per MoE layer on the RTX 4090's class × backend."""
    return replace(
        catalog,
        speed_factors=tuple(
            replace(f, moe_layer_us=us) if (f.hw_class, f.backend) == ("nvidia-consumer", "cuda") else f
            for f in catalog.speed_factors
        ),
    )


def machine(catalog: Catalog) -> Machine:
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=128 * GIB), gpus=())
    return simulate(bare, [catalog.gpu(GPU_ID)], 128)  # type: ignore[list-item]


def test_fixed_seconds_adds_the_moe_cost_per_moe_layer_only(catalog: Catalog) -> None:
    factor = speed.speed_factor(catalog, "nvidia-consumer", "cuda")
    assert factor is not None
    costly = replace(factor, moe_layer_us=40.0)
    assert fixed_seconds(24, costly, moe_layers=24) - fixed_seconds(24, costly) == pytest.approx(24 * 40e-6)
    # a dense model pays nothing more
    assert fixed_seconds(24, costly) == pytest.approx(fixed_seconds(24, factor))
    assert moe_layers_between((False, True, True, False, True), 1, 4) == 2


def test_a_moe_model_decodes_slower_where_its_layers_cost_more_and_says_why(catalog: Catalog) -> None:
    gpt_oss = from_catalog(catalog.model("gpt-oss-20b"))  # type: ignore[arg-type]
    dense = from_catalog(catalog.model("llama-3.1-8b"))  # type: ignore[arg-type]
    box = machine(catalog)
    costly = with_moe_cost(catalog, 50.0)
    plain_moe = fit(gpt_oss, box, Request(), catalog, live=False).speed
    slow_moe = fit(gpt_oss, box, Request(), costly, live=False).speed
    moe_layers = sum(gpt_oss.arch.moe_layers)
    assert moe_layers == gpt_oss.arch.num_layers  # every gpt-oss layer routes its MLP
    extra = 1 / slow_moe.decode_tokens_per_s - 1 / plain_moe.decode_tokens_per_s  # type: ignore[operator]
    assert extra == pytest.approx(moe_layers * 50e-6, rel=1e-6)
    assert any("mixture-of-experts layers × 50 µs more" in line for line in slow_moe.explanation)
    assert not any("mixture-of-experts layers ×" in line for line in plain_moe.explanation)
    # a dense model on the same factors is untouched
    plain_dense = fit(dense, box, Request(quant="q4_k_m"), catalog, live=False).speed
    costly_dense = fit(dense, box, Request(quant="q4_k_m"), costly, live=False).speed
    assert costly_dense.decode_tokens_per_s == pytest.approx(plain_dense.decode_tokens_per_s)


def test_the_catalog_rejects_a_negative_moe_cost(catalog: Catalog) -> None:
    from rigcheck.core.catalog import _check

    factor = speed.speed_factor(catalog, "nvidia-consumer", "cuda")
    assert factor is not None
    assert "moe_layer_us" in (_check("speed_factor", replace(factor, moe_layer_us=-1.0)) or "")


def test_the_shipped_radeon_vulkan_factors_charge_moe_layers_and_say_so(catalog: Catalog) -> None:
    """The fit split's Radeon Vulkan rows (RX 7900 XT Qwen3-30B-A3B, RX 9070 XT gpt-oss-20b, against seven dense
    rows) bear out a MoE-layer cost (fit_speed.keeps_median): gpt-oss-20b on an RX 9070 XT under Vulkan pays it
    for each of its 24 layers, and the explanation names it."""
    factor = speed.speed_factor(catalog, "amd-consumer", "vulkan")
    assert factor is not None and factor.moe_layer_us > 0
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    box = simulate(bare, [catalog.gpu("amd-radeon-rx-9070-xt")], 64)  # type: ignore[list-item]
    gpt_oss = from_catalog(catalog.model("gpt-oss-20b"))  # type: ignore[arg-type]
    costly = fit(gpt_oss, box, Request(backend="vulkan"), catalog, live=False).speed
    free = replace(
        catalog,
        speed_factors=tuple(
            replace(f, moe_layer_us=0.0) if f is factor else f for f in catalog.speed_factors
        ),
    )
    plain = fit(gpt_oss, box, Request(backend="vulkan"), free, live=False).speed
    extra = 1 / costly.decode_tokens_per_s - 1 / plain.decode_tokens_per_s  # type: ignore[operator]
    assert extra == pytest.approx(24 * factor.moe_layer_us * 1e-6, rel=1e-6)
    assert any("24 mixture-of-experts layers" in line for line in costly.explanation)
