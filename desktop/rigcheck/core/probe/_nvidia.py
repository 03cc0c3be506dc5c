"""NVIDIA GPUs through NVML (nvidia-ml-py), on Linux and Windows.

Each field is read on its own: a GPU that does not support one query loses that field only. A GPU
that falls off the bus mid-probe keeps what was read, gets an error note, and the next GPU is probed.
"""

from __future__ import annotations

from typing import Any, Literal

from rigcheck.core.machine import GPU, Drivers
from rigcheck.core.probe._common import Notes, ProbeContext, VendorResult
from rigcheck.core.probe._nvml import Device, Nvml, open_nvml, text


def probe_gpus(ctx: ProbeContext) -> VendorResult:
    """Every GPU NVML lists, in NVML's order, with the driver and CUDA driver versions."""
    notes = Notes("nvidia")
    gpus: list[GPU] = []
    drivers = Drivers()
    with open_nvml(ctx, notes) as nvml:
        if nvml is None:
            return VendorResult(notes=notes.collected())
        drivers = Drivers(
            nvidia=text(nvml.call("nvmlSystemGetDriverVersion")),
            cuda_driver=cuda_version(
                nvml.call_first(("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"))
            ),
        )
        count = nvml.call("nvmlDeviceGetCount")
        if not isinstance(count, int):
            notes.warning("NVML could not count the NVIDIA GPUs")
            count = 0
        for index in range(count):
            device = nvml.device(index)
            if device is not None:
                gpus.append(_read_gpu(ctx, nvml, device, notes))
    return VendorResult(gpus=tuple(gpus), drivers=drivers, notes=notes.collected())


def cuda_version(value: object) -> str | None:
    """NVML's CUDA driver version as text: 12040 → "12.4", 13020 → "13.2"."""
    if not isinstance(value, int) or value <= 0:
        return None
    return f"{value // 1000}.{value % 1000 // 10}"


def pci_id(pci_device_id: object) -> str | None:
    """NVML's combined PCI id (device in the high half, vendor in the low): 0x268410DE → "10de:2684"."""
    if not isinstance(pci_device_id, int) or pci_device_id <= 0:
        return None
    return f"{pci_device_id & 0xFFFF:04x}:{pci_device_id >> 16 & 0xFFFF:04x}"


def _read_gpu(ctx: ProbeContext, nvml: Nvml, device: Device, notes: Notes) -> GPU:
    name = text(device.call("nvmlDeviceGetName"))
    label = f"GPU {device.index} ({name})" if name else f"GPU {device.index}"
    uuid = text(device.call("nvmlDeviceGetUUID"))
    serial = text(device.call("nvmlDeviceGetSerial"))

    pci = device.call("nvmlDeviceGetPciInfo")
    bus_id = text(getattr(pci, "busId", None)) or text(getattr(pci, "busIdLegacy", None))

    # With MIG enabled this is still the whole GPU, not one instance's slice.
    memory = device.call("nvmlDeviceGetMemoryInfo")
    total = _int(getattr(memory, "total", None))
    free = _int(getattr(memory, "free", None))
    unified: bool | None = False if total is not None else None
    if total is None and "nvmlDeviceGetMemoryInfo" in device.unsupported and name and "GB10" in name:
        unified = True  # DGX Spark: the GPU shares the system's LPDDR5X and NVML reports no VRAM size

    cc = device.call("nvmlDeviceGetCudaComputeCapability")
    compute_capability = f"{cc[0]}.{cc[1]}" if isinstance(cc, list | tuple) and len(cc) == 2 else None

    power_limit = _watts(device.call("nvmlDeviceGetPowerManagementLimit"))
    power_default = _watts(device.call("nvmlDeviceGetPowerManagementDefaultLimit"))
    constraints = device.call("nvmlDeviceGetPowerManagementLimitConstraints")
    power_max = (
        _watts(constraints[1]) if isinstance(constraints, list | tuple) and len(constraints) == 2 else None
    )

    gpu = GPU(
        vendor="nvidia",
        name=name or "NVIDIA GPU",
        memory_total_bytes=total,
        index=device.index,
        uuid=uuid,
        serial=serial,
        pci_bus_id=bus_id.lower() if bus_id else None,
        pci_id=pci_id(getattr(pci, "pciDeviceId", None)),
        memory_free_bytes=free,
        unified_memory=unified,
        compute_capability=compute_capability,
        power_limit_watts=power_limit,
        power_default_limit_watts=power_default,
        power_max_limit_watts=power_max,
        pcie_gen=_int(device.call("nvmlDeviceGetCurrPcieLinkGeneration")),
        pcie_width=_int(device.call("nvmlDeviceGetCurrPcieLinkWidth")),
        pcie_max_gen=_int(device.call("nvmlDeviceGetMaxPcieLinkGeneration")),
        pcie_max_width=_int(device.call("nvmlDeviceGetMaxPcieLinkWidth")),
        nvlink_links=_nvlink_links(nvml, device),
        driver_model=_driver_model(nvml, device) if ctx.platform == "win32" else None,
        mig_enabled=_mig_enabled(nvml, device),
        source="nvml",
    )

    if name is None and not device.lost:
        notes.warning(f"{label}: NVML did not report the GPU's name")
    if unified:
        notes.info(f"{label}: unified memory shared with the CPU; NVML reports no separate VRAM size")
    elif total is None and not device.lost:
        notes.warning(f"{label}: memory size not reported by NVML")
    if power_limit is None and not device.lost:
        if "nvmlDeviceGetPowerManagementLimit" in device.unsupported:
            notes.info(f"{label}: power limit not supported on this GPU")
        else:
            notes.info(f"{label}: power limit could not be read")
    if gpu.mig_enabled:
        notes.info(
            f"{label}: MIG is enabled; memory shown is the whole GPU, a MIG instance sees only its slice"
        )
    if device.lost:
        notes.error(f"{label} fell off the bus while probing (GPU is lost)")
    return gpu


def _nvlink_links(nvml: Nvml, device: Device) -> int | None:
    """Active NVLink links; ``None`` when the GPU cannot be asked (no NVLink, or MIG mode), else a count."""
    first = device.call("nvmlDeviceGetNvLinkState", 0)
    if first is None:
        return None
    enabled = nvml.const("NVML_FEATURE_ENABLED", 1)
    active = int(first == enabled)
    # Links past the GPU's last answer an error: count what answers, quietly.
    for link in range(1, nvml.const("NVML_NVLINK_MAX_LINKS", 18)):
        active += int(device.call("nvmlDeviceGetNvLinkState", link, silent=True) == enabled)
    return active


def _driver_model(nvml: Nvml, device: Device) -> Literal["WDDM", "TCC", "MCDM"] | None:
    """The Windows driver model in use now (the pending one takes effect after a reboot)."""
    models = device.call_first(
        ("nvmlDeviceGetDriverModel_v2", "nvmlDeviceGetDriverModel_v1", "nvmlDeviceGetDriverModel")
    )
    if not isinstance(models, list | tuple) or not models:
        return None
    current = models[0]
    if current == nvml.const("NVML_DRIVER_WDDM", 0):
        return "WDDM"
    if current == nvml.const("NVML_DRIVER_WDM", 1):  # NVML calls TCC "WDM"
        return "TCC"
    if current == nvml.const("NVML_DRIVER_MCDM", 2):
        return "MCDM"
    return None


def _mig_enabled(nvml: Nvml, device: Device) -> bool | None:
    modes = device.call("nvmlDeviceGetMigMode")
    if not isinstance(modes, list | tuple) or not modes:
        return None
    return bool(modes[0] == nvml.const("NVML_DEVICE_MIG_ENABLE", 1))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _watts(milliwatts: Any) -> float | None:
    value = _int(milliwatts)
    return value / 1000.0 if value is not None else None
