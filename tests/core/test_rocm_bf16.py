"""BF16 prompt weights on llama.cpp's ROCm backend on AMD GPUs whose ISA has no BF16 arithmetic (GCN 5.1
gfx906, RDNA 1/2): hipBLAS multiplies them in FP32, so the FP32 peak applies where F16 weights get the
packed-FP16 one (core/estimate/speed/rocm_bf16.py)."""

from __future__ import annotations

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.estimate.speed.rocm_bf16 import rocm_bf16_on_fp32
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.whatif import simulate


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


@pytest.mark.parametrize(
    ("gpu_id", "expected"),
    [
        ("amd-instinct-mi50-32gb", True),  # gfx906: dot1/dot2/dot7, no dot9 (BF16 dot), no MFMA
        ("amd-radeon-rx-6700-xt", True),  # gfx1031: RDNA 2, no dot9
        ("amd-radeon-rx-7900-xtx", False),  # gfx1100: v_dot2_f32_bf16 and BF16 WMMA
        ("amd-instinct-mi100", False),  # gfx908: BF16 MFMA
        ("amd-radeon-ai-pro-r9700", False),  # gfx1201
    ],
)
def test_which_amd_gpus_have_no_bf16_arithmetic(catalog: Catalog, gpu_id: str, expected: bool) -> None:
    spec = catalog.gpu(gpu_id)
    assert spec is not None
    assert rocm_bf16_on_fp32("rocm", "bf16", spec) is expected


def test_only_bf16_weights_on_rocm_take_the_fp32_path(catalog: Catalog) -> None:
    mi50 = catalog.gpu("amd-instinct-mi50-32gb")
    assert mi50 is not None
    assert not rocm_bf16_on_fp32("rocm", "fp16", mi50)
    assert not rocm_bf16_on_fp32("rocm", "q8_0", mi50)
    assert not rocm_bf16_on_fp32("vulkan", "bf16", mi50)
    assert not rocm_bf16_on_fp32("rocm", "bf16", None)


def prefill(catalog: Catalog, quant: str) -> tuple[float, tuple[str, ...]]:
    spec = catalog.gpu("amd-instinct-mi50-32gb")
    assert spec is not None
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    req = Request(quant=quant, backend="rocm", context=4096)
    result = fit(model(LLAMA_31_8B), simulate(bare, [spec]), req, catalog, live=False)
    assert result.speed.prefill_tokens_per_s is not None
    return result.speed.prefill_tokens_per_s, result.speed.explanation


def test_an_mi50_reads_bf16_prompts_at_its_fp32_peak_and_f16_at_its_fp16_one(catalog: Catalog) -> None:
    f16, f16_why = prefill(catalog, "fp16")
    bf16, bf16_why = prefill(catalog, "bf16")
    # the same bytes and FLOPs; FP32 is half the packed-FP16 rate on gfx906 (13.4 against 26.8 TFLOPS)
    assert bf16 < 0.6 * f16
    assert any("BF16 on ROCm" in line for line in bf16_why)
    assert not any("BF16 on ROCm" in line for line in f16_why)
