"""BF16 prompts on llama.cpp's Vulkan backend: matrix cores only where the driver offers BF16 matrices
(VK_KHR_shader_bfloat16); elsewhere the scalar shaders promote BF16 to FP32 and multiply at the FP32 rate
(speed.bf16_on_scalar_shaders). Factors are the shipped ones unless a test sets them.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes.estimates import fit_on, tokens_per_s
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import VULKAN_BF16_CAVEAT, FitResult
from rigcheck.core.machine import CPU, Drivers, Machine, Memory
from rigcheck.core.whatif import simulate

GIB = 1024**3
STRIX = "amd-ryzen-ai-max-plus-395-radeon-8060s"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def machine_with(catalog: Catalog, gpu_id: str, nvidia_driver: str | None = None) -> Machine:
    bare = Machine(
        cpu=CPU(logical_cores=32),
        memory=Memory(total_bytes=128 * GIB),
        gpus=(),
        drivers=Drivers(nvidia=nvidia_driver),
    )
    return simulate(bare, [catalog.gpu(gpu_id)], 128)  # type: ignore[list-item]


def prefill(catalog: Catalog, machine: Machine, model_id: str, quant: str, backend: str) -> FitResult:
    return fit_on(replace(catalog, maturities=()), machine, model_id, quant, backend)


def rate(result: FitResult) -> float:
    return tokens_per_s(result, "prefill")


def test_the_rule_by_backend_format_vendor_and_driver() -> None:
    assert speed.bf16_on_scalar_shaders("vulkan", "bf16", "amd") is True
    assert speed.bf16_on_scalar_shaders("vulkan", "bf16", "nvidia", "575.64.05") is True
    assert speed.bf16_on_scalar_shaders("vulkan", "bf16", "nvidia", "580.65.06") is False
    assert speed.bf16_on_scalar_shaders("vulkan", "bf16", "nvidia", None) is None  # driver not known
    assert speed.bf16_on_scalar_shaders("vulkan", "bf16", "intel") is None
    # other formats and backends never take it: F16 keeps the FP16 shaders, ROCm has its own BF16 GEMMs
    assert speed.bf16_on_scalar_shaders("vulkan", "f16", "amd") is False
    assert speed.bf16_on_scalar_shaders("vulkan", "q4_k_m", "amd") is False
    assert speed.bf16_on_scalar_shaders("rocm", "bf16", "amd") is False
    assert speed.bf16_on_scalar_shaders(None, "bf16", "amd") is False


def test_the_fp32_peak_is_the_catalogs(catalog: Catalog) -> None:
    spec = catalog.gpu(STRIX)
    assert spec is not None and spec.fp32_tflops and spec.fp16_tflops
    fp16 = speed.prefill_peak_tflops(spec)
    fp32 = speed.prefill_peak_tflops(spec, fp32=True)
    assert fp16 is not None and fp32 is not None
    assert fp32[0] == spec.fp32_tflops and fp16[0] == spec.fp16_tflops
    assert "FP32" in fp32[1]
    # no FP32 figure: no estimate rather than a guess
    assert speed.prefill_peak_tflops(replace(spec, fp32_tflops=None), fp32=True) is None


def test_dense_bf16_on_strix_halo_vulkan_prompts_at_the_fp32_rate(catalog: Catalog) -> None:
    """Same model, same machine: BF16 on Vulkan runs at fp32/fp16 of F16's prompt rate (both unquantized,
    so the same float factor applies), and the explanation names the scalar shaders and its source."""
    strix = machine_with(catalog, STRIX)
    bf16 = prefill(catalog, strix, "ministral-3-14b", "bf16", "vulkan")
    f16 = prefill(catalog, strix, "ministral-3-14b", "f16", "vulkan")
    spec = catalog.gpu(STRIX)
    assert spec is not None and spec.fp32_tflops and spec.fp16_tflops
    assert rate(bf16) == pytest.approx(rate(f16) * spec.fp32_tflops / spec.fp16_tflops, rel=0.02)
    said = " ".join(bf16.speed.explanation)
    assert "scalar shaders promote it to FP32" in said and "vulkan-shaders-gen.cpp@0098fe6" in said
    assert VULKAN_BF16_CAVEAT not in said  # known, so said as a fact, not a caveat
    assert "promote" not in " ".join(f16.speed.explanation)
    # ROCm's BF16 GEMMs are not affected
    rocm = prefill(catalog, strix, "ministral-3-14b", "bf16", "rocm")
    assert "promote" not in " ".join(rocm.speed.explanation)


def test_nvidia_vulkan_depends_on_the_driver_and_says_so_when_unknown(catalog: Catalog) -> None:
    gpu = "nvidia-geforce-rtx-3090"
    old = prefill(catalog, machine_with(catalog, gpu, "570.86.16"), "llama-3.1-8b", "bf16", "vulkan")
    new = prefill(catalog, machine_with(catalog, gpu, "580.65.06"), "llama-3.1-8b", "bf16", "vulkan")
    unknown = prefill(catalog, machine_with(catalog, gpu, None), "llama-3.1-8b", "bf16", "vulkan")
    assert rate(old) < 0.6 * rate(new)
    assert rate(unknown) == pytest.approx(rate(new))
    assert VULKAN_BF16_CAVEAT in unknown.speed.explanation
    assert VULKAN_BF16_CAVEAT not in new.speed.explanation
    assert "promote it to FP32" in " ".join(old.speed.explanation)
