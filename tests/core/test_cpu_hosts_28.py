"""Issue 28 (28-cpu): CPU-only decode by the host's memory class, the compute ceiling few threads or small
cores hit, and the platform's cores, clock and FLOPs per cycle where the probe read none."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.estimate.speed.cpu_host import cpu_peak, decode_factor, memory_class
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def _machine(cpu: CPU, memory: Memory | None = None) -> Machine:
    memory = memory or Memory(total_bytes=16 * GIB)
    return replace(simulate(Machine(cpu=cpu, memory=memory, gpus=()), [], 16), memory=memory)


def _decode(catalog: Catalog, machine: Machine, model_id: str = "llama-3.2-1b", threads: int | None = None):
    model = from_catalog(catalog.model(model_id))  # type: ignore[arg-type]
    result = fit(
        model, machine, Request(quant="q4_k_m", threads=threads), catalog, offload="auto", live=False
    )
    assert result.speed.decode_tokens_per_s is not None
    return result.speed


def test_an_rk3566_board_reads_its_32_bit_lpddr4_not_a_desktop_default(catalog: Catalog) -> None:
    board = _machine(CPU(logical_cores=4, model="Rockchip RK3566"))
    host = speed.host_bandwidth(board, catalog)
    assert host.source == "catalog" and host.bytes_per_s == 32 // 8 * 3200 * 10**6  # 12.8 GB/s
    assert "RK3566" in host.why
    assert memory_class(speed.cpu_platform(catalog, "Rockchip RK3566")) == "soc"
    # four in-order A55 cores at 1.8 GHz, from the entry (the probe read no clock): the arithmetic bounds decode
    peak = cpu_peak(board, catalog, quant_id="q4_k_m", threads=None)
    assert peak is not None and (peak.cores, peak.ghz, peak.flops_per_cycle) == (4, 1.8, 8)
    assert "from the platform entry" in peak.why
    found = _decode(catalog, board)
    desktop = _decode(catalog, _machine(CPU(logical_cores=4, model="Some unknown CPU")))
    assert found.decode_tokens_per_s < desktop.decode_tokens_per_s / 5  # type: ignore[operator]
    assert any("CPU's arithmetic" in line for line in found.explanation)
    assert found.prefill_tokens_per_s is not None  # the clock the entry gives makes a prefill number


def test_an_unknown_cpu_still_falls_back_and_says_so(catalog: Catalog) -> None:
    found = _decode(catalog, _machine(CPU(logical_cores=8, model="Mystery Chip 9000")))
    ram = next(line for line in found.explanation if line.startswith("RAM: "))
    assert "default: dual-channel DDR5-4800" in ram and "not measured" in ram
    assert "desktop or laptop memory" in ram
    # no clock from the probe and no platform: no prefill figure, and the reason is said
    assert found.prefill_tokens_per_s is None
    assert any("CPU clock not known" in line for line in found.explanation)


def test_the_memory_class_picks_its_own_factor_row(catalog: Catalog) -> None:
    for model, cls in (
        ("AMD EPYC 9554 64-Core Processor", "server"),
        ("13th Gen Intel(R) Core(TM) i5-13400F", "client"),
        ("AMD Ryzen AI 9 HX 370 w/ Radeon 890M", "client"),  # a laptop that may carry SO-DIMMs
        ("Apple M3 Pro", "soc"),
    ):
        factor, found = decode_factor(catalog, _machine(CPU(logical_cores=8, model=model)))
        assert found == cls and factor is not None and factor.hw_class == f"cpu-{cls}", model
        assert 0 < factor.decode_compute_efficiency <= 1


def test_two_threads_are_compute_bound_where_all_cores_are_not(catalog: Catalog) -> None:
    laptop = CPU(logical_cores=8, model="13th Gen Intel(R) Core(TM) i3-1315U", physical_cores=6, max_mhz=4500,
                 flags=("avx", "avx2", "fma"))  # fmt: skip
    machine = _machine(laptop)
    two = _decode(catalog, machine, "llama-3.2-3b", threads=2)
    every = _decode(catalog, machine, "llama-3.2-3b")
    assert two.decode_tokens_per_s < every.decode_tokens_per_s  # type: ignore[operator]
    assert any("CPU's arithmetic" in line and "2 cores ×" in line for line in two.explanation)
    assert not any("CPU's arithmetic" in line for line in every.explanation)


def test_gracemont_e_cores_count_half_the_avx2_flops(catalog: Catalog) -> None:
    n100 = CPU(logical_cores=4, model="Intel(R) N100", physical_cores=4, max_mhz=3400, flags=("avx2", "fma"))
    peak = cpu_peak(_machine(n100), catalog, quant_id="q4_k_m", threads=None)
    plain = speed.cpu_compute(n100, quant_id="q4_k_m")
    assert peak is not None and plain is not None
    assert peak.flops_per_cycle == 16 and plain.flops_per_cycle == 32
    assert peak.flops_per_s == pytest.approx(plain.flops_per_s / 2)


def test_a_measured_bandwidth_is_trusted_on_an_sbc_too(catalog: Catalog) -> None:
    memory = Memory(total_bytes=4 * GIB, bandwidth_bytes_per_s=5 * 10**9, bandwidth_source="measured")
    board = _machine(CPU(logical_cores=4, model="Rockchip RK3566"), memory)
    host = speed.host_bandwidth(board, catalog)
    assert host.source == "measured" and host.bytes_per_s == 5 * 10**9
    factor, _cls = decode_factor(catalog, board)
    assert speed.cpu_read_efficiency(factor, host) == speed.MEASURED_READ_SHARE


def test_lpddr_bus_width_sets_the_peak_and_bad_widths_are_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    catalog = load_catalog(use_overlay=False)
    pi5 = speed.cpu_platform(catalog, "Raspberry Pi 5 Model B Rev 1.0")
    assert pi5 is not None and pi5.bus_bits == 32
    assert pi5.bandwidth_bytes_per_s == 4 * 4267 * 10**6
    (tmp_path / "odd.toml").write_text(
        '[[cpu_platform]]\nid = "odd"\nname = "Odd"\nmatch = ["OddChip"]\nchannels = 1\nbus_bits = 24\n'
        'mt_per_s = 3200\nsource = "https://example.com/odd"\n'
    )
    loaded = load_catalog(tmp_path, use_cache=False)
    assert "odd" not in {p.id for p in loaded.cpu_platforms}
    assert any("bus_bits" in problem for problem in loaded.problems), loaded.problems
