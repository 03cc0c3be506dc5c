"""Unquantized experts in llama.cpp's MUL_MAT_ID: which kernel multiplies them, and what fit() makes of it.

Vulkan has no matrix-vector kernel for BF16 experts (ggml_vk_use_mul_mat_vec_id lists F32, F16 and quantised
types), so one token's BF16 experts run the tiled GEMM a prompt micro-batch runs; dense BF16 matrices and
F16 experts do take the matrix-vector path, and the HIP backend has one for unquantized experts
(speed.TILED_EXPERT_DECODE). Factors are set here, not the fitted values, except where a test says so.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes.estimates import fit_on, tokens_per_s
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import FitResult
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.whatif import simulate

GIB = 1024**3
STRIX = "amd-ryzen-ai-max-plus-395-radeon-8060s"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def strix_halo(catalog: Catalog) -> Machine:
    bare = Machine(cpu=CPU(logical_cores=32), memory=Memory(total_bytes=128 * GIB), gpus=())
    return simulate(bare, [catalog.gpu(STRIX)], 128)  # type: ignore[list-item]


def with_apu_factor(catalog: Catalog, backend: str, **fields: float) -> Catalog:
    rows = tuple(
        replace(f, **fields) if (f.hw_class, f.backend) == ("amd-apu", backend) else f
        for f in catalog.speed_factors
    )
    return replace(catalog, speed_factors=rows, maturities=())


def run(catalog: Catalog, model_id: str, quant: str, backend: str) -> FitResult:
    return fit_on(catalog, strix_halo(catalog), model_id, quant, backend)


def decode(result: FitResult) -> float:
    return tokens_per_s(result, "decode")


def test_the_rule_is_by_backend_and_weight_type() -> None:
    assert speed.tiled_expert_decode("vulkan", "bf16")
    assert not speed.tiled_expert_decode("vulkan", "f16")  # F16 experts have a matrix-vector kernel
    assert not speed.tiled_expert_decode("vulkan", "q8_0")
    assert not speed.tiled_expert_decode("rocm", "bf16")  # HIP: ggml_cuda_mul_mat_vec_f with ids
    assert not speed.tiled_expert_decode("cuda", "bf16")
    assert not speed.tiled_expert_decode(None, "bf16")


def test_bf16_moe_on_vulkan_decodes_slower_than_q8_although_q8_reads_half(catalog: Catalog) -> None:
    cat = with_apu_factor(catalog, "vulkan", prefill_float_moe_factor=0.3, prefill_compute_efficiency=0.2)
    bf16 = run(cat, "qwen3-30b-a3b", "bf16", "vulkan")
    q8 = run(cat, "qwen3-30b-a3b", "q8_0", "vulkan")
    # by bandwidth alone BF16 would take about twice Q8's time; the tiled expert GEMM makes it far slower
    assert decode(bf16) < 0.35 * decode(q8)
    said = " ".join(bf16.speed.explanation)
    assert "tiled MUL_MAT_ID GEMM on vulkan" in said and "ggml_vk_use_mul_mat_vec_id" in said
    assert "BF16 routed experts" in said and "for 32 tokens" in said  # Qwen3-30B-A3B: 512 × 8 / 128
    assert "tiled MUL_MAT_ID" not in " ".join(q8.speed.explanation)
    # the kernel's arithmetic sets the pace, and the verdict says so
    assert bf16.speed.bound_by == "compute" and q8.speed.bound_by == "memory_bandwidth"


def test_the_same_bf16_moe_on_rocm_is_bandwidth_bound(catalog: Catalog) -> None:
    cat = with_apu_factor(catalog, "rocm", prefill_float_moe_factor=0.3, prefill_compute_efficiency=0.2)
    result = run(cat, "qwen3-30b-a3b", "bf16", "rocm")
    assert "tiled MUL_MAT_ID" not in " ".join(result.speed.explanation)
    vulkan = run(
        with_apu_factor(catalog, "vulkan", prefill_float_moe_factor=0.3, prefill_compute_efficiency=0.2),
        "qwen3-30b-a3b",
        "bf16",
        "vulkan",
    )
    assert decode(result) > 1.5 * decode(vulkan)


def test_dense_bf16_on_vulkan_is_not_affected(catalog: Catalog) -> None:
    cat = with_apu_factor(catalog, "vulkan", prefill_float_moe_factor=0.3, prefill_compute_efficiency=0.2)
    result = run(cat, "gemma-3-27b", "bf16", "vulkan")
    assert "tiled MUL_MAT_ID" not in " ".join(result.speed.explanation)
    assert decode(result) == pytest.approx(decode(run(catalog, "gemma-3-27b", "bf16", "vulkan")))


def test_tiled_expert_time_follows_the_unquantized_expert_prefill_rate(catalog: Catalog) -> None:
    """Halving the expert GEMM rate (the prefill factor) lengthens the experts' share of a token's time."""

    def qwen_bf16(expert_factor: float) -> FitResult:
        cat = with_apu_factor(
            catalog, "vulkan", prefill_float_moe_factor=expert_factor, prefill_compute_efficiency=0.2
        )
        return run(cat, "qwen3-30b-a3b", "bf16", "vulkan")

    slow, result = decode(qwen_bf16(0.15)), qwen_bf16(0.3)
    assert 1 / slow - 1 / decode(result) > 0.02  # seconds per token: the expert part roughly doubles
    # and prefill runs at that factor, said so
    assert "unquantized experts (float MUL_MAT_ID kernels) × 0.30" in " ".join(result.speed.explanation)


def test_never_faster_than_reading_the_experts(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """However fast the GEMM factors say the tiled path is, the experts are still read at the decode bandwidth:
    with generous factors the token takes what it takes without the rule."""
    generous = with_apu_factor(
        catalog, "vulkan", prefill_float_moe_factor=2.0, prefill_compute_efficiency=2.0
    )
    tiled = run(generous, "qwen3-30b-a3b", "bf16", "vulkan")
    assert "tiled MUL_MAT_ID" in " ".join(tiled.speed.explanation)
    monkeypatch.setattr(speed, "TILED_EXPERT_DECODE", {})
    plain = run(generous, "qwen3-30b-a3b", "bf16", "vulkan")
    assert "tiled MUL_MAT_ID" not in " ".join(plain.speed.explanation)
    assert decode(tiled) == pytest.approx(decode(plain))


def test_the_shipped_catalog_fits_the_factor_per_backend_from_unquantized_moe_rows(catalog: Catalog) -> None:
    """catalog/speed.toml is generated by fit_speed.py: the Vulkan and ROCm Strix Halo entries carry an
    unquantized-expert factor below 1 and say which rows set it."""
    for backend in ("vulkan", "rocm"):
        found = speed.speed_factor(catalog, "amd-apu", backend)  # type: ignore[arg-type]
        assert found is not None and 0 < found.prefill_float_moe_factor < 1
        assert "unquantized-expert factor from" in (found.measured or "")


def test_bf16_on_strix_halo_vulkan_is_said_to_run_on_scalar_shaders(catalog: Catalog) -> None:
    """AMD's Vulkan drivers report no BF16 matrices (bf16: 0), so BF16 prompts, dense or MoE, are estimated on
    the scalar FP32 path and the explanation says so as a fact, not a caveat; Q8_0 on Vulkan and BF16 on ROCm
    take other kernels (tests/core/test_vulkan_bf16.py covers the rule and the drivers it is not sure of)."""
    scalar = "the scalar shaders promote it to FP32"
    caveat = "BF16 on Vulkan: llama.cpp uses matrix cores for BF16 only where the driver reports BF16 support"
    for model in ("gemma-3-27b", "qwen3-30b-a3b"):
        said = " ".join(run(catalog, model, "bf16", "vulkan").speed.explanation)
        assert scalar in said and caveat not in said, model
    for model, quant, backend in (("gemma-3-27b", "q8_0", "vulkan"), ("gemma-3-27b", "bf16", "rocm")):
        said = " ".join(run(catalog, model, quant, backend).speed.explanation)
        assert scalar not in said and caveat not in said, (quant, backend)
