"""Issue 28 (28-intel): llama.cpp's SYCL backend pays a fixed cost per mixture-of-experts layer (a host sync
and one mat-vec launch per selected expert in ggml_sycl_mul_mat_id; speed/bf16_decode.py docstring), so on an
Arc Pro B70 a 3B-active MoE decodes no faster than a 9B dense model, as PMZFX's b8840 rows show (54.65 vs
60.22 t/s), where bytes alone would make it about twice as fast. The cost is fitted (moe_layer_us of
intel-sycl in catalog/speed.toml); Vulkan has no such fitted cost."""

from __future__ import annotations

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate

B70 = "intel-arc-pro-b70"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def decode(catalog: Catalog, model_id: str, backend: str) -> tuple[float, tuple[str, ...]]:
    spec = catalog.gpu(B70)
    assert spec is not None
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    model = from_catalog(catalog.model(model_id))  # type: ignore[arg-type]
    req = Request(quant="q4_k_m", backend=backend)  # type: ignore[arg-type]
    result = fit(model, simulate(bare, [spec]), req, catalog, live=False)
    assert result.speed.decode_tokens_per_s is not None
    return result.speed.decode_tokens_per_s, tuple(str(line) for line in result.speed.explanation)


def test_the_sycl_moe_layer_cost_is_fitted_and_vulkan_has_none(catalog: Catalog) -> None:
    factors = {f.id: f for f in catalog.speed_factors}
    assert factors["intel-sycl"].moe_layer_us >= 100
    assert factors["intel-vulkan"].moe_layer_us == 0


def test_a_3b_active_moe_is_no_faster_than_a_9b_dense_on_sycl(catalog: Catalog) -> None:
    moe, why = decode(catalog, "qwen3.6-35b-a3b", "sycl")
    dense, _ = decode(catalog, "qwen3.5-9b", "sycl")
    assert moe < 1.1 * dense
    assert any("mixture-of-experts layers" in line for line in why)
    # the fitted rows themselves (PMZFX b8840): 54.65 t/s measured
    assert 54.65 / 1.35 < moe < 54.65 * 1.35
