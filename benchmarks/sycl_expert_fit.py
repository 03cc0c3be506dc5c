"""The host and launch cost per routed expert of llama.cpp's SYCL per-expert loop in a prompt micro-batch.

Mechanism (core/estimate/speed/sycl_experts.py): ``ggml_sycl_mul_mat_id`` multiplies a prompt's experts one
at a time, each above 8 rows through an FP16 copy of its weights and a oneDNN GEMM. A row's seconds per
token are then its FLOPs at the class's dense rate, plus the copies' bytes at its decode bandwidth share,
plus ``prefill_expert_us`` per expert per MoE layer, all per micro-batch over its tokens.

Fit: for every fit-split SYCL MoE prompt row with quantised experts (Point.expert_loop), the measured seconds
per token (less a hybrid's recurrent scans: fit_speed.gemm_rate) minus the FLOPs at the dense rate fitted on
the class's dense rows and minus the copies' bytes, × the micro-batch, over its expert launches. The median
over the backend's rows; these rows stay out of the class's MoE factor (it is another path's batch-shape
share).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from typing import Protocol

from rigcheck.core.estimate.speed.sycl_experts import ExpertLoop

#: the fewest such rows a backend needs for its cost to be fitted
MIN_EXPERT_ROWS = 2


class LoopPoint(Protocol):
    @property
    def expert_loop(self) -> ExpertLoop | None: ...
    @property
    def ubatch(self) -> int: ...
    @property
    def flops_per_token(self) -> float: ...
    @property
    def bandwidth(self) -> float: ...


def expert_us(
    rows: Iterable[tuple[LoopPoint, float]], dense_flops: Callable[[LoopPoint], float], bandwidth_share: float
) -> tuple[float, int]:
    """µs per expert launch: the median over ``rows`` (each a point and its GEMM FLOP/s, fit_speed.gemm_rate)
    of its time per micro-batch left after the dense FLOPs (``dense_flops``: the class's FLOP/s for the point)
    and the expert copies at ``bandwidth_share`` of its bandwidth, over its launches; and how many rows.
    (0, n) where fewer than MIN_EXPERT_ROWS rows have the loop."""
    found = []
    for p, rate in rows:
        loop = p.expert_loop
        if loop is None or rate <= 0 or loop.calls <= 0:
            continue
        seconds = p.flops_per_token / rate
        rest = (
            seconds
            - p.flops_per_token / dense_flops(p)
            - loop.seconds(p.bandwidth * bandwidth_share, 0.0) / p.ubatch
        )
        found.append(max(rest, 0.0) * p.ubatch / loop.calls * 1e6)
    if len(found) < MIN_EXPERT_ROWS:
        return 0.0, len(found)
    return statistics.median(found), len(found)
