"""What each device may use: its capacity (or free memory, live) less a safety margin, RAM less what the
system keeps, and a unified GPU's share taken out of the RAM it shares; vLLM's own share of each GPU.
"""

from __future__ import annotations

from rigcheck.core.estimate.memory import GIB, Engine
from rigcheck.core.estimate.placement.types import Budget
from rigcheck.core.machine import Machine
from rigcheck.core.said import Bytes, Num, Percent, Text, say
from rigcheck.core.unified import unified_share

#: fraction of each GPU's capacity kept free for fragmentation and other processes (shown to users)
GPU_MARGIN = 0.05
#: llama.cpp allocates its weights, KV cache and compute buffers once, at load, so there is no
#: allocator slack to leave room for: it keeps only this much for the display and the driver, at most
#: (our judgement; it lets gpt-oss-20b fit a 12 GB card, where it is measured running entirely on the GPU)
LLAMA_CPP_GPU_MARGIN_BYTES = 256 * 1024**2


def host_reserve(total: int) -> int:
    """RAM left for the OS and desktop: 10% of RAM, at least 2 GiB and at most 16 GiB."""
    return min(max(total // 10, 2 * GIB), 16 * GIB)


def _minus(total: int, reserve: int) -> tuple[Bytes | Num, Bytes | Num, Bytes | Num]:
    """``total``, ``reserve`` and what is left, each shown to 0.1 GiB with the shown subtraction exact: the
    total and the rest are rounded once and the reserve shown is their difference."""
    if total < GIB or reserve > total:
        return Bytes(total), Bytes(reserve), Bytes(total - reserve)
    shown_total = round(total / GIB, 1)
    shown_rest = round((total - reserve) / GIB, 1)
    # one unit for the three, so that the subtraction reads as one (not 1.0 TiB - 16.0 GiB = 1008.0 GiB)
    return tuple(  # type: ignore[return-value]
        Num(value, 1, group=False, unit=" GiB")
        for value in (shown_total, shown_total - shown_rest, shown_rest)
    )


def gpu_margin(total: int, engine: Engine = "llama.cpp") -> int:
    margin = int(total * GPU_MARGIN)
    return min(margin, LLAMA_CPP_GPU_MARGIN_BYTES) if engine in ("llama.cpp", "ollama") else margin


def budgets(machine: Machine, live: bool, engine: Engine = "llama.cpp") -> Budget:
    reasons: list[Text] = []
    gpu_bytes: list[int] = []
    total_ram = machine.memory.total_bytes
    from_ram = 0  # what unified GPUs take out of the RAM the OS reports
    for gpu in machine.gpus:
        label = f"GPU {gpu.index} ({gpu.name})"
        share = unified_share(gpu, total_ram, name=label)
        total = share.bytes if share is not None else gpu.memory_total_bytes
        if total is None:
            gpu_bytes.append(0)
            reasons.append(say("{label}: memory size unknown, not used", label=label))
            continue
        margin = gpu_margin(total, engine)
        if share is not None:
            usable = total - margin
            reasons.append(
                say(
                    "{reason}; less a {margin} safety margin = {usable}",
                    reason=share.reason,
                    margin=Bytes(margin),
                    usable=Bytes(usable),
                )
            )
            from_ram += max(usable - (share.bytes - share.from_ram), 0)  # a carve-out is not in RAM
        elif live and gpu.memory_free_bytes is not None and not gpu.unified_memory:
            usable = gpu.memory_free_bytes - margin
            reasons.append(
                say(
                    "{label}: {free} free of {total}, less a {margin} safety margin = {usable}",
                    label=label,
                    free=Bytes(gpu.memory_free_bytes),
                    total=Bytes(total),
                    margin=Bytes(margin),
                    usable=Bytes(usable),
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
                say(
                    template,
                    label=label,
                    total=Bytes(total),
                    margin=Bytes(margin),
                    usable=Bytes(usable),
                )
            )
            if gpu.unified_memory:
                from_ram += max(usable, 0)
        gpu_bytes.append(max(usable, 0))
    reserve = host_reserve(total_ram)
    ram = total_ram - reserve
    total_s, reserve_s, ram_s = _minus(total_ram, reserve)
    if live and machine.memory.available_bytes is not None:
        available = machine.memory.available_bytes
        if available < ram:
            reasons.append(
                say(
                    "RAM: {available} available now (less than {total} - {reserve} kept for the system "
                    "= {ram})",
                    available=Bytes(available),
                    total=total_s,
                    reserve=reserve_s,
                    ram=ram_s,
                )
            )
        else:
            reasons.append(
                say(
                    "RAM: {total} - {reserve} kept for the system = {ram} ({available} available now)",
                    available=Bytes(available),
                    total=total_s,
                    reserve=reserve_s,
                    ram=ram_s,
                )
            )
        ram = min(ram, available)
    else:
        reasons.append(
            say(
                "RAM: {total} - {reserve} kept for the system = {ram}",
                total=total_s,
                reserve=reserve_s,
                ram=ram_s,
            )
        )
    if from_ram:
        ram = max(ram - from_ram, 0)
        reasons.append(
            say(
                "unified memory: the {gpu} the GPU may use comes out of the same RAM, leaving "
                "{ram} for the CPU side",
                gpu=Bytes(from_ram),
                ram=Bytes(ram),
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
    reason = say(
        "vLLM uses at most {share} of each GPU's memory (--gpu-memory-utilization default)",
        share=Percent(VLLM_GPU_UTILIZATION),
    )
    return Budget(capped, budget.cpu_bytes, (*budget.reasons_said, reason))
