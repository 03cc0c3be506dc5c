"""Issue 28 (28-mgpu-pp): a layer split hands each prompt micro-batch's hidden state from GPU to GPU
(speed/stage_copy.py), and llama.cpp's pipeline keeps going across the batches of a long prompt.

These tests pin the mechanisms (bytes, links, the schedule), not fitted values.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.estimate.speed import prefill, stage_copy
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.whatif import simulate


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def box(catalog: Catalog, gpu_id: str, count: int) -> Machine:
    spec = catalog.gpu(gpu_id)
    assert spec is not None
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=256 * GIB), gpus=())
    return simulate(bare, [spec] * count)


def without_hand_off_latency(catalog: Catalog) -> Catalog:
    return replace(catalog, speed_factors=tuple(replace(f, per_gpu_us=0.0) for f in catalog.speed_factors))


def test_the_hidden_state_of_a_micro_batch_is_its_f32_residual_stream() -> None:
    assert stage_copy.hidden_state_bytes(4096, 512) == 512 * 4096 * 4
    # over 26 GB/s, shared by the micro-batch's tokens; staged through host memory it crosses twice
    direct = stage_copy.boundary_seconds(4096, 512, 26.0, staged=False, latency_us=0.0)
    assert direct == pytest.approx(512 * 4096 * 4 / 26e9 / 512)
    staged = stage_copy.boundary_seconds(4096, 512, 26.0, staged=True, latency_us=0.0)
    assert staged == pytest.approx(2 * direct)
    # the hand-off latency once per micro-batch
    late = stage_copy.boundary_seconds(4096, 512, 26.0, staged=False, latency_us=256.0)
    assert late - direct == pytest.approx(256e-6 / 512)


def test_geforce_ada_stages_peer_copies_a_workstation_card_does_not(catalog: Catalog) -> None:
    assert stage_copy.staged_through_host(catalog.gpu("nvidia-geforce-rtx-4090"))
    assert not stage_copy.staged_through_host(catalog.gpu("nvidia-rtx-6000-ada"))
    assert not stage_copy.staged_through_host(catalog.gpu("nvidia-h100-pcie"))
    assert not stage_copy.staged_through_host(None)


def test_a_short_prompt_on_eight_geforce_cards_pays_seven_copies(catalog: Catalog) -> None:
    """pp512 is one micro-batch: no pipelining, so the GPUs run in turn and each of the seven boundaries adds
    its copy to the prompt's time."""
    cat = without_hand_off_latency(catalog)
    m = model(LLAMA_31_8B)
    req = Request(quant="q4_k_m", context=512)
    one = fit(m, box(cat, "nvidia-geforce-rtx-4090", 1), req, cat, live=False).speed.prefill_tokens_per_s
    eight = fit(m, box(cat, "nvidia-geforce-rtx-4090", 8), req, cat, live=False)
    assert one is not None and eight.speed.prefill_tokens_per_s is not None
    per_boundary = stage_copy.boundary_seconds(4096, 512, 26.0, staged=True, latency_us=0.0)
    assert 1 / eight.speed.prefill_tokens_per_s - 1 / one == pytest.approx(7 * per_boundary, rel=0.1)
    assert any("hidden state" in line for line in eight.speed.explanation)
    # a card with peer access copies once over its link: less than half the staged cost
    pro_one = fit(m, box(cat, "nvidia-rtx-6000-ada", 1), req, cat, live=False).speed.prefill_tokens_per_s
    pro_eight = fit(m, box(cat, "nvidia-rtx-6000-ada", 8), req, cat, live=False).speed.prefill_tokens_per_s
    assert pro_one is not None and pro_eight is not None
    assert 1 / pro_eight - 1 / pro_one < 0.6 * (1 / eight.speed.prefill_tokens_per_s - 1 / one)


def test_one_gpu_hands_nothing_over(catalog: Catalog) -> None:
    one = fit(model(LLAMA_31_8B), box(catalog, "nvidia-geforce-rtx-4090", 1), Request(quant="q4_k_m"), catalog,
              live=False)  # fmt: skip
    assert not any("hidden state" in line for line in one.speed.explanation)


def test_the_pipeline_keeps_going_across_the_batches_of_a_long_prompt() -> None:
    """llama_context::decode returns without synchronising (src/llama-context.cpp@4c7103b, "//synchronize();")
    and llama-bench synchronises once after the prompt's last batch, so micro-batches of the next batch enter
    the pipeline behind those of the one before: on two equal GPUs a long prompt approaches one stage-time
    per micro-batch."""
    assert prefill.pipeline_seconds([1.0, 1.0], 4) == pytest.approx((2 + 3) / 4)
    assert prefill.pipeline_seconds([1.0, 1.0], 64) == pytest.approx((2 + 63) / 64)


def test_more_gpus_than_copies_hold_the_host_behind_the_oldest_micro_batch() -> None:
    """Each split's user inputs wait on the host for the event the same split recorded GGML_SCHED_MAX_COPIES
    micro-batches before (ggml_backend_event_synchronize, ggml/src/ggml-backend.cpp@d99724f), so with 8
    equal GPUs and 4 copies micro-batch j + 1 starts only once micro-batch j - 4 has left the last GPU."""
    eight = [1.0] * 8
    # four micro-batches fit in the copies: one pass plus one stage each
    assert prefill.pipeline_seconds(eight, 4) == pytest.approx((8 + 3) / 4)
    # a long prompt: one micro-batch per 8 / 5 stage-times
    assert prefill.pipeline_seconds(eight, 200) == pytest.approx(8 / 5, rel=0.02)
    # one micro-batch: the GPUs in turn
    assert prefill.pipeline_seconds([1.0, 3.0], 1) == pytest.approx(4.0)


def test_micro_batches_in_a_pipeline_are_the_whole_prompts() -> None:
    from rigcheck.core.estimate.placement.types import Placement

    split = Placement(gpu_bytes=(1, 1), cpu_bytes=0, gpu_layers=80, total_layers=80, offload="none",
                      split="layer", cpu_expert_layers=0)  # fmt: skip
    assert prefill.pipelined_ubatches(split, 2, 32768, 512, 0.0) == 64
    assert prefill.pipelined_ubatches(split, 2, 512, 512, 0.0) == 1
