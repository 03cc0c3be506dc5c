"""ExLlamaV3's share of each GPU: its memory less the 0.5 GiB ``Model.load`` reserves per device
(core/estimate/exllamav3.py)."""

from __future__ import annotations

from rigcheck.core.estimate.exllamav3 import EXL3_SOURCE, RESERVE_BYTES
from rigcheck.core.estimate.placement.types import Budget
from rigcheck.core.machine import Machine
from rigcheck.core.said import Bytes, say


def exllamav3_budget(machine: Machine, budget: Budget) -> Budget:
    """Each GPU's budget capped at its memory less ExLlamaV3's reserve; it offloads nothing to the CPU."""
    capped = tuple(
        min(b, max(g.memory_total_bytes - RESERVE_BYTES, 0)) if g.memory_total_bytes else b
        for g, b in zip(machine.gpus, budget.gpu_bytes, strict=True)
    )
    reason = say(
        "ExLlamaV3 reserves {reserve} on each GPU and loads whole modules in order, none on the CPU "
        "({source})",
        reserve=Bytes(RESERVE_BYTES),
        source=EXL3_SOURCE,
    )
    return Budget(capped, budget.cpu_bytes, (*budget.reasons_said, reason))
