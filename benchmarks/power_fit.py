"""The prefill power cap: one TFLOPS per watt of board power, pooled over a vendor's classes on one
backend, fitted with the classes' prefill efficiencies (benchmarks/prefill_fit.py fit_prefill).
"""

from __future__ import annotations

import itertools
import math
import statistics

from decode_fit import POOL_APART
from fit_points import Point

#: a power cap is fitted for a class × backend only when its dense rows hold at least this many GPUs with a
#: published board power on each side of it: below the cap (their peak × efficiency sets their rate) and at
#: it (their watts do); with fewer, one regime would be a single card's, and the class keeps the plain share
MIN_POWER_GPUS = 2


def power_pool(key: tuple[str, str], power: str) -> tuple[str, str]:
    """The rows that share one TFLOPS-per-watt figure: ``pooled``, a vendor's classes on one backend (one
    set of kernels; what a tensor operation costs in watts is the silicon's, not the market segment's),
    except the classes kept apart from their vendor's pool (POOL_APART); ``class``, each class × backend."""
    cls, backend = key
    if power == "pooled" and cls not in POOL_APART:
        return (cls.split("-")[0], backend)
    return key


def dense_rate(p: Point, efficiency: float, per_watt: float | None) -> float:
    """FLOP/s the class model gives a dense quantised-weight row: speed.prefill_compute's min(peak ×
    efficiency, board power × TFLOPS per watt)."""
    rate = (p.peak_flops or 0.0) * efficiency
    if per_watt and p.watts:
        rate = min(rate, p.watts * per_watt * 1e12)
    return rate


def fit_power(
    groups: dict[tuple[str, str], list[tuple[Point, float]]],
) -> tuple[dict[tuple[str, str], float], float | None]:
    """Each class × backend's efficiency and one TFLOPS per watt for all of ``groups``, minimising the sum
    of |log error| of min(peak × e, watts × k) against the rows' FLOP rates: the median's own loss, so one
    stray row (a published figure far off its card's other rows) moves them no more than the plain median
    would. The model is linear in log e and log k on each side of the cap, so the optimum lies on rows'
    breakpoints: k is tried at each row's own watts-set rate, then e and k are refined in turn over every
    breakpoint. Without GPUs enough on both sides of the cap (MIN_POWER_GPUS), or when the cap does not
    lower the loss, the plain median shares and no cap.
    """
    plain = {
        key: statistics.median(r / (p.peak_flops or 1.0) for p, r in rows) for key, rows in groups.items()
    }
    logs = {
        key: [(math.log(p.peak_flops or 1.0), math.log(p.watts * 1e12) if p.watts else math.inf, math.log(r), p)
              for p, r in rows]
        for key, rows in groups.items()
    }  # fmt: skip
    with_watts = {p.row.gpu_id for rows in logs.values() for _a, c, _t, p in rows if c != math.inf}
    if len(with_watts) < 2 * MIN_POWER_GPUS:
        return plain, None

    def loss(key: tuple[str, str], log_e: float, log_k: float, power: int = 1) -> float:
        return sum(abs(min(a + log_e, c + log_k) - t) ** power for a, c, t, _p in logs[key])

    def between(points: set[float]) -> list[float]:
        """The breakpoints and the midpoints between neighbours: where the |log error| is flat between two
        breakpoints (an even number of rows), the squared error then picks its middle, as a median does."""
        ordered = sorted(points)
        return ordered + [(x + y) / 2 for x, y in itertools.pairwise(ordered)]

    def best_e(key: tuple[str, str], log_k: float) -> float:
        rows = logs[key]
        candidates = {t - a for a, _c, t, _p in rows} | {
            c + log_k - a for a, c, _t, _p in rows if c != math.inf
        }
        return min(between(candidates), key=lambda e: (round(loss(key, e, log_k), 9), loss(key, e, log_k, 2)))

    def total(log_k: float, es: dict[tuple[str, str], float], power: int = 1) -> float:
        return sum(loss(key, es[key], log_k, power) for key in logs)

    power_side = {t - c for rows in logs.values() for _a, c, t, _p in rows if c != math.inf}
    scored = []
    for log_k in sorted(power_side):
        es = {key: best_e(key, log_k) for key in logs}
        scored.append((round(total(log_k, es), 9), total(log_k, es, 2), log_k, es))
    _loss, _square, log_k, es = min(scored, key=lambda x: (x[0], x[1]))
    for _ in range(5):
        breakpoints = power_side | {
            a + es[key] - c for key, rows in logs.items() for a, c, _t, _p in rows if c != math.inf
        }
        log_k = min(between(breakpoints), key=lambda k: (round(total(k, es), 9), total(k, es, 2)))
        new = {key: best_e(key, log_k) for key in logs}
        if new == es:
            break
        es = new
    below = {p.row.gpu_id for key, rows in logs.items() for a, c, _t, p in rows if a + es[key] < c + log_k}
    at_cap = {p.row.gpu_id for key, rows in logs.items() for a, c, _t, p in rows if a + es[key] >= c + log_k}
    plain_loss = sum(loss(key, math.log(plain[key]), math.inf) for key in logs)
    if len(below) < MIN_POWER_GPUS or len(at_cap) < MIN_POWER_GPUS or total(log_k, es) >= plain_loss:
        return plain, None
    return {key: math.exp(e) for key, e in es.items()}, math.exp(log_k)
