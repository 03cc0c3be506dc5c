"""The bounded history of samples, with a float64 column per series for plotting and alerts."""

from __future__ import annotations

import math
from collections import deque
from typing import cast

import numpy as np
import numpy.typing as npt

from rigcheck.core.monitor.csv_columns import _gpu_values, gpu_columns
from rigcheck.core.monitor.records import POWER_REASONS, THERMAL_REASONS, GpuSample, Sample

FloatArray = npt.NDArray[np.float64]

# Columns kept for alerts() that are not series for plotting; their names start with "_".
_HIDDEN_GPU = ("_lost", "_thermal", "_power_throttle")


class History:
    """Bounded ring buffer: keeps the last ``window_s`` seconds at ``interval_s``.

    Capacity is ``ceil(window_s / interval_s) + 1`` samples; older ones are dropped. Besides the
    samples themselves, every numeric column is kept in a preallocated float64 array so that
    :meth:`series` costs one copy, whatever the window.
    """

    def __init__(self, window_s: float = 3600.0, interval_s: float = 1.0) -> None:
        self._configure(window_s, interval_s)

    def _configure(self, window_s: float, interval_s: float) -> None:
        if not (window_s > 0 and interval_s > 0 and math.isfinite(window_s / interval_s)):
            raise ValueError(f"window and interval must be above 0, got {window_s} and {interval_s}")
        self.window_s = float(window_s)
        self.interval_s = float(interval_s)
        #: how many samples are kept
        self.capacity = math.ceil(round(window_s / interval_s, 6)) + 1
        self._samples: deque[Sample] = deque(maxlen=self.capacity)
        self._t: FloatArray = np.zeros(self.capacity)
        self._t_flat = cast("memoryview[float]", self._t.data)
        self._set_data(np.full((self.capacity, 0), np.nan))
        self._columns: dict[str, int] = {}
        #: the GPU indices of a sample that fills every column in order ((-1,) until one has)
        self._full: tuple[int, ...] = (-1,)
        self._pos = 0

    def append(self, sample: Sample) -> None:
        """Keep ``sample``, dropping the oldest once full. Allocates nothing in the common case."""
        gpus = sample.gpus
        if not self._fits(gpus):
            self._append_other(sample)
        else:
            # Straight into the row through a memoryview: no list, no temporary array, and only small
            # ints as offsets (CPython caches those; each big int would be an allocation).
            start = self._pos * self._width
            line, nan = self._flat[start : start + self._width], math.nan
            cpu, ram = sample.cpu_percent, sample.ram_used_bytes
            line[0] = sample.wall
            line[1] = nan if cpu is None else cpu
            line[2] = nan if ram is None else ram
            k = 3
            for gpu in gpus:
                for value in _gpu_values(gpu):
                    line[k] = nan if value is None else value
                    k += 1
                reasons = gpu.throttle_reasons
                line[k] = 1.0 if gpu.lost else 0.0
                line[k + 1] = 1.0 if reasons and not THERMAL_REASONS.isdisjoint(reasons) else 0.0
                line[k + 2] = 1.0 if reasons and not POWER_REASONS.isdisjoint(reasons) else 0.0
                k += 3
        self._t_flat[self._pos] = sample.t
        self._samples.append(sample)
        self._pos = (self._pos + 1) % self.capacity

    def _fits(self, gpus: tuple[GpuSample, ...]) -> bool:
        """True when a sample with these GPUs fills every column, in order (the common case)."""
        full, n = self._full, len(gpus)
        if n != len(full):
            return False
        i = 0
        while i < n:  # not all(genexpr): this runs every tick and should allocate nothing
            if gpus[i].index != full[i]:
                return False
            i += 1
        return True

    def _append_other(self, sample: Sample) -> None:
        """A sample whose GPUs differ from the columns' (the first one, or a GPU came or went)."""
        values: list[float | None] = [sample.wall, sample.cpu_percent, sample.ram_used_bytes]
        for gpu in sample.gpus:
            values += _gpu_values(gpu)
            reasons = gpu.throttle_reasons
            values += (
                float(gpu.lost),
                float(not THERMAL_REASONS.isdisjoint(reasons)),
                float(not POWER_REASONS.isdisjoint(reasons)),
            )
        gpus = tuple(g.index for g in sample.gpus)
        names = ["wall", "cpu_percent", "ram_used_bytes"]
        for index in gpus:
            names += gpu_columns(index) + [f"_gpu{index}{suffix}" for suffix in _HIDDEN_GPU]
        new = [n for n in names if n not in self._columns]
        if new:
            for name in new:
                self._columns[name] = len(self._columns)
            extra = np.full((self.capacity, len(new)), np.nan)
            self._set_data(np.concatenate((self._data, extra), axis=1))
        where = [self._columns[n] for n in names]
        line = self._data[self._pos]
        line.fill(np.nan)
        line[where] = values
        if where == list(range(self._width)):
            self._full = gpus  # later samples with these GPUs take the fast path

    def _set_data(self, data: FloatArray) -> None:
        self._data = data
        self._width = data.shape[1]
        # a flat view of the same memory, format "d": row k starts at k * width
        self._flat = cast("memoryview[float]", data.reshape(-1).data)

    def __len__(self) -> int:
        return len(self._samples)

    def latest(self) -> Sample | None:
        return self._samples[-1] if self._samples else None

    def samples(self) -> list[Sample]:
        """The kept samples, oldest first."""
        return list(self._samples)

    def keys(self) -> list[str]:
        """The series names seen so far (the columns of :func:`columns` but "time" and "wall")."""
        return [k for k in self._columns if k != "wall" and not k.startswith("_")]

    def series(self, key: str) -> tuple[FloatArray, FloatArray]:
        """(t seconds, values) oldest first, NaN where a value was not available; unknown key: empty."""
        if key == "time":
            t = self._ordered(self._t)
            return t, t.copy()
        column = self._columns.get(key)
        if column is None:
            return np.empty(0), np.empty(0)
        return self._ordered(self._t), self._ordered(self._data[:, column])

    def _ordered(self, values: FloatArray) -> FloatArray:
        count = len(self._samples)
        if count < self.capacity:
            return values[:count].copy()
        return np.concatenate((values[self._pos :], values[: self._pos]))

    def clear(self) -> None:
        self._configure(self.window_s, self.interval_s)

    def resize(self, window_s: float, interval_s: float) -> None:
        """A new window and interval; keeps the newest samples that fit."""
        kept = list(self._samples)
        self._configure(window_s, interval_s)
        for sample in kept[-self.capacity :]:
            self.append(sample)
