"""Issue 28 prefill: llama.cpp's pipeline parallelism over a layer split, and the RDNA 4 matrix peak.

The factors are fitted (benchmarks/fit_speed.py); these tests pin how the estimator applies the mechanisms,
not fitted values.
"""

from __future__ import annotations

import pytest

from fakes.archs import LLAMA_31_8B, LLAMA_31_70B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.placement.types import Placement
from rigcheck.core.estimate.speed import prefill
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.whatif import simulate

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def gpus(catalog: Catalog, gpu_id: str, count: int) -> Machine:
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=256 * GIB), gpus=())
    return simulate(bare, [catalog.gpu(gpu_id)] * count, 256)  # type: ignore[list-item]


def placement(gpu_layers: int = 80, total: int = 80, split: str = "layer", cpu_experts: int = 0) -> Placement:
    return Placement(
        gpu_bytes=(1, 1), cpu_bytes=0, gpu_layers=gpu_layers, total_layers=total, offload="none",
        split=split, cpu_expert_layers=cpu_experts,  # type: ignore[arg-type]
    )  # fmt: skip


def test_micro_batches_in_flight_follow_llama_cpps_conditions() -> None:
    # one 2048-token batch of 512-token micro-batches: four, the scheduler's copies
    assert prefill.pipelined_ubatches(placement(), 2, 2048, 512, 0.0) == 4
    assert prefill.pipelined_ubatches(placement(), 2, 1024, 512, 0.0) == 2
    # a prompt longer than one batch: llama_decode does not synchronise between batches, so all of its
    # micro-batches go through one pipeline (the copies bound it in pipeline_seconds)
    assert prefill.pipelined_ubatches(placement(), 2, 32768, 512, 0.0) == 64
    # nothing to overlap: one micro-batch, one GPU, a tensor split, layers or experts in RAM
    assert prefill.pipelined_ubatches(placement(), 2, 512, 512, 0.0) == 1
    assert prefill.pipelined_ubatches(placement(), 1, 2048, 512, 0.0) == 1
    assert prefill.pipelined_ubatches(placement(split="tensor"), 2, 2048, 512, 0.0) == 1
    assert prefill.pipelined_ubatches(placement(gpu_layers=60), 2, 2048, 512, 1e9) == 1
    assert prefill.pipelined_ubatches(placement(cpu_experts=4), 2, 2048, 512, 0.0) == 1


def test_pipeline_time_is_one_pass_plus_the_slowest_gpu_per_further_micro_batch() -> None:
    # two equal GPUs, four micro-batches: 5 stage-times for 4 micro-batches instead of 8
    assert prefill.pipeline_seconds([1.0, 1.0], 4) == pytest.approx((2 + 3) / 4)
    # one micro-batch: the GPUs take turns, the sum
    assert prefill.pipeline_seconds([1.0, 3.0], 1) == pytest.approx(4.0)
    # an unbalanced split is held to its slowest GPU
    assert prefill.pipeline_seconds([1.0, 3.0], 4) == pytest.approx((4 + 3 * 3) / 4)


def test_two_gpus_overlap_a_long_prompt_and_say_so(catalog: Catalog) -> None:
    two = gpus(catalog, "nvidia-geforce-rtx-4090", 2)
    m = model(LLAMA_31_70B)
    short = fit(m, two, Request(quant="q4_k_m", context=512), catalog, live=False)
    long = fit(m, two, Request(quant="q4_k_m", context=2048), catalog, live=False)
    assert short.placement.split == "layer" and short.placement.gpu_layers == short.placement.total_layers
    assert short.speed.prefill_tokens_per_s and long.speed.prefill_tokens_per_s
    ratio = long.speed.prefill_tokens_per_s / short.speed.prefill_tokens_per_s
    # balanced halves, four micro-batches: 2 × 4 / (4 + 1) = 1.6 as fast
    assert ratio == pytest.approx(1.6, rel=0.05)
    assert any("pipeline parallelism" in line for line in long.speed.explanation)
    assert not any("pipeline parallelism" in line for line in short.speed.explanation)


def test_one_gpu_gets_no_pipeline(catalog: Catalog) -> None:
    one = gpus(catalog, "nvidia-geforce-rtx-4090", 1)
    m = model(LLAMA_31_8B)
    long = fit(m, one, Request(quant="q4_k_m", context=2048), catalog, live=False)
    assert not any("pipeline parallelism" in line for line in long.speed.explanation)


def test_rdna4_prompt_peak_is_its_wmma_rate_rdna3_keeps_its_figure(catalog: Catalog) -> None:
    r9700 = catalog.gpu("amd-radeon-ai-pro-r9700")
    xtx = catalog.gpu("amd-radeon-rx-7900-xtx")
    assert r9700 is not None and xtx is not None and r9700.fp16_tflops and xtx.fp16_tflops
    found = speed.prefill_peak_tflops(r9700)
    assert found is not None
    assert found[0] == pytest.approx(2 * r9700.fp16_tflops)
    assert "RDNA 4" in found[1]
    assert speed.prefill_peak_tflops(xtx) == (xtx.fp16_tflops, f"{xtx.fp16_tflops:g} TFLOPS FP16/BF16 tensor")


def test_rdna3_and_rdna4_share_one_amd_consumer_share(catalog: Catalog) -> None:
    """With the matrix peak, one fitted share serves both generations: the R9700 (64 CUs at 1024 FLOPs per
    clock) runs a dense prompt faster than the RX 7900 XTX (96 CUs at 512), as measured (R9700 Q4_0 ~65
    TFLOPS, 7900 XTX ~45, benchmarks/prefill_analysis.py), though its packed-FP16 figure is lower."""
    m = model(LLAMA_31_8B)
    r9700 = fit(m, gpus(catalog, "amd-radeon-ai-pro-r9700", 1), Request(quant="q4_0", backend="rocm"), catalog,
                live=False)  # fmt: skip
    xtx = fit(m, gpus(catalog, "amd-radeon-rx-7900-xtx", 1), Request(quant="q4_0", backend="rocm"), catalog,
              live=False)  # fmt: skip
    assert r9700.speed.prefill_tokens_per_s and xtx.speed.prefill_tokens_per_s
    assert r9700.speed.prefill_tokens_per_s > xtx.speed.prefill_tokens_per_s
