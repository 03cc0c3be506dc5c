"""Live readings of the GPUs, CPU and RAM: one immutable :class:`Sample` per tick, in nvitop's manner.

:class:`Sampler` opens its sources once and keeps them open for its life (NVML stays initialised
until :meth:`Sampler.close`); :meth:`Sampler.sample` reads every source once and freezes what it read.
Nothing here raises for a missing library, a refused query or a GPU that fell off the bus: the value
is ``None``, and :attr:`Sampler.notes` says why, once per source and field.

Sources:

- NVIDIA: NVML through the probe's gateway (:mod:`rigcheck.core.probe._nvml`), each field on its own;
  a GPU that answers GPU_IS_LOST is marked ``lost`` and the others carry on.
- AMD (Linux): the amdgpu driver's sysfs files per card (see :class:`_AmdSource`).
- Apple: no GPU readings; macOS gives power and utilisation only to root (``powermetrics``).
- CPU and RAM on every OS through psutil.

:class:`History` keeps the last hour (or any window) in a bounded ring buffer with numeric columns
for plotting; :func:`alerts` reads sustained conditions (throttling, power at its limit, VRAM nearly
full, lost sensors) out of it. :func:`columns` and :func:`row` give the stable CSV columns.
"""

from __future__ import annotations

import math
import re
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from types import TracebackType
from typing import Literal, Protocol, cast

import numpy as np
import numpy.typing as npt
import psutil

from rigcheck.core.i18n import num, percent, tr
from rigcheck.core.machine import Note
from rigcheck.core.probe._common import Notes, ProbeContext, read_int, read_text
from rigcheck.core.probe._nvml import Device, open_nvml, text

GIB = 1024**3

# -- records ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProcessMemory:
    """One process using a GPU, and the GPU memory it holds (``None`` where the driver will not say)."""

    pid: int
    name: str | None
    used_bytes: int | None


@dataclass(frozen=True, slots=True)
class GpuSample:
    """One GPU at one tick. ``None`` means not available (see :attr:`Sampler.notes` for why)."""

    index: int
    name: str
    #: fell off the bus / stopped answering: the other fields are None from then on
    lost: bool = False
    utilization_percent: float | None = None
    memory_used_bytes: int | None = None
    memory_total_bytes: int | None = None
    power_watts: float | None = None
    power_limit_watts: float | None = None
    temperature_c: float | None = None
    #: where the GPU starts slowing its clocks to cool down (NVML's slowdown threshold), °C
    temperature_slowdown_c: float | None = None
    sm_clock_mhz: float | None = None
    memory_clock_mhz: float | None = None
    fan_percent: float | None = None
    pcie_rx_bytes_per_s: float | None = None
    pcie_tx_bytes_per_s: float | None = None
    #: why the clocks are held back now, as ids from :data:`THROTTLE_REASONS` ("power_cap", "thermal")
    throttle_reasons: tuple[str, ...] = ()
    processes: tuple[ProcessMemory, ...] = ()


@dataclass(frozen=True, slots=True)
class Sample:
    """Everything read at one tick."""

    #: seconds on the sampler's clock (monotonic)
    t: float
    #: ``time.time()`` epoch seconds
    wall: float
    gpus: tuple[GpuSample, ...]
    cpu_percent: float | None
    ram_used_bytes: int | None
    ram_total_bytes: int | None


AlertKind = Literal["thermal_throttle", "power_throttle", "power_at_limit", "vram_nearly_full", "sensor_lost"]


@dataclass(frozen=True, slots=True)
class Alert:
    kind: AlertKind
    gpu_index: int | None
    #: one plain sentence
    message: str
    #: sampler clock time the condition started
    since: float


# -- NVIDIA through NVML -----------------------------------------------------------------------------

#: NVML's clock event (formerly "throttle") reason bits (nvml.h ``nvmlClocksEventReason*``; C ABI,
#: fixed) and the plain ids they become in :attr:`GpuSample.throttle_reasons`.
THROTTLE_REASONS: dict[int, str] = {
    0x001: "idle",  # GpuIdle: nothing runs, clocks drop to idle
    0x002: "app_clocks",  # ApplicationsClocksSetting / UserDefinedClocks
    0x004: "power_cap",  # SwPowerCap: held under the power limit
    0x008: "hw_slowdown",  # HwSlowdown: hardware slowdown (temperature or power brake)
    0x010: "sync_boost",  # SyncBoost
    0x020: "thermal",  # SwThermalSlowdown: driver keeps the GPU under its target temperature
    0x040: "hw_thermal",  # HwThermalSlowdown
    0x080: "power_brake",  # HwPowerBrakeSlowdown: the board's external power brake
    0x100: "display_clocks",  # DisplayClockSetting
}
THERMAL_REASONS = frozenset({"thermal", "hw_thermal"})
POWER_REASONS = frozenset({"power_cap", "power_brake"})

# NVML constants (nvml.h); read from the bindings when they have them.
_TEMPERATURE_GPU = 0
_THRESHOLD_SLOWDOWN = 1  # NVML_TEMPERATURE_THRESHOLD_SLOWDOWN
_CLOCK_SM, _CLOCK_MEM = 1, 2
_PCIE_TX, _PCIE_RX = 0, 1

#: for the notes: each field, the NVML functions that fill it, and what the user misses without it
_NVML_FIELDS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("utilization_percent", ("nvmlDeviceGetUtilizationRates",), "utilisation"),
    ("memory_used_bytes", ("nvmlDeviceGetMemoryInfo",), "memory use"),
    ("power_watts", ("nvmlDeviceGetPowerUsage",), "power draw"),
    (
        "power_limit_watts",
        ("nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetPowerManagementLimit"),
        "power limit",
    ),
    ("temperature_c", ("nvmlDeviceGetTemperature",), "temperature"),
    ("sm_clock_mhz", ("nvmlDeviceGetClockInfo",), "GPU clock"),
    ("memory_clock_mhz", ("nvmlDeviceGetClockInfo",), "memory clock"),
    ("fan_percent", ("nvmlDeviceGetFanSpeed",), "fan speed"),
    ("pcie_rx_bytes_per_s", ("nvmlDeviceGetPcieThroughput",), "PCIe throughput"),
    ("pcie_tx_bytes_per_s", ("nvmlDeviceGetPcieThroughput",), "PCIe throughput"),
    (
        "throttle_reasons",
        ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"),
        "throttle reasons",
    ),
    ("processes", ("nvmlDeviceGetComputeRunningProcesses",), "per-process memory"),
)


def throttle_ids(mask: int) -> tuple[str, ...]:
    """NVML's reason bit mask as ids, lowest bit first: 0x24 -> ("power_cap", "thermal")."""
    return tuple(name for bit, name in THROTTLE_REASONS.items() if mask & bit)


class _NvidiaSource:
    """Every GPU NVML lists, each read field by field through the gateway at every tick."""

    def __init__(self, ctx: ProbeContext, stack: ExitStack) -> None:
        self.notes = Notes("nvidia")
        self.devices: list[tuple[Device, str]] = []
        #: per GPU index, the names of the processes seen on it last tick (pid -> name)
        self._names: dict[int, dict[int, str | None]] = {}
        self._nvml = stack.enter_context(open_nvml(ctx, self.notes))
        if self._nvml is None:
            return
        nvml = self._nvml
        self._temperature = nvml.const("NVML_TEMPERATURE_GPU", _TEMPERATURE_GPU)
        self._slowdown = nvml.const("NVML_TEMPERATURE_THRESHOLD_SLOWDOWN", _THRESHOLD_SLOWDOWN)
        #: per device index: the slowdown threshold, asked once (it is a board constant)
        self._slowdowns: dict[int, float | None] = {}
        self._clock_sm = nvml.const("NVML_CLOCK_SM", _CLOCK_SM)
        self._clock_mem = nvml.const("NVML_CLOCK_MEM", _CLOCK_MEM)
        self._pcie_tx = nvml.const("NVML_PCIE_UTIL_TX_BYTES", _PCIE_TX)
        self._pcie_rx = nvml.const("NVML_PCIE_UTIL_RX_BYTES", _PCIE_RX)
        count = nvml.call("nvmlDeviceGetCount")
        if not isinstance(count, int):
            self.notes.warning("NVML could not count the NVIDIA GPUs")
            count = 0
        for index in range(count):
            device = nvml.device(index)
            if device is not None:
                name = text(device.call("nvmlDeviceGetName")) or f"NVIDIA GPU {index}"
                self.devices.append((device, name))

    def read(self, first_index: int) -> list[GpuSample]:
        found = []
        for offset, (device, name) in enumerate(self.devices):
            index = first_index + offset
            label = f"GPU {index} ({name})"
            if device.lost:
                found.append(GpuSample(index, name, lost=True))
                continue
            try:
                gpu = self._read(device, index, name)
            except Exception as exc:  # noqa: BLE001 - a monitor runs for hours: one odd reading must not end it
                self.notes.warning(f"{label}: reading failed ({type(exc).__name__}: {exc})")
                gpu = GpuSample(index, name)
            if _is_lost(device):  # this tick's calls may have found it gone
                self.notes.error(f"{label} fell off the bus (GPU is lost): no readings from it since")
                gpu = GpuSample(index, name, lost=True)
            else:
                for field, functions, what in _NVML_FIELDS:
                    value = getattr(gpu, field)
                    if value in (None, ()) and not device.unsupported.isdisjoint(functions):
                        self.notes.info(f"{label}: {what} not available (NVML: Not Supported on this GPU)")
            found.append(gpu)
        return found

    def _read(self, device: Device, index: int, name: str) -> GpuSample:
        util = device.call("nvmlDeviceGetUtilizationRates")
        memory = device.call("nvmlDeviceGetMemoryInfo")
        limit = device.call("nvmlDeviceGetEnforcedPowerLimit")
        if limit is None and not device.lost:
            limit = device.call("nvmlDeviceGetPowerManagementLimit")
        reasons = device.call_first(
            ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons")
        )
        return GpuSample(
            index=index,
            name=name,
            utilization_percent=_float(getattr(util, "gpu", None)),
            memory_used_bytes=_int(getattr(memory, "used", None)),
            memory_total_bytes=_int(getattr(memory, "total", None)),
            power_watts=_scaled(device.call("nvmlDeviceGetPowerUsage"), 1e-3),
            power_limit_watts=_scaled(limit, 1e-3),
            temperature_c=_float(device.call("nvmlDeviceGetTemperature", self._temperature)),
            temperature_slowdown_c=self._slowdown_c(device),
            sm_clock_mhz=_float(device.call("nvmlDeviceGetClockInfo", self._clock_sm)),
            memory_clock_mhz=_float(device.call("nvmlDeviceGetClockInfo", self._clock_mem)),
            fan_percent=_float(device.call("nvmlDeviceGetFanSpeed")),
            # NVML counts PCIe throughput in KB/s over a 20 ms window (nvml.h: nvmlDeviceGetPcieThroughput)
            pcie_rx_bytes_per_s=_scaled(device.call("nvmlDeviceGetPcieThroughput", self._pcie_rx), 1024),
            pcie_tx_bytes_per_s=_scaled(device.call("nvmlDeviceGetPcieThroughput", self._pcie_tx), 1024),
            throttle_reasons=throttle_ids(reasons) if isinstance(reasons, int) else (),
            processes=self._processes(device),
        )

    def _slowdown_c(self, device: Device) -> float | None:
        if device.index not in self._slowdowns:
            value = device.call("nvmlDeviceGetTemperatureThreshold", self._slowdown, silent=True)
            self._slowdowns[device.index] = _float(value)
        return self._slowdowns[device.index]

    def _processes(self, device: Device) -> tuple[ProcessMemory, ...]:
        listed = device.call("nvmlDeviceGetComputeRunningProcesses")
        if not isinstance(listed, list | tuple):
            return ()
        nvml = self._nvml
        assert nvml is not None
        known = self._names.get(device.index, {})
        names: dict[int, str | None] = {}  # only this tick's pids: no stale name for a reused pid
        found = []
        for proc in listed:
            pid = _int(getattr(proc, "pid", None))
            if pid is None:
                continue
            if pid not in names:
                # asked once per process; refused for other users' and other containers' processes
                names[pid] = (
                    known[pid]
                    if pid in known
                    else text(nvml.call("nvmlSystemGetProcessName", pid, silent=True))
                )
            found.append(ProcessMemory(pid, names[pid], _int(getattr(proc, "usedGpuMemory", None))))
        self._names[device.index] = names
        return tuple(found)


# -- AMD through sysfs -----------------------------------------------------------------------------

_DPM_CURRENT = re.compile(r"^\s*\S+:\s*(\d+(?:\.\d+)?)\s*mhz\s*\*", re.IGNORECASE | re.MULTILINE)


@dataclass
class _AmdCard:
    index: int
    name: str
    label: str
    device: Path
    hwmon: Path | None
    #: ``power1_average`` (older kernels, a 1 s average) or ``power1_input`` (newer, instantaneous)
    power: Path | None
    noted: set[str]


class _AmdSource:
    """The amdgpu driver's sysfs files under ``/sys/class/drm/cardN/device``, read at every tick.

    - utilisation: ``gpu_busy_percent``; VRAM: ``mem_info_vram_used`` / ``mem_info_vram_total``
    - hwmon (µW, m°C): ``power1_average`` or ``power1_input``, ``power1_cap``, ``temp1_input``
      (the edge sensor)
    - clocks: the current level (the line marked ``*``) of ``pp_dpm_sclk`` and ``pp_dpm_mclk``
    - fan: ``pwm1`` / ``pwm1_max``, else ``fan1_input`` / ``fan1_max`` (RPM)

    amdgpu publishes no PCIe throughput, throttle reasons or per-process VRAM as plain sysfs files,
    so those stay empty. On an APU, the power reading is the whole package, CPU included.
    """

    def __init__(self, ctx: ProbeContext) -> None:
        from rigcheck.core.probe import _amd
        from rigcheck.core.probe._pci import drm_cards

        self.notes = Notes("amd")
        self.cards: list[_AmdCard] = []
        ids: dict[tuple[int, int], str] | None = None
        for card in drm_cards(ctx, _amd.VENDOR_ID, self.notes):
            if card.driver != "amdgpu":
                continue
            if ids is None:
                ids = _amd._amdgpu_ids(ctx, self.notes)
            dev = card.device
            name = (
                read_text(dev / "product_name")
                or _amd._amdgpu_ids_name(card, ids)
                or _amd._pci_ids_name(ctx, card)
                or f"AMD GPU {card.pci_id or ''}".strip()
            )
            label = f"{card.name} ({name})"
            hwmon = _amd_hwmon(dev)
            power = next(
                (hwmon / f for f in ("power1_average", "power1_input") if hwmon and (hwmon / f).exists()),
                None,
            )
            self.cards.append(_AmdCard(len(self.cards), name, label, dev, hwmon, power, set()))
            self.notes.info(
                f"{label}: amdgpu reports no PCIe throughput, throttle reasons or per-process VRAM in sysfs"
            )
            total = read_int(dev / "mem_info_vram_total")
            if total is not None and _amd._is_apu(card, total, Notes("amd")):
                self.notes.info(f"{label}: an APU: its power reading is the whole package, CPU included")

    def read(self, first_index: int) -> list[GpuSample]:
        return [self._read(card, first_index + card.index) for card in self.cards]

    def _read(self, card: _AmdCard, index: int) -> GpuSample:
        dev, hwmon, notes = card.device, card.hwmon, self.notes
        if not dev.exists():
            notes.error(f"{card.label} disappeared from sysfs (removed or driver reset): no readings since")
            return GpuSample(index, card.name, lost=True)
        power = read_int(card.power, notes) if card.power else None
        cap = read_int(hwmon / "power1_cap", notes) if hwmon else None
        temp = read_int(hwmon / "temp1_input", notes) if hwmon else None
        gpu = GpuSample(
            index=index,
            name=card.name,
            utilization_percent=_float(read_int(dev / "gpu_busy_percent", notes)),
            memory_used_bytes=read_int(dev / "mem_info_vram_used", notes),
            memory_total_bytes=read_int(dev / "mem_info_vram_total", notes),
            power_watts=_scaled(power, 1e-6),
            power_limit_watts=_scaled(cap, 1e-6),
            temperature_c=_scaled(temp, 1e-3),
            sm_clock_mhz=_dpm_current(read_text(dev / "pp_dpm_sclk", notes)),
            memory_clock_mhz=_dpm_current(read_text(dev / "pp_dpm_mclk", notes)),
            fan_percent=_amd_fan(hwmon, notes) if hwmon else None,
        )
        for field, what, files in (
            ("utilization_percent", "utilisation", "gpu_busy_percent"),
            ("memory_used_bytes", "VRAM use", "mem_info_vram_used"),
            ("power_watts", "power draw", "hwmon power1_average or power1_input"),
            ("power_limit_watts", "power limit", "hwmon power1_cap"),
            ("temperature_c", "temperature", "hwmon temp1_input"),
            ("sm_clock_mhz", "GPU clock", "pp_dpm_sclk"),
            ("memory_clock_mhz", "memory clock", "pp_dpm_mclk"),
            ("fan_percent", "fan speed", "hwmon pwm1 or fan1_input with its maximum"),
        ):
            if field not in card.noted and getattr(gpu, field) is None:
                card.noted.add(field)
                notes.info(f"{card.label}: {what} not available (no readable {files})")
        return gpu


def _amd_hwmon(device: Path) -> Path | None:
    """The card's hwmon folder: the first with power or temperature readings."""
    try:
        folders = sorted((device / "hwmon").iterdir())
    except OSError:
        return None
    wanted = ("power1_average", "power1_input", "power1_cap", "temp1_input")
    return next(
        (f for f in folders if any((f / w).exists() for w in wanted)), folders[0] if folders else None
    )


def _amd_fan(hwmon: Path, notes: Notes) -> float | None:
    for value, maximum in (("pwm1", "pwm1_max"), ("fan1_input", "fan1_max")):
        now = read_int(hwmon / value, notes)
        top = read_int(hwmon / maximum, notes) if now is not None else None
        if now is not None and top:
            return min(100.0, 100.0 * now / top)
    return None


def _dpm_current(text: str | None) -> float | None:
    """The level marked ``*`` in amdgpu's ``pp_dpm_*`` table: "1: 2000Mhz *" -> 2000.0."""
    match = _DPM_CURRENT.search(text or "")
    return float(match.group(1)) if match else None


# -- the sampler -----------------------------------------------------------------------------------


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


def create_sampler() -> Sampler:
    """The sampler the CLI uses; tests replace this module attribute with a fake."""
    return Sampler()


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


# -- columns ---------------------------------------------------------------------------------------

#: per-GPU columns: (column suffix with its unit, GpuSample field)
GPU_COLUMNS: tuple[tuple[str, str], ...] = (
    ("util_percent", "utilization_percent"),
    ("mem_used_bytes", "memory_used_bytes"),
    ("power_w", "power_watts"),
    ("power_limit_w", "power_limit_watts"),
    ("temp_c", "temperature_c"),
    ("sm_clock_mhz", "sm_clock_mhz"),
    ("mem_clock_mhz", "memory_clock_mhz"),
    ("fan_percent", "fan_percent"),
    ("pcie_rx_bytes_per_s", "pcie_rx_bytes_per_s"),
    ("pcie_tx_bytes_per_s", "pcie_tx_bytes_per_s"),
    # added after the first release: new columns go at the end of each GPU's group
    ("mem_total_bytes", "memory_total_bytes"),
    ("temp_slowdown_c", "temperature_slowdown_c"),
)
_gpu_values = attrgetter(*(field for _suffix, field in GPU_COLUMNS))


def gpu_columns(index: int) -> list[str]:
    return [f"gpu{index}_{suffix}" for suffix, _field in GPU_COLUMNS]


def columns(sample: Sample) -> list[str]:
    """Stable column names with their units: "time", "wall", then CPU/RAM, then each GPU's."""
    names = ["time", "wall", "cpu_percent", "ram_used_bytes"]
    for gpu in sample.gpus:
        names += gpu_columns(gpu.index)
    return names


def row(sample: Sample) -> dict[str, float | None]:
    """The sample's values under :func:`columns`; ``None`` where a value is not available."""
    values: dict[str, float | None] = {
        "time": sample.t,
        "wall": sample.wall,
        "cpu_percent": sample.cpu_percent,
        "ram_used_bytes": sample.ram_used_bytes,
    }
    for gpu in sample.gpus:
        values.update(zip(gpu_columns(gpu.index), _gpu_values(gpu), strict=True))
    return values


# -- history ---------------------------------------------------------------------------------------

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


# -- alerts ----------------------------------------------------------------------------------------

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


# -- helpers ---------------------------------------------------------------------------------------


def _is_lost(device: Device) -> bool:
    return device.lost


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _scaled(value: object, factor: float) -> float | None:
    number = _float(value)
    return number * factor if number is not None else None


__all__ = [
    "GPU_COLUMNS",
    "THROTTLE_REASONS",
    "Alert",
    "GpuSample",
    "History",
    "ProcessMemory",
    "Sample",
    "SampleSource",
    "Sampler",
    "alerts",
    "columns",
    "create_sampler",
    "row",
    "ticks",
]
