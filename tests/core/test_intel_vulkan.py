"""Intel Arc on llama.cpp's Vulkan backend (issue 28): decode at the class's fitted bandwidth share, BF16
weights read as any other on Vulkan (the SYCL DMMV penalty is SYCL's alone), and BF16 prompts off the XMX
engines where Intel's driver offers no BF16 matrices (Windows: 'bf16: 0' in every llama.cpp log of an Arc,
speed.bf16_on_scalar_shaders). Factors are the shipped ones (catalog/speed.toml)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes.estimates import fit_on, tokens_per_s
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import VULKAN_BF16_CAVEAT, FitResult
from rigcheck.core.machine import CPU, OS, Host, Machine, Memory
from rigcheck.core.whatif import simulate

GIB = 1024**3
B70 = "intel-arc-pro-b70"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return replace(load_catalog(use_overlay=False), maturities=())


def machine(catalog: Catalog, gpu_id: str, os: OS | None = None) -> Machine:
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=128 * GIB), gpus=(), host=Host(os=os))
    return simulate(bare, [catalog.gpu(gpu_id)], 128)  # type: ignore[list-item]


def weights(result: FitResult) -> int:
    """The model's weight bytes (its layers, embedding and head): roughly what a token reads."""
    return sum(result.estimate.layer_weight_bytes) + result.estimate.other_weight_bytes


def test_intel_bf16_matrices_are_ruled_by_the_driver_the_os_picks() -> None:
    assert speed.bf16_on_scalar_shaders("vulkan", "bf16", "intel", os="windows") is True
    # Mesa's ANV: 'bf16: 0' at b6715 on Battlemage, 'bf16: 1' at b8997 on Lunar Lake; the release decides
    assert speed.bf16_on_scalar_shaders("vulkan", "bf16", "intel", os="linux") is None
    assert speed.bf16_on_scalar_shaders("vulkan", "bf16", "intel") is None
    assert speed.bf16_on_scalar_shaders("vulkan", "q4_k_m", "intel", os="windows") is False
    assert speed.bf16_on_scalar_shaders("sycl", "bf16", "intel", os="windows") is False


def test_a_battlemage_decodes_within_the_span_of_current_build_rows(catalog: Catalog) -> None:
    """The bandwidth share an Arc Pro B70 decodes a dense 8B Q4_K_M at lies within the shares the kept fit
    rows measured: 0.16 (Arc Pro B70, Ubuntu's b8064 on Mesa, PMZFX data/llm/b70-qwen2-5-1-5b-q4km-vulkan.json)
    to 0.62 (Arc Pro B60 at release b8963, 18.11 t/s on Qwen3.5-27B Q4_K_S)."""
    result = fit_on(catalog, machine(catalog, B70), "llama-3.1-8b", "q4_k_m", "vulkan")
    spec = catalog.gpu(B70)
    assert spec is not None and spec.bandwidth_gbs
    share = tokens_per_s(result, "decode") * weights(result) / (spec.bandwidth_gbs * 1e9)
    assert 0.16 <= share <= 0.62


def test_bf16_weights_decode_on_vulkan_without_the_sycl_penalty(catalog: Catalog) -> None:
    """llama.cpp's Vulkan mat-vec lists BF16 (ggml_vk_mul_mat), so a dense BF16 model streams at the class's
    share like any other weight; SYCL's DMMV path reads it at decode_bf16_factor of that."""
    vulkan = speed.speed_factor(catalog, "intel", "vulkan")
    sycl = speed.speed_factor(catalog, "intel", "sycl")
    assert vulkan is not None and sycl is not None
    assert vulkan.decode_bf16_factor == 1.0 and sycl.decode_bf16_factor < 1.0
    b70 = machine(catalog, B70)
    bf16 = fit_on(catalog, b70, "qwen3-8b", "bf16", "vulkan")
    q8 = fit_on(catalog, b70, "qwen3-8b", "q8_0", "vulkan")
    # tokens/s × bytes per token: the same bandwidth time at both widths, up to the fixed per-layer cost
    per_byte = [tokens_per_s(r, "decode") * weights(r) for r in (bf16, q8)]
    assert per_byte[0] == pytest.approx(per_byte[1], rel=0.35)
    assert "BF16 mat-vec" not in " ".join(bf16.speed.explanation)
    sycl_bf16 = fit_on(catalog, b70, "qwen3-8b", "bf16", "sycl")
    assert tokens_per_s(sycl_bf16, "decode") < tokens_per_s(bf16, "decode")


def test_bf16_prompts_on_windows_leave_the_xmx_engines(catalog: Catalog) -> None:
    """Battlemage runs F16 prompt GEMMs on XMX through cooperative matrices (speed/coopmat.py); BF16 on
    Intel's Windows driver takes the scalar FP32 shaders, so the matrix-engine factor is not applied to it;
    on Linux (the Mesa release not known) the estimate names BF16 matrices, at the shader-core share either
    way."""
    factor = speed.speed_factor(catalog, "intel", "vulkan")
    assert factor is not None and factor.prefill_coopmat_factor > 1.0
    windows, linux = machine(catalog, B70, "windows"), machine(catalog, B70, "linux")
    f16 = fit_on(catalog, windows, "qwen3-8b", "f16", "vulkan")
    bf16_windows = fit_on(catalog, windows, "qwen3-8b", "bf16", "vulkan")
    bf16_linux = fit_on(catalog, linux, "qwen3-8b", "bf16", "vulkan")
    assert tokens_per_s(bf16_windows, "prefill") == pytest.approx(
        tokens_per_s(f16, "prefill") / factor.prefill_coopmat_factor, rel=0.05
    )
    said = " ".join(bf16_windows.speed.explanation)
    assert "promote it to FP32" in said and "XMX" not in said
    # the driver's BF16 matrices or the scalar shaders: one shader-core share, so no caveat about which
    assert VULKAN_BF16_CAVEAT not in bf16_linux.speed.explanation


A770 = "intel-arc-a770"


def test_intel_bf16_is_scalar_wherever_vulkan_runs_no_cooperative_matrices() -> None:
    """ggml_vk_get_device sets coopmat_bf16_support only inside ``if (device->coopmat_support)``, which
    ggml_vk_khr_cooperative_matrix_support leaves off on Intel before Xe2, so an Alchemist card's BF16 prompt
    GEMMs take the scalar FP32 shaders whatever the OS and driver."""
    for os in ("linux", "windows", None):
        assert speed.bf16_on_scalar_shaders("vulkan", "bf16", "intel", os=os, matrix_engines=False) is True
    assert speed.bf16_on_scalar_shaders("vulkan", "bf16", "intel", os="linux", matrix_engines=True) is None
    assert speed.bf16_on_scalar_shaders("vulkan", "q8_0", "intel", matrix_engines=False) is False
    # other vendors' rules do not hang on Intel's coopmat gate
    assert (
        speed.bf16_on_scalar_shaders("vulkan", "bf16", "nvidia", "580.65.06", matrix_engines=False) is False
    )


def test_an_alchemist_bf16_prompt_names_the_scalar_path_without_the_driver_caveat(catalog: Catalog) -> None:
    result = fit_on(catalog, machine(catalog, A770, "linux"), "qwen3-8b", "bf16", "vulkan")
    said = " ".join(result.speed.explanation)
    assert "promote it to FP32" in said
    assert VULKAN_BF16_CAVEAT not in result.speed.explanation


def test_a_battlemage_bf16_prompt_on_linux_names_the_mesa_release_with_bf16_matrices(
    catalog: Catalog,
) -> None:
    """Mesa's ANV exposes BF16 cooperative matrices from 25.2 on Xe-HPG and later (speed/intel_paths.py), so
    on Linux the estimate keeps the XMX path and says which Mesa it needs; Windows keeps the scalar one."""
    linux = " ".join(
        fit_on(catalog, machine(catalog, B70, "linux"), "qwen3-8b", "bf16", "vulkan").speed.explanation
    )
    assert "Mesa 25.2" in linux
    windows = " ".join(
        fit_on(catalog, machine(catalog, B70, "windows"), "qwen3-8b", "bf16", "vulkan").speed.explanation
    )
    assert "Mesa 25.2" not in windows


def test_bf16_matrices_on_linux_are_not_given_the_fp16_accumulate_xmx_factor(catalog: Catalog) -> None:
    """ggml_vk_get_mul_mat_mat_pipeline gives FP16 and every quantised type on Xe2 the FP16-accumulate
    cooperative-matrix pipelines (``.f16acc``: the rows prefill_coopmat_factor is fitted on), while BF16 has
    only ``pipeline_matmul_bf16``, built with FP32 accumulators alone (ggml_vk_load_shaders), its
    activations converted to BF16 first. So a Linux BF16 prompt on a Battlemage card keeps the class's
    shader-core share without the XMX factor, and the explanation says why."""
    factor = speed.speed_factor(catalog, "intel", "vulkan")
    assert factor is not None and factor.prefill_coopmat_factor > 1.5
    linux = machine(catalog, B70, "linux")
    f16 = fit_on(catalog, linux, "qwen3-8b", "f16", "vulkan")
    bf16 = fit_on(catalog, linux, "qwen3-8b", "bf16", "vulkan")
    assert tokens_per_s(bf16, "prefill") == pytest.approx(
        tokens_per_s(f16, "prefill") / factor.prefill_coopmat_factor, rel=0.05
    )
    said = " ".join(bf16.speed.explanation)
    assert "FP32 accumulators" in said and "Mesa 25.2" in said
    assert "through Vulkan cooperative matrices (" not in said
