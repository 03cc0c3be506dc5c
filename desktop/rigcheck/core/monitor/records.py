"""The monitor's records: one GPU, one tick, one alert, frozen; and the throttle reasons' ids."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


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


def throttle_ids(mask: int) -> tuple[str, ...]:
    """NVML's reason bit mask as ids, lowest bit first: 0x24 -> ("power_cap", "thermal")."""
    return tuple(name for bit, name in THROTTLE_REASONS.items() if mask & bit)
