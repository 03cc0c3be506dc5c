"""Prefill (prompt processing) estimates: the compute peaks they use and the CPU-only model.

Prefill = 2 FLOPs per active parameter per token at a fitted share of a compute peak. These tests pin the
peaks (which catalog figure, GeForce's FP16-accumulate doubling, the CPU's cores × clock × FLOPs/cycle)
and that fit() uses them; how close the estimates come to measurements is benchmarks/estimate_accuracy.py.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import fit, prefill_flops_per_token
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.speed.fixed import prompt_fixed_seconds
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def cpu(flags: str = "avx avx2 fma", *, physical: int | None = 8, mhz: float | None = 5000.0) -> CPU:
    return CPU(
        logical_cores=16, model="Test CPU", physical_cores=physical, max_mhz=mhz, flags=tuple(flags.split())
    )


@pytest.mark.parametrize(
    ("flags", "per_cycle"),
    [
        ("sse2 avx avx2 fma", 32),  # two 256-bit FMA pipes × 8 lanes × 2
        ("avx avx2 fma avx512f", 32),  # client AVX-512 / Zen 4: still 256 bits of FMA per pipe
        ("avx avx2 fma avx512f amx_tile", 64),  # Sapphire Rapids: two 512-bit FMA units
        ("sse2 avx", 16),
        ("fp asimd", 16),
        ("sse2", 8),
        ("AVX2 FMA", 32),  # flags are matched without regard to case
    ],
)
def test_cpu_peak_is_cores_times_clock_times_flops_per_cycle(flags: str, per_cycle: int) -> None:
    found = speed.cpu_compute(cpu(flags))
    assert found is not None
    assert found.flops_per_cycle == per_cycle
    assert found.flops_per_s == pytest.approx(8 * 5.0e9 * per_cycle)
    assert f"8 cores × 5.00 GHz × {per_cycle} FLOPs/cycle" in found.why


def test_cpu_peak_needs_a_clock_and_falls_back_to_logical_cores() -> None:
    assert speed.cpu_compute(cpu(mhz=None)) is None
    assert speed.cpu_compute(cpu(mhz=0)) is None
    no_physical = speed.cpu_compute(cpu(physical=None))
    assert no_physical is not None and no_physical.cores == 16


def test_cpu_only_prefill_uses_the_cpu_peak_and_the_fitted_efficiency(catalog: Catalog) -> None:
    m = model(LLAMA_31_8B)
    host = cpu("avx avx2 fma", physical=8, mhz=5000)
    machine = simulate(Machine(cpu=host, memory=Memory(total_bytes=64 * GIB), gpus=()), [], 64)
    result = fit(m, machine, Request(quant="q4_k_m"), catalog, offload="auto", live=False)
    factor = speed.speed_factor(catalog, speed.CPU_CLASS, "cpu")
    assert factor is not None and factor.prefill_compute_efficiency is not None
    expected = 8 * 5e9 * 32 * factor.prefill_compute_efficiency / prefill_flops_per_token(m.arch)
    assert result.speed.prefill_tokens_per_s == pytest.approx(expected)
    assert any(line.startswith("prefill on the CPU") for line in result.speed.explanation)
    # twice the cores, twice the prompt speed: the model is compute bound
    wide = simulate(
        Machine(cpu=cpu(physical=16, mhz=5000), memory=Memory(total_bytes=64 * GIB), gpus=()), [], 64
    )
    doubled = fit(m, wide, Request(quant="q4_k_m"), catalog, offload="auto", live=False)
    assert doubled.speed.prefill_tokens_per_s == pytest.approx(2 * expected)


def test_cpu_only_prefill_without_a_clock_says_why(catalog: Catalog) -> None:
    machine = simulate(Machine(cpu=cpu(mhz=None), memory=Memory(total_bytes=64 * GIB), gpus=()), [], 64)
    result = fit(model(LLAMA_31_8B), machine, Request(quant="q4_k_m"), catalog, offload="auto", live=False)
    assert result.speed.prefill_tokens_per_s is None
    assert any("CPU clock not known" in line for line in result.speed.explanation)


@pytest.mark.parametrize(
    ("gpu_id", "peak"),
    [
        ("nvidia-geforce-rtx-3090", 142.0),  # GA102 whitepaper: 71 with FP32 accumulate, 142 with FP16
        ("nvidia-geforce-rtx-4090", 330.4),  # Ada whitepaper: 165.2 / 330.4
        ("nvidia-rtx-a6000", 154.8),  # professional card: one rate for both
        ("nvidia-a100-sxm4-80gb", 312.0),
        ("apple-m2-ultra", 27.2),  # no tensor figure: FP32, which Apple GPUs also run FP16 at
        ("apple-m1", 2.6),
    ],
)
def test_prefill_peak_by_card(catalog: Catalog, gpu_id: str, peak: float) -> None:
    found = speed.prefill_peak_tflops(catalog.gpu(gpu_id))
    assert found is not None
    assert found[0] == pytest.approx(peak)


def test_apple_compute_figures_cite_their_source_and_mark_the_derived_ones(catalog: Catalog) -> None:
    """Apple published GPU TFLOPS for M1 and M2 Ultra; the rest of M1/M2 come from a measured table, M3 to M5
    from the GPU clocks hmc-tech.com lists by the same cores × 128 × 2 × clock rule: marked uncertain."""
    apple = [g for g in catalog.gpus if g.vendor == "apple"]
    for spec in apple:
        generation = spec.id.split("-")[1]
        assert spec.fp32_tflops, spec.id
        assert speed.prefill_peak_tflops(spec) == (spec.fp32_tflops, f"{spec.fp32_tflops:g} TFLOPS FP32"), (
            spec.id
        )
        if generation in ("m1", "m2"):
            assert any(s.startswith("https://") for s in spec.sources), spec.id
        else:
            assert "hmc-tech.com" in (spec.notes or "") + " ".join(spec.sources), spec.id
        if spec.id not in ("apple-m1", "apple-m2-ultra"):
            assert spec.field_confidence.get("fp32_tflops") == "uncertain", spec.id
    m1max = catalog.gpu("apple-m1-max")
    m1 = catalog.gpu("apple-m1")
    assert m1max is not None and m1 is not None and m1max.fp32_tflops and m1.fp32_tflops
    # one GPU design: the 32-core Max is four times the 8-core M1 at a similar clock
    assert m1max.fp32_tflops / m1.fp32_tflops == pytest.approx(4, rel=0.03)


def test_derived_tensor_figures_are_marked_uncertain(catalog: Catalog) -> None:
    for gpu_id in ("nvidia-gb10", "nvidia-geforce-rtx-3080-ti", "nvidia-rtx-pro-6000-blackwell-workstation"):
        spec = catalog.gpu(gpu_id)
        assert spec is not None and spec.fp16_tflops
        assert spec.field_confidence.get("fp16_tflops") == "uncertain", gpu_id
    gb10 = catalog.gpu("nvidia-gb10")
    assert gb10 is not None and gb10.notes and "sparsity" in gb10.notes


def test_a_gpu_without_a_compute_figure_gets_no_prefill_number(catalog: Catalog) -> None:
    # every shipped GPU has a compute figure now (test_catalog_gpus_2026); an overlay entry may still lack one
    m3max = catalog.gpu("apple-m3-max")
    assert m3max is not None
    bare_spec = replace(m3max, fp32_tflops=None)
    overlay = replace(catalog, gpus=tuple(bare_spec if g.id == m3max.id else g for g in catalog.gpus))
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    machine = simulate(bare, [bare_spec], 64)
    result = fit(model(LLAMA_31_8B), machine, Request(quant="q4_k_m"), overlay, live=False)
    assert result.speed.decode_tokens_per_s
    assert result.speed.prefill_tokens_per_s is None
    assert any("compute throughput of this GPU not known" in line for line in result.speed.explanation)


def test_m1_max_now_gets_a_prefill_number(catalog: Catalog) -> None:
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    machine = simulate(bare, [catalog.gpu("apple-m1-max")], 64)  # type: ignore[list-item]
    result = fit(model(LLAMA_31_8B), machine, Request(quant="q4_k_m"), catalog, live=False)
    factor = speed.speed_factor(catalog, "apple-max", "metal")
    assert factor is not None and factor.prefill_compute_efficiency
    gemm_s = prefill_flops_per_token(model(LLAMA_31_8B).arch) / (10.4e12 * factor.prefill_compute_efficiency)
    # and its 32 layers' fixed cost once per 512-token micro-batch (speed/fixed.py)
    expected = 1 / (gemm_s + prompt_fixed_seconds(32, factor, 512))
    assert result.speed.prefill_tokens_per_s == pytest.approx(expected)


def test_prefill_flops_count_the_layers_not_the_embedding_or_head(catalog: Catalog) -> None:
    """The input embedding is a row lookup and llama.cpp runs the head only for the prompt's last token, so a
    prompt token's FLOPs are 2 × the parameters between them, tied embeddings or not."""
    llama = model(LLAMA_31_8B).arch
    assert prefill_flops_per_token(llama) == 2 * sum(llama.layer_active_params)
    gemma_spec = catalog.model("gemma-3-4b")
    assert gemma_spec is not None
    gemma = from_catalog(gemma_spec).arch
    assert gemma.tie_word_embeddings
    assert prefill_flops_per_token(gemma) == pytest.approx(2 * sum(gemma.layer_active_params))
    # the 262k-token vocabulary is a sixth of this small model: not multiplied per prompt token
    assert prefill_flops_per_token(gemma) < 0.85 * 2 * gemma.params_active


def test_moe_prefill_is_floored_by_reading_every_expert_once_per_micro_batch(catalog: Catalog) -> None:
    """A 512-token micro-batch routes tokens to (almost) every expert, so it reads all expert weights once:
    on a GPU with much compute and little bandwidth that floor, not the FLOPs, sets the prompt speed."""
    spec = catalog.model("gpt-oss-120b")
    assert spec is not None
    m = from_catalog(spec)
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=128 * GIB), gpus=())
    machine = simulate(bare, [catalog.gpu("nvidia-gb10")], 128)  # type: ignore[list-item]
    # the floor alone: without the class's MoE compute penalty (tests/core/test_prefill_paths.py covers it)
    catalog = replace(
        catalog,
        speed_factors=tuple(
            replace(f, prefill_moe_factor=1.0) if f.hw_class == "nvidia-soc" else f
            for f in catalog.speed_factors
        ),
    )
    result = fit(m, machine, Request(), catalog, live=False)
    assert result.speed.prefill_tokens_per_s
    weights = sum(result.estimate.layer_weight_bytes)
    gb10 = catalog.gpu("nvidia-gb10")
    factor = speed.speed_factor(catalog, "nvidia-soc", "cuda")
    assert gb10 is not None and gb10.bandwidth_gbs and factor is not None
    floor = 512 * gb10.bandwidth_gbs * 1e9 * factor.decode_bandwidth_efficiency / weights
    # bound by the floor (within the head's few bytes), far below the compute-only rate
    assert result.speed.prefill_tokens_per_s == pytest.approx(floor, rel=0.02)
    assert any("prefill bound by memory" in line for line in result.speed.explanation)
    # a dense model on the same GPU is compute bound: no floor in its explanation
    dense = fit(model(LLAMA_31_8B), machine, Request(quant="q4_k_m"), catalog, live=False)
    assert not any("prefill bound by memory" in line for line in dense.speed.explanation)


def test_cpu_moe_prefill_is_floored_by_reading_the_experts_from_ram(catalog: Catalog) -> None:
    spec = catalog.model("qwen3-30b-a3b")
    assert spec is not None
    m = from_catalog(spec)
    # a many-core CPU on one memory channel: compute is plentiful, bandwidth is not
    host = CPU(logical_cores=128, physical_cores=64, max_mhz=4000, flags=("avx2", "fma"))
    memory = Memory(total_bytes=128 * GIB, bandwidth_bytes_per_s=20 * 10**9, bandwidth_source="measured")
    machine = simulate(Machine(cpu=host, memory=memory, gpus=()), [], 128)
    machine = replace(machine, memory=memory)
    result = fit(m, machine, Request(quant="q4_k_m"), catalog, offload="auto", live=False)
    factor = speed.speed_factor(catalog, speed.CPU_CLASS, "cpu")
    assert factor is not None and result.speed.prefill_tokens_per_s
    weights = sum(result.estimate.layer_weight_bytes)
    # a measured bandwidth is read at llama.cpp's share of a measured figure, not the class's share of a peak
    floor = 512 * 20e9 * speed.MEASURED_READ_SHARE / weights
    assert result.speed.prefill_tokens_per_s == pytest.approx(floor, rel=0.02)
    assert any("from RAM once" in line for line in result.speed.explanation)


def test_only_geforce_cards_get_the_fp16_accumulate_doubling(catalog: Catalog) -> None:
    geforce = catalog.gpu("nvidia-geforce-rtx-4090")
    assert geforce is not None
    titan = replace(geforce, id="titan-like", name="TITAN RTX", architecture="Turing", segment="desktop")
    found = speed.prefill_peak_tflops(titan)
    assert found is not None and found[0] == pytest.approx(165.2)  # full-rate FP32 accumulate: as listed
    laptop = replace(geforce, name="GeForce RTX 4090 Laptop GPU", segment="laptop")
    found = speed.prefill_peak_tflops(laptop)
    assert found is not None and found[0] == pytest.approx(330.4)


def test_a_class_without_fitted_prompt_rows_says_so_not_that_the_peak_is_unknown(catalog: Catalog) -> None:
    """MI300X has its tensor peak in the catalog; what is missing is a fitted prefill share for its class."""
    mi300x = catalog.gpu("amd-instinct-mi300x")
    assert mi300x is not None and mi300x.fp16_tflops
    factors = tuple(
        replace(f, prefill_compute_efficiency=None) if f.hw_class == "amd-datacenter" else f
        for f in catalog.speed_factors
    )
    unfitted = replace(catalog, speed_factors=factors)
    bare = Machine(cpu=CPU(logical_cores=64), memory=Memory(total_bytes=512 * GIB), gpus=())
    result = fit(
        model(LLAMA_31_8B), simulate(bare, [mi300x], 512), Request(quant="q4_k_m"), unfitted, live=False
    )
    assert result.speed.decode_tokens_per_s and result.speed.prefill_tokens_per_s is None
    said = " ".join(result.speed.explanation)
    assert "no prompt-processing measurements fitted for amd-datacenter on rocm" in said
    assert "compute throughput of this GPU not known" not in said
