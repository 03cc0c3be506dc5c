"""CPU decode on a measured host bandwidth: llama.cpp's share of what the memory delivers, not the CPU class's
share of a platform peak (speed.cpu_read_efficiency)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.speed.cpu_host import decode_factor
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def _cpu_decode(catalog: Catalog, memory: Memory) -> float:
    model = from_catalog(catalog.model("llama-3.1-8b"))  # type: ignore[arg-type]
    host = CPU(logical_cores=16, physical_cores=8, max_mhz=4500, flags=("avx2", "fma"), model="Some CPU")
    machine = replace(simulate(Machine(cpu=host, memory=memory, gpus=()), [], 64), memory=memory)
    result = fit(model, machine, Request(quant="q4_k_m"), catalog, offload="auto", live=False)
    assert result.speed.decode_tokens_per_s is not None
    return result.speed.decode_tokens_per_s


def test_measured_bandwidth_is_read_at_llama_cpp_share_of_it(catalog: Catalog) -> None:
    bw = 60 * 10**9
    measured = _cpu_decode(
        catalog, Memory(total_bytes=64 * GIB, bandwidth_bytes_per_s=bw, bandwidth_source="measured")
    )
    peak = _cpu_decode(
        catalog, Memory(total_bytes=64 * GIB, bandwidth_bytes_per_s=bw, bandwidth_source="catalog")
    )
    # a dense model on the CPU alone reads at its memory class's share of a peak (an unknown CPU: client)
    unknown = Machine(cpu=CPU(logical_cores=16, model="Some CPU"), memory=Memory(total_bytes=GIB), gpus=())
    factor, cls = decode_factor(catalog, unknown)
    assert cls == "client" and factor is not None and factor.hw_class == "cpu-client"
    assert factor.decode_bandwidth_efficiency < speed.MEASURED_READ_SHARE
    # the same figure, measured, is read faster than the same figure as a peak, by the ratio of the two shares
    assert measured / peak == pytest.approx(
        speed.MEASURED_READ_SHARE / factor.decode_bandwidth_efficiency, rel=0.02
    )


def test_cpu_read_efficiency_by_source(catalog: Catalog) -> None:
    factor = speed.speed_factor(catalog, speed.CPU_CLASS, "cpu")
    measured = speed.HostBandwidth(10**11, "measured", "")
    default = speed.HostBandwidth(10**11, "default", "")
    assert speed.cpu_read_efficiency(factor, measured) == speed.MEASURED_READ_SHARE
    assert (
        factor is not None
        and speed.cpu_read_efficiency(factor, default) == factor.decode_bandwidth_efficiency
    )
    assert speed.cpu_read_efficiency(None, default) == 1.0
    assert speed.MEASURED_READ_SOURCE.startswith("https://")
