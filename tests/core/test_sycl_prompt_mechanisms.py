"""Issue 28 (28-sycl-pp): the prompt paths of llama.cpp's SYCL backend as ggml-org/ggml@d99724f's
src/ggml-sycl/ggml-sycl.cpp runs them.

- BF16 weights: since PR #22119 (b8888) ``ggml_sycl_op_mul_mat_sycl`` multiplies them with a oneDNN
  BF16 GEMM in place (oneDNN is on by default: GGML_SYCL_DNN ON); only older builds convert them to FP32.
- A mixture of experts: ``ggml_sycl_mul_mat_id`` loops over the experts a prompt micro-batch touches; an
  expert with more than 8 rows is dequantised to an FP16 copy for a oneDNN GEMM, one with fewer runs the
  quantised mat-vec kernel. The cost per expert launch is fitted (``prefill_expert_us``); the class's
  batch-shape MoE factor does not apply."""

from __future__ import annotations

import dataclasses

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.estimate.speed.sycl_bf16 import SYCL_BF16_DNNL_BUILD, sycl_bf16_on_fp32
from rigcheck.core.estimate.speed.sycl_experts import MMVQ_MAX_BATCH, sycl_expert_loop
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate

B70 = "intel-arc-pro-b70"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def test_bf16_runs_the_onednn_bf16_gemm_from_pr_22119_on() -> None:
    assert sycl_bf16_on_fp32("sycl", "bf16", SYCL_BF16_DNNL_BUILD - 1)
    assert not sycl_bf16_on_fp32("sycl", "bf16", SYCL_BF16_DNNL_BUILD)
    assert not sycl_bf16_on_fp32("sycl", "bf16", None)  # a current build
    assert not sycl_bf16_on_fp32("vulkan", "bf16", SYCL_BF16_DNNL_BUILD - 1)
    assert not sycl_bf16_on_fp32("sycl", "q8_0", SYCL_BF16_DNNL_BUILD - 1)


def test_the_expert_loop_copies_each_touched_expert_above_eight_rows(catalog: Catalog) -> None:
    arch = from_catalog(catalog.model("qwen3.5-35b-a3b")).arch  # type: ignore[arg-type]
    assert arch.num_experts == 256 and arch.experts_per_token == 8
    expert_bytes = 20e9
    loop = sycl_expert_loop(
        "sycl",
        arch,
        quantized=True,
        ubatch=512,
        expert_bytes=expert_bytes,
        moe_layers=40,
        bits_per_weight=4.8,
    )
    assert loop is not None and loop.dequantised
    assert loop.tokens_per_expert == 16
    assert loop.calls == pytest.approx(256 * 40)
    weights = expert_bytes * 8 / 4.8
    assert loop.moved_bytes == pytest.approx(expert_bytes + 4 * weights)
    # its seconds: the bytes at the bandwidth given plus the launches
    assert loop.seconds(1e11, 10.0) == pytest.approx(loop.moved_bytes / 1e11 + 256 * 40 * 10e-6)
    # a 32-token micro-batch: one row per expert, the quantised mat-vec kernel, no copy
    small = sycl_expert_loop(
        "sycl", arch, quantized=True, ubatch=32, expert_bytes=expert_bytes, moe_layers=40, bits_per_weight=4.8
    )
    assert small is not None and not small.dequantised and small.tokens_per_expert <= MMVQ_MAX_BATCH
    assert small.moved_bytes < expert_bytes
    # not the SYCL backend, unquantized experts, one token: not this path
    assert sycl_expert_loop("vulkan", arch, quantized=True, ubatch=512, expert_bytes=1, moe_layers=1,
                            bits_per_weight=4.8) is None  # fmt: skip
    assert sycl_expert_loop("sycl", arch, quantized=False, ubatch=512, expert_bytes=1, moe_layers=1,
                            bits_per_weight=16) is None  # fmt: skip
    assert sycl_expert_loop("sycl", arch, quantized=True, ubatch=1, expert_bytes=1, moe_layers=1,
                            bits_per_weight=4.8) is None  # fmt: skip


def prefill(catalog: Catalog, model_id: str, backend: str = "sycl") -> tuple[float, str]:
    spec = catalog.gpu(B70)
    assert spec is not None
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    model = from_catalog(catalog.model(model_id))  # type: ignore[arg-type]
    req = Request(quant="q4_k_m", backend=backend)  # type: ignore[arg-type]
    result = fit(model, simulate(bare, [spec]), req, catalog, live=False)
    assert result.speed.prefill_tokens_per_s is not None
    return result.speed.prefill_tokens_per_s, " ".join(str(x) for x in result.speed.explanation)


def with_factor(catalog: Catalog, factor_id: str, **changes: float) -> Catalog:
    factors = tuple(
        dataclasses.replace(f, **changes) if f.id == factor_id else f for f in catalog.speed_factors
    )
    return dataclasses.replace(catalog, speed_factors=factors)


def test_a_sycl_moe_prompt_pays_per_expert_launches_not_the_moe_factor(catalog: Catalog) -> None:
    sycl = next(f for f in catalog.speed_factors if f.id == "intel-sycl")
    assert sycl.prefill_expert_us > 0
    base, why = prefill(catalog, "qwen3.5-35b-a3b")
    assert "experts one at a time on SYCL" in why and "FP16 copy" in why
    # the class's batch-shape MoE factor is not this path's
    assert prefill(with_factor(catalog, "intel-sycl", prefill_moe_factor=0.05), "qwen3.5-35b-a3b")[0] == base
    # dearer launches, slower prompts; more experts per layer pay more of them
    slower, _ = prefill(with_factor(catalog, "intel-sycl", prefill_expert_us=4 * sycl.prefill_expert_us),
                        "qwen3.5-35b-a3b")  # fmt: skip
    assert slower < base
    # a dense model is not affected
    dense, dense_why = prefill(catalog, "qwen3.5-9b")
    assert "experts one at a time" not in dense_why
    assert prefill(with_factor(catalog, "intel-sycl", prefill_expert_us=100.0), "qwen3.5-9b")[0] == dense
    # Vulkan keeps its MoE factor
    _, vk_why = prefill(catalog, "qwen3.5-35b-a3b", "vulkan")
    assert "experts one at a time" not in vk_why
