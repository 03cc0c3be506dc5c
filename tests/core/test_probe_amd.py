"""The AMD sysfs probe, on real amdgpu attribute files (tests/fixtures/amdgpu, see its README).

Each test builds a fake root in ``tmp_path``: the card's PCI device folder under
``sys/devices/pci0000:00/<address>`` with ``sys/class/drm/cardN/device`` linking to it, as the kernel
lays it out, plus whatever KFD topology, ROCm install and ID databases the case needs.
"""

from __future__ import annotations

import os
import shutil
import types
from pathlib import Path

import pytest

from rigcheck.core.machine import GPU, Drivers, Note
from rigcheck.core.probe import _amd
from rigcheck.core.probe._common import Notes, ProbeContext, VendorResult

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "amdgpu"
GIB = 1024**3

# Real lines of libdrm's data/amdgpu.ids (MIT), which the probe reads from /usr/share/libdrm.
AMDGPU_IDS = """\
# List of AMDGPU IDs
#
# Syntax:
# device_id,\trevision_id,\tproduct_name        <-- single tab after comma

1.0.0
67DF,\tE7,\tAMD Radeon RX 580 Series
73BF,\tC0,\tAMD Radeon RX 6900 XT
73BF,\tC1,\tAMD Radeon RX 6800 XT
744C,\tC8,\tAMD Radeon RX 7900 XTX
744C,\tCC,\tAMD Radeon RX 7900 XT
7550,\tC0,\tAMD Radeon RX 9070 XT
7550,\tC3,\tAMD Radeon RX 9070
"""

# Real lines of the PCI ID Repository's pci.ids (version 2026.08.22; GPL-2.0+ or BSD-3-Clause).
PCI_IDS = """\
1002  Advanced Micro Devices, Inc. [AMD/ATI]
\t13c0  Granite Ridge [Radeon Graphics]
\t744c  Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]
1022  Advanced Micro Devices, Inc. [AMD]
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def add_card(
    root: Path,
    card: str,
    bus_id: str,
    fixture: str | None = None,
    files: dict[str, str] | None = None,
    *,
    symlink: bool = True,
) -> Path:
    """Install a device tree for ``sys/class/drm/<card>``; returns its ``device`` folder."""
    card_dir = root / "sys/class/drm" / card
    card_dir.mkdir(parents=True)
    device = root / "sys/devices/pci0000:00" / bus_id if symlink else card_dir / "device"
    if fixture:
        shutil.copytree(FIXTURES / fixture, device)
    device.mkdir(parents=True, exist_ok=True)
    for name, text in (files or {}).items():
        write(device / name, text)
    if symlink:
        (card_dir / "device").symlink_to(os.path.relpath(device, card_dir))
    return device


def add_kfd_node(root: Path, index: int, **props: int) -> None:
    """A KFD topology node; GPU nodes carry gfx_target_version, location_id and the like."""
    defaults = {"cpu_cores_count": 0, "simd_count": 0, "mem_banks_count": 1, "simd_per_cu": 2}
    defaults |= {"gfx_target_version": 0, "vendor_id": 4098, "domain": 0, "drm_render_minor": 0}
    lines = [f"{key} {value}" for key, value in (defaults | props).items()]
    write(root / f"sys/class/kfd/kfd/topology/nodes/{index}/properties", "\n".join(lines) + "\n")


def probe(root: Path, **env: str) -> VendorResult:
    return _amd.probe_gpus(ProbeContext(root=root, platform="linux", env=env))


@pytest.fixture(autouse=True)
def no_amdsmi(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep a host's real amdsmi out of the tests; the amdsmi tests install a fake."""

    def missing() -> types.ModuleType:
        raise ImportError("amdsmi")

    monkeypatch.setattr(_amd, "_load_amdsmi", missing)


# -- real cards ------------------------------------------------------------------------------------


def test_rx6900xt_nul_padded_files(tmp_path: Path) -> None:
    raw = (FIXTURES / "rx6900xt/mem_info_vram_total").read_bytes()
    assert len(raw) == 4096 and raw.count(b"\x00") > 4000  # the fixture really is padded

    add_card(tmp_path, "card0", "0000:0c:00.0", "rx6900xt")
    add_kfd_node(tmp_path, 0, cpu_cores_count=16)
    add_kfd_node(
        tmp_path, 1, gfx_target_version=100300, simd_count=160, location_id=0x0C00, drm_render_minor=128
    )
    write(tmp_path / "usr/share/libdrm/amdgpu.ids", AMDGPU_IDS)
    write(tmp_path / "opt/rocm/.info/version", "6.1.2-112\n")

    result = probe(tmp_path)

    assert result.gpus == (
        GPU(
            vendor="amd",
            name="AMD Radeon RX 6900 XT",
            memory_total_bytes=17163091968,
            memory_free_bytes=17163091968 - 668274688,
            unified_memory=False,
            uuid="946d7e1ef9b172dd",
            pci_bus_id="0000:0c:00.0",
            pci_id="1002:73bf",
            gfx_target="gfx1030",
            cores=80,
            power_limit_watts=289.0,
            power_default_limit_watts=289.0,
            power_max_limit_watts=332.0,
            pcie_gen=4,
            pcie_width=16,
            pcie_max_gen=4,
            pcie_max_width=16,
            source="sysfs /sys/class/drm/card0/device",
        ),
    )
    assert result.drivers == Drivers(amdgpu=None, rocm="6.1.2")
    assert result.notes == (
        Note("amd", "info", "amdgpu is the kernel's in-tree driver (no separate driver version)"),
    )


def test_rx7900xt_partial_tree(tmp_path: Path) -> None:
    """No device, revision or mem_info files: the id comes from the uevent, the name from pci.ids."""
    add_card(tmp_path, "card0", "0000:03:00.0", "rx7900xt")
    add_kfd_node(tmp_path, 1, gfx_target_version=110000, simd_count=168, location_id=0x0300)
    write(tmp_path / "usr/share/libdrm/amdgpu.ids", AMDGPU_IDS)  # 744C has several names: unusable
    write(tmp_path / "usr/share/hwdata/pci.ids", PCI_IDS)

    (gpu,) = probe(tmp_path).gpus

    assert gpu.pci_id == "1002:744c"
    assert gpu.name == "AMD Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]"
    assert (gpu.gfx_target, gpu.cores) == ("gfx1100", 84)
    assert (gpu.memory_total_bytes, gpu.memory_free_bytes, gpu.unified_memory) == (None, None, None)
    assert (gpu.pcie_gen, gpu.pcie_width, gpu.pcie_max_gen, gpu.pcie_max_width) == (4, 16, None, None)
    assert (gpu.power_limit_watts, gpu.power_default_limit_watts, gpu.power_max_limit_watts) == (
        290.0,
        290.0,
        333.0,
    )
    assert Note("amd", "warning", "card0: VRAM size unknown (no readable mem_info_vram_total)") in (
        probe(tmp_path).notes
    )


def test_rx9070xt_pcie5_and_fallback_name(tmp_path: Path) -> None:
    add_card(tmp_path, "card1", "0000:09:00.0", "rx9070xt")
    add_kfd_node(tmp_path, 1, gfx_target_version=120001, simd_count=128, location_id=0x0900)
    write(tmp_path / "usr/share/libdrm/amdgpu.ids", AMDGPU_IDS)  # 7550: two names, no revision file

    (gpu,) = probe(tmp_path).gpus

    assert gpu.name == "AMD GPU 1002:7550"
    assert (gpu.pcie_gen, gpu.pcie_width) == (5, 16)
    assert (gpu.gfx_target, gpu.cores) == ("gfx1201", 64)
    assert gpu.power_limit_watts == 330.0
    assert gpu.source == "sysfs /sys/class/drm/card1/device"


def test_rx580_polaris_without_kfd(tmp_path: Path) -> None:
    """No KFD topology: the gfx target stays unknown rather than guessed from the name."""
    add_card(tmp_path, "card0", "0000:09:00.0", "rx580")
    write(tmp_path / "usr/share/libdrm/amdgpu.ids", AMDGPU_IDS)

    (gpu,) = probe(tmp_path).gpus

    assert gpu.name == "AMD Radeon RX 580 Series"  # revision 0xe7, empty product_name
    assert (gpu.gfx_target, gpu.cores) == (None, None)
    assert gpu.memory_total_bytes == 4 * GIB
    assert gpu.memory_free_bytes == 4 * GIB - 536870912
    # 4 GiB and a larger GTT, but mem_info_vram_vendor exists: a discrete card, not an APU.
    assert gpu.unified_memory is False
    assert (gpu.pcie_gen, gpu.pcie_width, gpu.pcie_max_gen, gpu.pcie_max_width) == (3, 16, 3, 16)
    assert (gpu.power_limit_watts, gpu.power_max_limit_watts) == (155.0, 201.0)
    assert gpu.uuid is None


def test_apu_carve_out(tmp_path: Path) -> None:
    """A Raphael/Granite Ridge iGPU (figures from amdgpu_top's dump.json): 512 MiB carve-out + GTT."""
    device = add_card(
        tmp_path,
        "card1",
        "0000:13:00.0",
        files={
            "vendor": "0x1002\n",
            "device": "0x13c0\n",
            "revision": "0xc6\n",
            "mem_info_vram_total": "536870912\n",
            "mem_info_vram_used": "487604224\n",
            "mem_info_gtt_total": "16360906752\n",
            "mem_info_vis_vram_total": "536870912\n",
        },
    )
    (device / "driver").symlink_to("../../../bus/pci/drivers/amdgpu")  # dangling is fine
    add_kfd_node(tmp_path, 0, cpu_cores_count=16)
    add_kfd_node(tmp_path, 1, gfx_target_version=100306, simd_count=4, location_id=0x1300)
    write(tmp_path / "usr/share/misc/pci.ids", PCI_IDS)

    result = probe(tmp_path)
    (gpu,) = result.gpus

    assert gpu.pci_bus_id == "0000:13:00.0"  # from the symlink's target; there is no uevent
    assert gpu.name == "AMD Granite Ridge [Radeon Graphics]"
    assert (gpu.memory_total_bytes, gpu.unified_memory) == (536870912, True)
    assert gpu.memory_shared_bytes == 16360906752  # the GTT pool, which the estimator adds to the carve-out
    assert (gpu.gfx_target, gpu.cores) == ("gfx1036", 2)
    assert gpu.pcie_gen is None
    assert (
        Note(
            "amd",
            "info",
            "card1: APU: VRAM is the BIOS carve-out; the GPU can also use up to 15.2 GiB of system RAM (GTT)",
        )
        in result.notes
    )


def test_two_cards_and_connectors(tmp_path: Path) -> None:
    add_card(tmp_path, "card0", "0000:09:00.0", "rx580")
    add_card(tmp_path, "card1", "0000:0c:00.0", "rx6900xt")
    for other in ("card0-DP-1", "card1-HDMI-A-1", "renderD128", "renderD129"):
        (tmp_path / "sys/class/drm" / other).mkdir()
    write(tmp_path / "sys/class/drm/version", "drm 1.1.0 20060810\n")
    # KFD numbers nodes in its own order: the 6900 XT first here.
    add_kfd_node(tmp_path, 1, gfx_target_version=100300, simd_count=160, location_id=0x0C00)
    add_kfd_node(tmp_path, 2, gfx_target_version=80003, simd_count=144, simd_per_cu=4, location_id=0x0900)

    gpus = probe(tmp_path).gpus

    assert [(g.source, g.pci_bus_id, g.gfx_target) for g in gpus] == [
        ("sysfs /sys/class/drm/card0/device", "0000:09:00.0", "gfx803"),
        ("sysfs /sys/class/drm/card1/device", "0000:0c:00.0", "gfx1030"),
    ]
    assert gpus[0].cores == 36


def test_device_as_plain_folder_and_kfd_by_render_minor(tmp_path: Path) -> None:
    """A copied tree (no symlink, no PCI_SLOT_NAME): the bus is unknown, KFD matches by render minor."""
    add_card(
        tmp_path,
        "card0",
        "unused",
        "rx9070xt",
        files={"uevent": "DRIVER=amdgpu\nPCI_ID=1002:7550\n", "drm/renderD129/dev": "226:129\n"},
        symlink=False,
    )
    add_kfd_node(tmp_path, 1, gfx_target_version=110000, location_id=0x0300, drm_render_minor=128)
    add_kfd_node(tmp_path, 2, gfx_target_version=120001, location_id=0x0900, drm_render_minor=129)

    (gpu,) = probe(tmp_path).gpus

    assert gpu.pci_bus_id is None
    assert gpu.gfx_target == "gfx1201"


# -- what goes wrong -------------------------------------------------------------------------------


def test_no_drm_folder(tmp_path: Path) -> None:
    assert probe(tmp_path) == VendorResult()


def test_missing_files_are_silent(tmp_path: Path) -> None:
    add_card(tmp_path, "card0", "0000:03:00.0", files={"uevent": "DRIVER=amdgpu\nPCI_ID=1002:744C\n"})

    result = probe(tmp_path)

    assert result.gpus == (
        GPU(
            vendor="amd",
            name="AMD GPU 1002:744c",
            memory_total_bytes=None,
            pci_bus_id="0000:03:00.0",
            pci_id="1002:744c",
            source="sysfs /sys/class/drm/card0/device",
        ),
    )
    assert [n.level for n in result.notes] == ["warning", "info"]  # VRAM unknown, in-tree driver


def test_permission_denied_names_the_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Root reads through chmod 000, so the refusal is simulated at Path.read_bytes."""
    device = add_card(tmp_path, "card0", "0000:09:00.0", "rx580")
    denied = tmp_path / "sys/class/drm/card0/device/mem_info_vram_total"
    real_read_bytes = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self == denied:
            raise PermissionError(13, "Permission denied", str(self))
        return real_read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    (device / "unique_id").mkdir()  # a folder where a file should be: IsADirectoryError

    result = probe(tmp_path)
    (gpu,) = result.gpus

    assert (gpu.memory_total_bytes, gpu.memory_free_bytes, gpu.uuid) == (None, None, None)
    assert gpu.power_limit_watts == 155.0  # the rest still read
    messages = [n.message for n in result.notes if n.level == "warning"]
    assert f"permission denied reading {denied}" in messages
    assert any(m.startswith("cannot read ") and m.endswith("unique_id: Is a directory") for m in messages)


def test_other_driver_is_skipped_with_a_note(tmp_path: Path) -> None:
    add_card(tmp_path, "card0", "0000:01:00.0", files={"uevent": "DRIVER=radeon\nPCI_ID=1002:6798\n"})
    add_card(tmp_path, "card1", "0000:02:00.0", files={"vendor": "0x10de\n", "uevent": "DRIVER=nvidia\n"})

    result = probe(tmp_path)

    assert result.gpus == ()
    assert result.notes == (Note("amd", "info", "card0: AMD GPU with driver 'radeon', not amdgpu"),)


def test_driver_version_and_gfx_override(tmp_path: Path) -> None:
    add_card(tmp_path, "card0", "0000:09:00.0", "rx580")
    write(tmp_path / "sys/module/amdgpu/version", "6.7.0\n")

    result = probe(tmp_path, HSA_OVERRIDE_GFX_VERSION="10.3.0")

    assert result.drivers == Drivers(amdgpu="6.7.0")
    assert [n.message for n in result.notes] == [
        "HSA_OVERRIDE_GFX_VERSION=10.3.0 is set: ROCm treats the GPUs as that gfx version"
    ]


# -- pieces ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "name"),
    [(80003, "gfx803"), (90010, "gfx90a"), (90402, "gfx942"), (100300, "gfx1030"), (110000, "gfx1100")],
)
def test_gfx_name(version: int, name: str) -> None:
    assert _amd.gfx_name(version) == name


@pytest.mark.parametrize(
    ("files", "env", "expected"),
    [
        ({"opt/rocm/.info/version": "6.0.2-115\n"}, {}, "6.0.2"),
        ({"opt/rocm/.info/version-dev": "5.7.1-98\n"}, {}, "5.7.1"),
        (
            {
                "opt/rocm/include/rocm-core/rocm_version.h": (
                    "#ifndef ROCM_VERSION_H\n#define ROCM_VERSION_MAJOR   6\n"
                    "#define ROCM_VERSION_MINOR   1\n#define ROCM_VERSION_PATCH   2\n#endif\n"
                )
            },
            {},
            "6.1.2",
        ),
        ({"opt/rocm-5.7.1/bin/x": "", "opt/rocm-6.10.0/bin/x": "", "opt/rocm-6.2.4/bin/x": ""}, {}, "6.10.0"),
        (
            {"opt/rocm/.info/version": "6.0.2\n", "usr/lib/rocm/.info/version": "6.3.1\n"},
            {"ROCM_PATH": "/usr/lib/rocm"},
            "6.3.1",
        ),
        ({"opt/rocm/.info/version": "garbage\n"}, {}, None),
        ({}, {}, None),
    ],
)
def test_rocm_version_sources(
    tmp_path: Path, files: dict[str, str], env: dict[str, str], expected: str | None
) -> None:
    for name, text in files.items():
        write(tmp_path / name, text)
    ctx = ProbeContext(root=tmp_path, platform="linux", env=env)
    assert _amd.rocm_version(ctx, Notes("amd")) == expected


def test_rocm_reported_without_amd_gpu(tmp_path: Path) -> None:
    write(tmp_path / "opt/rocm/.info/version", "6.1.2\n")
    assert probe(tmp_path) == VendorResult(drivers=Drivers(rocm="6.1.2"))


# -- amdsmi ----------------------------------------------------------------------------------------


def fake_amdsmi(fail: bool = False) -> types.SimpleNamespace:
    """The few amdsmi calls the probe makes, with amdsmi's spelling of their results."""
    calls: list[str] = []

    def init() -> None:
        calls.append("init")
        if fail:
            raise RuntimeError("AMDSMI_STATUS_DRIVER_NOT_LOADED")

    return types.SimpleNamespace(
        calls=calls,
        amdsmi_init=init,
        amdsmi_shut_down=lambda: calls.append("shut_down"),
        amdsmi_get_processor_handles=lambda: ["handle0"],
        amdsmi_get_gpu_device_bdf=lambda handle: "0000:0C:00.0",
        amdsmi_get_gpu_asic_info=lambda handle: {
            "market_name": "AMD Radeon RX 6900 XT (amdsmi)",
            "target_graphics_version": "gfx1030",
        },
    )


def test_amdsmi_names_and_targets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    smi = fake_amdsmi()
    monkeypatch.setattr(_amd, "_load_amdsmi", lambda: smi)
    add_card(tmp_path, "card0", "0000:0c:00.0", "rx6900xt")  # no KFD, no amdgpu.ids

    (gpu,) = probe(tmp_path).gpus

    assert (gpu.name, gpu.gfx_target) == ("AMD Radeon RX 6900 XT (amdsmi)", "gfx1030")
    assert gpu.memory_total_bytes == 17163091968  # still from sysfs
    assert smi.calls == ["init", "shut_down"]


def test_amdsmi_failure_falls_back_to_sysfs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_amd, "_load_amdsmi", lambda: fake_amdsmi(fail=True))
    add_card(tmp_path, "card0", "0000:0c:00.0", "rx6900xt")
    write(tmp_path / "usr/share/libdrm/amdgpu.ids", AMDGPU_IDS)

    result = probe(tmp_path)

    assert (result.gpus[0].name, result.gpus[0].gfx_target) == ("AMD Radeon RX 6900 XT", None)
    assert Note(
        "amd", "warning", "amdsmi failed (AMDSMI_STATUS_DRIVER_NOT_LOADED); using the sysfs values"
    ) in (result.notes)
