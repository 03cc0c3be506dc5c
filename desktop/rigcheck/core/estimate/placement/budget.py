"""What each device may use: its capacity (or free memory, live) less a safety margin, RAM less what the
system keeps, and a unified GPU's share taken out of the RAM it shares; vLLM's own share of each GPU.
"""

from __future__ import annotations

from rigcheck.core.estimate.memory import GIB, Engine
from rigcheck.core.estimate.placement.types import Budget
from rigcheck.core.i18n import percent, tr
from rigcheck.core.machine import Machine
from rigcheck.core.unified import unified_share
from rigcheck.core.units import fmt_bytes

#: fraction of each GPU's capacity kept free for fragmentation and other processes (shown to users)
GPU_MARGIN = 0.05
#: llama.cpp allocates its weights, KV cache and compute buffers once, at load, so there is no
#: allocator slack to leave room for: it keeps only this much for the display and the driver, at most
#: (our judgement; it lets gpt-oss-20b fit a 12 GB card, where it is measured running entirely on the GPU)
LLAMA_CPP_GPU_MARGIN_BYTES = 256 * 1024**2


def host_reserve(total: int) -> int:
    """RAM left for the OS and desktop: 10% of RAM, at least 2 GiB and at most 16 GiB."""
    return min(max(total // 10, 2 * GIB), 16 * GIB)


def gpu_margin(total: int, engine: Engine = "llama.cpp") -> int:
    margin = int(total * GPU_MARGIN)
    return min(margin, LLAMA_CPP_GPU_MARGIN_BYTES) if engine in ("llama.cpp", "ollama") else margin


def budgets(machine: Machine, live: bool, engine: Engine = "llama.cpp") -> Budget:
    reasons: list[str] = []
    gpu_bytes: list[int] = []
    total_ram = machine.memory.total_bytes
    from_ram = 0  # what unified GPUs take out of the RAM the OS reports
    for gpu in machine.gpus:
        label = f"GPU {gpu.index} ({gpu.name})"
        share = unified_share(gpu, total_ram, name=label)
        total = share.bytes if share is not None else gpu.memory_total_bytes
        if total is None:
            gpu_bytes.append(0)
            reasons.append(tr("{label}: memory size unknown, not used", label=label))
            continue
        margin = gpu_margin(total, engine)
        if share is not None:
            usable = total - margin
            reasons.append(
                tr(
                    "{reason}; less a {margin} safety margin = {usable}",
                    reason=share.reason,
                    margin=fmt_bytes(margin),
                    usable=fmt_bytes(usable),
                )
            )
            from_ram += max(usable - (share.bytes - share.from_ram), 0)  # a carve-out is not in RAM
        elif live and gpu.memory_free_bytes is not None and not gpu.unified_memory:
            usable = gpu.memory_free_bytes - margin
            reasons.append(
                tr(
                    "{label}: {free} free of {total}, less a {margin} safety margin = {usable}",
                    label=label,
                    free=fmt_bytes(gpu.memory_free_bytes),
                    total=fmt_bytes(total),
                    margin=fmt_bytes(margin),
                    usable=fmt_bytes(usable),
                )
            )
        else:
            usable = total - margin
            template = (
                "{label}: {total} GPU share of unified memory, less a {margin} safety margin = {usable}"
                if gpu.unified_memory
                else "{label}: {total} capacity, less a {margin} safety margin = {usable}"
            )
            reasons.append(
                tr(
                    template,
                    label=label,
                    total=fmt_bytes(total),
                    margin=fmt_bytes(margin),
                    usable=fmt_bytes(usable),
                )
            )
            if gpu.unified_memory:
                from_ram += max(usable, 0)
        gpu_bytes.append(max(usable, 0))
    reserve = host_reserve(total_ram)
    ram = total_ram - reserve
    if live and machine.memory.available_bytes is not None:
        ram = min(ram, machine.memory.available_bytes)
        reasons.append(
            tr(
                "RAM: {available} available of {total}, keeping {reserve} for the system = {ram}",
                available=fmt_bytes(machine.memory.available_bytes),
                total=fmt_bytes(total_ram),
                reserve=fmt_bytes(reserve),
                ram=fmt_bytes(ram),
            )
        )
    else:
        reasons.append(
            tr(
                "RAM: {total}, keeping {reserve} for the system = {ram}",
                total=fmt_bytes(total_ram),
                reserve=fmt_bytes(reserve),
                ram=fmt_bytes(ram),
            )
        )
    if from_ram:
        ram = max(ram - from_ram, 0)
        reasons.append(
            tr(
                "unified memory: the {gpu} the GPU may use comes out of the same RAM, leaving "
                "{ram} for the CPU side",
                gpu=fmt_bytes(from_ram),
                ram=fmt_bytes(ram),
            )
        )
    return Budget(tuple(gpu_bytes), max(ram, 0), tuple(reasons))


#: vLLM's default --gpu-memory-utilization: it takes this fraction of each GPU's total memory
#: (memory-formulas §5: "Standard 0,9"; vllm PR #10511 start-up profile 79.22 GiB × 0.90)
VLLM_GPU_UTILIZATION = 0.9


def vllm_budget(machine: Machine, budget: Budget) -> Budget:
    capped = tuple(
        min(b, int(g.memory_total_bytes * VLLM_GPU_UTILIZATION)) if g.memory_total_bytes else b
        for g, b in zip(machine.gpus, budget.gpu_bytes, strict=True)
    )
    reason = tr(
        "vLLM uses at most {share} of each GPU's memory (--gpu-memory-utilization default)",
        share=percent(VLLM_GPU_UTILIZATION),
    )
    return Budget(capped, budget.cpu_bytes, (*budget.reasons, reason))
