"""The generic prefill rule for a hardware class × backend with no prompt measurements of its own.

Prefill is compute-bound: its rate is a share of the matrix peak the backend's prompt kernels run at
(speed.prefill_compute). A class × backend whose fit split holds no prompt row (so fit_prefill gives it no
share) takes the median of the shares its backend reaches on the classes that have their own rows: the
same kernels (MMQ/BLAS on CUDA and HIP, the Metal or Vulkan shaders) on other chips. The classes kept out
of their vendor's pools (fit_speed.POOL_APART: GCN Instinct cards without matrix units, whose prompt GEMMs
run on dot-product ALUs against another peak) stay out of this median too. The figure is written to
catalog/speed.toml with the rule in words (``prefill_rule``) and the estimate says it was assumed
(core/estimate/speed/prefill.py). Only the dense, quantised-weight share is carried over: the float and
mixture-of-experts multipliers describe a class's own kernels and stay at 1.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol


class _Fitted(Protocol):
    @property
    def efficiency(self) -> float: ...


@dataclass(frozen=True)
class GenericPrefill:
    """One backend's generic prefill share: the median of its classes' own shares."""

    backend: str
    efficiency: float
    #: each class's own share, by class
    classes: tuple[tuple[str, float], ...]
    #: the prompt rows those classes' shares were fitted on
    rows: int

    @property
    def rule(self) -> str:
        """The rule in words, for ``prefill_rule`` in catalog/speed.toml."""
        each = ", ".join(f"{cls} {eff:.2f}" for cls, eff in self.classes)
        return (
            f"the median share of the {self.backend} classes with prompt measurements ({each}), "
            f"from {self.rows} prompt rows"
        )

    def lines(self) -> list[str]:
        """The TOML lines a class × backend without prompt rows gets."""
        return [
            f"prefill_compute_efficiency = {self.efficiency:.2f}",
            f'prefill_rule = "{self.rule}"',
        ]


def generic_prefill(
    fits: Mapping[tuple[str, str], _Fitted],
    rows: Mapping[tuple[str, str], list[object]],
    apart: Iterable[str] = (),
) -> dict[str, GenericPrefill]:
    """Per backend, the median of the fitted shares of its classes with prompt rows of their own (``fits``
    keyed by class × backend; ``rows``: their prompt points, for the count), leaving out ``apart``."""
    kept = set(apart)
    by_backend: dict[str, list[tuple[str, float]]] = {}
    counts: dict[str, int] = {}
    for (cls, backend), fit in sorted(fits.items()):
        own = rows.get((cls, backend), [])
        if cls in kept or not own:
            continue
        by_backend.setdefault(backend, []).append((cls, min(fit.efficiency, 2.0)))
        counts[backend] = counts.get(backend, 0) + len(own)
    return {
        backend: GenericPrefill(
            backend, statistics.median(e for _c, e in shares), tuple(shares), counts[backend]
        )
        for backend, shares in by_backend.items()
    }
