"""Issue 28 (28-intel): llama.cpp's Vulkan backend multiplies prompt matrices on Intel's XMX engines
(VK_KHR_cooperative_matrix) only on Xe2 and later (ggml_vk_khr_cooperative_matrix_support; PR #14001, build
5589), so an Arc Pro B70 or B580 reads a prompt at the class's shader-core share × the fitted
prefill_coopmat_factor, an Arc A770 (Alchemist) at the shader-core share alone (speed/coopmat.py)."""

from __future__ import annotations

import dataclasses

import pytest

from rigcheck.core.catalog import Catalog, GpuSpec, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.estimate.speed.coopmat import INTEL_COOPMAT_BUILD, vulkan_matrix_engines
from rigcheck.core.estimate.speed.sycl_bf16 import SYCL_BF16_DNNL_BUILD
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def gpu(catalog: Catalog, gpu_id: str) -> GpuSpec:
    spec = catalog.gpu(gpu_id)
    assert spec is not None
    return spec


def test_only_intel_xe2_and_later_on_vulkan_use_the_matrix_engines(catalog: Catalog) -> None:
    for xe2 in ("intel-arc-pro-b70", "intel-arc-b580", "intel-arc-b570", "intel-arc-140v"):
        assert vulkan_matrix_engines("vulkan", gpu(catalog, xe2))
        assert not vulkan_matrix_engines("sycl", gpu(catalog, xe2))
    for older in ("intel-arc-a770", "intel-arc-a380", "intel-arc-140t"):
        assert not vulkan_matrix_engines("vulkan", gpu(catalog, older))
    assert not vulkan_matrix_engines("vulkan", gpu(catalog, "nvidia-geforce-rtx-3070"))


def test_builds_before_pr_14001_run_xe2_on_the_shader_cores(catalog: Catalog) -> None:
    b580 = gpu(catalog, "intel-arc-b580")
    assert not vulkan_matrix_engines("vulkan", b580, INTEL_COOPMAT_BUILD - 6)  # 5583, PR #14001's master
    assert vulkan_matrix_engines("vulkan", b580, INTEL_COOPMAT_BUILD)
    assert vulkan_matrix_engines("vulkan", b580, None)  # no build named: a current one


def test_the_factor_multiplies_the_prompt_rate_of_xe2_only(catalog: Catalog) -> None:
    factor = speed.speed_factor(catalog, "intel", "vulkan")
    assert factor is not None and factor.prefill_coopmat_factor > 1.5  # fitted (catalog/speed.toml)
    plain = dataclasses.replace(factor, prefill_coopmat_factor=1.0)
    for gpu_id, multiplied in (("intel-arc-pro-b70", True), ("intel-arc-a770", False)):
        spec = gpu(catalog, gpu_id)
        with_factor = speed.prefill_compute(spec, factor)
        without = speed.prefill_compute(spec, plain)
        assert with_factor is not None and without is not None
        ratio = with_factor.flops_per_s / without.flops_per_s
        assert ratio == pytest.approx(factor.prefill_coopmat_factor if multiplied else 1.0)


def prefill(catalog: Catalog, gpu_id: str, model_id: str, backend: str) -> float:
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    model = from_catalog(catalog.model(model_id))  # type: ignore[arg-type]
    req = Request(quant="q4_k_m", backend=backend)  # type: ignore[arg-type]
    result = fit(model, simulate(bare, [gpu(catalog, gpu_id)]), req, catalog, live=False)
    assert result.speed.prefill_tokens_per_s is not None
    return result.speed.prefill_tokens_per_s


def test_a_b70_reads_a_dense_prompt_near_its_fitted_vulkan_rows(catalog: Catalog) -> None:
    """PMZFX's B70 rows (b8064, coopmat on): Qwen 3.5-27B Q4_K_M pp512 398 t/s; the A770, with more FP32
    ALUs but no cooperative matrices, is estimated well below the B70 per FP32 TFLOPS."""
    b70 = prefill(catalog, "intel-arc-pro-b70", "qwen3.5-27b", "vulkan")
    assert 398 / 1.35 < b70 < 398 * 1.35
    # the ratio on a model with GEMMs alone: Qwen 3.5's Gated DeltaNet scans run on the vector ALUs of both
    # cards (speed/recurrent_scan.py), outside the cooperative matrices
    b70_dense = prefill(catalog, "intel-arc-pro-b70", "llama-3.1-8b", "vulkan")
    a770 = prefill(catalog, "intel-arc-a770", "llama-3.1-8b", "vulkan")
    per_tflops = (b70_dense / gpu(catalog, "intel-arc-pro-b70").fp32_tflops) / (
        a770 / gpu(catalog, "intel-arc-a770").fp32_tflops
    )  # type: ignore[operator]
    assert per_tflops == pytest.approx(
        speed.speed_factor(catalog, "intel", "vulkan").prefill_coopmat_factor, rel=0.05
    )  # type: ignore[union-attr]


def test_sycl_multiplies_bf16_prompts_on_the_fp32_path_before_b8888(catalog: Catalog) -> None:
    """Before PR #22119 (b8888) ggml_sycl_op_mul_mat_sycl converted BF16 to FP32 (speed/sycl_bf16.py): the
    quantised share, above the FP32 peak on the XMX engines, is held to that peak for BF16 weights there; a
    current build runs a oneDNN BF16 GEMM instead, and Vulkan keeps the class's rate."""
    factor = speed.speed_factor(catalog, "intel", "sycl")
    assert factor is not None and factor.prefill_compute_efficiency is not None
    assert factor.prefill_compute_efficiency > 1.0  # the quantised rows run on XMX
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    model = from_catalog(catalog.model("llama-3.1-8b"))  # type: ignore[arg-type] - GEMMs alone, no scans
    b70 = simulate(bare, [gpu(catalog, "intel-arc-pro-b70")])

    def rate(quant: str, backend: str, build: int | None = SYCL_BF16_DNNL_BUILD - 1) -> tuple[float, str]:
        req = Request(quant=quant, backend=backend, engine_build=build)  # type: ignore[arg-type]
        result = fit(model, b70, req, catalog, live=False)
        assert result.speed.prefill_tokens_per_s is not None
        return result.speed.prefill_tokens_per_s, " ".join(str(x) for x in result.speed.explanation)

    bf16, why = rate("bf16", "sycl")
    q8, _ = rate("q8_0", "sycl")
    assert bf16 < q8 / factor.prefill_compute_efficiency * 1.05
    assert "BF16 on SYCL" in why
    current, current_why = rate("bf16", "sycl", None)
    assert "BF16 on SYCL" not in current_why and current > bf16
    _, vulkan_why = rate("bf16", "vulkan")
    assert "BF16 on SYCL" not in vulkan_why


def test_experts_on_cooperative_matrices_take_the_coopmat_moe_factor(catalog: Catalog) -> None:
    """A mixture of experts' share of the dense rate belongs to the kernel pair that runs it: on Xe2 the
    cooperative-matrix matmul_id shaders (prefill_coopmat_moe_factor), on Alchemist the shader-core ones
    (prefill_moe_factor, fitted on 2 × A770 rows); a dense model takes neither."""
    factor = speed.speed_factor(catalog, "intel", "vulkan")
    assert factor is not None and factor.prefill_coopmat_moe_factor != 1.0  # fitted or borrowed (speed.toml)
    mine = dataclasses.replace(
        factor, prefill_moe_factor=0.2, prefill_coopmat_moe_factor=0.5, prefill_moe_exponent=0.0
    )
    on_xmx = speed.prefill_path(mine, moe=True, unquantized=False, coopmat=True)
    on_shaders = speed.prefill_path(mine, moe=True, unquantized=False, coopmat=False)
    assert on_xmx.factor == pytest.approx(0.5)
    assert on_shaders.factor == pytest.approx(0.2)
    assert speed.prefill_path(mine, moe=False, unquantized=False, coopmat=True).factor == 1.0
    # the estimate: an Xe2 GPU's MoE prompt over its dense one at the coopmat MoE share, an A770's at the other
    b70 = prefill(catalog, "intel-arc-pro-b70", "gemma-4-26b-a4b", "vulkan")
    a770 = prefill(catalog, "intel-arc-a770", "gemma-4-26b-a4b", "vulkan")
    b70_per_tflops = b70 / gpu(catalog, "intel-arc-pro-b70").fp32_tflops  # type: ignore[operator]
    a770_per_tflops = a770 / gpu(catalog, "intel-arc-a770").fp32_tflops  # type: ignore[operator]
    ratio = factor.prefill_coopmat_factor * factor.prefill_coopmat_moe_factor / factor.prefill_moe_factor
    assert b70_per_tflops / a770_per_tflops == pytest.approx(ratio, rel=0.1)
