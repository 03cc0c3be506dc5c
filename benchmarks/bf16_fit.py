"""BF16 decode on a backend whose BF16 mat-vec is another, slower kernel (core/estimate/speed/bf16_decode.py).

Only SYCL is fitted: llama.cpp's SYCL backend takes BF16 weights through its DMMV path, which PMZFX measured at
a fraction of the quantized kernels' rate on an Arc Pro B70 (engine-comparison.md@1f4a089, "a known DMMV
bug"). Its BF16 decode rows are kept out of the bandwidth fit; for each, the bandwidth time the class's
efficiency gives divided by the measured time less the fixed costs is the row's share of the usual read rate;
``decode_bf16_factor`` is the median over the backend's rows.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: backends whose BF16 decode is fitted apart (see the module docstring)
SLOW_BF16_BACKENDS = frozenset({"sycl"})


def slow_bf16_row(backend: str, fmt: str, metric: str) -> bool:
    return metric == "decode_tokens_per_s" and backend in SLOW_BF16_BACKENDS and fmt.upper() == "BF16"


@dataclass(frozen=True)
class Bf16Fit:
    factor: float
    rows: int
    urls: tuple[str, ...]

    @property
    def said(self) -> str:
        return f"BF16 weights read at {self.factor:.2f} × that rate, median of {self.rows} BF16 rows"


def fit_bf16(
    points: Sequence[Any], fitted: Callable[[str, str], tuple[float, float] | None]
) -> dict[str, Bf16Fit]:
    """``points``: fit_speed Points of slow-BF16 rows; ``fitted(cls, backend)``: (efficiency, per-layer µs).
    Per backend, pooled over its classes."""
    return {b: Bf16Fit(*found) for b, found in median_read_shares(points, fitted).items()}


def median_read_shares(
    points: Sequence[Any], fitted: Callable[[str, str], tuple[float, float] | None]
) -> dict[str, tuple[float, int, tuple[str, ...]]]:
    """Per backend: the median of the rows' weight-read time at their class's fitted rate over what is left of
    a token once the per-layer cost and GPU hops are taken off (capped at 2), the row count and their sources:
    the factor a kernel path slower than the class's own reads at (BF16, SYCL's unreordered types)."""
    shares: dict[str, list[float]] = {}
    urls: dict[str, set[str]] = {}
    for p in points:
        fit = fitted(p.hw_class, p.backend)
        if fit is None:
            continue
        eff, tau = fit
        rest = 1 / p.row.value - p.layers * tau * 1e-6 - p.hop_seconds
        if rest <= 0:
            continue
        shares.setdefault(p.backend, []).append(p.bytes_per_token / (p.bandwidth * eff) / rest)
        urls.setdefault(p.backend, set()).add(p.row.source_url)
    return {
        b: (round(min(statistics.median(v), 2.0), 2), len(v), tuple(sorted(urls[b])))
        for b, v in shares.items()
    }
