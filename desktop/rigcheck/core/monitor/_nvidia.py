"""NVIDIA GPUs through NVML: every GPU the probe's gateway lists, read field by field at every tick."""

from __future__ import annotations

from contextlib import ExitStack

from rigcheck.core.monitor._values import _float, _int, _scaled
from rigcheck.core.monitor.records import GpuSample, ProcessMemory, throttle_ids
from rigcheck.core.probe._common import Notes, ProbeContext
from rigcheck.core.probe._nvml import Device, open_nvml, text

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


def _is_lost(device: Device) -> bool:
    return device.lost
