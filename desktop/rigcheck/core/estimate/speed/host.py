"""The host's memory bandwidth: measured, typed in, a unified-memory GPU's, the CPU platform's, or a default;
and the share of it llama.cpp's CPU kernels read weights at."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from rigcheck.core.catalog import Catalog, CpuPlatform, SpeedFactor
from rigcheck.core.machine import Machine
from rigcheck.core.said import Joined, Num, Text, render, say

#: a host whose memory system nobody could tell us: two channels of DDR5-4800 (2 × 4800 MT/s × 8 B =
#: 76.8 GB/s), the JEDEC base speed of DDR5 on a typical desktop (JESD79-5; AM5/LGA1700 boards run two
#: channels)
DEFAULT_HOST_BANDWIDTH = 2 * 4800 * 10**6 * 8
DEFAULT_HOST_SOURCE = "default: dual-channel DDR5-4800, 76.8 GB/s (a typical desktop; not measured)"

HostSource = Literal["measured", "catalog", "default"]


@dataclass(frozen=True)
class HostBandwidth:
    bytes_per_s: int
    source: HostSource
    #: in words, with the platform or the measurement, as said: :attr:`why` in words
    why_said: Text

    @property
    def why(self) -> str:
        return render(self.why_said)


def cpu_platform(catalog: Catalog, cpu_model: str | None) -> CpuPlatform | None:
    if not cpu_model:
        return None
    for platform in catalog.cpu_platforms:
        if platform.matches(cpu_model):
            return platform
    return None


def host_bandwidth(machine: Machine, catalog: Catalog) -> HostBandwidth:
    """Peak host memory bandwidth: the snapshot's (measured or typed in), a unified-memory GPU's, the CPU
    platform's, or a default. A peak the snapshot holds (``bandwidth_source = "catalog"``: the platform's, or
    DIMMs as stated) is at most the platform's: a memory controller clocks DIMMs rated above its supported
    rate down to it."""
    memory = machine.memory
    platform = cpu_platform(catalog, machine.cpu.model)
    above_ceiling = (
        memory.bandwidth_source == "catalog"
        and platform is not None
        and (memory.bandwidth_bytes_per_s or 0) > platform.bandwidth_bytes_per_s
    )
    if memory.bandwidth_bytes_per_s and not above_ceiling:
        source: HostSource = "measured" if memory.bandwidth_source == "measured" else "catalog"
        if memory.bandwidth_source == "default":
            source = "default"
        return HostBandwidth(
            memory.bandwidth_bytes_per_s,
            source,
            Joined(
                "",
                (
                    Num(memory.bandwidth_bytes_per_s / 1e9, group=False, unit=" GB/s"),
                    " (",
                    say(memory.bandwidth_source or "from the snapshot"),
                    ")",
                ),
            ),
        )
    # A unified-memory machine (Apple, Strix Halo, GB10) has one memory: its RAM is the GPU's memory,
    # whose bandwidth the GPU catalog has (the CPU cores alone reach only part of that peak).
    for gpu in machine.gpus:
        spec = catalog.spec_for(gpu) if gpu.unified_memory else None
        if spec is not None and spec.bandwidth_gbs:
            bw = int(spec.bandwidth_gbs * 1e9)
            return HostBandwidth(
                bw,
                "catalog",
                say(
                    "{bw} GB/s: the unified memory of {gpu}, shared by CPU and GPU (peak; the CPU cores "
                    "alone reach less) ({source})",
                    bw=Num(bw / 1e9, group=False),
                    gpu=spec.name,
                    source=spec.source,
                ),
            )
    if platform is not None:
        bw = platform.bandwidth_bytes_per_s
        return HostBandwidth(
            bw,
            "catalog",
            say(
                "{bw} GB/s: {platform}, {channels} channels × {mts} MT/s ({source})",
                bw=Num(bw / 1e9, group=False),
                platform=platform.name,
                channels=platform.channels,
                mts=platform.mt_per_s,
                source=platform.source,
            ),
        )
    return HostBandwidth(DEFAULT_HOST_BANDWIDTH, "default", say(DEFAULT_HOST_SOURCE))


#: llama.cpp's CPU decode reads its weights at this share of a *measured* host bandwidth: on a Raspberry Pi 5
#: (4 threads, five quants of one model) decode's bytes × tokens/s came to 84-91% of a STREAM-style read
#: kernel's bandwidth on the same board (ggml-org/llama.cpp issue #26484, 2026-08). A measured figure is
#: already what the memory system delivers, so the CPU class's fitted share, which is a share of the
#: platform's *peak* (channels × transfer rate, or the default), does not apply on top of it. Uncertain where
#: the measurement is a copy test (``audit --measure`` copies, counting read + written bytes as STREAM's Copy
#: does): on that Pi 5 the 4-thread STREAM Copy read 6.19 GB/s against 11.59 GB/s read-only, so a copy
#: figure can sit below what decode reads; where the two agree, as on desktop DRAM, the share holds.
MEASURED_READ_SHARE = 0.88
MEASURED_READ_SOURCE = "https://github.com/ggml-org/llama.cpp/issues/26484"


def cpu_read_efficiency(factor: SpeedFactor | None, host: HostBandwidth) -> float:
    """The share of ``host``'s bandwidth llama.cpp's CPU kernels read weights at: of a measured bandwidth,
    :data:`MEASURED_READ_SHARE`; of a peak (catalog or default), the CPU class's fitted efficiency (1 when
    none is fitted)."""
    if host.source == "measured":
        return MEASURED_READ_SHARE
    return factor.decode_bandwidth_efficiency if factor else 1.0


def with_host_bandwidth(machine: Machine, catalog: Catalog, measured: int | None = None) -> Machine:
    """``machine`` with ``memory.bandwidth_bytes_per_s`` filled: a measurement, what it already has (a
    measurement or a figure the user typed in), the CPU platform's, or the default."""
    memory = machine.memory
    if measured:
        return replace(
            machine, memory=replace(memory, bandwidth_bytes_per_s=measured, bandwidth_source="measured")
        )
    if memory.bandwidth_bytes_per_s and memory.bandwidth_source == "measured":
        return machine
    host = host_bandwidth(replace(machine, memory=replace(memory, bandwidth_bytes_per_s=None)), catalog)
    return replace(
        machine, memory=replace(memory, bandwidth_bytes_per_s=host.bytes_per_s, bandwidth_source=host.source)
    )
