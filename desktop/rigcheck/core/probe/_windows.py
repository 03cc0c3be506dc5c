r"""Any GPU's VRAM on Windows, from the display-adapter keys in the registry.

Every display adapter has a driver key under
``HKLM\SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}\NNNN`` with
``DriverDesc`` (the name), ``DriverVersion``, ``MatchingDeviceId`` (``PCI\VEN_10DE&DEV_2684&…``)
and ``HardwareInformation.qwMemorySize``, the dedicated VRAM as a 64-bit byte count. WMI's
``Win32_VideoController.AdapterRAM`` is a uint32 and tops out just under 4 GiB (a 24 GiB RTX 4090
reads 4293918720: https://github.com/oshi/oshi/issues/2521), so it is never used here; the older
``HardwareInformation.MemorySize`` has the same 32-bit limit and is only a fallback.

Limits of the source: the registry says nothing about free memory, and a driver key can outlive a
card that was taken out without uninstalling its driver. NVML describes NVIDIA cards better; the
caller drops registry NVIDIA entries when NVML found any.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from typing import Any, Protocol

from rigcheck.core.machine import GPU, Drivers, Vendor
from rigcheck.core.probe._common import Notes, ProbeContext, VendorResult

SOURCE = "registry"

#: the display-adapter setup class, relative to HKEY_LOCAL_MACHINE
CLASS_KEY = r"SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}"
_HKLM = "HKLM\\"

_PCI_VENDORS: dict[str, Vendor] = {"10de": "nvidia", "1002": "amd", "8086": "intel"}
_MICROSOFT_VENDOR = "1414"  # Hyper-V video and other Microsoft software adapters
_SOFTWARE_ADAPTERS = ("basic display", "basic render", "remote display", "indirect display")
_DEVICE_ID = re.compile(r"VEN_([0-9A-F]{4})&DEV_([0-9A-F]{4})", re.IGNORECASE)
_NVIDIA_VERSION = re.compile(r"^\d+\.\d+\.(\d+)\.(\d+)$")

# Intel's discrete GPUs by PCI device id; every other Intel display adapter is integrated graphics.
# From intel/compute-runtime (shared/source/dll/devices/devices_base.inl and its DG2/BMG id lists):
# DG1 0x4905-0x4909, Alchemist/Flex 0x56xx and 0x4F8x, Ponte Vecchio 0x0BDx, Battlemage 0xE2xx.
_INTEL_DISCRETE_PREFIXES = ("490", "56", "4f8", "0bd", "e2")

_GIB = 1024**3
_MIB = 1024**2
#: HardwareInformation.MemorySize values this close to 4 GiB are the 32-bit ceiling, not the card
_DWORD_CEILING = 0xFF00_0000


class RegistryReader(Protocol):
    """Read-only access to HKEY_LOCAL_MACHINE; both methods raise ``OSError`` when a key is unreadable."""

    def subkeys(self, path: str) -> list[str]: ...

    def values(self, path: str) -> dict[str, object]: ...


class WinregReader:
    """:class:`RegistryReader` over the standard ``winreg`` module."""

    def __init__(self, winreg: Any) -> None:
        self._winreg = winreg

    def subkeys(self, path: str) -> list[str]:
        with self._winreg.OpenKey(self._winreg.HKEY_LOCAL_MACHINE, path) as key:
            count = self._winreg.QueryInfoKey(key)[0]
            return [str(self._winreg.EnumKey(key, i)) for i in range(count)]

    def values(self, path: str) -> dict[str, object]:
        with self._winreg.OpenKey(self._winreg.HKEY_LOCAL_MACHINE, path) as key:
            count = self._winreg.QueryInfoKey(key)[1]
            found: dict[str, object] = {}
            for i in range(count):
                name, data, _kind = self._winreg.EnumValue(key, i)
                found[str(name)] = data
            return found


def _import_winreg() -> Any:
    return importlib.import_module("winreg")  # only on Windows; ImportError elsewhere


def open_registry() -> RegistryReader:
    """The real registry; raises ``ImportError`` off Windows."""
    return WinregReader(_import_winreg())


def probe_gpus(ctx: ProbeContext, registry: RegistryReader | None = None) -> VendorResult:
    """Every NVIDIA, AMD and Intel display adapter in the registry, with its dedicated VRAM."""
    notes = Notes("windows")
    if registry is None:
        try:
            registry = open_registry()
        except ImportError:
            notes.warning(
                "the winreg module is not available, so GPU memory cannot be read from the registry"
            )
            return VendorResult(notes=notes.collected())

    try:
        names = registry.subkeys(CLASS_KEY)
    except OSError as exc:
        notes.warning(f"cannot list the display adapters in {_HKLM}{CLASS_KEY}: {_reason(exc)}")
        return VendorResult(notes=notes.collected())

    gpus: list[GPU] = []
    nvidia_versions: list[str] = []
    for name in sorted(n for n in names if len(n) == 4 and n.isdigit()):
        path = f"{CLASS_KEY}\\{name}"
        try:
            values = registry.values(path)
        except OSError as exc:
            notes.warning(f"cannot read {_HKLM}{path} ({_reason(exc)}); that adapter is left out")
            continue
        gpu = _adapter(values, notes)
        if gpu is None:
            continue
        gpus.append(gpu)
        version = _text(values.get("DriverVersion"))
        if gpu.vendor == "nvidia" and version and (nvidia := nvidia_driver_version(version)):
            nvidia_versions.append(nvidia)
    if gpus:
        notes.info("the registry does not say how much GPU memory is free")
    return VendorResult(
        gpus=tuple(gpus),
        drivers=Drivers(nvidia=nvidia_versions[0] if nvidia_versions else None),
        notes=notes.collected(),
    )


def _adapter(values: Mapping[str, object], notes: Notes) -> GPU | None:
    """One driver key as a GPU; ``None`` for software, remote and unknown-vendor adapters."""
    desc = _text(values.get("DriverDesc"))
    matching = _text(values.get("MatchingDeviceId"))
    if matching is None:
        return None  # not a bound device (e.g. a leftover or half-installed driver key)
    lowered = (desc or "").lower()
    if "basic display" in lowered:
        notes.info(
            "Windows is using the Microsoft Basic Display Adapter: a GPU may be installed without its driver"
        )
        return None
    match = _DEVICE_ID.search(matching)
    if match is None or any(kind in lowered for kind in _SOFTWARE_ADAPTERS):
        return None  # virtual, remote and indirect displays have no PCI vendor id
    vendor_id, device_id = match.group(1).lower(), match.group(2).lower()
    if vendor_id == _MICROSOFT_VENDOR:
        return None
    label = desc or f"PCI {vendor_id}:{device_id}"
    vendor = _PCI_VENDORS.get(vendor_id)
    if vendor is None:
        notes.info(f"skipped {label} (PCI vendor {vendor_id}): not an NVIDIA, AMD or Intel GPU")
        return None

    memory = _memory(label, values, notes)
    integrated = vendor == "intel" and not device_id.startswith(_INTEL_DISCRETE_PREFIXES)
    if integrated:
        carve_out = f"{_size(memory)} " if memory is not None else ""
        notes.info(
            f"{label} is integrated graphics sharing system RAM with the CPU; the {carve_out}the registry "
            "gives is only its dedicated carve-out (Windows typically lets it use up to half of RAM)"
        )
    version = _text(values.get("DriverVersion"))
    if version and vendor != "nvidia":
        notes.info(f"{label}: Windows driver version {version}")
    return GPU(
        vendor=vendor,
        name=label,
        memory_total_bytes=memory,
        pci_id=f"{vendor_id}:{device_id}",
        unified_memory=integrated,
        source=SOURCE,
    )


def _memory(label: str, values: Mapping[str, object], notes: Notes) -> int | None:
    """Dedicated VRAM in bytes: the 64-bit value, else the 32-bit one with a note on its 4 GiB cap."""
    qword = _as_int(values.get("HardwareInformation.qwMemorySize"))
    if qword:
        return qword
    legacy = _as_int(values.get("HardwareInformation.MemorySize"))
    if legacy:
        message = (
            f"{label}: memory size from HardwareInformation.MemorySize, a 32-bit value that cannot "
            "show more than 4 GiB (HardwareInformation.qwMemorySize is missing)"
        )
        if legacy >= _DWORD_CEILING:
            notes.warning(message + "; the card likely has more")
        else:
            notes.info(message)
        return legacy
    notes.warning(f"{label}: the registry gives no memory size")
    return None


def nvidia_driver_version(windows_version: str) -> str | None:
    """NVIDIA's version from the Windows one: "32.0.15.6094" -> "560.94" (last five digits)."""
    match = _NVIDIA_VERSION.match(windows_version.strip())
    if match is None:
        return None
    digits = (match.group(1) + match.group(2).zfill(4))[-5:]
    if len(digits) < 5:
        return None
    return f"{int(digits[:3])}.{digits[3:]}"


def _as_int(value: object) -> int | None:
    """A REG_QWORD/REG_DWORD (int), or a little-endian REG_BINARY of 4 or 8 bytes as Intel drivers write."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, bytes) and len(value) in (4, 8):
        return int.from_bytes(value, "little")
    return None


def _text(value: object) -> str | None:
    if isinstance(value, list):  # REG_MULTI_SZ
        value = value[0] if value else None
    return value.strip() or None if isinstance(value, str) else None


def _size(size: int) -> str:
    if size >= _GIB:
        return f"{size / _GIB:.3g} GiB"
    return f"{size // _MIB} MiB"


def _reason(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    return str(exc.strerror or exc)
