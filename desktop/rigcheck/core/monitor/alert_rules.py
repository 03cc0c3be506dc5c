"""Alerts: the sustained conditions (throttling, power at its limit, VRAM nearly full, lost sensors)
a history holds now."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from rigcheck.core.i18n import num, percent, tr
from rigcheck.core.monitor.history import FloatArray, History
from rigcheck.core.monitor.records import Alert, AlertKind, GpuSample

GIB = 1024**3

#: "at its limit" and "nearly full" thresholds, as fractions
POWER_LIMIT_FRACTION = 0.95
VRAM_FULL_FRACTION = 0.95


def alerts(history: History, *, sustained_s: float = 30.0) -> tuple[Alert, ...]:
    """The alerts that hold now, by GPU: each condition must have held for ``sustained_s`` up to the
    latest sample (a lost GPU counts at once). ``since`` is when the condition's current run began."""
    latest = history.latest()
    if latest is None:
        return ()
    t, _ = history.series("time")
    found: list[Alert] = []
    for gpu in latest.gpus:
        found += _gpu_alerts(history, t, latest.t, gpu, sustained_s)
    return tuple(found)


def _gpu_alerts(
    history: History, t: FloatArray, now: float, gpu: GpuSample, sustained_s: float
) -> list[Alert]:
    i = gpu.index
    label = f"GPU {i} ({gpu.name})"

    def column(key: str) -> FloatArray:
        return history.series(key)[1]

    if gpu.lost:
        since = _run_start(t, column(f"_gpu{i}_lost") == 1.0)
        message = tr(
            "{gpu} stopped answering (it fell off the bus or its driver lost it); its readings are gone",
            gpu=label,
        )
        return [Alert("sensor_lost", i, message, now if since is None else since)]
    with np.errstate(invalid="ignore"):  # NaN compares false: a missing reading never alerts
        at_limit = column(f"gpu{i}_power_w") >= POWER_LIMIT_FRACTION * column(f"gpu{i}_power_limit_w")
        vram_full = column(f"gpu{i}_mem_used_bytes") >= VRAM_FULL_FRACTION * column(f"gpu{i}_mem_total_bytes")
    limit_w = gpu.power_limit_watts or 0.0
    total_gib = (gpu.memory_total_bytes or 0) / GIB
    # each message is translated whole, its numbers in the language's own form (core.i18n)
    values = {
        "gpu": label,
        "share": percent(POWER_LIMIT_FRACTION),
        "limit": num(limit_w, group=False),
        "vram_share": percent(VRAM_FULL_FRACTION),
        "total": num(total_gib, 1, group=False),
    }
    checks: list[tuple[AlertKind, npt.NDArray[np.bool_], str]] = [
        (
            "thermal_throttle",
            column(f"_gpu{i}_thermal") == 1.0,
            "{gpu} has been slowing its clocks to keep cool (thermal throttling) for {duration}",
        ),
        (
            "power_throttle",
            column(f"_gpu{i}_power_throttle") == 1.0,
            "{gpu} has been held back by its power limit for {duration}",
        ),
        ("power_at_limit", at_limit, "{gpu} has drawn ≥ {share} of its {limit} W limit for {duration}"),
        (
            "vram_nearly_full",
            vram_full,
            "{gpu} has had ≥ {vram_share} of its {total} GiB in use for {duration}",
        ),
    ]
    found = []
    for kind, condition, template in checks:
        since = _run_start(t, condition)
        if since is not None and now - since >= sustained_s:
            found.append(Alert(kind, i, tr(template, duration=_duration(now - since), **values), since))
    return found


def _run_start(t: FloatArray, condition: npt.NDArray[np.bool_]) -> float | None:
    """When the run of true values that ends at the latest sample began; None when it is false now."""
    if len(condition) == 0 or len(condition) != len(t) or not condition[-1]:
        return None
    breaks = np.flatnonzero(~condition)
    return float(t[breaks[-1] + 1] if len(breaks) else t[0])


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{num(seconds, group=False)} s"
    if seconds < 7200:
        return f"{num(seconds / 60, group=False)} min"
    return f"{num(seconds / 3600, 1, group=False)} h"
