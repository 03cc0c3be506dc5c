"""The Intel sysfs probe, and the display-device scan in ``_pci``.

No captured Intel sysfs tree was available, so the trees here are written by hand from the kernel
sources: i915 and xe attribute names, ``device/tileN/physical_vram_size_bytes`` from xe's
``xe_tile_sysfs.c`` (early upstream xe) and ``cardN/lmem_{total,avail}_bytes`` from the i915 that
Intel's backport packages build (``i915_sysfs.c``, registered on the DRM card node). Names come from
real ``pci.ids`` lines (PCI ID Repository, 2026.08.22; GPL-2.0+ or BSD-3-Clause).
"""

from __future__ import annotations

import os
from pathlib import Path

from rigcheck.core.machine import GPU, Note
from rigcheck.core.probe import _intel
from rigcheck.core.probe._common import ProbeContext, VendorResult
from rigcheck.core.probe._pci import PciDevice, display_devices

PCI_IDS = """\
8086  Intel Corporation
\t46a6  Alder Lake-P GT2 [Iris Xe Graphics]
\t56a0  DG2 [Arc A770]
\t64a0  Core Ultra 200V Series Processors Arc Graphics 130V/140V GPU
\te20b  Battlemage G21 [Arc B580]
8088  Beijing Wangxun Technology Co., Ltd.
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def add_card(
    root: Path, card: str, bus_id: str, device_id: str, driver: str, *, files: dict[str, str] | None = None
) -> Path:
    """A PCI device under sys/devices with its driver link, and sys/class/drm/<card>/device -> it."""
    device = root / "sys/devices/pci0000:00" / bus_id
    write(device / "vendor", "0x8086\n")
    write(device / "device", f"0x{device_id}\n")
    write(device / "class", "0x030000\n")
    write(device / "uevent", f"DRIVER={driver}\nPCI_ID=8086:{device_id.upper()}\nPCI_SLOT_NAME={bus_id}\n")
    (device / "driver").symlink_to(f"../../../bus/pci/drivers/{driver}")
    for name, text in (files or {}).items():
        write(device / name, text)
    card_dir = root / "sys/class/drm" / card
    card_dir.mkdir(parents=True)
    (card_dir / "device").symlink_to(os.path.relpath(device, card_dir))
    (root / "sys/class/drm" / f"{card}-DP-1").mkdir()
    return card_dir


def probe(root: Path) -> VendorResult:
    return _intel.probe_gpus(ProbeContext(root=root, platform="linux", env={}))


def test_integrated_gpu_shares_system_ram(tmp_path: Path) -> None:
    add_card(tmp_path, "card0", "0000:00:02.0", "46a6", "i915")
    write(tmp_path / "usr/share/hwdata/pci.ids", PCI_IDS)

    result = probe(tmp_path)

    assert result.gpus == (
        GPU(
            vendor="intel",
            name="Intel Alder Lake-P GT2 [Iris Xe Graphics]",
            memory_total_bytes=None,
            unified_memory=True,
            pci_bus_id="0000:00:02.0",
            pci_id="8086:46a6",
            source="sysfs /sys/class/drm/card0/device",
        ),
    )
    assert result.notes == (Note("intel", "info", "card0: integrated GPU shares system RAM"),)


def test_xe_integrated_gpu_with_tile_folder(tmp_path: Path) -> None:
    """xe creates tile0/ on integrated GPUs too, without a VRAM size in it."""
    add_card(tmp_path, "card1", "0000:00:02.0", "64a0", "xe", files={"tile0/gt0/freq0/cur_freq": "400\n"})

    (gpu,) = probe(tmp_path).gpus

    assert (gpu.unified_memory, gpu.memory_total_bytes) == (True, None)
    assert gpu.name == "Intel GPU 8086:64a0"  # no pci.ids installed


def test_arc_on_mainline_i915_has_unknown_vram(tmp_path: Path) -> None:
    add_card(tmp_path, "card1", "0000:03:00.0", "56a0", "i915")
    write(tmp_path / "usr/share/misc/pci.ids", PCI_IDS)

    result = probe(tmp_path)
    (gpu,) = result.gpus

    assert gpu.name == "Intel DG2 [Arc A770]"
    assert (gpu.memory_total_bytes, gpu.unified_memory) == (None, False)
    assert result.notes == (
        Note(
            "intel",
            "warning",
            "card1: discrete Intel GPU, but the i915 driver publishes no VRAM size in sysfs; "
            "its memory is unknown",
        ),
    )


def test_arc_on_backport_i915_reads_lmem(tmp_path: Path) -> None:
    card = add_card(
        tmp_path,
        "card0",
        "0000:03:00.0",
        "56a0",
        "i915",
        files={"hwmon/hwmon2/power1_max": "190000000\n", "hwmon/hwmon2/power1_rated_max": "225000000\n"},
    )
    write(card / "lmem_total_bytes", "17079205888\n")
    write(card / "lmem_avail_bytes", "16500000768\n")

    result = probe(tmp_path)
    (gpu,) = result.gpus

    assert (gpu.memory_total_bytes, gpu.memory_free_bytes, gpu.unified_memory) == (
        17079205888,
        16500000768,
        False,
    )
    assert (gpu.power_limit_watts, gpu.power_default_limit_watts) == (190.0, 225.0)
    assert result.notes == ()


def test_arc_on_xe_reads_tile_vram(tmp_path: Path) -> None:
    add_card(
        tmp_path,
        "card0",
        "0000:03:00.0",
        "e20b",
        "xe",
        files={"tile0/physical_vram_size_bytes": "12884901888\n"},
    )
    write(tmp_path / "usr/share/hwdata/pci.ids", PCI_IDS)

    (gpu,) = probe(tmp_path).gpus

    assert gpu.name == "Intel Battlemage G21 [Arc B580]"
    assert (gpu.memory_total_bytes, gpu.memory_free_bytes, gpu.unified_memory) == (12884901888, None, False)


def test_other_vendors_and_drivers(tmp_path: Path) -> None:
    add_card(tmp_path, "card0", "0000:00:02.0", "46a6", "vfio-pci")
    amd = tmp_path / "sys/devices/pci0000:00/0000:0c:00.0"
    write(amd / "uevent", "DRIVER=amdgpu\nPCI_ID=1002:73BF\n")
    (tmp_path / "sys/class/drm/card1").mkdir()
    (tmp_path / "sys/class/drm/card1/device").symlink_to("../../../devices/pci0000:00/0000:0c:00.0")

    result = probe(tmp_path)

    assert result.gpus == ()
    assert result.notes == (Note("intel", "info", "card0: Intel GPU with driver 'vfio-pci', not i915/xe"),)


def test_no_drm_folder(tmp_path: Path) -> None:
    assert probe(tmp_path) == VendorResult()


def test_display_devices(tmp_path: Path) -> None:
    add_card(tmp_path, "card0", "0000:00:02.0", "46a6", "i915")
    pci = tmp_path / "sys/bus/pci/devices"
    pci.mkdir(parents=True)
    (pci / "0000:00:02.0").symlink_to("../../../devices/pci0000:00/0000:00:02.0")
    nvidia = pci / "0000:01:00.0"  # a 3D controller (0x0302) with no driver bound
    for name, text in {"vendor": "0x10de\n", "device": "0x2684\n", "class": "0x030200\n"}.items():
        write(nvidia / name, text)
    nic = pci / "0000:02:00.0"
    for name, text in {"vendor": "0x8086\n", "device": "0x125c\n", "class": "0x020000\n"}.items():
        write(nic / name, text)

    assert display_devices(ProbeContext(root=tmp_path)) == [
        PciDevice("0000:00:02.0", "8086", "46a6", "i915"),
        PciDevice("0000:01:00.0", "10de", "2684", None),
    ]
    assert display_devices(ProbeContext(root=tmp_path / "nowhere")) == []
