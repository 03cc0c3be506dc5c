"""The speed model: per-class factors from the catalog, fixed per-layer costs, backends, maturity."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, Maturity, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import fit, grid
from rigcheck.core.estimate.memory import Request
from rigcheck.core.machine import CPU, GPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def box(catalog: Catalog, *gpus: str, ram_gib: int = 128) -> Machine:
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=ram_gib * GIB), gpus=())
    return simulate(bare, [catalog.gpu(g) for g in gpus], ram_gib)  # type: ignore[misc]


def test_every_catalog_gpu_has_factors_and_every_factor_says_where_it_came_from(catalog: Catalog) -> None:
    for spec in catalog.gpus:
        gpu = GPU(
            vendor=spec.vendor, name=spec.name, memory_total_bytes=None, unified_memory=spec.unified_memory
        )
        assert speed.gpu_factor(catalog, gpu, spec, None) is not None, spec.id
    classes = {f.hw_class for f in catalog.speed_factors}
    for cls in classes:
        assert sum(1 for f in catalog.speed_factors if f.hw_class == cls and f.default) == 1, cls
    for factor in catalog.speed_factors:
        assert factor.source.strip()
        if factor.confidence != "uncertain":
            assert factor.sources and all(s.startswith("https://") for s in factor.sources), factor.id
            assert factor.measured


def test_hardware_classes() -> None:
    assert speed.hardware_class("apple", "Apple M4", None) == "apple-base"
    assert speed.hardware_class("apple", "Apple M3 Pro", None) == "apple-pro"
    assert speed.hardware_class("apple", "Apple M2 Ultra", None) == "apple-max"
    assert speed.hardware_class("apple", "Apple M1 Max", None) == "apple-max"
    assert speed.hardware_class("amd", "AMD Radeon 8060S Graphics", None, unified=True) == "amd-apu"


def test_apple_small_and_max_chips_reach_different_shares(catalog: Catalog) -> None:
    base = speed.speed_factor(catalog, "apple-base", "metal")
    top = speed.speed_factor(catalog, "apple-max", "metal")
    assert base is not None and top is not None
    assert base.decode_bandwidth_efficiency > top.decode_bandwidth_efficiency
    m4 = fit(model(LLAMA_31_8B), box(catalog, "apple-m4"), Request(quant="q4_k_m"), catalog, live=False)
    assert any("apple-base" in line for line in m4.speed.explanation)


def test_decode_has_a_fixed_cost_per_layer(catalog: Catalog) -> None:
    """Time per token = bytes ÷ (bandwidth × efficiency) + layers × per-layer cost, on one GPU."""
    m = model(LLAMA_31_8B)
    machine = box(catalog, "nvidia-a100-sxm4-80gb")
    result = fit(m, machine, Request(quant="q4_k_m"), catalog, live=False)
    spec = catalog.gpu("nvidia-a100-sxm4-80gb")
    factor = speed.speed_factor(catalog, "nvidia-datacenter", "cuda")
    assert spec is not None and spec.bandwidth_gbs and factor is not None and factor.per_layer_us > 0
    seconds = 1 / result.speed.decode_tokens_per_s  # type: ignore[operator]
    fixed = 32 * factor.per_layer_us * 1e-6
    streaming = seconds - fixed
    assert streaming > 0
    # the fixed part is a large share of a small model's token on a fast GPU (the roofline alone was 2× too fast)
    assert fixed / seconds > 0.3
    assert any("32 layers ×" in line for line in result.speed.explanation)


def test_the_backend_picks_its_own_factors(catalog: Catalog) -> None:
    strix = box(catalog, "amd-ryzen-ai-max-plus-395-radeon-8060s")
    m = from_catalog(catalog.model("gpt-oss-20b"))  # type: ignore[arg-type]
    rocm = fit(m, strix, Request(), catalog, live=False)
    vulkan = fit(m, strix, Request(backend="vulkan"), catalog, live=False)
    assert any("rocm" in line for line in rocm.speed.explanation)
    assert any("vulkan" in line for line in vulkan.speed.explanation)
    assert rocm.speed.decode_tokens_per_s != vulkan.speed.decode_tokens_per_s


def test_a_maturity_factor_scales_one_architecture(catalog: Catalog) -> None:
    m = model(LLAMA_31_8B)
    machine = box(catalog, "nvidia-geforce-rtx-4090")
    plain = fit(m, machine, Request(quant="q4_k_m"), catalog, live=False)
    slow = replace(
        catalog,
        maturities=(Maturity("llama-new", "llama.cpp", "llama", "https://example.org/m", decode_factor=0.5),),
    )
    halved = fit(m, machine, Request(quant="q4_k_m"), slow, live=False)
    assert halved.speed.decode_tokens_per_s == pytest.approx(plain.speed.decode_tokens_per_s / 2)  # type: ignore[operator]
    assert any("50% of its usual speed" in line for line in halved.speed.explanation)


def test_grid_agrees_with_fit_on_one_gpu(catalog: Catalog) -> None:
    m = model(LLAMA_31_8B)
    spec = catalog.gpu("nvidia-geforce-rtx-4090")
    assert spec is not None
    (cell,) = grid([m], ["q4_k_m"], [spec], catalog)
    single = fit(
        m, box(catalog, "nvidia-geforce-rtx-4090", ram_gib=64), Request(quant="q4_k_m"), catalog, live=False
    )
    assert cell.verdict == single.verdict == "fits"
    assert cell.decode_tokens_per_s == pytest.approx(single.speed.decode_tokens_per_s, rel=0.02)


def test_a_qwen3_next_maturity_reaches_fit_on_gpu_and_cpu_only_and_no_other_architecture(
    catalog: Catalog,
) -> None:
    """An engine × architecture maturity for qwen3_next (catalog [[maturity]], fitted by fit_speed.py
    --maturity) scales decode and prefill of Qwen3-Next through fit(), on a GPU and on a CPU-only machine
    (Ollama and CPU-only users get the same llama.cpp engine), says so in the explanation, and leaves a
    model of another architecture alone."""
    bare = replace(catalog, maturities=())
    slow = replace(
        bare,
        maturities=(
            Maturity(
                "llama.cpp-qwen3_next",
                "llama.cpp",
                "qwen3_next",
                "https://example.org/m",
                decode_factor=0.5,
                prefill_factor=0.8,
            ),
        ),
    )
    qwen3_next = from_catalog(catalog.model("qwen3-next-80b-a3b"))  # type: ignore[arg-type]
    other = from_catalog(catalog.model("qwen3-30b-a3b"))  # type: ignore[arg-type]
    assert qwen3_next.arch.model_type == "qwen3_next" and other.arch.model_type != "qwen3_next"
    gpu_box = box(catalog, "nvidia-rtx-pro-6000-blackwell-workstation")
    cpu_only = box(catalog, ram_gib=96)
    cpu_only = replace(cpu_only, cpu=CPU(logical_cores=24, model="AMD Ryzen AI 9 HX PRO 370", max_mhz=5100.0,
                                         physical_cores=12, flags=("avx2", "fma", "avx512f")))  # fmt: skip
    request = Request(quant="q4_k_m", context=4096)
    for machine in (gpu_box, cpu_only):
        plain = fit(qwen3_next, machine, request, bare, live=False).speed
        scaled = fit(qwen3_next, machine, request, slow, live=False).speed
        assert plain.decode_tokens_per_s and plain.prefill_tokens_per_s, plain.explanation
        assert scaled.decode_tokens_per_s == pytest.approx(plain.decode_tokens_per_s / 2)
        assert scaled.prefill_tokens_per_s is not None
        assert scaled.prefill_tokens_per_s < plain.prefill_tokens_per_s
        assert any("runs qwen3_next at 50% of its usual speed" in line for line in scaled.explanation)
        assert any("qwen3_next prompts at 80% of its usual speed" in line for line in scaled.explanation)
        assert not any("usual speed" in line for line in plain.explanation)
        untouched = fit(other, machine, request, slow, live=False).speed
        reference = fit(other, machine, request, bare, live=False).speed
        assert untouched.decode_tokens_per_s == reference.decode_tokens_per_s
        assert untouched.prefill_tokens_per_s == reference.prefill_tokens_per_s
        assert not any("usual speed" in line for line in untouched.explanation)
