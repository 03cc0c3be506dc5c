"""The GPUs people own at the end of 2026: every catalog GPU can be estimated, and the new ones are found by the
names their drivers report and get speeds."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes.cli import run_cli
from fakes.estimates import fit_on, tokens_per_s
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.machine import CPU, GPU, Host, Machine, Memory

GIB = 1024**3
COMPUTE = ("fp32_tflops", "fp16_tflops", "bf16_tflops", "fp8_tflops", "int8_tops")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def test_every_catalog_gpu_has_a_bandwidth_and_a_compute_figure(catalog: Catalog) -> None:
    no_bandwidth = [g.id for g in catalog.gpus if not g.bandwidth_gbs]
    no_compute = [g.id for g in catalog.gpus if not any(getattr(g, f) for f in COMPUTE)]
    assert no_bandwidth == [] and no_compute == []


def test_every_gpu_figure_says_where_it_comes_from(catalog: Catalog) -> None:
    # a figure added without its citation would leave both the entry's sources and its notes silent about it
    for gpu in catalog.gpus:
        assert gpu.source and (gpu.sources or gpu.notes), gpu.id


# (vendor, what the driver reports, PCI id or None) -> catalog id
DRIVER_NAMES = [
    ("apple", "Apple M5", None, "apple-m5"),
    ("apple", "Apple M5 Pro", None, "apple-m5-pro"),
    ("apple", "Apple M5 Max", None, "apple-m5-max"),
    ("intel", "Intel(R) Arc(TM) Pro B70 Graphics", "8086:e223", "intel-arc-pro-b70"),
    ("intel", "Intel Battlemage G31 [Arc Pro B70]", None, "intel-arc-pro-b70"),
    ("intel", "Intel(R) Arc(TM) Pro B60 Graphics", None, "intel-arc-pro-b60"),
    ("intel", "Intel(R) Arc(TM) 140V GPU (16GB)", None, "intel-arc-140v"),
    ("intel", "Intel(R) Arc(TM) 130V GPU (16GB)", None, "intel-arc-130v"),
    # Linux without a marketing name: the Level Zero name is shared, the PCI id decides
    ("intel", "Intel(R) Arc(TM) Graphics", "8086:64a0", "intel-arc-140v"),
    ("intel", "Intel(R) Arc(TM) 140T GPU (16GB)", None, "intel-arc-140t"),
    ("intel", "Intel(R) Graphics", "8086:7d67", "intel-arrow-lake-s-graphics"),
    ("nvidia", "NVIDIA GeForce GTX 1650 SUPER", "10de:2187", "nvidia-geforce-gtx-1650-super"),
    ("nvidia", "NVIDIA GeForce GTX 1650", None, "nvidia-geforce-gtx-1650"),
    ("nvidia", "NVIDIA GeForce GTX 1660 SUPER", None, "nvidia-geforce-gtx-1660-super"),
]


@pytest.mark.parametrize(("vendor", "name", "pci", "gpu_id"), DRIVER_NAMES)
def test_driver_names_find_the_new_entries(
    catalog: Catalog, vendor: str, name: str, pci: str | None, gpu_id: str
) -> None:
    found = catalog.match_gpu(GPU(vendor=vendor, name=name, memory_total_bytes=None, pci_id=pci))  # type: ignore[arg-type]
    assert found is not None and found.id == gpu_id


@pytest.mark.parametrize(
    ("gpu_id", "hw_class"),
    [
        ("apple-m5", "apple-base"),
        ("apple-m5-pro", "apple-pro"),
        ("apple-m5-max", "apple-max"),
        ("intel-arc-pro-b70", "intel"),
        ("intel-arc-140v", "intel"),
        ("nvidia-geforce-gtx-1650-super", "nvidia-consumer"),
    ],
)
def test_new_gpus_take_the_factors_of_their_architecture_class(
    catalog: Catalog, gpu_id: str, hw_class: str
) -> None:
    spec = catalog.gpu(gpu_id)
    assert spec is not None
    assert speed.hardware_class(spec.vendor, spec.name, spec, spec.unified_memory) == hw_class
    assert any(f.hw_class == hw_class for f in catalog.speed_factors)


def test_published_figures_of_the_new_gpus(catalog: Catalog) -> None:
    m5, pro, mx = (catalog.gpu(f"apple-m5{s}") for s in ("", "-pro", "-max"))
    assert m5 and pro and mx
    assert (m5.bandwidth_gbs, pro.bandwidth_gbs, mx.bandwidth_gbs) == (153, 307, 614)
    assert m5.unified_memory and max(mx.memory_gb) == 128
    b70 = catalog.gpu("intel-arc-pro-b70")
    assert b70 and (b70.memory_gb, b70.bandwidth_gbs, b70.memory_bus_bits) == ((32,), 608, 256)
    # GDDR6 at 19 Gbps on 256 bits: the bandwidth is the bus times the data rate
    assert b70.bandwidth_gbs == pytest.approx(19 * 256 / 8)
    lnl = catalog.gpu("intel-arc-140v")
    assert lnl and lnl.bandwidth_gbs == pytest.approx(8533 * 128 / 8 / 1000, abs=0.1)
    gtx = catalog.gpu("nvidia-geforce-gtx-1650-super")
    assert gtx and (gtx.bandwidth_gbs, gtx.memory_gb) == (192, (4,))


def _machine(vendor: str, name: str, gib: float | None, unified: bool, ram_gib: int = 32) -> Machine:
    gpu = GPU(
        vendor=vendor,  # type: ignore[arg-type]
        name=name,
        memory_total_bytes=int(gib * GIB) if gib else None,
        unified_memory=unified,
        index=0,
    )
    return Machine(
        cpu=CPU(logical_cores=8, model="Test CPU"),
        memory=Memory(total_bytes=ram_gib * GIB),
        gpus=(gpu,),
        host=Host(hostname="new-gpu"),
        taken_at="2026-12-01T12:00:00Z",
    )


MACHINES = [
    ("apple", "Apple M5", None, True, 32, "metal"),
    ("apple", "Apple M5 Max", None, True, 128, "metal"),
    ("intel", "Intel(R) Arc(TM) Pro B70 Graphics", 32, False, 64, "vulkan"),
    ("intel", "Intel(R) Arc(TM) 140V GPU (16GB)", None, True, 32, "vulkan"),
    ("nvidia", "NVIDIA GeForce GTX 1650 SUPER", 4, False, 16, "cuda"),
    ("nvidia", "NVIDIA GeForce RTX 4060 Laptop GPU", 8, False, 32, "cuda"),
]


@pytest.mark.parametrize(("vendor", "name", "gib", "unified", "ram", "backend"), MACHINES)
def test_machines_with_the_new_gpus_get_decode_and_prefill_speeds(
    catalog: Catalog, vendor: str, name: str, gib: float | None, unified: bool, ram: int, backend: str
) -> None:
    machine = _machine(vendor, name, gib, unified, ram)
    result = fit_on(catalog, machine, "llama-3.2-1b", "q4_k_m", backend)
    decode, prefill = tokens_per_s(result, "decode"), tokens_per_s(result, "prefill")
    spec = catalog.match_gpu(machine.gpus[0])
    assert spec is not None and spec.bandwidth_gbs
    # decode of a 1B model at Q4_K_M (~0.8 GB of weights) cannot beat reading them once per token at the peak
    assert 0 < decode < spec.bandwidth_gbs / 0.7
    assert prefill > decode


def test_more_bandwidth_reads_faster_within_a_family(catalog: Catalog) -> None:
    base = tokens_per_s(
        fit_on(catalog, _machine("apple", "Apple M5", None, True, 32), "qwen3-8b", "q4_k_m", "metal"),
        "decode",
    )
    top = tokens_per_s(
        fit_on(catalog, _machine("apple", "Apple M5 Max", None, True, 128), "qwen3-8b", "q4_k_m", "metal"),
        "decode",
    )
    assert top > 2 * base  # 614 vs 153 GB/s; per-layer costs keep it below 4x


def test_fit_on_a_b70_snapshot_prints_a_speed(tmp_path: Path) -> None:
    snapshot = tmp_path / "b70.json"
    snapshot.write_text(_machine("intel", "Intel(R) Arc(TM) Pro B70 Graphics", 32, False, 64).to_json())
    code, out = run_cli("fit", "qwen3-8b", "--machine", str(snapshot), "--quant", "q4_k_m")
    assert code == 0, out
    assert "608 GB/s" in out  # the catalog's bandwidth, read through the driver's name
    assert "Speed (estimate): decode ~" in out


def test_an_intel_igpu_of_unknown_size_may_use_the_drivers_default_share() -> None:
    from rigcheck.core.unified import INTEL_SOURCE, unified_share

    igpu = GPU(
        vendor="intel", name="Intel(R) Arc(TM) 140V GPU (16GB)", memory_total_bytes=None, unified_memory=True
    )
    share = unified_share(igpu, 32 * GIB)
    assert share is not None and share.by_rule
    assert share.bytes == share.from_ram == int(32 * GIB * 0.57)
    assert INTEL_SOURCE in share.reason and "57%" in share.reason
    discrete = GPU(vendor="intel", name="Intel(R) Arc(TM) Pro B70 Graphics", memory_total_bytes=32 * GIB)
    assert unified_share(discrete, 64 * GIB) is None
    # a size the probe read is the GPU's own and stands
    read = GPU(
        vendor="intel", name="Intel(R) Arc(TM) Graphics", memory_total_bytes=8 * GIB, unified_memory=True
    )
    assert unified_share(read, 32 * GIB) is None
