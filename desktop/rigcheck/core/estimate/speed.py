"""The speed model's inputs: which class of hardware a device is, which backend it runs, its fitted
factors (``catalog/speed.toml``), and the host's memory bandwidth.

Decode time per token, per device = max(bytes read ÷ (bandwidth × efficiency), FLOPs ÷ (compute ×
efficiency)) + a fixed cost per layer (kernel launches and synchronisation: what dominates small models
on fast GPUs) and per GPU. The efficiencies and fixed costs are per hardware class and backend, fitted
on the cited measurement set (``benchmarks/fit_speed.py``), never per chip and model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from rigcheck.core.catalog import Backend, Catalog, CpuPlatform, GpuSpec, Maturity, SpeedFactor
from rigcheck.core.machine import GPU, Machine

CPU_CLASS = "cpu"
_DEFAULT_BACKEND: dict[str, Backend] = {"nvidia": "cuda", "amd": "rocm", "apple": "metal", "intel": "vulkan"}

#: a host whose memory system nobody could tell us: two channels of DDR5-4800 (2 × 4800 MT/s × 8 B =
#: 76.8 GB/s), the JEDEC base speed of DDR5 on a typical desktop (JESD79-5; AM5/LGA1700 boards run two
#: channels)
DEFAULT_HOST_BANDWIDTH = 2 * 4800 * 10**6 * 8
DEFAULT_HOST_SOURCE = "default: dual-channel DDR5-4800, 76.8 GB/s (a typical desktop; not measured)"

HostSource = Literal["measured", "catalog", "default"]


def hardware_class(vendor: str, name: str, spec: GpuSpec | None, unified: bool | None = None) -> str:
    """The class whose factors apply: vendor × market segment, and for Apple the chip tier."""
    if vendor == "apple":
        words = name.lower()
        if "max" in words or "ultra" in words:
            return "apple-max"
        return "apple-pro" if "pro" in words else "apple-base"
    segment = spec.segment if spec else None
    if vendor == "nvidia":
        if segment == "soc":
            return "nvidia-soc"
        return "nvidia-datacenter" if segment == "datacenter" else "nvidia-consumer"
    if vendor == "amd":
        if segment in ("soc", "integrated") or unified:
            return "amd-apu"
        return "amd-datacenter" if segment == "datacenter" else "amd-consumer"
    return "intel"


def default_backend(vendor: str) -> Backend:
    return _DEFAULT_BACKEND.get(vendor, "cpu")


def speed_factor(catalog: Catalog, hw_class: str, backend: Backend | None) -> SpeedFactor | None:
    """The factors for this class and backend; the class's default backend when that one is not fitted."""
    rows = [f for f in catalog.speed_factors if f.hw_class == hw_class]
    if backend is not None:
        exact = next((f for f in rows if f.backend == backend), None)
        if exact is not None:
            return exact
    return next((f for f in rows if f.default), rows[0] if rows else None)


def maturity(catalog: Catalog, engine: str, model_type: str) -> Maturity | None:
    return next((m for m in catalog.maturities if m.engine == engine and m.model_type == model_type), None)


def gpu_factor(
    catalog: Catalog, gpu: GPU, spec: GpuSpec | None, backend: Backend | None
) -> SpeedFactor | None:
    cls = hardware_class(gpu.vendor, gpu.name, spec, gpu.unified_memory)
    return speed_factor(catalog, cls, backend or default_backend(gpu.vendor))


@dataclass(frozen=True)
class HostBandwidth:
    bytes_per_s: int
    source: HostSource
    #: in words, with the platform or the measurement
    why: str


def cpu_platform(catalog: Catalog, cpu_model: str | None) -> CpuPlatform | None:
    if not cpu_model:
        return None
    for platform in catalog.cpu_platforms:
        if any(re.search(p, cpu_model, re.IGNORECASE) for p in platform.match):
            return platform
    return None


def host_bandwidth(machine: Machine, catalog: Catalog) -> HostBandwidth:
    """Peak host memory bandwidth: the snapshot's (measured or typed in), the CPU platform's, or a default."""
    memory = machine.memory
    if memory.bandwidth_bytes_per_s:
        source: HostSource = "measured" if memory.bandwidth_source == "measured" else "catalog"
        if memory.bandwidth_source == "default":
            source = "default"
        return HostBandwidth(
            memory.bandwidth_bytes_per_s,
            source,
            f"{memory.bandwidth_bytes_per_s / 1e9:.0f} GB/s "
            f"({memory.bandwidth_source or 'from the snapshot'})",
        )
    platform = cpu_platform(catalog, machine.cpu.model)
    if platform is not None:
        bw = platform.bandwidth_bytes_per_s
        return HostBandwidth(
            bw,
            "catalog",
            f"{bw / 1e9:.0f} GB/s: {platform.name}, {platform.channels} channels × "
            f"{platform.mt_per_s} MT/s ({platform.source})",
        )
    return HostBandwidth(DEFAULT_HOST_BANDWIDTH, "default", DEFAULT_HOST_SOURCE)


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
