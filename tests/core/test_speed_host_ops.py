"""Recurrent ops an old llama.cpp build's GPU backend did not run, so ggml's scheduler ran them on the CPU
(core/estimate/speed/host_ops.py): which ops a hybrid's graph uses, which backend × build lacks them, and the
time the host fallback adds to each decoded and prompt token."""

from __future__ import annotations

import pytest

from fakes.archs import LLAMA_31_8B
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import FitResult, fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.estimate.speed.host_ops import graph_ops, host_cost, host_ops
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate

B70 = "intel-arc-pro-b70"
NANO = "nemotron-3-nano-30b-a3b"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def _arch(catalog: Catalog, model_id: str):  # type: ignore[no-untyped-def]
    return from_catalog(catalog.model(model_id)).arch  # type: ignore[arg-type]


def _fit(catalog: Catalog, build: int | None, backend: str = "sycl") -> FitResult:
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=128 * GIB), gpus=())
    machine = simulate(bare, [catalog.gpu(B70)], 128)  # type: ignore[list-item]
    model = from_catalog(catalog.model(NANO))  # type: ignore[arg-type]
    req = Request(quant="q4_k_m", context=512, engine_build=build, backend=backend)  # type: ignore[arg-type]
    return fit(model, machine, req, catalog, live=False)


def test_each_mixer_names_the_ops_its_graph_runs(catalog: Catalog) -> None:
    assert graph_ops(_arch(catalog, NANO)) == ("SSM_CONV", "SSM_SCAN")  # Mamba-2
    assert graph_ops(_arch(catalog, "qwen3.5-27b")) == ("SSM_CONV", "GATED_DELTA_NET")
    assert graph_ops(LLAMA_31_8B) == ()


def test_sycl_ran_the_mamba2_scan_on_the_host_before_b9060(catalog: Catalog) -> None:
    arch = _arch(catalog, NANO)
    (scan,) = host_ops(arch, "sycl", 9039)
    assert (scan.op, scan.first_build, scan.pr) == ("SSM_SCAN", 9060, 22149)
    assert host_ops(arch, "sycl", 9060) == ()
    assert host_ops(arch, "sycl", None) == ()  # no build named: a current one
    assert host_ops(arch, "vulkan", 9039) == ()
    assert host_ops(LLAMA_31_8B, "sycl", 9039) == ()


def test_the_fallback_costs_the_state_both_ways_the_cpu_pass_and_two_hand_offs(catalog: Catalog) -> None:
    arch = _arch(catalog, NANO)
    ops = host_ops(arch, "sycl", 9039)
    layers = arch.layer_kinds.count("linear")
    state = 4 * (arch.linear_state_elements or 0)
    cost = host_cost(
        arch, ops, link_gbs=25.0, host_bytes_per_s=50e9, cpu_flops=1e12, handoff_us=200.0, ubatch=512
    )
    assert cost is not None
    copy = 2 * state / 25e9
    cpu = max(2 * state / 50e9, 5 * (arch.linear_state_elements or 0) / 1e12)
    assert cost.decode_s == pytest.approx(layers * (copy + cpu + 2 * 200e-6))
    # a prompt copies the state once per micro-batch; the scan's FLOPs are per token
    per_batch = copy + 2 * state / 50e9 + 2 * 200e-6
    assert cost.prefill_s == pytest.approx(
        layers * (per_batch / 512 + 5 * (arch.linear_state_elements or 0) / 1e12)
    )
    # a faster link or host shortens it
    faster = host_cost(
        arch, ops, link_gbs=50.0, host_bytes_per_s=100e9, cpu_flops=1e12, handoff_us=200.0, ubatch=512
    )
    assert faster is not None and faster.decode_s < cost.decode_s
    assert (
        host_cost(arch, (), link_gbs=25.0, host_bytes_per_s=50e9, cpu_flops=1e12, handoff_us=0.0, ubatch=512)
        is None
    )


def test_an_old_sycl_build_decodes_nemotron_h_slower_by_the_fallback(catalog: Catalog) -> None:
    old = _fit(catalog, 9039).speed
    new = _fit(catalog, 9060).speed
    assert old.decode_tokens_per_s and new.decode_tokens_per_s and old.prefill_tokens_per_s
    assert new.prefill_tokens_per_s
    assert old.decode_tokens_per_s < new.decode_tokens_per_s
    assert old.prefill_tokens_per_s < new.prefill_tokens_per_s
    assert any("runs SSM_SCAN" in line and "on the CPU" in line for line in old.explanation)
    assert not any("runs SSM_SCAN" in line for line in new.explanation)
    # a current build (none named) and another backend at the same build pay nothing
    assert _fit(catalog, None).speed.decode_tokens_per_s == new.decode_tokens_per_s
    vk_old, vk_new = _fit(catalog, 9039, "vulkan").speed, _fit(catalog, 9060, "vulkan").speed
    assert vk_old.decode_tokens_per_s == vk_new.decode_tokens_per_s
