"""Issue 28 (28-cpu-pp): the int8 kernel llama.cpp's CPU backend runs per weight type and ISA
(ggml/src/ggml-cpu/repack.cpp ggml_repack_get_optimal_repack_type), applied to the CPU's compute peak."""

from __future__ import annotations

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.memory import GIB
from rigcheck.core.estimate.speed import cpu_compute
from rigcheck.core.estimate.speed.cpu_host import cpu_peak
from rigcheck.core.estimate.speed.cpu_kernel import cpu_kernel
from rigcheck.core.machine import CPU, Machine, Memory


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def test_arm_i8mm_runs_the_repacked_types_on_smmla_and_the_rest_on_the_dot_product() -> None:
    i8mm = ("neon", "asimddp", "i8mm")
    repacked = {q: cpu_kernel(i8mm, q).factor for q in ("q4_0", "q4_k_m", "q8_0")}
    rows = {q: cpu_kernel(i8mm, q).factor for q in ("q6_k", "q5_k_m", "q3_k_m", "iq4_nl")}
    assert len(set(repacked.values())) == 1 and len(set(rows.values())) == 1
    assert repacked["q4_0"] == 2 * rows["q6_k"] > 1  # SMMLA: twice SDOT's int8 products per instruction
    assert cpu_kernel(("neon", "asimddp"), "q4_0").factor == rows["q6_k"]  # no i8mm: the dot product only
    assert cpu_kernel(("neon",), "q4_0").factor == 1.0  # plain NEON: no int8 dot instructions
    for x86 in (("avx2", "fma"), ("avx2", "fma", "avx512f", "avx512_vnni"), ("avx_vnni", "avx2", "fma")):
        assert cpu_kernel(x86, "q4_k_m").factor == 1.0  # the fitted shares are x86's own
    assert cpu_kernel(i8mm, "q4_k_m").why is not None and cpu_kernel(("avx2",), "q4_0").why is None


def test_a_probed_arm_cpu_computes_at_neon_rate_whether_its_flag_reads_neon_or_asimd() -> None:
    """The probe stores Linux's "asimd" as "neon" (probe/_cpu.py normalise_flags); both are NEON's rate."""
    probed = CPU(logical_cores=8, physical_cores=8, max_mhz=3000.0, flags=("neon",))
    raw = CPU(logical_cores=8, physical_cores=8, max_mhz=3000.0, flags=("asimd",))
    a, b = cpu_compute(probed), cpu_compute(raw)
    assert a is not None and b is not None and a.flops_per_s == b.flops_per_s
    assert (
        a.flops_per_cycle
        > cpu_compute(CPU(logical_cores=8, physical_cores=8, max_mhz=3000.0)).flops_per_cycle
    )  # type: ignore[union-attr]


def test_the_cpu_peak_carries_the_kernels_int8_rate(catalog: Catalog) -> None:
    cpu = CPU(
        logical_cores=16,
        model="Apple M4 Max",
        physical_cores=12,
        max_mhz=4512.0,
        flags=("neon", "asimddp", "i8mm"),
    )
    machine = Machine(cpu=cpu, memory=Memory(total_bytes=64 * GIB), gpus=())
    q4 = cpu_peak(machine, catalog, quant_id="q4_k_m", threads=8)
    q6 = cpu_peak(machine, catalog, quant_id="q6_k", threads=8)
    assert q4 is not None and q6 is not None
    assert q4.flops_per_s == pytest.approx(2 * q6.flops_per_s) and q4.cores == 8
    assert "i8mm" in q4.why
