"""Issue 28 MoE prefill: an expert GEMM's share of the peak falls with the tokens routed to each expert
(micro-batch × top-k / experts), on matrix units through the fitted MoE factor and, on a GPU without them
(Tesla P100, sm_60: dequantise + cuBLAS on shader cores), through the roofline of its batch shape."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes.archs import dense, model
from fakes.machines import one_catalog_gpu
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.speed.expert_batch import shader_expert_share
from rigcheck.core.models.spec import ArchConfig

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


one_gpu = one_catalog_gpu


def moe(experts: int, top_k: int) -> ArchConfig:
    """24 layers of hidden 2048 whose active expert parameters are the same whatever the expert count
    (top-k experts of intermediate 3072 / top_k each), so only the batch shape differs."""
    base = dense(hidden=2048, layers=24, heads=32, kv_heads=4, intermediate=768, vocab=151936)
    expert = 3 * 2048 * (3072 // top_k)
    shared = base.layer_params[0] - 3 * 2048 * 768
    return replace(
        base,
        num_experts=experts,
        experts_per_token=top_k,
        expert_params=expert,
        moe_layers=(True,) * 24,
        layer_params=(shared + experts * expert,) * 24,
        layer_active_params=(shared + top_k * expert,) * 24,
    )


def prefill(catalog: Catalog, gpu_id: str, arch: ArchConfig) -> tuple[float, tuple[str, ...]]:
    result = fit(
        model(arch), one_gpu(catalog, gpu_id), Request(quant="q4_k_m", context=512), catalog, live=False
    )
    assert result.verdict == "fits"  # all on the GPU: no PCIe copy in the prompt rate
    assert result.speed.prefill_tokens_per_s
    return result.speed.prefill_tokens_per_s, tuple(str(line) for line in result.speed.explanation)


def test_shader_share_is_the_batch_shape_over_the_ridge() -> None:
    # P100: 19.05 TFLOPS FP16 over 732.2 GB/s, a ridge of 26 FLOPs per byte
    assert shader_expert_share(64, 19.05, 732.2) == 1.0
    assert shader_expert_share(13, 19.05, 732.2) == pytest.approx(13 / (19.05e12 / 732.2e9))
    assert shader_expert_share(8, 19.05, 732.2) < shader_expert_share(16, 19.05, 732.2) < 1.0


@pytest.mark.parametrize(
    ("gpu_id", "experts", "tokens"),
    [
        ("nvidia-geforce-rtx-4090", 128, "32 tokens"),  # MMQ tiles on tensor cores: the fitted factor
        ("nvidia-tesla-p100-pcie-16gb", 256, "16 tokens"),  # cuBLAS on shader cores: below the ridge
    ],
)
def test_many_small_expert_batches_run_below_few_large_ones(
    catalog: Catalog, gpu_id: str, experts: int, tokens: str
) -> None:
    """512 tokens × 8 / 128 (or 256) experts = 32 (16) tokens per expert against 512 × 2 / 8 = 128: the same
    active weights, a lower prompt rate, and the tokens per expert named in the explanation."""
    wide, wide_why = prefill(catalog, gpu_id, moe(experts, 8))
    few, few_why = prefill(catalog, gpu_id, moe(8, 2))
    assert wide < 0.9 * few
    assert any(tokens in line for line in wide_why)
    assert not any(tokens in line for line in few_why)


def test_p100_experts_run_dequantise_and_cublas_on_shader_cores(catalog: Catalog) -> None:
    _rate, why = prefill(catalog, "nvidia-tesla-p100-pcie-16gb", moe(32, 4))
    assert any("dequantise + cuBLAS" in line for line in why)
    assert any("shader cores" in line and "ridge" in line for line in why)
    _rate, why_4090 = prefill(catalog, "nvidia-geforce-rtx-4090", moe(32, 4))
    assert not any("shader cores" in line for line in why_4090)
