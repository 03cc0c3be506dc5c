"""Prefill multipliers per weight path and model shape: unquantized weights, mixtures of experts (by prompt
tokens per expert), GCN Instinct cards' own class, and offloaded weights' PCIe copy adding to the compute.

The factors themselves are fitted (benchmarks/fit_speed.py); these tests pin how the estimator applies them,
with factors set here, not the fitted values.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes.archs import LLAMA_31_8B, model
from fakes.machines import one_catalog_gpu
from rigcheck.core.catalog import Catalog, SpeedFactor, load_catalog, parse_file
from rigcheck.core.errors import InputError
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import PCIE_GBS, fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def factor(**fields: float) -> SpeedFactor:
    base = SpeedFactor(
        id="t", hw_class="nvidia-consumer", backend="cuda", decode_bandwidth_efficiency=0.9, source="test",
        prefill_compute_efficiency=0.5,
    )  # fmt: skip
    return replace(base, **fields)


def with_factor(catalog: Catalog, cls: str, backend: str, **fields: float) -> Catalog:
    """The catalog with ``fields`` set on one class × backend and no fixed cost per layer anywhere, so the
    prompt times compared here are the multipliers' alone (the fixed cost: test_prefill_fixed.py)."""
    rows = tuple(
        replace(f, **fields) if (f.hw_class, f.backend) == (cls, backend) else f
        for f in catalog.speed_factors
    )
    return replace(catalog, speed_factors=tuple(replace(f, per_layer_us=0.0) for f in rows), maturities=())


one_gpu = one_catalog_gpu


def test_tokens_per_expert_is_micro_batch_times_k_over_experts() -> None:
    assert speed.moe_tokens_per_expert(512, 4, 32) == 64  # gpt-oss-20b
    assert speed.moe_tokens_per_expert(512, 4, 128) == 16  # gpt-oss-120b
    assert speed.moe_tokens_per_expert(128, 4, 32) == 16  # a 128-token prompt on gpt-oss-20b
    assert speed.moe_tokens_per_expert(512, 8, 128) == 32  # Qwen3-30B-A3B


def test_no_multiplier_for_a_dense_quantized_model() -> None:
    path = speed.prefill_path(
        factor(prefill_float_factor=1.2, prefill_moe_factor=0.4), moe=False, unquantized=False
    )
    assert path.factor == 1.0 and path.why == ""


def test_unquantized_and_moe_multipliers_combine() -> None:
    f = factor(prefill_float_factor=1.2, prefill_moe_factor=0.4)
    assert speed.prefill_path(f, moe=False, unquantized=True).factor == pytest.approx(1.2)
    assert speed.prefill_path(f, moe=True, unquantized=False).factor == pytest.approx(0.4)
    both = speed.prefill_path(f, moe=True, unquantized=True)
    assert both.factor == pytest.approx(0.48)
    assert "unquantized weights × 1.20" in both.why and "expert GEMMs over 64 tokens" in both.why


def test_moe_share_scales_with_tokens_per_expert_and_never_beats_dense() -> None:
    f = factor(prefill_moe_factor=0.4, prefill_moe_exponent=0.5)
    at_64 = speed.prefill_path(f, moe=True, unquantized=False, tokens_per_expert=64).factor
    at_16 = speed.prefill_path(f, moe=True, unquantized=False, tokens_per_expert=16).factor
    assert at_64 == pytest.approx(0.4)
    assert at_16 == pytest.approx(0.4 * (16 / 64) ** 0.5)  # a quarter of the tokens: half the share
    # many tokens per expert (few experts, large batch) approach a dense layer but do not pass it
    assert speed.prefill_path(f, moe=True, unquantized=False, tokens_per_expert=10_000).factor == 1.0


def test_fit_applies_the_moe_factor_to_a_mixture_of_experts(catalog: Catalog) -> None:
    spec = catalog.model("gpt-oss-20b")
    assert spec is not None
    m = from_catalog(spec)
    machine = one_gpu(catalog, "nvidia-geforce-rtx-4090")
    plain = with_factor(catalog, "nvidia-consumer", "cuda", prefill_moe_factor=1.0, prefill_moe_exponent=0.0)
    slowed = with_factor(catalog, "nvidia-consumer", "cuda", prefill_moe_factor=0.5, prefill_moe_exponent=0.0)
    a = fit(m, machine, Request(context=4096), plain, live=False).speed
    b = fit(m, machine, Request(context=4096), slowed, live=False).speed
    assert a.prefill_tokens_per_s and b.prefill_tokens_per_s
    assert not any("prefill bound by memory" in line for line in a.explanation)  # compute bound on a 4090
    assert b.prefill_tokens_per_s == pytest.approx(a.prefill_tokens_per_s / 2, rel=1e-6)
    assert any("expert GEMMs over 64 tokens each × 0.50" in line for line in b.explanation)
    # a dense model on the same class is untouched by the MoE factor
    dense_a = fit(model(LLAMA_31_8B), machine, Request(quant="q4_k_m"), plain, live=False).speed
    dense_b = fit(model(LLAMA_31_8B), machine, Request(quant="q4_k_m"), slowed, live=False).speed
    assert dense_a.prefill_tokens_per_s == dense_b.prefill_tokens_per_s


def test_a_short_prompt_gives_each_expert_fewer_tokens(catalog: Catalog) -> None:
    spec = catalog.model("gpt-oss-20b")
    assert spec is not None
    m = from_catalog(spec)
    machine = one_gpu(catalog, "nvidia-geforce-rtx-4090")
    cat = with_factor(catalog, "nvidia-consumer", "cuda", prefill_moe_factor=0.5, prefill_moe_exponent=0.5)
    long = fit(m, machine, Request(context=4096), cat, live=False).speed
    short = fit(m, machine, Request(context=128), cat, live=False).speed
    assert long.prefill_tokens_per_s and short.prefill_tokens_per_s
    # 128 tokens: 16 per expert, a quarter of 64, so half the MoE share at exponent 0.5
    assert short.prefill_tokens_per_s == pytest.approx(long.prefill_tokens_per_s / 2, rel=0.02)


def test_fit_applies_the_float_factor_to_unquantized_weights_only(catalog: Catalog) -> None:
    machine = one_gpu(catalog, "nvidia-geforce-rtx-4090")
    cat = with_factor(catalog, "nvidia-consumer", "cuda", prefill_float_factor=1.5)
    plain = with_factor(catalog, "nvidia-consumer", "cuda", prefill_float_factor=1.0)
    f16 = fit(model(LLAMA_31_8B), machine, Request(quant="fp16"), cat, live=False).speed
    f16_plain = fit(model(LLAMA_31_8B), machine, Request(quant="fp16"), plain, live=False).speed
    q4 = fit(model(LLAMA_31_8B), machine, Request(quant="q4_k_m"), cat, live=False).speed
    q4_plain = fit(model(LLAMA_31_8B), machine, Request(quant="q4_k_m"), plain, live=False).speed
    assert f16.prefill_tokens_per_s == pytest.approx(1.5 * f16_plain.prefill_tokens_per_s)  # type: ignore[operator]
    assert q4.prefill_tokens_per_s == q4_plain.prefill_tokens_per_s


def test_offloaded_weights_copy_adds_to_the_compute_time(catalog: Catalog) -> None:
    """llama.cpp copies a split's host-resident weights to the GPU, then runs it: the times add up."""
    spec = catalog.model("llama-3.1-70b")
    assert spec is not None
    m = from_catalog(spec)
    request = Request(quant="q4_k_m", context=4096)
    catalog = with_factor(catalog, "nvidia-consumer", "cuda")  # no fixed cost: the copy and the GEMMs alone
    machine = one_gpu(catalog, "nvidia-geforce-rtx-4090")
    result = fit(m, machine, request, catalog, offload="layers", live=False)
    s, placement, est = result.speed, result.placement, result.estimate
    assert s.prefill_tokens_per_s and 0 < placement.gpu_layers < len(est.layer_weight_bytes)
    copy_s = sum(est.layer_weight_bytes[placement.gpu_layers :]) / (PCIE_GBS[4] * 1e9) / 512
    # the same card with room for every layer: the compute time per token alone (compute bound there)
    roomy = replace(catalog.gpu("nvidia-geforce-rtx-4090"), id="roomy-4090", memory_gb=(96.0,))  # type: ignore[type-var]
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=128 * GIB), gpus=())
    full = fit(m, simulate(bare, [roomy], 128), request, catalog, offload="none", live=False).speed
    assert full.prefill_tokens_per_s
    assert not any("prefill bound by memory" in line for line in full.explanation)
    assert 1 / s.prefill_tokens_per_s == pytest.approx(1 / full.prefill_tokens_per_s + copy_s, rel=1e-6)
    line = next(line for line in s.explanation if line.startswith("prefill adds PCIe"))
    assert "26 GB/s" in line and "512-token micro-batch" in line


def test_gcn_instinct_cards_are_their_own_class(catalog: Catalog) -> None:
    mi50 = catalog.gpu("amd-instinct-mi50-32gb")
    mi300x = catalog.gpu("amd-instinct-mi300x")
    assert mi50 is not None and mi300x is not None
    assert speed.hardware_class("amd", mi50.name, mi50) == "amd-gcn"
    assert speed.hardware_class("amd", mi300x.name, mi300x) == "amd-datacenter"
    assert speed.speed_factor(catalog, "amd-gcn", "rocm") is not None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("prefill_float_factor", 0),
        ("prefill_moe_factor", 2.5),
        ("prefill_moe_exponent", 1.5),
        ("prefill_tflops_per_watt", 0),
    ],
)
def test_the_loader_rejects_out_of_range_prefill_factors(field: str, value: float) -> None:
    text = f"""
[[speed_factor]]
id = "x-cuda"
hw_class = "x"
backend = "cuda"
decode_bandwidth_efficiency = 0.9
source = "test"
{field} = {value}
"""
    with pytest.raises(InputError, match=field):
        parse_file("speed.toml", text)


# ---- the board power limit caps the prompt's compute rate ----


def test_a_power_limited_card_runs_prefill_at_watts_times_tflops_per_watt(catalog: Catalog) -> None:
    """RTX 6000 Ada: 364 TFLOPS listed, 300 W. At 35% of its peak it would need more power than its board
    may draw, so the rate is 300 W × the class's TFLOPS per watt; the explanation says so."""
    cat = with_factor(
        catalog, "nvidia-consumer", "cuda", prefill_compute_efficiency=0.35, prefill_tflops_per_watt=0.25
    )
    machine = one_gpu(catalog, "nvidia-rtx-6000-ada")
    m = model(LLAMA_31_8B)
    s = fit(m, machine, Request(quant="q4_k_m"), cat, live=False).speed
    flops = 2 * sum(m.arch.layer_active_params)
    assert s.prefill_tokens_per_s == pytest.approx(300 * 0.25e12 / flops, rel=1e-6)
    line = next(line for line in s.explanation if line.startswith("prefill on GPU 0:"))
    assert "300 W power limit" in line and "0.250 TFLOPS per watt" in line and "held to 75.0 TFLOPS" in line
    # without a cap in the catalog the same card runs at its peak share
    free = with_factor(
        catalog, "nvidia-consumer", "cuda", prefill_compute_efficiency=0.35, prefill_tflops_per_watt=None
    )
    uncapped = fit(m, machine, Request(quant="q4_k_m"), free, live=False).speed
    assert uncapped.prefill_tokens_per_s == pytest.approx(364.2e12 * 0.35 / flops, rel=1e-3)
    assert not any(line.startswith("prefill on GPU") for line in uncapped.explanation)


def test_a_card_below_its_power_limit_keeps_its_peak_share(catalog: Catalog) -> None:
    """RTX 3090: 142 TFLOPS (FP16 accumulate) × 35% = 50 TFLOPS, well within 350 W × 0.25 = 87.5."""
    capped = with_factor(
        catalog, "nvidia-consumer", "cuda", prefill_compute_efficiency=0.35, prefill_tflops_per_watt=0.25
    )
    free = with_factor(
        catalog, "nvidia-consumer", "cuda", prefill_compute_efficiency=0.35, prefill_tflops_per_watt=None
    )
    machine = one_gpu(catalog, "nvidia-geforce-rtx-3090")
    a = fit(model(LLAMA_31_8B), machine, Request(quant="q4_k_m"), capped, live=False).speed
    b = fit(model(LLAMA_31_8B), machine, Request(quant="q4_k_m"), free, live=False).speed
    assert a.prefill_tokens_per_s == b.prefill_tokens_per_s
    assert not any(line.startswith("prefill on GPU") for line in a.explanation)


def test_the_power_limit_the_driver_reports_sets_the_cap(catalog: Catalog) -> None:
    """A card its owner limited to half its board power (nvidia-smi -pl) prefills at half the capped rate;
    the float factor multiplies the capped rate like the uncapped one."""
    cat = with_factor(
        catalog,
        "nvidia-consumer",
        "cuda",
        prefill_compute_efficiency=0.35,
        prefill_tflops_per_watt=0.25,
        prefill_float_factor=1.25,
    )
    machine = one_gpu(catalog, "nvidia-rtx-6000-ada")
    halved = replace(machine, gpus=(replace(machine.gpus[0], power_limit_watts=150.0),))
    m = model(LLAMA_31_8B)
    full = fit(m, machine, Request(quant="q4_k_m"), cat, live=False).speed
    half = fit(m, halved, Request(quant="q4_k_m"), cat, live=False).speed
    assert full.prefill_tokens_per_s and half.prefill_tokens_per_s
    assert half.prefill_tokens_per_s == pytest.approx(full.prefill_tokens_per_s / 2, rel=1e-6)
    assert any("150 W power limit" in line for line in half.explanation)
    f16 = fit(m, machine, Request(quant="fp16"), cat, live=False).speed
    assert f16.prefill_tokens_per_s == pytest.approx(1.25 * full.prefill_tokens_per_s, rel=1e-6)  # type: ignore[operator]


def test_shipped_factors_put_the_rtx_6000_ada_below_the_4090(catalog: Catalog) -> None:
    """The RTX 6000 Ada lists 10% more tensor TFLOPS than the GeForce RTX 4090 (364 against 330 with FP16
    accumulate) but draws 300 W against 450 W, and prefills slower (XiongjieDai's table: 5,792 against 7,139
    tokens/s for Llama 3 8B Q4_K_M). The fitted cap reproduces the order; one TFLOPS-per-watt figure serves
    every NVIDIA CUDA class (fitted on them pooled)."""
    consumer = speed.speed_factor(catalog, "nvidia-consumer", "cuda")
    datacenter = speed.speed_factor(catalog, "nvidia-datacenter", "cuda")
    assert consumer is not None and datacenter is not None
    assert (
        consumer.prefill_tflops_per_watt
        and consumer.prefill_tflops_per_watt == datacenter.prefill_tflops_per_watt
    )
    m = model(LLAMA_31_8B)
    ada = fit(m, one_gpu(catalog, "nvidia-rtx-6000-ada"), Request(quant="q4_k_m"), catalog, live=False).speed
    geforce = fit(
        m, one_gpu(catalog, "nvidia-geforce-rtx-4090"), Request(quant="q4_k_m"), catalog, live=False
    )
    assert ada.prefill_tokens_per_s and geforce.speed.prefill_tokens_per_s
    assert ada.prefill_tokens_per_s < geforce.speed.prefill_tokens_per_s
    assert any("power limit" in line for line in ada.explanation)
