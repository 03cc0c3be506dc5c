"""Live readings of the GPUs, CPU and RAM: one immutable :class:`Sample` per tick, in nvitop's manner.

:class:`Sampler` opens its sources once and keeps them open for its life (NVML stays initialised
until :meth:`Sampler.close`); :meth:`Sampler.sample` reads every source once and freezes what it read.
Nothing here raises for a missing library, a refused query or a GPU that fell off the bus: the value
is ``None``, and :attr:`Sampler.notes` says why, once per source and field.

Sources:

- NVIDIA: NVML through the probe's gateway (:mod:`rigcheck.core.probe._nvml`), each field on its own;
  a GPU that answers GPU_IS_LOST is marked ``lost`` and the others carry on.
- AMD (Linux): the amdgpu driver's sysfs files per card (see :mod:`rigcheck.core.monitor._amdgpu`).
- Apple: no GPU readings; macOS gives power and utilisation only to root (``powermetrics``).
- CPU and RAM on every OS through psutil.

:class:`History` keeps the last hour (or any window) in a bounded ring buffer with numeric columns
for plotting; :func:`alerts` reads sustained conditions (throttling, power at its limit, VRAM nearly
full, lost sensors) out of it. :func:`columns` and :func:`row` give the stable CSV columns.

Modules: ``records`` (the frozen records, throttle reason ids), ``_nvidia`` and ``_amdgpu`` (one source
each), ``sampler`` (:class:`Sampler`, :func:`ticks`), ``csv_columns``, ``history``, ``alert_rules``.
Every name is imported from here; tests replace :func:`create_sampler` on this module.
"""

from __future__ import annotations

from rigcheck.core.monitor.alert_rules import GIB, POWER_LIMIT_FRACTION, VRAM_FULL_FRACTION, alerts
from rigcheck.core.monitor.csv_columns import GPU_COLUMNS, columns, gpu_columns, row
from rigcheck.core.monitor.history import FloatArray, History
from rigcheck.core.monitor.records import (
    POWER_REASONS,
    THERMAL_REASONS,
    THROTTLE_REASONS,
    Alert,
    AlertKind,
    GpuSample,
    ProcessMemory,
    Sample,
    throttle_ids,
)
from rigcheck.core.monitor.sampler import Sampler, SampleSource, ticks


def create_sampler() -> Sampler:
    """The sampler the CLI uses; tests replace this module attribute with a fake."""
    return Sampler()


__all__ = [
    "GIB",
    "GPU_COLUMNS",
    "POWER_LIMIT_FRACTION",
    "POWER_REASONS",
    "THERMAL_REASONS",
    "THROTTLE_REASONS",
    "VRAM_FULL_FRACTION",
    "Alert",
    "AlertKind",
    "FloatArray",
    "GpuSample",
    "History",
    "ProcessMemory",
    "Sample",
    "SampleSource",
    "Sampler",
    "alerts",
    "columns",
    "create_sampler",
    "gpu_columns",
    "row",
    "throttle_ids",
    "ticks",
]
