"""SYCL decode on Intel GPUs by mat-vec kernel: the reordered MMVQ types (Q4_0, Q4_K, Q6_K; Q8_0 from b8724,
Q5_K and Q3_K after b8840) read at the class's rate, every other quantised type at
``decode_unreordered_factor`` × it (core/estimate/speed/sycl_matvec.py)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.estimate.speed.sycl_matvec import sycl_matvec, unreordered_read_factor
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.whatif import simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

B70 = "intel-arc-pro-b70"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def test_reordered_types_at_a_current_build(catalog: Catalog) -> None:
    spec = catalog.gpu(B70)
    for quant in ("q4_0", "q4_k_m", "q6_k", "q8_0", "q5_k_m", "q3_k_m"):
        path = sycl_matvec(spec, quant)
        assert path is not None and path.reordered, quant
    for quant in ("q4_1", "q5_0", "iq4_xs", "iq4_nl", "q2_k"):
        path = sycl_matvec(spec, quant)
        assert path is not None and not path.reordered, quant


def test_the_reorder_milestones_by_build(catalog: Catalog) -> None:
    spec = catalog.gpu(B70)
    q8_old, q8_new = sycl_matvec(spec, "q8_0", 8600), sycl_matvec(spec, "q8_0", 8724)
    assert q8_old is not None and not q8_old.reordered
    assert q8_new is not None and q8_new.reordered
    q5_b8840, q5_later = sycl_matvec(spec, "q5_k_m", 8840), sycl_matvec(spec, "q5_k_m", 9500)
    assert q5_b8840 is not None and not q5_b8840.reordered
    assert q5_later is not None and q5_later.reordered
    old_q4 = sycl_matvec(spec, "q4_k_m", 6000)
    assert old_q4 is not None and old_q4.reordered


def test_only_intel_quantised_weights_have_a_path(catalog: Catalog) -> None:
    assert sycl_matvec(catalog.gpu("nvidia-geforce-rtx-4090"), "q4_1") is None
    assert sycl_matvec(catalog.gpu(B70), "bf16") is None
    assert sycl_matvec(catalog.gpu(B70), "f16") is None


def test_the_factor_applies_to_sycl_only(catalog: Catalog) -> None:
    spec = catalog.gpu(B70)
    sycl = next(f for f in catalog.speed_factors if f.id == "intel-sycl")
    vulkan = next(f for f in catalog.speed_factors if f.id == "intel-vulkan")
    slow = replace(sycl, decode_unreordered_factor=0.5)
    found = unreordered_read_factor(slow, spec, "q4_1")
    assert found is not None and found[0] == 0.5
    assert unreordered_read_factor(slow, spec, "q4_k_m") is None
    assert unreordered_read_factor(replace(vulkan, decode_unreordered_factor=0.5), spec, "q4_1") is None
    assert unreordered_read_factor(slow, spec, "q8_0", 8600) is not None
    # a mixture of experts' experts take MUL_MAT_ID, another reorder rule: left at the class's rate
    assert unreordered_read_factor(slow, spec, "q4_1", moe=True) is None


def decode(catalog: Catalog, quant: str, build: int | None = None) -> tuple[float, tuple[str, ...]]:
    spec = catalog.gpu(B70)
    assert spec is not None
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    req = Request(quant=quant, backend="sycl", engine_build=build)
    result = fit(model(LLAMA_31_8B), simulate(bare, [spec]), req, catalog, live=False)
    assert result.speed.decode_tokens_per_s is not None
    return result.speed.decode_tokens_per_s, result.speed.explanation


def test_the_shipped_factor_is_fitted_below_one(catalog: Catalog) -> None:
    sycl = next(f for f in catalog.speed_factors if f.id == "intel-sycl")
    assert sycl.decode_unreordered_factor < 1.0


def test_q4_1_decodes_slower_than_its_bytes_say(catalog: Catalog) -> None:
    q4_0, _ = decode(catalog, "q4_0")
    q4_1, why = decode(catalog, "q4_1")
    # Q4_1 holds 5.0 bits a weight against Q4_0's 4.5: bytes alone give ~0.9 × the speed
    assert q4_1 < 0.85 * q4_0
    assert any("array-of-blocks" in line for line in why)


def test_q8_0_before_its_reorder_is_slower(catalog: Catalog) -> None:
    old, why = decode(catalog, "q8_0", 8600)
    new, _ = decode(catalog, "q8_0", 8724)
    assert old < new
    assert any("PR #21527" in line for line in why)


def test_unreordered_rows_stay_out_of_the_bandwidth_fit() -> None:
    from measurements import load
    from sycl_matvec_fit import unreordered_row

    rows = {r.id: r for r in load()}
    assert unreordered_row(rows["pmzfx-llmbench-b70-sycl-qwen3.5-27b-iq4_xs-tg128"])
    assert unreordered_row(rows["pmzfx-llmbench-b70-sycl-qwen3.5-27b-q5_k_s-tg128"])
    assert not unreordered_row(rows["pmzfx-llmbench-b70-sycl-qwen3.5-27b-q4_k_m-tg128"])
    assert not unreordered_row(rows["pmzfx-b70-sycl-qwen25-1.5b-q80-tg128"])
    assert not unreordered_row(rows["pmzfx-b70-sycl-qwen25-1.5b-bf16-tg128"])
