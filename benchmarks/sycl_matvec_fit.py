"""SYCL decode rows whose weights took a mat-vec kernel without the reordered layout
(core/estimate/speed/sycl_matvec.py), fitted apart from the class's bandwidth efficiency.

Such a row is kept out of the intel × sycl decode fit (fit_speed.points_by_key); for each, the bandwidth time
the class's efficiency gives divided by the measured time less the fixed costs is the row's share of the
reordered kernels' rate; ``decode_unreordered_factor`` is the median over the fit split's rows (as
bf16_fit does for BF16).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bf16_fit import median_read_shares
from measurements import Measurement, row_build
from rigcheck.core.estimate.speed.kernels import ggml_type
from rigcheck.core.estimate.speed.sycl_matvec import REORDER_SINCE, TWO_BYTE_BLOCKS


def unreordered_row(row: Measurement) -> bool:
    """Whether an Intel × SYCL decode row of a dense model had no reordered MMVQ for its bulk weight type at
    the row's build (an unstated build: a current one). MoE rows are left as they are: their experts take
    MUL_MAT_ID, whose reorder rule is another (sycl_matvec's docstring)."""
    if row.backend != "sycl" or row.device_class != "intel-discrete" or row.metric != "decode_tokens_per_s":
        return False
    if row.moe:
        return False
    kind = ggml_type(row.format.lower())
    if kind is None:
        return False  # BF16/F16: bf16_fit's DMMV rows
    since = REORDER_SINCE.get(kind)
    build = row_build(row.build)
    return since is None or (build is not None and build < since[1])


def unaligned_row(row: Measurement) -> bool:
    """Whether an unreordered row's blocks are not a multiple of 4 bytes (sycl_matvec.TWO_BYTE_BLOCKS)."""
    return ggml_type(row.format.lower()) in TWO_BYTE_BLOCKS


@dataclass(frozen=True)
class UnreorderedFit:
    factor: float
    rows: int
    urls: tuple[str, ...]
    unaligned: bool = False

    @property
    def field(self) -> str:
        return "decode_unaligned_factor" if self.unaligned else "decode_unreordered_factor"

    @property
    def said(self) -> str:
        blocks = " on blocks of a size not a multiple of 4 bytes" if self.unaligned else ""
        return (
            f"weights without SYCL's reordered mat-vec{blocks} read at {self.factor:.2f} × that rate, "
            f"median of {self.rows} such rows"
        )


def fit_unreordered(
    points: Sequence[Any], fitted: Callable[[str, str], tuple[float, float] | None]
) -> dict[str, list[UnreorderedFit]]:
    """``points``: fit_speed Points of unreordered rows; ``fitted(cls, backend)``: (efficiency, per-layer µs).
    Per backend, pooled over its classes: one fit for 4-byte blocks, one for the others."""
    found: dict[str, list[UnreorderedFit]] = {}
    for unaligned in (False, True):
        group = [p for p in points if unaligned_row(p.row) == unaligned]
        for backend, (factor, n, urls) in median_read_shares(group, fitted).items():
            found.setdefault(backend, []).append(UnreorderedFit(factor, n, urls, unaligned))
    return found
