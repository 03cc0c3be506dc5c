"""Several GPUs as llama.cpp uses them: the layer split over every visible GPU, -sm none, -ts, and the
per-GPU hand-off cost of catalog/speed.toml (per_gpu_us, for each further GPU of a layer split)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.estimate.placement.split import layer_devices
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.whatif import simulate

GPU = "nvidia-geforce-rtx-4090"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def box(catalog: Catalog, count: int) -> Machine:
    spec = catalog.gpu(GPU)
    assert spec is not None
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    return simulate(bare, [spec] * count)


def with_hand_off(catalog: Catalog, us: float) -> Catalog:
    rows = tuple(replace(f, per_gpu_us=us) for f in catalog.speed_factors)
    return replace(catalog, speed_factors=rows)


def test_layers_go_to_devices_as_llama_cpp_assigns_them() -> None:
    # llama.cpp: layer il on the first device whose cumulative share exceeds il / (n_layer + 1); the output
    # layer takes slot n_layer
    assert layer_devices(3, [1.0, 1.0]) == [0, 0, 1, 1]
    assert layer_devices(7, [3.0, 1.0]) == [0, 0, 0, 0, 0, 0, 1, 1]
    assert layer_devices(4, [1.0]) == [0] * 5


def test_each_further_gpu_of_a_layer_split_pays_its_hand_off(catalog: Catalog) -> None:
    costly = with_hand_off(catalog, 500.0)
    req = Request(quant="q4_k_m")
    one = fit(model(LLAMA_31_8B), box(costly, 1), req, costly, live=False).speed.decode_tokens_per_s
    two = fit(model(LLAMA_31_8B), box(costly, 2), req, costly, live=False).speed.decode_tokens_per_s
    eight = fit(model(LLAMA_31_8B), box(costly, 8), req, costly, live=False).speed.decode_tokens_per_s
    assert one is not None and two is not None and eight is not None
    # the same bytes at the same bandwidth: only the hand-offs differ (one, then seven, of 500 µs)
    assert 1 / two - 1 / one == pytest.approx(500e-6, rel=0.05)
    assert 1 / eight - 1 / one == pytest.approx(7 * 500e-6, rel=0.05)
    # -sm none keeps it on one GPU: no hand-off
    alone = fit(model(LLAMA_31_8B), box(costly, 8), req, costly, live=False, split="none")
    assert alone.speed.decode_tokens_per_s == pytest.approx(one)
    assert sum(1 for b in alone.placement.gpu_bytes if b) == 1


def test_a_tensor_split_that_overflows_a_gpu_does_not_fit(catalog: Catalog) -> None:
    req = Request(quant="bf16")  # ~15 GiB of weights: all of it on one 24 GB card is fine, on the other too
    pair = box(catalog, 2)
    even = fit(model(LLAMA_31_8B), pair, req, catalog, live=False, offload="none")
    assert even.verdict == "fits"
    lopsided = fit(model(LLAMA_31_8B), pair, req, catalog, live=False, offload="none", tensor_split=(1, 0))
    assert lopsided.verdict == "fits"  # -ts 1,0: everything on GPU 0, which holds it
    assert lopsided.placement.gpu_bytes[1] == 0
    big = Request(quant="bf16", context=131072)
    assert fit(model(LLAMA_31_8B), pair, big, catalog, live=False, offload="none").verdict == "fits"
    squeezed = fit(model(LLAMA_31_8B), pair, big, catalog, live=False, offload="none", tensor_split=(1, 0))
    assert squeezed.verdict == "does_not_fit"


def test_vllm_shards_over_every_gpu_only_when_one_cannot_hold_it(catalog: Catalog) -> None:
    from fakes.archs import LLAMA_31_70B

    pair = box(catalog, 2)
    small = fit(model(LLAMA_31_8B), pair, Request(quant="bf16", engine="vllm"), catalog, live=False)
    assert small.verdict == "fits"
    assert sum(1 for b in small.placement.gpu_bytes if b) == 1  # vLLM's default: one GPU
    # 70 GB of FP8 weights: four 24 GB cards hold a quarter each
    big = fit(model(LLAMA_31_70B), box(catalog, 4), Request(quant="fp8", engine="vllm"), catalog, live=False)
    assert big.placement.split == "tensor" and all(big.placement.gpu_bytes)


def test_tensor_parallel_pays_two_all_reduces_per_layer_by_link(catalog: Catalog) -> None:
    from rigcheck.core.estimate.speed.multigpu import allreduce_us, link_between

    h100 = catalog.gpu("nvidia-h100-sxm5")
    pcie = catalog.gpu(GPU)
    assert h100 is not None and pcie is not None
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    hgx = simulate(bare, [h100] * 8)
    assert link_between(hgx.gpus, [h100] * 8) == "nvlink"
    assert link_between(box(catalog, 2).gpus, [pcie] * 2) == "pcie"
    assert allreduce_us("nvlink", 2) == 8.7 and allreduce_us("nvlink", 8) == 11.8
    assert allreduce_us("unknown", 4) is None
    req = Request(quant="bf16", engine="vllm")
    layers = LLAMA_31_8B.num_layers
    for count, us in ((2, 8.7), (8, 11.8)):
        machine = simulate(bare, [h100] * count)
        sharded = fit(model(LLAMA_31_8B), machine, req, catalog, live=False, split="tensor")
        assert sharded.placement.split == "tensor"
        words = " ".join(sharded.speed.explanation)
        assert f"{2 * layers} all-reduces per token at {us} µs" in words
        assert "sglang PR #2904" in words
    two = fit(model(LLAMA_31_8B), simulate(bare, [h100] * 2), req, catalog, live=False, split="tensor")
    eight = fit(model(LLAMA_31_8B), hgx, req, catalog, live=False, split="tensor")
    one = fit(model(LLAMA_31_8B), simulate(bare, [h100]), req, catalog, live=False)
    speeds = [r.speed.decode_tokens_per_s for r in (one, two, eight)]
    assert all(speeds)
    assert speeds[0] < speeds[1] < speeds[2]  # each GPU reads a share of the weights, in parallel
