"""Issue 28 (28-intel-pp): the prompt GEMM path llama.cpp takes on an Intel Arc GPU, by backend, Xe
generation and weight type (speed/intel_paths.py, read from ggml-org/ggml@d99724f): Vulkan cooperative
matrices on Xe2 for every quantised type (no integer-dot MMQ on that path), integer-dot MMQ or FP16 shaders on
the vector engines before Xe2, SYCL's dequantise + oneDNN/oneMKL FP16 GEMM with MMQ off. Only the XMX paths
take the fitted matrix-engine factor, and the explanation names the path."""

from __future__ import annotations

import dataclasses

import pytest

from rigcheck.core.catalog import Catalog, GpuSpec, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.estimate.speed.coopmat import INTEL_COOPMAT_BUILD
from rigcheck.core.estimate.speed.intel_paths import VULKAN_MMQ_TYPES, intel_prompt_path
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


def test_xe2_on_vulkan_runs_every_quantised_type_on_cooperative_matrices(catalog: Catalog) -> None:
    b70 = gpu(catalog, "intel-arc-pro-b70")
    for quant in ("q4_0", "q4_k_m", "q8_0", "iq4_xs", "mxfp4", "f16"):
        path = intel_prompt_path("vulkan", b70, quant)
        assert path is not None and path.kind == "coopmat" and path.on_xmx, quant


def test_alchemist_on_vulkan_stays_on_the_vector_engines(catalog: Catalog) -> None:
    a770 = gpu(catalog, "intel-arc-a770")
    mmq = intel_prompt_path("vulkan", a770, "q4_k_m")
    shader = intel_prompt_path("vulkan", a770, "iq4_xs")
    assert mmq is not None and mmq.kind == "mmq" and not mmq.on_xmx
    assert shader is not None and shader.kind == "fp16-shader" and not shader.on_xmx
    assert "Q4_K" in VULKAN_MMQ_TYPES and "IQ4_XS" not in VULKAN_MMQ_TYPES
    # IQ3_S has MMQ kernels since PR #28822 (September 2026): a current build takes them
    iq3 = intel_prompt_path("vulkan", a770, "iq3_s")
    assert iq3 is not None and iq3.kind == "mmq"
    # an Xe2 card on a build before cooperative matrices were enabled for Intel takes the same paths
    old = intel_prompt_path("vulkan", gpu(catalog, "intel-arc-b580"), "q4_k_m", INTEL_COOPMAT_BUILD - 1)
    assert old is not None and old.kind == "mmq"


def test_sycl_dequantises_to_fp16_for_an_xmx_gemm(catalog: Catalog) -> None:
    for gpu_id in ("intel-arc-a770", "intel-arc-pro-b70"):
        path = intel_prompt_path("sycl", gpu(catalog, gpu_id), "q4_k_m")
        assert path is not None and path.kind == "sycl-fp16-gemm" and path.on_xmx
    # the XMX path needs a GGML_SYCL_F16 build (off by default): the words say it is assumed
    sycl = intel_prompt_path("sycl", gpu(catalog, "intel-arc-pro-b70"), "q4_k_m")
    assert sycl is not None and "GGML_SYCL_F16=ON" in str(sycl.why_said)
    # BF16 is ruled on elsewhere (speed/sycl_bf16.py, speed.bf16_on_scalar_shaders); other vendors not at all
    assert intel_prompt_path("sycl", gpu(catalog, "intel-arc-pro-b70"), "bf16") is None
    assert intel_prompt_path("vulkan", gpu(catalog, "nvidia-geforce-rtx-3070"), "q4_k_m") is None
    assert intel_prompt_path("cuda", gpu(catalog, "intel-arc-pro-b70"), "q4_k_m") is None


def _prefill(
    catalog: Catalog, gpu_id: str, quant: str, speed_factors: Catalog | None = None
) -> tuple[float, str]:
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    cat = speed_factors or catalog
    model = from_catalog(cat.model("llama-3.1-8b"))  # type: ignore[arg-type] - GEMMs alone, no scans
    result = fit(
        model, simulate(bare, [gpu(cat, gpu_id)]), Request(quant=quant, backend="vulkan"), cat, live=False
    )
    assert result.speed.prefill_tokens_per_s is not None
    return result.speed.prefill_tokens_per_s, " ".join(str(x) for x in result.speed.explanation)


def test_a_scalar_path_type_is_not_given_the_xmx_factor(catalog: Catalog) -> None:
    """IQ4_XS on an A770 (FP16 shaders) and Q4_K_M on it (MMQ) run at the shader-core share alone: the
    fitted matrix-engine factor never reaches them, and taking it out of the catalog changes neither."""
    factor = speed.speed_factor(catalog, "intel", "vulkan")
    assert factor is not None and factor.prefill_coopmat_factor > 1.5
    plain = dataclasses.replace(
        catalog,
        speed_factors=tuple(
            dataclasses.replace(f, prefill_coopmat_factor=1.0) if f is factor else f
            for f in catalog.speed_factors
        ),
    )
    for quant in ("iq4_xs", "q4_k_m"):
        with_factor, why = _prefill(catalog, "intel-arc-a770", quant)
        without, _ = _prefill(catalog, "intel-arc-a770", quant, plain)
        assert with_factor == pytest.approx(without)
        assert "XMX engines stay idle" in why
        assert "through Vulkan cooperative matrices" not in why
    b70, _ = _prefill(catalog, "intel-arc-pro-b70", "iq4_xs")
    b70_plain, _ = _prefill(catalog, "intel-arc-pro-b70", "iq4_xs", plain)
    assert b70 / b70_plain == pytest.approx(factor.prefill_coopmat_factor, rel=0.02)


def test_the_explanation_names_the_path(catalog: Catalog) -> None:
    _, a770_mmq = _prefill(catalog, "intel-arc-a770", "q4_k_m")
    _, a770_iq = _prefill(catalog, "intel-arc-a770", "iq4_xs")
    _, b70 = _prefill(catalog, "intel-arc-pro-b70", "q4_k_m")
    assert "integer-dot MMQ shaders" in a770_mmq
    assert "FP16 dequantising shaders on the vector engines (no MMQ kernel" in a770_iq
    assert "slower than MMQ" in a770_iq and "pull/28822" in a770_iq
    assert "dequantised inside cooperative-matrix shaders" in b70
    assert "ggml-org/ggml@d99724f" in b70


def test_one_xmx_share_serves_every_xe2_card(catalog: Catalog) -> None:
    """The matrix-engine factor is fitted over the FP32 share; it is one share of the XMX peak for every Xe2
    card only while their INT8 XMX peaks (the catalog's cited int8_tops) stand in one ratio to FP32."""
    ratios = {
        spec.id: spec.int8_tops / spec.fp32_tflops
        for spec in catalog.gpus
        if spec.vendor == "intel"
        and spec.int8_tops
        and spec.fp32_tflops
        and "xe2" in (spec.architecture or "").lower()
    }
    assert {"intel-arc-pro-b70", "intel-arc-pro-b60", "intel-arc-b580", "intel-arc-b570"} <= set(ratios)
    assert max(ratios.values()) / min(ratios.values()) < 1.11  # 16.0 (B70, B60) to 17.6 (B570)


def test_an_intel_igpus_packed_fp16_figure_is_not_its_prompt_peak(catalog: Catalog) -> None:
    """The catalog's fp16_tflops on Intel's iGPUs is the vector engines' packed FP16 rate (2 × FP32,
    TechPowerUp), neither the XMX rate nor the FP32 figure every Intel prompt share is fitted against (the
    XMX uplift is prefill_coopmat_factor), so the prompt peak of an Arc 140V is its FP32 figure, as for the
    discrete cards."""
    lnl = gpu(catalog, "intel-arc-140v")
    assert lnl.fp16_tflops and lnl.fp32_tflops and lnl.fp16_tflops > lnl.fp32_tflops
    found = speed.prefill_peak_tflops(lnl)
    assert found is not None and found[0] == lnl.fp32_tflops
    b70 = gpu(catalog, "intel-arc-pro-b70")
    assert speed.prefill_peak_tflops(b70) == speed.prefill_peak_tflops(b70, fp32=False)


def test_bf16_cooperative_matrices_are_their_own_path(catalog: Catalog) -> None:
    """BF16 on Xe2 under a driver that may offer BF16 matrices takes the FP32-accumulate BF16 family, named
    apart from the FP16-accumulate coopmat path the XMX factor is fitted on (speed/vulkan_bf16.py)."""
    b70 = gpu(catalog, "intel-arc-pro-b70")
    path = intel_prompt_path("vulkan", b70, "bf16", bf16_scalar=None)
    assert path is not None and path.kind == "bf16-coopmat"
    assert speed.intel_bf16_matrices("vulkan", "bf16", b70, None)
    assert not speed.intel_bf16_matrices("vulkan", "f16", b70, None)
    assert not speed.intel_bf16_matrices("sycl", "bf16", b70, None)
    assert not speed.intel_bf16_matrices("vulkan", "bf16", gpu(catalog, "intel-arc-a770"), None)
