"""An engine with GPU kernels of its own (mlx-lm) decodes at its own class × engine factors where the catalog
has them (speed.engine_gpu_factor), at llama.cpp's backend factors where it has none, and borrows only the
prefill shares its own row lacks."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.whatif import simulate


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def mac(catalog: Catalog, gpu_id: str) -> Machine:
    spec = catalog.gpu(gpu_id)
    assert spec is not None
    bare = Machine(cpu=CPU(logical_cores=12), memory=Memory(total_bytes=64 * GIB), gpus=())
    return simulate(bare, [spec], 64)


def test_mlx_uses_its_own_row_and_the_metal_prefill(catalog: Catalog) -> None:
    box = mac(catalog, "apple-m4-max")
    gpu, spec = box.gpus[0], catalog.spec_for(box.gpus[0])
    own, is_own = speed.engine_gpu_factor(catalog, gpu, spec, "mlx", "metal")
    metal = speed.gpu_factor(catalog, gpu, spec, "metal")
    assert is_own and own is not None and metal is not None
    assert own.backend == "mlx" and own.per_layer_us != metal.per_layer_us
    # no mlx-lm prompt rows are fitted: the prefill share is llama.cpp's Metal one
    assert own.prefill_compute_efficiency == metal.prefill_compute_efficiency
    # llama.cpp on the same machine keeps the Metal row
    assert speed.engine_gpu_factor(catalog, gpu, spec, "llama.cpp", "metal") == (metal, False)


def test_a_class_without_an_mlx_row_falls_back_and_says_so(catalog: Catalog) -> None:
    rows = tuple(f for f in catalog.speed_factors if f.backend != "mlx")
    bare = replace(catalog, speed_factors=rows)
    req = Request(quant="mlx-4bit", engine="mlx", context=4096)
    fallback = fit(model(LLAMA_31_8B), mac(bare, "apple-m4-max"), req, bare, live=False)
    own = fit(model(LLAMA_31_8B), mac(catalog, "apple-m4-max"), req, catalog, live=False)
    assert any("llama.cpp's Metal factors" in e for e in fallback.speed.explanation)
    assert any("mlx-lm's own factors for" in e for e in own.speed.explanation)
    assert own.speed.decode_tokens_per_s != fallback.speed.decode_tokens_per_s
    # the same prompt share; each engine pays its own per-layer cost once per 512-token micro-batch
    gpu, spec = mac(catalog, "apple-m4-max").gpus[0], catalog.spec_for(mac(catalog, "apple-m4-max").gpus[0])
    mlx, _ = speed.engine_gpu_factor(catalog, gpu, spec, "mlx", "metal")
    metal = speed.gpu_factor(catalog, gpu, spec, "metal")
    assert mlx is not None and metal is not None
    assert own.speed.prefill_tokens_per_s and fallback.speed.prefill_tokens_per_s
    fixed_gap = 32 * (metal.per_layer_us - mlx.per_layer_us) * 1e-6 / 512
    gap = 1 / fallback.speed.prefill_tokens_per_s - 1 / own.speed.prefill_tokens_per_s
    assert gap == pytest.approx(fixed_gap, rel=1e-6)
