"""SGLang's share of each GPU: ``--mem-fraction-static`` is the part for the weights and the KV cache pool;
the rest is reserved for activations and CUDA-graph buffers. Unset, SGLang works it out from the GPU's memory
(``SGLANG_SOURCE``, ``ServerArgs._handle_gpu_memory_settings``):

    reserved MiB = 512 + max(chunked_prefill_size, 2048) × 1.5 + cuda_graph_max_bs × 2 + tp × pp / 8 × 1024,
    at least 10 GiB above 60 GiB of GPU memory; fraction = (memory - reserved) / memory,

with chunked_prefill_size and cuda_graph_max_bs by memory tier (below 20 GiB: 2048 and 8; 35: 2048 and 24;
60: 4096 and 32; 90 and 160: 8192 and 256; above: 16384 and 512, for tensor parallel below 4). This
module takes one GPU per instance (tp = pp = 1) and no speculative decoding.
"""

from __future__ import annotations

from rigcheck.core.estimate.placement.types import Budget
from rigcheck.core.machine import Machine
from rigcheck.core.said import Joined, Percent, say

SGLANG_SOURCE = "sgl-project/sglang python/sglang/srt/server_args.py (ServerArgs._handle_gpu_memory_settings)"
MIB = 1024**2
#: (GPU memory below, MiB) → (chunked_prefill_size, cuda_graph_max_bs) for tp < 4
TIERS = ((20 * 1024, 2048, 8), (35 * 1024, 2048, 24), (60 * 1024, 4096, 32), (160 * 1024, 8192, 256))
LARGEST = (16384, 512)


def mem_fraction_static(total_bytes: int, tp: int = 1) -> float:
    """SGLang's default share of a GPU of ``total_bytes`` for weights and the KV cache pool."""
    gpu_mem = total_bytes / MIB
    chunk, graph_bs = next(((c, g) for below, c, g in TIERS if gpu_mem < below), LARGEST)
    reserved = 512 + max(chunk, 2048) * 1.5 + graph_bs * 2 + tp / 8 * 1024
    if gpu_mem > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    return round((gpu_mem - reserved) / gpu_mem, 3)


def sglang_budget(machine: Machine, budget: Budget) -> Budget:
    """Each GPU's budget capped at SGLang's static fraction of its memory."""
    fractions = [
        mem_fraction_static(g.memory_total_bytes) if g.memory_total_bytes else None for g in machine.gpus
    ]
    capped = tuple(
        min(b, int(g.memory_total_bytes * f)) if g.memory_total_bytes and f is not None else b
        for g, b, f in zip(machine.gpus, budget.gpu_bytes, fractions, strict=True)
    )
    shown = sorted({f for f in fractions if f is not None})
    reason = say(
        "SGLang keeps {share} of each GPU's memory for weights and KV cache (--mem-fraction-static default; "
        "the rest for activations and CUDA graphs: {source})",
        share=Joined(", ", tuple(Percent(f) for f in shown)) if shown else "?",
        source=SGLANG_SOURCE,
    )
    return Budget(capped, budget.cpu_bytes, (*budget.reasons_said, reason))
