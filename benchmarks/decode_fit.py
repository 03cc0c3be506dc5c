"""The decode fit of one class × backend: the bandwidth efficiency, the per-layer cost and the cost of a
mixture-of-experts layer that minimise the squared log error of tokens/s (benchmarks/fit_speed.py).
"""

from __future__ import annotations

import math
import statistics

from fit_points import Point

#: achieved DRAM bandwidth stays below ~95% of the peak on every device measured (stream-copy tests);
#: the fit is kept within it so that a fixed cost is not traded for an impossible efficiency
EFFICIENCIES = [e / 100 for e in range(5, 96)]
PER_LAYER_US = list(range(0, 301, 2))
#: fit the per-layer cost of a class only with this many rows; else take its vendor × backend pool's
MIN_ROWS_FOR_FIXED_COST = 4
#: the extra cost of a mixture-of-experts layer (SpeedFactor.moe_layer_us, speed/fixed.py) is fitted with the
#: efficiency and the per-layer cost only where the rows hold at least this many MoE and this many dense
#: rows (else the two cannot be told apart); elsewhere the vendor × backend pool's, else none
MIN_MOE_COST_ROWS = 2
MOE_LAYER_US = list(range(0, 601, 5))
#: classes whose rows stay out of their vendor × backend pool: GCN Instinct cards run community gfx906
#: builds of llama.cpp on an architecture without matrix units, unlike the RDNA/CDNA cards the pool serves
POOL_APART = frozenset({"amd-gcn"})


def decode_seconds(p: Point, eff: float, tau: float, moe_us: float = 0.0) -> float:
    """The decode model's seconds per token for one point (speed/decode.py, speed/fixed.py)."""
    return (
        p.bytes_per_token / (p.bandwidth * eff)
        + (p.layers * tau + p.moe_layers * moe_us) * 1e-6
        + p.hop_seconds
    )


def _decode_grid(points: list[Point], tau_fixed: float | None, moe_us: float) -> tuple[float, float, float]:
    """(efficiency, per-layer µs, squared log loss) at a fixed MoE-layer cost."""
    best = (1.0, 0.0, math.inf)
    for eff in EFFICIENCIES:
        for tau in PER_LAYER_US if tau_fixed is None else [tau_fixed]:
            loss = 0.0
            for p in points:
                loss += math.log(p.row.value * decode_seconds(p, eff, tau, moe_us)) ** 2
            if loss < best[2]:
                best = (eff, float(tau), loss)
    return best


def fit_decode(
    points: list[Point], tau_fixed: float | None = None, moe_us: float = 0.0
) -> tuple[float, float, float]:
    """(efficiency, per-layer µs, median |error|) minimising the squared log error, at ``moe_us`` µs more per
    mixture-of-experts layer."""
    eff, tau, _ = _decode_grid(points, tau_fixed, moe_us)
    errors = [abs(1 / decode_seconds(p, eff, tau, moe_us) / p.row.value - 1) for p in points]
    return eff, tau, statistics.median(errors)


def separates_moe(points: list[Point]) -> bool:
    """Whether ``points`` can tell a mixture-of-experts layer's extra cost from the per-layer one: MoE rows
    enough, and dense rows enough to fit the efficiency and the per-layer cost on their own."""
    moe = sum(1 for p in points if p.moe_layers)
    return moe >= MIN_MOE_COST_ROWS and len(points) - moe >= MIN_ROWS_FOR_FIXED_COST


def fit_moe_cost(points: list[Point], tau_fixed: float | None = None) -> tuple[float, float, float]:
    """(efficiency, per-layer µs, MoE-layer µs): the efficiency and the per-layer cost are the dense rows'
    (a dense layer's kernels are every layer's), and the extra cost of a mixture-of-experts layer
    (MOE_LAYER_US) the one that brings the MoE rows closest at those, least squared log error, as the MoE
    prefill factor is fitted against a class's dense rows (fit_prefill)."""
    dense = [p for p in points if not p.moe_layers]
    moe = [p for p in points if p.moe_layers]
    eff, tau, _ = _decode_grid(dense, tau_fixed, 0.0)
    loss = {
        m: sum(math.log(p.row.value * decode_seconds(p, eff, tau, m)) ** 2 for p in moe) for m in MOE_LAYER_US
    }
    return eff, tau, float(min(loss, key=lambda m: (loss[m], m)))


def keeps_median(
    points: list[Point], with_moe: tuple[float, float, float], without: tuple[float, float, float]
) -> bool:
    """Whether the factors with a MoE-layer cost do better on the class's fit rows (median |error|) than the
    plain fit: a cost the rows do not bear out is not kept (the joint fit lowers the squared log error by
    construction, trading the per-layer cost for it even where the MoE rows need nothing more)."""

    def median(eff: float, tau: float, moe_us: float) -> float:
        return statistics.median(
            abs(1 / decode_seconds(p, eff, tau, moe_us) / p.row.value - 1) for p in points
        )

    return median(*with_moe) < median(without[0], without[1], 0.0)
