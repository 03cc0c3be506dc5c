"""Intel GPUs on Linux through the i915 and xe drivers' sysfs files.

Local memory (VRAM) has no stable upstream sysfs file, so this reads what some kernels publish:

- xe: ``device/tileN/physical_vram_size_bytes`` (decimal bytes, summed over tiles). Early upstream
  xe and Intel's backport drivers create it on discrete GPUs; recent mainline kernels do not.
- i915 as built by Intel's out-of-tree/backport packages: ``cardN/lmem_total_bytes`` and
  ``cardN/lmem_avail_bytes`` on the DRM card node (not under ``device/``). Mainline i915 has neither;
  it reports memory regions only through a DRM ioctl.

With neither file, a GPU at 0000:00:02.0 (where Intel's integrated graphics always sit on bare
metal) is integrated and shares system RAM; any other is taken as a discrete GPU of unknown VRAM.
PCIe links are not reported: Arc cards sit behind an internal switch, so the endpoint's link
figures do not describe the slot.
"""

from __future__ import annotations

from pathlib import Path

from rigcheck.core.machine import GPU
from rigcheck.core.probe._common import (
    Notes,
    ProbeContext,
    VendorResult,
    hwmon_folder,
    pci_ids_name,
    read_int,
)
from rigcheck.core.probe._pci import DrmCard, drm_cards

VENDOR_ID = "8086"
DRIVERS = ("i915", "xe")
#: the PCI address of Intel's integrated graphics (device 2 on the root bus)
IGPU_BUS_ID = "0000:00:02.0"


def probe_gpus(ctx: ProbeContext) -> VendorResult:
    notes = Notes("intel")
    gpus = []
    for card in drm_cards(ctx, VENDOR_ID, notes):
        if card.driver in DRIVERS:
            gpus.append(_describe(ctx, card, notes))
        else:
            driver = f"driver {card.driver!r}" if card.driver else "no driver"
            notes.info(f"{card.name}: Intel GPU with {driver}, not i915/xe")
    return VendorResult(gpus=tuple(gpus), notes=notes.collected())


def _describe(ctx: ProbeContext, card: DrmCard, notes: Notes) -> GPU:
    total, free = _local_memory(card, notes)
    if total is not None:
        unified: bool | None = False
    elif card.bus_id == IGPU_BUS_ID:
        unified = True
        notes.info(f"{card.name}: integrated GPU shares system RAM")
    elif card.bus_id is not None:
        unified = False
        notes.warning(
            f"{card.name}: discrete Intel GPU, but the {card.driver} driver publishes "
            "no VRAM size in sysfs; its memory is unknown"
        )
    else:
        unified = None
        notes.warning(f"{card.name}: cannot tell whether the Intel GPU is integrated or discrete")

    pci_name = pci_ids_name(ctx, VENDOR_ID, card.device_id) if card.device_id else None
    if pci_name and not pci_name.startswith("Intel"):
        pci_name = f"Intel {pci_name}"
    hwmon = hwmon_folder(card.device, ("power1_max",), fallback=False)
    return GPU(
        vendor="intel",
        name=pci_name or f"Intel GPU {card.pci_id or ''}".strip(),
        memory_total_bytes=total,
        memory_free_bytes=free,
        unified_memory=unified,
        pci_bus_id=card.bus_id,
        pci_id=card.pci_id,
        power_limit_watts=_watts(hwmon, "power1_max", notes),
        power_default_limit_watts=_watts(hwmon, "power1_rated_max", notes),
        source=card.source,
    )


def _local_memory(card: DrmCard, notes: Notes) -> tuple[int | None, int | None]:
    """(total, free) bytes of device-local memory; (None, None) when no file tells."""
    sizes = [read_int(tile / "physical_vram_size_bytes", notes) for tile in sorted(card.device.glob("tile*"))]
    xe_total = sum(size for size in sizes if size)
    if xe_total:
        return xe_total, None
    total = read_int(card.path / "lmem_total_bytes", notes)
    if not total:
        return None, None
    free = read_int(card.path / "lmem_avail_bytes", notes)
    return total, free if free is not None and free <= total else None


def _watts(hwmon: Path | None, name: str, notes: Notes) -> float | None:
    microwatts = read_int(hwmon / name, notes) if hwmon else None
    return microwatts / 1_000_000 if microwatts else None
