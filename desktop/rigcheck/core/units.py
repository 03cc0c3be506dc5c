"""Formatting of sizes and versions for people. Computation never uses these strings."""

from __future__ import annotations

GIB = 1024**3
MIB = 1024**2


def fmt_bytes(value: int | float | None, unknown: str = "unknown") -> str:
    """Binary units, as drivers and ``nvidia-smi`` count memory: 24 GiB, 512 MiB."""
    if value is None:
        return unknown
    if value < 0:
        return "-" + fmt_bytes(-value)
    for unit, size in (("TiB", 1024**4), ("GiB", GIB), ("MiB", MIB), ("KiB", 1024)):
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return f"{int(value)} B"


def fmt_watts(value: float | None, unknown: str = "unknown") -> str:
    if value is None:
        return unknown
    return f"{value:.0f} W"
