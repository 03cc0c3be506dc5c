"""PCI and DRM plumbing shared by the Linux GPU probes.

- :func:`display_devices` lists every display-class PCI function (``/sys/bus/pci/devices``), so the
  entry can say "found an NVIDIA GPU at 0000:01:00.0 but NVML is unavailable".
- :func:`drm_cards` lists the ``/sys/class/drm/cardN`` entries of one PCI vendor, with the identity
  fields that the AMD and Intel probes both need.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rigcheck.core.probe._common import Notes, ProbeContext, read_text

#: a PCI address as sysfs spells it: domain:bus:device.function
_BUS_ID = re.compile(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")
#: a DRM card node; connectors ("card0-DP-1") and render nodes ("renderD128") do not match
_CARD = re.compile(r"card(\d+)")


@dataclass(frozen=True)
class PciDevice:
    bus_id: str
    #: lower-case hex without "0x", e.g. "10de"
    vendor_id: str
    device_id: str
    #: the bound kernel driver ("nvidia", "amdgpu", "vfio-pci", …); None when unbound
    driver: str | None


def display_devices(ctx: ProbeContext) -> list[PciDevice]:
    """Every PCI function of class 0x03 (display controller), in bus order."""
    root = ctx.path("/sys/bus/pci/devices")
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return []
    found = []
    for entry in entries:
        klass = read_text(entry / "class")
        vendor, device = _hex_id(read_text(entry / "vendor")), _hex_id(read_text(entry / "device"))
        if not klass or not vendor or not device:
            continue
        try:
            is_display = int(klass, 16) >> 16 == 0x03
        except ValueError:
            continue
        if is_display:
            found.append(PciDevice(entry.name.lower(), vendor, device, driver_name(entry)))
    return found


@dataclass(frozen=True)
class DrmCard:
    """One ``/sys/class/drm/cardN`` entry and the PCI identity of the device behind it."""

    name: str
    #: ``…/sys/class/drm/cardN`` under the context root
    path: Path
    vendor_id: str
    device_id: str | None
    bus_id: str | None
    driver: str | None
    revision: int | None

    @property
    def device(self) -> Path:
        return self.path / "device"

    @property
    def pci_id(self) -> str | None:
        return f"{self.vendor_id}:{self.device_id}" if self.device_id else None

    @property
    def source(self) -> str:
        return f"sysfs /sys/class/drm/{self.name}/device"


def drm_cards(ctx: ProbeContext, vendor_id: str, notes: Notes) -> list[DrmCard]:
    """The DRM cards whose PCI vendor is ``vendor_id`` ("1002", "8086"), ordered by card number.

    ``cardN/device`` may be the kernel's symlink to the PCI device or a plain folder (copied trees).
    Identity comes from the attribute files, else from ``device/uevent``.
    """
    drm = ctx.path("/sys/class/drm")
    try:
        entries = [e for e in drm.iterdir() if _CARD.fullmatch(e.name)]
    except OSError:
        return []
    cards = []
    for entry in sorted(entries, key=lambda e: int(e.name[4:])):
        device = entry / "device"
        uevent = _uevent(device, notes)
        pci_vendor, _, pci_device = uevent.get("PCI_ID", "").lower().partition(":")
        vendor = _hex_id(read_text(device / "vendor", notes)) or pci_vendor or None
        if vendor != vendor_id:
            continue
        revision = read_text(device / "revision", notes)
        cards.append(
            DrmCard(
                name=entry.name,
                path=entry,
                vendor_id=vendor,
                device_id=_hex_id(read_text(device / "device", notes)) or pci_device or None,
                bus_id=_bus_id(device, uevent),
                driver=driver_name(device) or uevent.get("DRIVER"),
                revision=_parse_hex(revision),
            )
        )
    return cards


def driver_name(device: Path) -> str | None:
    """The basename of a PCI device's ``driver`` symlink; None when unbound or not a link."""
    try:
        return (device / "driver").readlink().name or None
    except OSError:
        return None


def _uevent(device: Path, notes: Notes) -> dict[str, str]:
    text = read_text(device / "uevent", notes) or ""
    pairs = (line.partition("=") for line in text.splitlines())
    return {key.strip(): value.strip() for key, sep, value in pairs if sep}


def _bus_id(device: Path, uevent: dict[str, str]) -> str | None:
    """From the ``device`` symlink's target name, else ``PCI_SLOT_NAME`` in the uevent."""
    try:
        target = device.resolve().name.lower()
    except OSError:
        target = ""
    if _BUS_ID.fullmatch(target):
        return target
    slot = uevent.get("PCI_SLOT_NAME", "").lower()
    return slot if _BUS_ID.fullmatch(slot) else None


def _hex_id(text: str | None) -> str | None:
    """ "0x73bf" -> "73bf"; None for anything that is not a 16-bit hex id."""
    value = _parse_hex(text)
    return f"{value:04x}" if value is not None and value <= 0xFFFF else None


def _parse_hex(text: str | None) -> int | None:
    if not text:
        return None
    try:
        return int(text, 16)
    except ValueError:
        return None
