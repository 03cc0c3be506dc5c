"""A Machine as a short, readable text summary (``rigcheck audit`` without ``--json``)."""

from __future__ import annotations

from rigcheck.core.machine import GPU, Machine, Memory
from rigcheck.core.text import one_line
from rigcheck.core.unified import Share, unified_share
from rigcheck.core.units import fmt_bytes, fmt_watts

_LABEL = 10


def _line(label: str, text: str) -> str:
    return f"{label:<{_LABEL}}{text}"


def describe_gpu(gpu: GPU, ram_total: int | None = None, share: Share | None = None) -> str:
    """One line: name, memory, architecture, power, link; unknowns said as such. A unified GPU whose size
    the probe could not read gets ``share``, its platform's rule on ``ram_total`` (core/unified.py), the
    figure the estimates use, marked as a rule."""
    parts = [gpu.name]
    if share is not None and ram_total:
        rule = " (by rule)" if share.by_rule else ""
        parts.append(f"{fmt_bytes(share.bytes)} of {fmt_bytes(ram_total)} unified memory for the GPU{rule}")
    elif gpu.unified_memory:
        parts.append(f"{fmt_bytes(gpu.memory_total_bytes)} unified memory usable by the GPU")
    else:
        memory = fmt_bytes(gpu.memory_total_bytes, "VRAM unknown")
        if gpu.memory_free_bytes is not None:
            memory += f" ({fmt_bytes(gpu.memory_free_bytes)} free)"
        parts.append(memory)
    if gpu.compute_capability:
        parts.append(f"CC {gpu.compute_capability}")
    if gpu.gfx_target:
        parts.append(gpu.gfx_target)
    if gpu.cores:
        parts.append(f"{gpu.cores} cores")
    if gpu.power_limit_watts is not None:
        power = f"{fmt_watts(gpu.power_limit_watts)} limit"
        if gpu.power_max_limit_watts is not None and gpu.power_max_limit_watts != gpu.power_limit_watts:
            power += f" (max {fmt_watts(gpu.power_max_limit_watts)})"
        parts.append(power)
    if gpu.pcie_gen and gpu.pcie_width:
        link = f"PCIe {gpu.pcie_gen}.0 x{gpu.pcie_width}"
        if gpu.pcie_max_gen and (gpu.pcie_max_gen, gpu.pcie_max_width) != (gpu.pcie_gen, gpu.pcie_width):
            link += f" (max {gpu.pcie_max_gen}.0 x{gpu.pcie_max_width})"
        parts.append(link)
    if gpu.nvlink_links:
        parts.append(f"{gpu.nvlink_links} NVLink links")
    if gpu.driver_model:
        parts.append(gpu.driver_model)
    if gpu.mig_enabled:
        parts.append("MIG enabled")
    return " · ".join(parts)


def summarise(machine: Machine) -> str:
    """The audit as people read it. Every unknown is written out, never left blank."""
    host, cpu, mem = machine.host, machine.cpu, machine.memory
    title = "RigCheck audit"
    if host.hostname:
        title += f" of {host.hostname}"
    if machine.taken_at:
        title += f", {machine.taken_at}"
    lines = [title, ""]

    system = [host.os_version or host.os or "unknown OS"]
    if host.kernel:
        system.append(f"kernel {host.kernel}")
    if host.python:
        system.append(f"Python {host.python}")
    if host.container:
        system.append(f"in {host.container}")
    lines.append(_line("System", ", ".join(system)))

    cores = f"{cpu.logical_cores} logical cores"
    if cpu.physical_cores:
        cores += f" ({cpu.physical_cores} physical)"
    cpu_text = ", ".join(x for x in (cpu.model or "unknown CPU", cores, cpu.arch) if x)
    if cpu.max_mhz:
        cpu_text += f", up to {cpu.max_mhz:.0f} MHz"
    lines.append(_line("CPU", cpu_text))
    lines.append(_line("", "flags: " + (" ".join(cpu.flags) if cpu.flags else "none of note")))

    lines.append(_line("Memory", memory_text(mem)))

    if machine.gpus:
        for gpu in machine.gpus:
            ram = machine.memory.total_bytes
            share = unified_share(gpu, ram, name="how") if ram else None
            label = f"GPU {gpu.index if gpu.index is not None else '?'}"
            lines.append(_line(label, describe_gpu(gpu, ram, share)))
            if share is not None:
                lines.append(_line("", share.reason))
    else:
        lines.append(_line("GPUs", "none found"))

    drv = machine.drivers
    driver_parts = []
    if drv.nvidia or drv.cuda_driver:
        driver_parts.append(
            f"NVIDIA {drv.nvidia or 'unknown'} (supports CUDA {drv.cuda_driver or 'unknown'})"
        )
    if drv.amdgpu:
        driver_parts.append(f"amdgpu {drv.amdgpu}")
    if drv.rocm:
        driver_parts.append(f"ROCm {drv.rocm}")
    lines.append(_line("Drivers", "; ".join(driver_parts) or "no GPU driver found"))

    sw = machine.software
    toolkits = ", ".join(f"CUDA {t.version}" + (f" ({t.path})" if t.path else "") for t in sw.cuda_toolkits)
    lines.append(_line("Toolkits", toolkits or "no CUDA toolkit found"))
    packages = ", ".join(f"{k} {v}" for k, v in sw.python_packages.items())
    lines.append(_line("Packages", packages or "none of the LLM stack"))
    tools = ", ".join(f"{k} {v.version or '(version unknown)'}" for k, v in sw.executables.items())
    lines.append(_line("Tools", tools or "none on PATH"))

    for disk in machine.disks:
        space = f"{fmt_bytes(disk.free_bytes)} free of {fmt_bytes(disk.total_bytes)}"
        lines.append(_line("Disk", f"{disk.purpose or 'folder'}: {disk.path}: {space}"))

    psu = machine.psu
    lines.append(_line("PSU", f"{fmt_watts(psu.watts)} ({psu.source})" if psu.watts else "not entered"))

    if machine.notes:
        lines += ["", "Notes"]
        # one line each: a snapshot's note may hold line breaks, which would forge lines of the summary
        lines += [one_line(f"  [{n.level}] {n.probe}: {n.message}") for n in machine.notes]
    return "\n".join(lines)


_BANDWIDTH_SOURCES = {
    "measured": "measured by audit --measure",
    "catalog": "peak of the CPU platform, from the catalog",
    "default": "a typical dual-channel DDR5 desktop, not measured",
}


def memory_text(mem: Memory) -> str:
    """RAM sizes, swap and the host memory bandwidth offloaded weights are read at, and its source."""
    text = f"{fmt_bytes(mem.total_bytes)} total, {fmt_bytes(mem.available_bytes)} available"
    text += f", swap {fmt_bytes(mem.swap_total_bytes)}"
    if mem.bandwidth_bytes_per_s:
        source = _BANDWIDTH_SOURCES.get(mem.bandwidth_source or "", "from the snapshot")
        text += f", bandwidth {mem.bandwidth_bytes_per_s / 1e9:.1f} GB/s ({source})"
    return text
