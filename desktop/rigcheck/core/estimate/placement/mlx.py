"""MLX's share of an Apple GPU: mlx-lm wires memory up to Metal's recommended working set, the share the
budget already holds (core/unified.py), so the budget stays as it is and says so."""

from __future__ import annotations

from rigcheck.core.estimate.mlx import MLX_LM_SOURCE
from rigcheck.core.estimate.placement.types import Budget
from rigcheck.core.said import say


def mlx_budget(budget: Budget) -> Budget:
    """The GPU share as it is (mlx-lm wires up to it), with the rule in the reasons."""
    reason = say(
        "mlx-lm wires memory up to Metal's max_recommended_working_set_size (the GPU share above) and warns "
        "past 90% of it; MLX does not offload layers to the CPU ({source})",
        source=MLX_LM_SOURCE,
    )
    return Budget(budget.gpu_bytes, budget.cpu_bytes, (*budget.reasons_said, reason))
