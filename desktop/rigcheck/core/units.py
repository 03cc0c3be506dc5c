"""Formatting of sizes and versions for people. Computation never uses these strings."""

from __future__ import annotations

from collections.abc import Sequence

from rigcheck.core.i18n import num, sig, tr

GIB = 1024**3
MIB = 1024**2


def fmt_bytes(value: int | float | None, unknown: str | None = None) -> str:
    """Binary units, as drivers and ``nvidia-smi`` count memory: 24 GiB, 512 MiB (24,0 GiB in Italian)."""
    if value is None:
        return tr("unknown") if unknown is None else unknown
    if value < 0:
        return "-" + fmt_bytes(-value)
    for unit, size in (("TiB", 1024**4), ("GiB", GIB), ("MiB", MIB), ("KiB", 1024)):
        if value >= size:
            return f"{num(value / size, 1, group=False)} {unit}"
    return f"{int(value)} B"


def fmt_watts(value: float | None, unknown: str | None = None) -> str:
    if value is None:
        return tr("unknown") if unknown is None else unknown
    return f"{num(value, group=False)} W"


def approx_speed(tokens_per_s: float) -> str:
    """A speed estimate with the precision it has, two significant figures: 124.5 -> "120",
    45.3 -> "45", 3.27 -> "3.3", 1234 -> "1,200". The estimate is not better than that (see
    BENCHMARKS.md: decode speed accuracy), so more digits would be false precision."""
    if tokens_per_s <= 0 or tokens_per_s != tokens_per_s:  # noqa: PLR0124 - NaN check
        return "0"
    if tokens_per_s < 10:
        return sig(tokens_per_s)
    digits = len(str(int(tokens_per_s))) - 2
    return num(round(tokens_per_s, -digits))


def index_ranges(indices: Sequence[int]) -> str:
    """GPU indices as people write them: "0–7" for a consecutive run, "0, 2, 5" otherwise."""
    numbers = list(indices)
    if len(numbers) > 1 and numbers == list(range(numbers[0], numbers[0] + len(numbers))):
        return f"{numbers[0]}–{numbers[-1]}"
    return ", ".join(str(n) for n in numbers)
