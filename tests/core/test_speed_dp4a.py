"""Quantized decode on an NVIDIA GPU without __dp4a (compute capability < 6.1, the Tesla P100): bound by the
emulated integer dot products of llama.cpp's mat-vec kernels, not by its memory (core/estimate/speed/dp4a.py,
decode_nodp4a_efficiency in catalog/speed.toml)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.estimate.speed.dp4a import lacks_dp4a
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.whatif import simulate

P100 = "nvidia-tesla-p100-pcie-16gb"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def box(catalog: Catalog, gpu_id: str, count: int = 1, cc: str | None = None) -> Machine:
    spec = catalog.gpu(gpu_id)
    assert spec is not None
    if cc is not None:
        spec = replace(spec, compute_capability=cc)
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    return simulate(bare, [spec] * count)


def with_catalog_gpu(catalog: Catalog, gpu_id: str, cc: str) -> Catalog:
    gpus = tuple(replace(g, compute_capability=cc) if g.id == gpu_id else g for g in catalog.gpus)
    return replace(catalog, gpus=gpus)


def test_only_nvidia_below_6_1_lacks_dp4a(catalog: Catalog) -> None:
    assert lacks_dp4a(catalog.gpu(P100))  # sm_60
    assert not lacks_dp4a(catalog.gpu("nvidia-geforce-gtx-1080"))  # sm_61 has __dp4a
    assert not lacks_dp4a(catalog.gpu("nvidia-geforce-rtx-4090"))
    assert not lacks_dp4a(None)


def test_a_p100_decodes_a_quantized_model_slower_than_its_bandwidth_says(catalog: Catalog) -> None:
    factor = next(f for f in catalog.speed_factors if f.id == "nvidia-datacenter-cuda")
    assert factor.decode_nodp4a_efficiency is not None  # fitted from P100 rows
    req = Request(quant="q4_0")
    result = fit(model(LLAMA_31_8B), box(catalog, P100), req, catalog, live=False)
    tokens = result.speed.decode_tokens_per_s
    assert tokens is not None
    # the same card if it had __dp4a (sm_61): bandwidth-bound
    as_61 = with_catalog_gpu(catalog, P100, "6.1")
    with_dp4a = fit(model(LLAMA_31_8B), box(as_61, P100, cc="6.1"), req, as_61, live=False)
    assert with_dp4a.speed.decode_tokens_per_s is not None
    assert tokens < 0.6 * with_dp4a.speed.decode_tokens_per_s
    assert result.speed.bound_by == "compute"
    assert any("__dp4a" in line for line in result.speed.explanation)
    assert not any("__dp4a" in line for line in with_dp4a.speed.explanation)


def test_the_emulated_dot_products_follow_the_weights_not_their_bits(catalog: Catalog) -> None:
    # compute-bound on the element count: Q8_0 reads ~1.9x the bytes of Q4_0 but decodes at nearly the
    # same speed on a P100 (as the kyuz0 P100 Q4/Q8 pairs do); bandwidth would make it ~1.9x slower
    q4 = fit(model(LLAMA_31_8B), box(catalog, P100), Request(quant="q4_0"), catalog, live=False)
    q8 = fit(model(LLAMA_31_8B), box(catalog, P100), Request(quant="q8_0"), catalog, live=False)
    assert q4.speed.decode_tokens_per_s and q8.speed.decode_tokens_per_s
    assert q8.speed.decode_tokens_per_s / q4.speed.decode_tokens_per_s > 0.8


def test_unquantized_weights_take_the_float_kernels(catalog: Catalog) -> None:
    f16 = fit(model(LLAMA_31_8B), box(catalog, P100), Request(quant="f16"), catalog, live=False)
    assert f16.speed.decode_tokens_per_s is not None
    assert not any("__dp4a" in line for line in f16.speed.explanation)
