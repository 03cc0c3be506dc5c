"""The sampler: every source opened once, read once per tick into a :class:`Sample`; ticks on a clock."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from types import TracebackType
from typing import Protocol

import psutil

from rigcheck.core.machine import Note
from rigcheck.core.monitor._amdgpu import _AmdSource
from rigcheck.core.monitor._nvidia import _NvidiaSource
from rigcheck.core.monitor.records import GpuSample, Sample
from rigcheck.core.probe._common import Notes, ProbeContext


class Sampler:
    """Reads every source once per :meth:`sample`; keeps NVML initialised until :meth:`close`.

    Not thread-safe: call it from one thread (the GUI's worker, or the CLI's loop).
    """

    def __init__(
        self,
        ctx: ProbeContext | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.ctx = ctx or ProbeContext()
        self.clock = clock
        self.wall = wall
        self._stack = ExitStack()
        self._system = Notes("monitor")
        self._nvidia: _NvidiaSource | None = None
        self._amd: _AmdSource | None = None
        platform = self.ctx.platform
        try:
            if platform.startswith("linux") or platform == "win32":
                self._nvidia = _NvidiaSource(self.ctx, self._stack)
            if platform.startswith("linux"):
                self._amd = _AmdSource(self.ctx)
            elif platform == "darwin":
                self._system.info(
                    "GPU utilisation and power are not available on macOS without root (powermetrics); "
                    "only CPU and RAM are sampled",
                )
            elif platform != "win32":
                self._system.info(f"GPU readings are not implemented for platform {platform!r}")
        except BaseException:
            self._stack.close()
            raise
        self._cpu_percent()  # psutil's first cpu_percent(interval=None) only primes the counter

    @property
    def notes(self) -> tuple[Note, ...]:
        """Why something is not available, each said once: per source, per GPU and field."""
        found: list[Note] = []
        for source in (self._nvidia, self._amd):
            if source is not None:
                found += source.notes.collected()
        return (*found, *self._system.collected())

    def sample(self) -> Sample:
        """One tick. Never raises for missing, refused or lost data."""
        t, wall = self.clock(), self.wall()
        gpus: list[GpuSample] = []
        if self._nvidia is not None:
            gpus += self._nvidia.read(len(gpus))
        if self._amd is not None:
            gpus += self._amd.read(len(gpus))
        used, total = self._ram()
        return Sample(t, wall, tuple(gpus), self._cpu_percent(), used, total)

    def close(self) -> None:
        """Shut NVML down; safe to call more than once."""
        self._stack.close()

    def __enter__(self) -> Sampler:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _cpu_percent(self) -> float | None:
        try:
            return float(psutil.cpu_percent(interval=None))
        except Exception as exc:  # noqa: BLE001 - psutil raises OS-specific errors; the tick goes on
            self._system.warning(f"CPU utilisation not available ({type(exc).__name__}: {exc})")
            return None

    def _ram(self) -> tuple[int | None, int | None]:
        try:
            memory = psutil.virtual_memory()
        except Exception as exc:  # noqa: BLE001 - psutil raises OS-specific errors; the tick goes on
            self._system.warning(f"RAM use not available ({type(exc).__name__}: {exc})")
            return None, None
        # "used" as total - available: what `free` calls available is what programs can still get
        return int(memory.total - memory.available), int(memory.total)


class SampleSource(Protocol):
    """What :func:`ticks` and the CLI need of a sampler (a fake in tests)."""

    clock: Callable[[], float]

    def sample(self) -> Sample: ...

    @property
    def notes(self) -> tuple[Note, ...]: ...

    def close(self) -> None: ...


def ticks(
    sampler: SampleSource,
    interval_s: float,
    duration_s: float | None = None,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[Sample]:
    """Samples every ``interval_s`` on the sampler's clock, without drift; forever or for ``duration_s``.

    A run of ``duration_s`` takes ``ceil(duration_s / interval_s)`` samples. When a tick is late by
    more than a whole interval (the machine slept), the schedule restarts from now instead of catching up.
    """
    count = None if duration_s is None else max(1, math.ceil(duration_s / interval_s - 1e-9))
    taken = 0
    due = sampler.clock()
    while count is None or taken < count:
        yield sampler.sample()
        taken += 1
        if count is not None and taken >= count:
            return
        due += interval_s
        delay = due - sampler.clock()
        if delay < -interval_s:
            due = sampler.clock()
        elif delay > 0:
            sleep(delay)
