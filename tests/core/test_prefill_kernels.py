"""Issue 28 prefill: the quantised-weight kernel llama.cpp's CUDA/HIP backend picks per type, GPU and
micro-batch (ggml_cuda_should_use_mmq, mmq.cu@027ef87), and what the dequantise + BLAS path costs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes.archs import LLAMA_31_8B, model
from fakes.machines import one_catalog_gpu
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.speed import kernels

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


one_gpu = one_catalog_gpu


def test_ggml_type_of_a_gguf_mix() -> None:
    assert kernels.ggml_type("q4_k_m") == "Q4_K"
    assert kernels.ggml_type("ud-q3_k_xl") == "Q3_K"
    assert kernels.ggml_type("q8_0") == "Q8_0"
    assert kernels.ggml_type("ud-q8_k_xl") == "Q8_0"  # Q8_K is an activation type; the file stores Q8_0
    assert kernels.ggml_type("iq2_xs") == "IQ2_XS"
    assert kernels.ggml_type("fp16") is None


@pytest.mark.parametrize(
    ("gpu_id", "quant", "ubatch", "experts", "name"),
    [
        ("amd-radeon-rx-7900-xtx", "q6_k", 512, 0, "dequantise + hipBLAS"),  # RDNA 3.0: Q6_K MMQ only <= 128
        ("amd-radeon-rx-7900-xtx", "q6_k", 128, 0, "MMQ"),
        ("amd-radeon-rx-7900-xtx", "q6_k", 512, 128, "MMQ"),  # 64+ experts: MMQ
        ("amd-radeon-rx-7900-xtx", "q4_0", 512, 0, "MMQ"),
        ("amd-radeon-rx-7900-xtx", "q5_k_m", 512, 0, "MMQ"),
        ("amd-radeon-rx-7900-xtx", "q2_k", 512, 0, "dequantise + hipBLAS"),
        ("amd-ryzen-ai-max-plus-395-radeon-8060s", "q6_k", 256, 0, "MMQ"),  # RDNA 3.5: up to 256
        ("amd-ryzen-ai-max-plus-395-radeon-8060s", "q6_k", 512, 0, "dequantise + hipBLAS"),
        ("amd-radeon-ai-pro-r9700", "q6_k", 512, 0, "MMQ"),  # RDNA 4: always MMQ
        ("amd-instinct-mi250x", "q8_0", 512, 0, "dequantise + hipBLAS"),  # CDNA 2 at 512 tokens
        ("amd-instinct-mi250x", "q4_0", 512, 0, "MMQ"),
        ("amd-instinct-mi250x", "q4_k_m", 256, 0, "MMQ"),
        ("nvidia-geforce-rtx-4090", "q6_k", 512, 0, "MMQ"),  # int8 tensor cores: always MMQ
        ("nvidia-tesla-p100-pcie-16gb", "q4_k_m", 512, 0, "dequantise + cuBLAS"),  # sm_60: no __dp4a
        ("nvidia-tesla-p100-pcie-16gb", "q4_k_m", 32, 128, "dequantise + cuBLAS"),  # experts, any batch
        ("nvidia-geforce-gtx-1080", "q4_k_m", 512, 0, "MMQ"),  # sm_61: dp4a MMQ
    ],
)
def test_kernel_choice_follows_ggml_cuda_should_use_mmq(
    catalog: Catalog, gpu_id: str, quant: str, ubatch: int, experts: int, name: str
) -> None:
    found = kernels.cuda_prompt_kernel(catalog.gpu(gpu_id), quant, ubatch=ubatch, experts=experts)
    assert found is not None
    assert found.name == name
    assert found.blas == (name != "MMQ")


def test_unquantized_weights_name_no_mmq_kernel(catalog: Catalog) -> None:
    assert kernels.cuda_prompt_kernel(catalog.gpu("nvidia-geforce-rtx-4090"), "fp16", ubatch=512) is None


def test_dequantise_traffic_is_the_weights_plus_an_fp16_copy_written_and_read() -> None:
    # 1 GB of 8-bit weights: 1e9 weights, read once, written and read back at 2 bytes each
    assert kernels.dequantise_bytes(1e9, 8.0) == pytest.approx(1e9 + 4e9)


def test_q6k_prefill_slower_than_q4_0_on_rdna3_with_the_kernel_named(catalog: Catalog) -> None:
    # the class's unquantized share pinned below its MMQ share: how far the BLAS path falls behind is the
    # fitted float factor's (it moves with every refit: 0.92 before the R9700 hybrid rows joined, 1.15
    # after, when the quantised share fell and the FP16 one stayed), so the test fixes it and checks the path
    rows = tuple(
        replace(f, prefill_float_factor=0.8) if (f.hw_class, f.backend) == ("amd-consumer", "rocm") else f
        for f in catalog.speed_factors
    )
    pinned = replace(catalog, speed_factors=rows)
    machine = one_gpu(pinned, "amd-radeon-rx-7900-xtx")
    m = model(LLAMA_31_8B)
    q6 = fit(m, machine, Request(quant="q6_k", backend="rocm"), pinned, live=False).speed
    q4 = fit(m, machine, Request(quant="q4_0", backend="rocm"), pinned, live=False).speed
    assert q6.prefill_tokens_per_s and q4.prefill_tokens_per_s
    assert q6.prefill_tokens_per_s < 0.9 * q4.prefill_tokens_per_s
    assert any("Q6_K weights" in line and "dequantise + hipBLAS" in line for line in q6.explanation)
    assert any("Q4_0 weights" in line and "MMQ" in line for line in q4.explanation)


def test_the_blas_path_uses_the_class_unquantized_share(catalog: Catalog) -> None:
    """A larger fitted FP16 share makes the Q6_K (hipBLAS) prompt faster on RDNA 3 and leaves the MMQ one
    (Q4_0) as it was."""
    machine = one_gpu(catalog, "amd-radeon-rx-7900-xtx")
    m = model(LLAMA_31_8B)
    rows = tuple(
        replace(f, prefill_float_factor=2 * f.prefill_float_factor)
        if (f.hw_class, f.backend) == ("amd-consumer", "rocm")
        else f
        for f in catalog.speed_factors
    )
    faster = replace(catalog, speed_factors=rows)
    for quant, moves in (("q6_k", True), ("q4_0", False)):
        a = fit(
            m, machine, Request(quant=quant, backend="rocm"), catalog, live=False
        ).speed.prefill_tokens_per_s
        b = fit(
            m, machine, Request(quant=quant, backend="rocm"), faster, live=False
        ).speed.prefill_tokens_per_s
        assert a and b
        assert (b > 1.2 * a) if moves else b == pytest.approx(a)


def test_vulkan_takes_no_cuda_kernel(catalog: Catalog) -> None:
    machine = one_gpu(catalog, "amd-radeon-rx-7900-xtx")
    speed = fit(
        model(LLAMA_31_8B), machine, Request(quant="q6_k", backend="vulkan"), catalog, live=False
    ).speed
    assert not any("hipBLAS" in line or "MMQ" in line for line in speed.explanation)
