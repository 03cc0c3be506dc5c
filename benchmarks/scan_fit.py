"""The share of the FP32 peak llama.cpp's recurrent scans of a hybrid reach in a prompt (one figure, pooled).

Mechanism (core/estimate/speed/recurrent_scan.py): a Gated DeltaNet or Mamba-2 layer's state update runs token
by token on the vector ALUs, after the layer's GEMMs, so a hybrid's prompt time is the GEMM time plus
scan FLOPs ÷ (FP32 peak × this share).

Fit: every fit-split prompt row of a hybrid model run by llama.cpp itself on GPUs (no offload, no Ollama: its
own graphs are its maturity) is estimated as a user's machine would be, with the catalog's class factors and
each candidate share; the share with the least summed |log error| over those rows is kept (a geometric grid
in 25% steps, refined in 3% steps). The catalog's class factors were fitted with the hybrid rows' GEMM time (measured time less the
scan time at the catalog's share: fit_speed.gemm_rate), so ``fit_speed.py --maturity > catalog/speed.toml``
run until it reproduces itself settles both. One figure for every class and backend: the rows are too few
to tell backends apart, and the issue's rule is not per model.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from measurements import Measurement
from rigcheck.core.catalog import Catalog
from rigcheck.core.estimate.speed.recurrent_scan import scan_flops_per_token
from rigcheck.core.models.resolve import from_catalog

#: candidate shares: 0.1% to 100% of the FP32 peak in 25% steps, then 3% steps around the best of those
COARSE = [0.001 * 1.25**k for k in range(32)]
FINE = [1.03**k for k in range(-8, 9)]
#: fit a share only with this many rows
MIN_ROWS = 6


@dataclass(frozen=True)
class ScanFit:
    efficiency: float
    rows: int
    error: float
    urls: tuple[str, ...]

    @property
    def said(self) -> str:
        return (
            f"recurrent scans of hybrids at {self.efficiency:.3f} of the FP32 peak, pooled over {self.rows} "
            f"hybrid prompt rows of every class (median |error| {self.error:.0%} on them)"
        )


def scan_rows(rows: list[Measurement], catalog: Catalog) -> list[Measurement]:
    """The fit rows the share is fitted on: llama.cpp prompt rows of a model with recurrent layers, on GPUs
    whose FP32 peak is known."""
    found = []
    for row in rows:
        if row.split != "fit" or row.metric != "prefill_tokens_per_s" or not row.gpu_count:
            continue
        if row.offloaded or not row.llama_cpp or row.ollama or row.engine.lower().startswith("mlx"):
            continue
        spec = catalog.model(row.model_id) if row.model_id else None
        gpu = catalog.gpu(row.gpu_id) if row.gpu_id else None
        if spec is None or gpu is None or not gpu.fp32_tflops:
            continue
        if scan_flops_per_token(from_catalog(spec).arch) > 0:
            found.append(row)
    return found


def with_scan(catalog: Catalog, efficiency: float | None) -> Catalog:
    """``catalog`` with every GPU class's scan share set to ``efficiency``."""
    factors = tuple(
        replace(f, prefill_scan_efficiency=efficiency) if f.backend != "cpu" else f
        for f in catalog.speed_factors
    )
    return replace(catalog, speed_factors=factors)


def fit_scan(
    rows: list[Measurement],
    catalog: Catalog,
    estimate: Callable[[Measurement, Catalog], float | None],
) -> ScanFit | None:
    """The pooled share (ScanFit), or None with fewer than MIN_ROWS rows."""
    kept = scan_rows(rows, catalog)
    if len(kept) < MIN_ROWS:
        return None

    def trial(share: float) -> tuple[float, float, list[float]]:
        tried = with_scan(catalog, share)
        errors = []
        for row in kept:
            value = estimate(row, tried)
            if value:
                errors.append(math.log(value / row.value))
        return (sum(abs(e) for e in errors) if errors else math.inf, share, errors)

    coarse = min((trial(share) for share in COARSE), key=lambda t: t[0])
    _loss, share, errors = min((trial(coarse[1] * step) for step in FINE), key=lambda t: t[0])
    if not errors:
        return None
    magnitudes = sorted(abs(math.exp(e) - 1) for e in errors)
    median = magnitudes[len(magnitudes) // 2]
    return ScanFit(share, len(errors), median, tuple(sorted({r.source_url for r in kept})))
