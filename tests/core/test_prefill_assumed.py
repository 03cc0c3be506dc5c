"""A hardware class × backend with no prompt measurements gets its backend's generic prefill share and says
it was assumed (benchmarks/prefill_fallback.py, core/estimate/speed/assumed.py); AMD Instinct cards have
prefill factors of their own and one and eight MI300X decode at different rates."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.whatif import simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from prefill_fallback import generic_prefill


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


@dataclass(frozen=True)
class _Fit:
    efficiency: float


def run(catalog: Catalog, gpu_id: str, count: int = 1):  # type: ignore[no-untyped-def]
    gpu = catalog.gpu(gpu_id)
    assert gpu is not None
    bare = Machine(cpu=CPU(logical_cores=64), memory=Memory(total_bytes=512 * GIB), gpus=())
    machine = simulate(bare, [gpu] * count, 512)
    return fit(model(LLAMA_31_8B), machine, Request(quant="q4_k_m", context=512), catalog, live=False)


def test_the_generic_share_is_the_median_of_the_backends_own_classes_leaving_the_apart_ones_out() -> None:
    fits = {
        ("a-one", "rocm"): _Fit(0.6),
        ("a-two", "rocm"): _Fit(0.3),
        ("a-three", "rocm"): _Fit(0.4),
        ("a-gcn", "rocm"): _Fit(0.1),
        ("b-one", "metal"): _Fit(0.5),
    }
    rows: dict[tuple[str, str], list[object]] = {k: [object()] * 2 for k in fits}
    rows[("a-three", "rocm")] = []  # a share taken from elsewhere, not fitted on rows of its own
    found = generic_prefill(fits, rows, apart={"a-gcn"})
    assert found["rocm"].efficiency == pytest.approx(0.45)
    assert found["rocm"].rows == 4
    assert "a-one 0.60, a-two 0.30" in found["rocm"].rule and "a-gcn" not in found["rocm"].rule
    assert found["metal"].efficiency == pytest.approx(0.5)


def test_every_gpu_class_and_backend_row_has_a_prefill_share(catalog: Catalog) -> None:
    """No GPU class refuses prefill for want of a fit: its own share, or a generic rule said as one."""
    for factor in catalog.speed_factors:
        if factor.hw_class.startswith("cpu") or factor.backend == speed.KTRANSFORMERS:
            continue
        assert factor.prefill_compute_efficiency is not None, factor.id
        if factor.prefill_rule:
            assert "median share" in factor.prefill_rule and "prompt rows" in factor.prefill_rule


def test_a_class_without_prompt_rows_is_estimated_and_says_what_was_assumed(catalog: Catalog) -> None:
    pro = next(f for f in catalog.speed_factors if f.id == "apple-pro-metal")
    assert pro.prefill_rule  # apple-pro has no prompt rows in the fit split
    result = run(catalog, "apple-m1-pro")
    assert result.speed.prefill_tokens_per_s
    said = " ".join(result.speed.explanation)
    assert "prefill assumed: no prompt-processing measurements for apple-pro on metal" in said
    assert pro.prefill_rule in said


def test_a_class_with_its_own_prompt_rows_says_nothing_was_assumed(catalog: Catalog) -> None:
    result = run(catalog, "amd-instinct-mi300x")
    assert result.speed.prefill_tokens_per_s
    assert not any("prefill assumed" in line for line in result.speed.explanation)
    factor = speed.speed_factor(catalog, "amd-datacenter", "rocm")
    assert factor is not None and factor.prefill_rule is None and factor.prefill_compute_efficiency


def test_one_and_eight_mi300x_decode_at_different_rates(catalog: Catalog) -> None:
    one, eight = run(catalog, "amd-instinct-mi300x", 1), run(catalog, "amd-instinct-mi300x", 8)
    assert eight.placement.gpu_bytes.count(0) == 0  # llama.cpp's layer split uses every GPU
    assert one.speed.decode_tokens_per_s and eight.speed.decode_tokens_per_s
    # each further GPU of the layer split adds its hand-off (per_gpu_us) to every token
    assert eight.speed.decode_tokens_per_s < one.speed.decode_tokens_per_s
