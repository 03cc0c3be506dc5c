"""Host memory bandwidth: measured, from the CPU platform catalog, or a default; in the snapshot; in speeds."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from fakes.fake_nvml import FakeNvml
from fakes.nvidia_gpus import RTX_4090
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.probe import ProbeContext, probe_machine
from rigcheck.core.probe._membw import measure_copy_bandwidth
from rigcheck.core.whatif import simulate

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def bare(cpu: str | None = None, memory: Memory | None = None) -> Machine:
    return Machine(
        cpu=CPU(logical_cores=8, model=cpu), memory=memory or Memory(total_bytes=64 * GIB), gpus=()
    )


def test_catalog_default_and_measured_sources(catalog: Catalog) -> None:
    epyc = speed.with_host_bandwidth(bare("AMD EPYC 9654 96-Core Processor"), catalog)
    assert (epyc.memory.bandwidth_bytes_per_s, epyc.memory.bandwidth_source) == (
        12 * 4800 * 10**6 * 8,
        "catalog",
    )
    unknown = speed.with_host_bandwidth(bare("Some Future CPU"), catalog)
    assert unknown.memory.bandwidth_source == "default"
    assert unknown.memory.bandwidth_bytes_per_s == speed.DEFAULT_HOST_BANDWIDTH
    measured = speed.with_host_bandwidth(bare("AMD EPYC 9654"), catalog, measured=300 * 10**9)
    assert (measured.memory.bandwidth_bytes_per_s, measured.memory.bandwidth_source) == (
        300 * 10**9,
        "measured",
    )
    # a measured (or typed-in) figure survives a later fill from the catalog
    assert speed.with_host_bandwidth(measured, catalog) == measured
    assert speed.host_bandwidth(measured, catalog).source == "measured"


def test_snapshot_round_trips_and_validates_the_new_fields() -> None:
    machine = bare(
        memory=Memory(total_bytes=64 * GIB, bandwidth_bytes_per_s=89_600_000_000, bandwidth_source="catalog")
    )
    assert Machine.from_json(machine.to_json()) == machine
    data = json.loads(machine.to_json())
    data["memory"]["bandwidth_source"] = "guessed"
    with pytest.raises(InputError, match="bandwidth_source"):
        Machine.from_dict(data, "lab.json")
    old = json.loads(machine.to_json())
    del old["memory"]["bandwidth_bytes_per_s"], old["memory"]["bandwidth_source"]
    assert Machine.from_dict(old).memory.bandwidth_bytes_per_s is None  # snapshots from before still load


def test_the_copy_test_measures_something_real() -> None:
    rate = measure_copy_bandwidth(seconds=0.1, working_set=16 * 1024**2, threads=2)
    assert rate > 10**8  # any computer copies more than 100 MB/s


def test_the_probe_records_the_host_bandwidth(tmp_path: Path) -> None:
    def load() -> FakeNvml:
        return FakeNvml([RTX_4090])

    ctx = ProbeContext(root=tmp_path, platform="linux", env={"HOME": str(tmp_path)}, load_nvml=load)
    machine = probe_machine(ctx)
    assert machine.memory.bandwidth_source in ("catalog", "default")
    assert machine.memory.bandwidth_bytes_per_s
    measured = probe_machine(ctx, measure_bandwidth=True)
    assert measured.memory.bandwidth_source == "measured"
    assert any(n.probe == "memory" and "copy test" in n.message for n in measured.notes)


def test_offload_speed_follows_the_snapshot_bandwidth(catalog: Catalog) -> None:
    model = from_catalog(catalog.model("llama-3.1-70b"))  # type: ignore[arg-type]
    spec = catalog.gpu("nvidia-geforce-rtx-4090")
    assert spec is not None

    def at(rate: int) -> float:
        memory = Memory(total_bytes=128 * GIB, bandwidth_bytes_per_s=rate, bandwidth_source="measured")
        machine = replace(simulate(bare(), [spec]), memory=memory)
        result = fit(model, machine, Request(quant="q4_k_m"), catalog, live=False)
        assert result.verdict == "fits_with_offload"
        assert result.speed.decode_tokens_per_s is not None
        return result.speed.decode_tokens_per_s

    assert at(400 * 10**9) > 2 * at(50 * 10**9)


def test_measure_needs_this_machine(tmp_path: Path) -> None:
    from fakes.cli import run_cli
    from rigcheck.core.machine import save_machine

    snapshot = tmp_path / "lab.json"
    save_machine(bare(), snapshot)
    code, _ = run_cli("audit", "--machine", str(snapshot), "--measure")
    assert code == 2


def test_a_unified_memory_machine_uses_its_own_memory_bandwidth(catalog: Catalog) -> None:
    """An M2 Ultra's RAM is its 800 GB/s unified memory, not the 77 GB/s desktop default."""
    from rigcheck.core.machine import load_machine

    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "machines" / "m2-ultra-192gb.json"
    mac = load_machine(fixture)
    host = speed.host_bandwidth(replace(mac, memory=replace(mac.memory, bandwidth_bytes_per_s=None)), catalog)
    spec = catalog.spec_for(mac.gpus[0])
    assert spec is not None and spec.bandwidth_gbs
    assert (host.bytes_per_s, host.source) == (int(spec.bandwidth_gbs * 1e9), "catalog")
    assert "unified memory" in host.why


def test_audit_text_and_reports_say_the_bandwidth_and_where_it_comes_from() -> None:
    from rigcheck.core.report.summary import memory_text, summarise

    mem = Memory(total_bytes=64 * GIB, bandwidth_bytes_per_s=int(83.2e9), bandwidth_source="measured")
    assert memory_text(mem).endswith("bandwidth 83.2 GB/s (measured by audit --measure)")
    default = replace(mem, bandwidth_bytes_per_s=int(76.8e9), bandwidth_source="default")
    assert "76.8 GB/s (a typical dual-channel DDR5 desktop, not measured)" in memory_text(default)
    assert "bandwidth" not in memory_text(replace(mem, bandwidth_bytes_per_s=None))
    machine = Machine(cpu=CPU(logical_cores=8), memory=mem, gpus=())
    assert "83.2 GB/s (measured" in summarise(machine)


def test_a_stated_peak_above_the_platforms_ceiling_runs_at_the_ceiling(catalog: Catalog) -> None:
    """A memory controller clocks DIMMs rated above its supported rate down to that rate: DDR5-5600 DIMMs in
    an EPYC 9004's twelve channels run at DDR5-4800. A peak the snapshot holds from the catalog or as stated
    (not a measurement) is therefore at most the platform's; a lower one (fewer channels, slower DIMMs)
    stands."""
    rated = Memory(
        total_bytes=64 * GIB, bandwidth_bytes_per_s=12 * 5600 * 10**6 * 8, bandwidth_source="catalog"
    )
    host = speed.host_bandwidth(bare("AMD EPYC 9554 64-Core Processor", rated), catalog)
    assert (host.bytes_per_s, host.source) == (12 * 4800 * 10**6 * 8, "catalog")
    slower = replace(rated, bandwidth_bytes_per_s=2 * 5600 * 10**6 * 8)
    laptop = speed.host_bandwidth(bare("AMD Ryzen AI 9 HX PRO 370", slower), catalog)
    assert laptop.bytes_per_s == 2 * 5600 * 10**6 * 8
    measured = replace(rated, bandwidth_source="measured")
    assert speed.host_bandwidth(bare("AMD EPYC 9554", measured), catalog).bytes_per_s == 12 * 5600 * 10**6 * 8
