"""Readings as numbers: what a driver returned, or ``None`` when it is not one."""

from __future__ import annotations


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _scaled(value: object, factor: float) -> float | None:
    number = _float(value)
    return number * factor if number is not None else None
