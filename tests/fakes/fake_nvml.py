"""A fake of the ``pynvml`` module (nvidia-ml-py), driven by plain :class:`FakeGPU` descriptions.

It exposes the functions the NVIDIA probe calls, under their real names, with the REAL constants,
the REAL ``NVMLError`` class hierarchy and the real ctypes result structures of the installed
``pynvml``, so the code under test cannot tell it from the library talking to a driver.

Failure injection:

- any :class:`FakeGPU` field set to ``None`` makes its NVML call raise Not Supported;
- any field set to ``Raise(code)`` raises that NVML error (``Raise(SomeException())`` raises that
  exception as it is, for "unexpected error" tests);
- ``FakeGPU(lost_after_calls=n)``: the device answers ``n`` calls, then every call raises GPU_IS_LOST;
- ``FakeGPU(handle_error=code)``: ``nvmlDeviceGetHandleByIndex`` fails for that GPU;
- ``FakeNvml(init_error=code)``: ``nvmlInit`` fails;
- ``FakeNvml(missing={"name", ...})``: functions absent, as in older nvidia-ml-py releases;
- ``FakeNvml(bytes_strings=True)``: strings come back as ``bytes``, as in older bindings.

Live readings (the monitor): ``utilization``, ``power_usage_mw``, ``temperature``, the clocks, the
fan, PCIe throughput, the clock event (throttle) reason mask and the compute processes, each with
the same ``None`` / ``Raise`` convention. A running test changes them between ticks:

- ``fake.update(index, field=value, ...)``: from the next call on, GPU ``index`` answers with these
  values (a field set to ``None`` "vanishes": Not Supported from then on);
- ``fake.lose(index)``: from the next call on, GPU ``index`` answers GPU_IS_LOST to everything;
- ``FakeNvml(process_names={pid: name})``: what ``nvmlSystemGetProcessName`` answers; other pids
  get Not Found, as for processes in another container.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, replace
from typing import Any

import pynvml

MIB = 1024 * 1024


@dataclass(frozen=True)
class Raise:
    """A field value meaning "this NVML call raises": an NVML error code or an exception."""

    error: int | BaseException


NOT_SUPPORTED = Raise(pynvml.NVML_ERROR_NOT_SUPPORTED)
NO_PERMISSION = Raise(pynvml.NVML_ERROR_NO_PERMISSION)
FUNCTION_NOT_FOUND = Raise(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
GPU_IS_LOST = Raise(pynvml.NVML_ERROR_GPU_IS_LOST)


@dataclass(frozen=True)
class FakeProcess:
    """One entry of ``nvmlDeviceGetComputeRunningProcesses``; ``used_bytes=None`` as under WDDM."""

    pid: int
    used_bytes: int | None


@dataclass(frozen=True)
class FakeGPU:
    """One GPU as NVML would describe it. ``None`` means the call answers Not Supported."""

    name: str | Raise | None
    uuid: str | Raise | None
    #: as NVML gives it: 8 hex digits of domain, upper-case hex, e.g. "00000000:2D:00.0"
    pci_bus_id: str | Raise | None
    #: device id in the high half, vendor in the low, e.g. 0x268410DE
    pci_device_id: int
    memory_total: int | Raise | None
    memory_free: int
    compute_capability: tuple[int, int] | Raise | None
    serial: str | Raise | None = None
    power_limit_mw: int | Raise | None = None
    power_default_limit_mw: int | Raise | None = None
    power_min_limit_mw: int | Raise | None = None
    power_max_limit_mw: int | Raise | None = None
    pcie_gen: int | Raise | None = None
    pcie_width: int | Raise | None = None
    pcie_max_gen: int | Raise | None = None
    pcie_max_width: int | Raise | None = None
    #: the state of each link (True: active); ``None``: the GPU has no NVLink or cannot be asked
    nvlink: tuple[bool, ...] | Raise | None = None
    #: current MIG mode; ``None`` on GPUs without MIG
    mig_enabled: bool | Raise | None = None
    #: ``pynvml.NVML_DRIVER_WDDM`` / ``_WDM`` (TCC) / ``_MCDM``; ``None`` (Not Supported) on Linux
    driver_model: int | Raise | None = None
    lost_after_calls: int | None = None
    handle_error: int | None = None
    # -- live readings, for the monitor (None: Not Supported) ----------------------------------
    #: GPU utilisation, percent (``nvmlUtilization_t.gpu``)
    utilization: int | Raise | None = None
    power_usage_mw: int | Raise | None = None
    #: what ``nvmlDeviceGetEnforcedPowerLimit`` answers; ``power_limit_mw`` when left at "same"
    enforced_power_limit_mw: int | Raise | str | None = "same"
    #: GPU core temperature, °C
    temperature: int | Raise | None = None
    #: ``nvmlDeviceGetTemperatureThreshold(SLOWDOWN)``: nvidia-smi's ``gpu_temp_slow_threshold``, °C
    temp_slowdown_c: int | Raise | None = None
    sm_clock_mhz: int | Raise | None = None
    mem_clock_mhz: int | Raise | None = None
    fan_percent: int | Raise | None = None
    #: PCIe throughput as NVML counts it, KB/s
    pcie_rx_kbps: int | Raise | None = None
    pcie_tx_kbps: int | Raise | None = None
    #: ``nvmlClocksEventReason*`` bit mask
    clocks_event_reasons: int | Raise | None = None
    processes: tuple[FakeProcess, ...] | Raise | None = None

    @property
    def memory_used(self) -> int:
        """NVML v1 memory info counts the driver-reserved memory as used: total - free."""
        assert isinstance(self.memory_total, int)
        return self.memory_total - self.memory_free


@dataclass
class FakeHandle:
    index: int
    gpu: FakeGPU
    calls: int = 0


def _fail(error: int | BaseException) -> BaseException:
    return pynvml.NVMLError(error) if isinstance(error, int) else error


class FakeNvml(types.ModuleType):
    """Stands in for the ``pynvml`` module; records calls, ``nvmlInit`` and ``nvmlShutdown``."""

    def __init__(
        self,
        gpus: tuple[FakeGPU, ...] | list[FakeGPU] = (),
        *,
        driver_version: str | Raise | None = "550.54.14",
        cuda_driver_version: int | Raise | None = 12040,
        init_error: int | None = None,
        missing: set[str] | frozenset[str] = frozenset(),
        bytes_strings: bool = False,
        process_names: dict[int, str | Raise] | None = None,
    ) -> None:
        super().__init__("pynvml", "A fake of nvidia-ml-py's pynvml module (tests/fakes/fake_nvml.py).")
        for attr in dir(pynvml):
            if attr.startswith(("NVML_", "NVMLError")):
                setattr(self, attr, getattr(pynvml, attr))
        self.gpus = tuple(gpus)
        self.driver_version = driver_version
        self.cuda_driver_version = cuda_driver_version
        self.init_error = init_error
        self.missing = frozenset(missing)
        self.bytes_strings = bytes_strings
        self.process_names = dict(process_names or {})
        self.initialised = False
        self.init_called = False
        self.shutdown_called = False
        #: every NVML function called, in order
        self.calls: list[str] = []

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("nvml") and name in object.__getattribute__(self, "missing"):
            raise AttributeError(f"module 'pynvml' has no attribute {name!r}")
        return super().__getattribute__(name)

    # -- plumbing -------------------------------------------------------------------------------

    def _enter(self, name: str) -> None:
        self.calls.append(name)
        if not self.initialised:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_UNINITIALIZED)

    def _device(self, name: str, handle: FakeHandle) -> FakeGPU:
        self._enter(name)
        handle.calls += 1
        gpu = self.gpus[handle.index]  # not handle.gpu: update() may have changed it since
        lost_after = gpu.lost_after_calls
        if lost_after is not None and handle.calls > lost_after:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_GPU_IS_LOST)
        return gpu

    # -- changing the GPUs while a test runs ----------------------------------------------------

    def update(self, index: int, **changes: Any) -> None:
        """GPU ``index`` answers with these field values from the next call on."""
        gpus = list(self.gpus)
        gpus[index] = replace(gpus[index], **changes)
        self.gpus = tuple(gpus)

    def lose(self, index: int) -> None:
        """GPU ``index`` falls off the bus: every later call on it raises GPU_IS_LOST."""
        self.update(index, lost_after_calls=0)

    def _value(self, value: Any) -> Any:
        if value is None:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        if isinstance(value, Raise):
            raise _fail(value.error)
        return value

    def _string(self, value: Any) -> str | bytes:
        text = str(self._value(value))
        return text.encode() if self.bytes_strings else text

    # -- library --------------------------------------------------------------------------------

    def nvmlInit(self) -> None:
        self.calls.append("nvmlInit")
        self.init_called = True
        if self.init_error is not None:
            raise pynvml.NVMLError(self.init_error)
        self.initialised = True

    def nvmlShutdown(self) -> None:
        self._enter("nvmlShutdown")
        self.shutdown_called = True
        self.initialised = False

    def nvmlSystemGetDriverVersion(self) -> str | bytes:
        self._enter("nvmlSystemGetDriverVersion")
        return self._string(self.driver_version)

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        self._enter("nvmlSystemGetCudaDriverVersion")
        return int(self._value(self.cuda_driver_version))

    def nvmlSystemGetCudaDriverVersion_v2(self) -> int:
        self._enter("nvmlSystemGetCudaDriverVersion_v2")
        return int(self._value(self.cuda_driver_version))

    def nvmlDeviceGetCount(self) -> int:
        self._enter("nvmlDeviceGetCount")
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeHandle:
        self._enter("nvmlDeviceGetHandleByIndex")
        if not 0 <= index < len(self.gpus):
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        gpu = self.gpus[index]
        if gpu.handle_error is not None:
            raise pynvml.NVMLError(gpu.handle_error)
        return FakeHandle(index, gpu)

    # -- device ---------------------------------------------------------------------------------

    def nvmlDeviceGetName(self, handle: FakeHandle) -> str | bytes:
        return self._string(self._device("nvmlDeviceGetName", handle).name)

    def nvmlDeviceGetUUID(self, handle: FakeHandle) -> str | bytes:
        return self._string(self._device("nvmlDeviceGetUUID", handle).uuid)

    def nvmlDeviceGetSerial(self, handle: FakeHandle) -> str | bytes:
        return self._string(self._device("nvmlDeviceGetSerial", handle).serial)

    def nvmlDeviceGetPciInfo(self, handle: FakeHandle) -> Any:
        gpu = self._device("nvmlDeviceGetPciInfo", handle)
        bus_id = self._value(gpu.pci_bus_id)
        if self.bytes_strings:  # older bindings hand back the raw ctypes bytes
            return types.SimpleNamespace(
                busIdLegacy=bus_id.encode(), busId=bus_id.encode(), pciDeviceId=gpu.pci_device_id
            )
        info = pynvml.nvmlPciInfo_t()
        info.busIdLegacy = bus_id.encode()
        info.busId = bus_id.encode()
        info.pciDeviceId = gpu.pci_device_id
        return info

    def nvmlDeviceGetMemoryInfo(self, handle: FakeHandle) -> Any:
        gpu = self._device("nvmlDeviceGetMemoryInfo", handle)
        total = self._value(gpu.memory_total)
        return pynvml.c_nvmlMemory_t(total=total, free=gpu.memory_free, used=gpu.memory_used)

    def nvmlDeviceGetCudaComputeCapability(self, handle: FakeHandle) -> tuple[int, int]:
        gpu = self._device("nvmlDeviceGetCudaComputeCapability", handle)
        major, minor = self._value(gpu.compute_capability)
        return (int(major), int(minor))

    def nvmlDeviceGetPowerManagementLimit(self, handle: FakeHandle) -> int:
        return int(self._value(self._device("nvmlDeviceGetPowerManagementLimit", handle).power_limit_mw))

    def nvmlDeviceGetPowerManagementDefaultLimit(self, handle: FakeHandle) -> int:
        gpu = self._device("nvmlDeviceGetPowerManagementDefaultLimit", handle)
        return int(self._value(gpu.power_default_limit_mw))

    def nvmlDeviceGetPowerManagementLimitConstraints(self, handle: FakeHandle) -> list[int]:
        gpu = self._device("nvmlDeviceGetPowerManagementLimitConstraints", handle)
        return [int(self._value(gpu.power_min_limit_mw)), int(self._value(gpu.power_max_limit_mw))]

    def nvmlDeviceGetCurrPcieLinkGeneration(self, handle: FakeHandle) -> int:
        return int(self._value(self._device("nvmlDeviceGetCurrPcieLinkGeneration", handle).pcie_gen))

    def nvmlDeviceGetCurrPcieLinkWidth(self, handle: FakeHandle) -> int:
        return int(self._value(self._device("nvmlDeviceGetCurrPcieLinkWidth", handle).pcie_width))

    def nvmlDeviceGetMaxPcieLinkGeneration(self, handle: FakeHandle) -> int:
        return int(self._value(self._device("nvmlDeviceGetMaxPcieLinkGeneration", handle).pcie_max_gen))

    def nvmlDeviceGetMaxPcieLinkWidth(self, handle: FakeHandle) -> int:
        return int(self._value(self._device("nvmlDeviceGetMaxPcieLinkWidth", handle).pcie_max_width))

    def nvmlDeviceGetNvLinkState(self, handle: FakeHandle, link: int) -> int:
        states = self._value(self._device("nvmlDeviceGetNvLinkState", handle).nvlink)
        if not 0 <= link < len(states):
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return int(pynvml.NVML_FEATURE_ENABLED if states[link] else pynvml.NVML_FEATURE_DISABLED)

    def nvmlDeviceGetMigMode(self, handle: FakeHandle) -> list[int]:
        enabled = self._value(self._device("nvmlDeviceGetMigMode", handle).mig_enabled)
        mode = pynvml.NVML_DEVICE_MIG_ENABLE if enabled else pynvml.NVML_DEVICE_MIG_DISABLE
        return [mode, mode]

    # -- live readings ----------------------------------------------------------------------------

    def nvmlDeviceGetUtilizationRates(self, handle: FakeHandle) -> Any:
        gpu = int(self._value(self._device("nvmlDeviceGetUtilizationRates", handle).utilization))
        return pynvml.c_nvmlUtilization_t(gpu=gpu, memory=0)

    def nvmlDeviceGetPowerUsage(self, handle: FakeHandle) -> int:
        return int(self._value(self._device("nvmlDeviceGetPowerUsage", handle).power_usage_mw))

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: FakeHandle) -> int:
        gpu = self._device("nvmlDeviceGetEnforcedPowerLimit", handle)
        enforced = (
            gpu.power_limit_mw if gpu.enforced_power_limit_mw == "same" else gpu.enforced_power_limit_mw
        )
        return int(self._value(enforced))

    def nvmlDeviceGetTemperature(self, handle: FakeHandle, sensor: int) -> int:
        gpu = self._device("nvmlDeviceGetTemperature", handle)
        if sensor != pynvml.NVML_TEMPERATURE_GPU:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return int(self._value(gpu.temperature))

    def nvmlDeviceGetTemperatureThreshold(self, handle: FakeHandle, threshold: int) -> int:
        gpu = self._device("nvmlDeviceGetTemperatureThreshold", handle)
        if threshold != pynvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return int(self._value(gpu.temp_slowdown_c))

    def nvmlDeviceGetClockInfo(self, handle: FakeHandle, clock: int) -> int:
        gpu = self._device("nvmlDeviceGetClockInfo", handle)
        if clock == pynvml.NVML_CLOCK_SM:
            return int(self._value(gpu.sm_clock_mhz))
        if clock == pynvml.NVML_CLOCK_MEM:
            return int(self._value(gpu.mem_clock_mhz))
        raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)

    def nvmlDeviceGetFanSpeed(self, handle: FakeHandle) -> int:
        return int(self._value(self._device("nvmlDeviceGetFanSpeed", handle).fan_percent))

    def nvmlDeviceGetPcieThroughput(self, handle: FakeHandle, counter: int) -> int:
        gpu = self._device("nvmlDeviceGetPcieThroughput", handle)
        if counter == pynvml.NVML_PCIE_UTIL_TX_BYTES:
            return int(self._value(gpu.pcie_tx_kbps))
        if counter == pynvml.NVML_PCIE_UTIL_RX_BYTES:
            return int(self._value(gpu.pcie_rx_kbps))
        raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: FakeHandle) -> int:
        gpu = self._device("nvmlDeviceGetCurrentClocksEventReasons", handle)
        return int(self._value(gpu.clocks_event_reasons))

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle: FakeHandle) -> int:
        gpu = self._device("nvmlDeviceGetCurrentClocksThrottleReasons", handle)
        return int(self._value(gpu.clocks_event_reasons))

    def nvmlDeviceGetComputeRunningProcesses(self, handle: FakeHandle) -> list[Any]:
        gpu = self._device("nvmlDeviceGetComputeRunningProcesses", handle)
        # pynvml hands back "friendly objects" with the struct's field names
        return [
            types.SimpleNamespace(pid=p.pid, usedGpuMemory=p.used_bytes, gpuInstanceId=0xFFFFFFFF)
            for p in self._value(gpu.processes)
        ]

    def nvmlSystemGetProcessName(self, pid: int) -> str | bytes:
        self._enter("nvmlSystemGetProcessName")
        if pid not in self.process_names:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_FOUND)
        return self._string(self.process_names[pid])

    def _driver_model(self, name: str, handle: FakeHandle) -> list[int]:
        model = int(self._value(self._device(name, handle).driver_model))
        return [model, model]

    def nvmlDeviceGetDriverModel_v2(self, handle: FakeHandle) -> list[int]:
        return self._driver_model("nvmlDeviceGetDriverModel_v2", handle)

    def nvmlDeviceGetDriverModel_v1(self, handle: FakeHandle) -> list[int]:
        return self._driver_model("nvmlDeviceGetDriverModel_v1", handle)

    def nvmlDeviceGetDriverModel(self, handle: FakeHandle) -> list[int]:
        return self._driver_model("nvmlDeviceGetDriverModel", handle)


__all__ = [
    "FUNCTION_NOT_FOUND",
    "GPU_IS_LOST",
    "MIB",
    "NOT_SUPPORTED",
    "NO_PERMISSION",
    "FakeGPU",
    "FakeNvml",
    "FakeProcess",
    "Raise",
]
