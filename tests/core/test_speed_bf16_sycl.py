"""BF16 weights on llama.cpp's SYCL backend: its BF16 mat-vec (the DMMV path) reads them far below the rate
of its quantized kernels, so an Arc Pro B70 decodes BF16 much slower than bytes alone say; Vulkan is not
affected (core/estimate/speed/bf16_decode.py, decode_bf16_factor in catalog/speed.toml)."""

from __future__ import annotations

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.whatif import simulate

B70 = "intel-arc-pro-b70"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def decode(catalog: Catalog, quant: str, backend: str) -> tuple[float, tuple[str, ...]]:
    spec = catalog.gpu(B70)
    assert spec is not None
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    req = Request(quant=quant, backend=backend)  # type: ignore[arg-type]
    result = fit(model(LLAMA_31_8B), simulate(bare, [spec]), req, catalog, live=False)
    assert result.speed.decode_tokens_per_s is not None
    return result.speed.decode_tokens_per_s, result.speed.explanation


def test_the_sycl_factor_is_fitted_below_one(catalog: Catalog) -> None:
    sycl = next(f for f in catalog.speed_factors if f.id == "intel-sycl")
    assert sycl.decode_bf16_factor < 0.5


def test_sycl_bf16_decodes_far_slower_than_its_bytes_say(catalog: Catalog) -> None:
    q8, _ = decode(catalog, "q8_0", "sycl")
    bf16, why = decode(catalog, "bf16", "sycl")
    # BF16 reads ~1.9x the bytes of Q8_0; bandwidth alone would give ~0.53x the speed
    assert bf16 < 0.35 * q8
    assert any("BF16 weights on sycl" in line for line in why)


def test_vulkan_bf16_reads_at_the_usual_rate(catalog: Catalog) -> None:
    q8, _ = decode(catalog, "q8_0", "vulkan")
    bf16, why = decode(catalog, "bf16", "vulkan")
    assert bf16 > 0.4 * q8
    assert not any("BF16 weights on" in line for line in why)
