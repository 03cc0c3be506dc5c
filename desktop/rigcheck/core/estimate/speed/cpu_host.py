"""What the CPU paths need to know about the host beyond its bandwidth: which memory class its platform is
(the share of the peak llama.cpp's CPU decode reaches differs between a many-channel server, a one- or
two-channel desktop or laptop and an LPDDR SoC), and its compute peak, with the platform's cores, clock and
FLOPs per cycle standing in where the probe did not read them (catalog/cpu_platforms.toml).
"""

from __future__ import annotations

from dataclasses import replace

from rigcheck.core.catalog import Catalog, CpuPlatform, SpeedFactor
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.speed.cpu_kernel import cpu_kernel
from rigcheck.core.machine import Machine

#: the memory classes, each a speed_factor hw_class "cpu-<class>" (catalog/speed.toml) for CPU-only decode
MEMORY_CLASSES = ("server", "client", "soc")


def memory_class(platform: CpuPlatform | None) -> str:
    """``server``: four or more DDR channels (Threadripper, EPYC, Xeon, Graviton: several NUMA nodes or
    chiplets, each core reaching its share through the fabric); ``soc``: LPDDR soldered next to the cores
    on a platform that has no DIMM option (SBCs, Apple, Strix Halo, Lunar Lake, Grace); ``client``: the rest
    (one or two DDR channels, desktops and laptops, where a laptop may carry either DIMMs or LPDDR). The
    entry's own ``memory_class`` wins; an unknown CPU is taken as a client (the default bandwidth is a
    desktop's)."""
    if platform is None:
        return "client"
    if platform.memory_class:
        return platform.memory_class
    kind = (platform.memory_type or "").upper()
    if kind.startswith("LPDDR"):
        return "soc"
    return "server" if platform.channels >= 4 else "client"


def decode_factor(catalog: Catalog, machine: Machine) -> tuple[SpeedFactor | None, str]:
    """The CPU-only decode factors for the host's memory class (``cpu-<class>`` × cpu), and the class; the
    CPU class's own row where none is fitted."""
    cls = memory_class(speed.cpu_platform(catalog, machine.cpu.model))
    own = next((f for f in catalog.speed_factors if f.hw_class == f"cpu-{cls}" and f.backend == "cpu"), None)
    return (own or speed.speed_factor(catalog, speed.CPU_CLASS, "cpu")), cls


def cpu_peak(
    machine: Machine, catalog: Catalog, *, quant_id: str | None, threads: int | None
) -> speed.CpuCompute | None:
    """The CPU's peak FP32 FLOP/s (``speed.cpu_compute``) × the int8 rate of llama.cpp's kernel for the type
    (``cpu_kernel``), with the platform's cores and boost clock where
    the probe read none (a snapshot from a tool that does not report them, a CPU named by hand), and the
    platform's FLOPs per core per cycle where the ISA flags overstate them (Gracemont E-cores) or an Arm
    SoC reports none. None when neither the probe nor the platform knows the clock."""
    cpu = machine.cpu
    platform = speed.cpu_platform(catalog, cpu.model)
    filled = False
    if (not cpu.max_mhz or cpu.max_mhz <= 0) and platform is not None and platform.boost_mhz:
        cores = cpu.physical_cores or platform.cores or cpu.logical_cores
        cpu = replace(cpu, max_mhz=float(platform.boost_mhz), physical_cores=cores)
        filled = True
    compute = speed.cpu_compute(cpu, quant_id=quant_id, threads=threads)
    if compute is None:
        return None
    per_cycle, isa = compute.flops_per_cycle, compute.isa
    if platform is None:
        return _with_kernel(compute, per_cycle, isa, cpu.flags, quant_id)
    if platform.fp32_flops_per_cycle and platform.fp32_flops_per_cycle != per_cycle:
        per_cycle = platform.fp32_flops_per_cycle
        isa = f"{platform.name}: {per_cycle} FP32 FLOPs per core per cycle"
    if filled:
        isa += f"; cores and clock from the platform entry ({platform.source})"
    return _with_kernel(compute, per_cycle, isa, cpu.flags, quant_id)


def _with_kernel(
    compute: speed.CpuCompute, per_cycle: int, isa: str, flags: tuple[str, ...], quant_id: str | None
) -> speed.CpuCompute:
    """``compute`` at ``per_cycle`` FP32 FLOPs, × the int8 rate of the kernel llama.cpp runs for the type
    (cpu_kernel: 1 on x86, more with Arm's dot-product and i8mm instructions), said in ``isa``."""
    kernel = cpu_kernel(flags, quant_id)
    if kernel.why is not None:
        isa += f"; × {kernel.factor:g}, {kernel.why}"
    if (per_cycle, isa) == (compute.flops_per_cycle, compute.isa):
        return compute
    flops = compute.cores * compute.ghz * 1e9 * per_cycle * kernel.factor
    return speed.CpuCompute(flops, compute.cores, compute.ghz, per_cycle, isa)
