"""GCN 5.1 Instinct cards (MI50, gfx906) against RDNA 3 Radeons: their own hardware class and factors, and a
prompt rate set by their shader-core FP16 peak, not by their HBM2 bandwidth."""

from __future__ import annotations

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.whatif import simulate

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def speeds(catalog: Catalog, gpu_id: str):  # type: ignore[no-untyped-def]
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=128 * GIB), gpus=())
    gpu = catalog.gpu(gpu_id)
    assert gpu is not None
    machine = simulate(bare, [gpu], 128)
    return fit(
        model(LLAMA_31_8B), machine, Request(workload="inference", context=4096), catalog, live=False
    ).speed


def test_an_mi50_is_not_in_the_radeon_class_and_has_fitted_factors_of_its_own(catalog: Catalog) -> None:
    mi50 = catalog.gpu("amd-instinct-mi50-32gb")
    xtx = catalog.gpu("amd-radeon-rx-7900-xtx")
    assert mi50 is not None and xtx is not None
    gcn = speed.hardware_class(mi50.vendor, mi50.name, mi50, mi50.unified_memory)
    rdna = speed.hardware_class(xtx.vendor, xtx.name, xtx, xtx.unified_memory)
    assert gcn == "amd-gcn" and rdna == "amd-consumer"
    own = speed.speed_factor(catalog, gcn, "rocm")
    radeon = speed.speed_factor(catalog, rdna, "rocm")
    assert own is not None and radeon is not None and own.id != radeon.id
    # fitted on its own rows (kyuz0/mi50-gfx906-toolboxes, mixa3607/ML-gfx906), not a copy of the Radeon row
    assert own.prefill_compute_efficiency and own.source.startswith("benchmarks/data/measurements.csv (fit")
    assert any("mi50-gfx906" in url or "gfx906" in url for url in own.sources)


def test_an_mi50_prompts_slower_than_an_rdna3_card_with_less_bandwidth_and_says_its_class(
    catalog: Catalog,
) -> None:
    mi50 = catalog.gpu("amd-instinct-mi50-32gb")
    xtx = catalog.gpu("amd-radeon-rx-7900-xtx")
    assert mi50 is not None and xtx is not None and mi50.bandwidth_gbs and xtx.bandwidth_gbs
    assert mi50.bandwidth_gbs >= xtx.bandwidth_gbs  # HBM2 1 TB/s against GDDR6 960 GB/s
    gcn, rdna = speeds(catalog, mi50.id), speeds(catalog, xtx.id)
    assert gcn.prefill_tokens_per_s and rdna.prefill_tokens_per_s
    # GCN 5.1 multiplies on packed-FP16 shader ALUs (no matrix units, 26.8 TFLOPS); RDNA 3 has WMMA
    assert gcn.prefill_tokens_per_s < rdna.prefill_tokens_per_s / 4
    lines = [str(line) for line in gcn.explanation]
    assert any("(amd-gcn, rocm)" in line for line in lines)
    assert not any("amd-consumer" in line for line in lines)
    prefill = next(line for line in lines if line.startswith("prefill:"))
    assert "TFLOPS effective" in prefill
