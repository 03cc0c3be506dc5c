r"""The Windows registry GPU probe against recorded display-adapter keys.

Each adapter is the value set of one ``HKLM\SYSTEM\CurrentControlSet\Control\Class\
{4d36e968-e325-11ce-bfc1-08002be10318}\NNNN`` key as ``winreg`` returns it: REG_SZ as ``str``,
REG_DWORD/REG_QWORD as ``int``, REG_BINARY as ``bytes``.
"""

from __future__ import annotations

from typing import Any

import pytest

from rigcheck.core.probe import _windows
from rigcheck.core.probe._common import ProbeContext, VendorResult

GIB = 1024**3
MIB = 1024**2
CLASS_KEY = _windows.CLASS_KEY

# -- recorded adapters -------------------------------------------------------------------------

# The machine of https://github.com/oshi/oshi/issues/2521: an RTX 4090 whose WMI AdapterRAM reads
# 4293918720 next to an Intel UHD Graphics 770. The registry values are constructed: 24 GiB =
# 25769803776 for the 4090 (PCI 10de:2684), 128 MiB of dedicated carve-out for the UHD 770
# (PCI 8086:4680, named so in intel/compute-runtime shared/source/dll/devices/devices_base.inl).
# Driver 32.0.15.6094 is NVIDIA 560.94 (a version seen in many public fixtures).
INTEL_UHD_770: dict[str, object] = {
    "DriverDesc": "Intel(R) UHD Graphics 770",
    "ProviderName": "Intel Corporation",
    "DriverVersion": "31.0.101.4502",
    "MatchingDeviceId": "PCI\\VEN_8086&DEV_4680",
    "HardwareInformation.qwMemorySize": 128 * MIB,
    "HardwareInformation.MemorySize": 128 * MIB,
}
RTX_4090: dict[str, object] = {
    "DriverDesc": "NVIDIA GeForce RTX 4090",
    "ProviderName": "NVIDIA",
    "DriverVersion": "32.0.15.6094",
    "MatchingDeviceId": "pci\\ven_10de&dev_2684",
    "HardwareInformation.qwMemorySize": 25769803776,
    "HardwareInformation.MemorySize": 0xFFF0_0000,
}

# Recorded with `reg query` on Windows 11 (RamazanKara/vramwatch internal/gpu/winparse_test.go):
# qwMemorySize 0x4ff000000 and MatchingDeviceId PCI\VEN_1002&DEV_744C&SUBSYS_79051EAE&REV_CC.
# The 32-bit MemorySize (its ceiling) and the driver version are constructed.
RX_7900_XT: dict[str, object] = {
    "DriverDesc": "AMD Radeon RX 7900 XT",
    "ProviderName": "Advanced Micro Devices, Inc.",
    "DriverVersion": "31.0.24033.1003",
    "MatchingDeviceId": "PCI\\VEN_1002&DEV_744C&SUBSYS_79051EAE&REV_CC",
    "HardwareInformation.qwMemorySize": 0x4FF000000,
    "HardwareInformation.MemorySize": 0xFFF0_0000,
}

# Intel drivers often write only the 32-bit size, as REG_BINARY (an Intel entry "doesn't have
# HardwareInformation.qwMemorySize": https://github.com/glpi-project/glpi-agent/issues/199; the
# REG_BINARY "00F0FF7F" for an Iris Xe 8086:9A49 is from a public reg-query test fixture).
IRIS_XE_BINARY_ONLY: dict[str, object] = {
    "DriverDesc": "Intel(R) Iris(R) Xe Graphics",
    "DriverVersion": "32.0.101.7092",
    "MatchingDeviceId": "PCI\\VEN_8086&DEV_9A49",
    "HardwareInformation.MemorySize": bytes.fromhex("00F0FF7F"),
}

# Constructed: an Arc A770 16 GB (8086:56A0, a DG2 id in intel/compute-runtime).
ARC_A770: dict[str, object] = {
    "DriverDesc": "Intel(R) Arc(TM) A770 Graphics",
    "MatchingDeviceId": "PCI\\VEN_8086&DEV_56A0&SUBSYS_10208086&REV_08",
    "HardwareInformation.qwMemorySize": 16 * GIB,
}

# Adapters that are not GPUs. Basic Display Adapter and remote display ids are constructed; the
# sudovda virtual display id is from the vramwatch fixture above.
BASIC_DISPLAY: dict[str, object] = {
    "DriverDesc": "Microsoft Basic Display Adapter",
    "MatchingDeviceId": "PCI\\CC_0300",
    "HardwareInformation.qwMemorySize": 0,
}
HYPER_V_VIDEO: dict[str, object] = {
    "DriverDesc": "Microsoft Hyper-V Video",
    "MatchingDeviceId": "VMBUS\\{DA0A7802-E377-4AAC-8E77-0558EB1073F8}",
}
BASIC_DISPLAY_VEN_1414: dict[str, object] = {
    "DriverDesc": "Microsoft Basic Render Driver",
    "MatchingDeviceId": "PCI\\VEN_1414&DEV_008C",
}
REMOTE_DISPLAY: dict[str, object] = {
    "DriverDesc": "Microsoft Remote Display Adapter",
    "MatchingDeviceId": "SWD\\RemoteDisplayEnum",
}
VIRTUAL_DISPLAY: dict[str, object] = {
    "DriverDesc": "SudoMaker Virtual Display Adapter",
    "MatchingDeviceId": "root\\sudomaker\\sudovda",
}
LEFTOVER_KEY: dict[str, object] = {"DriverDesc": "NVIDIA GeForce GTX 1080", "DriverVersion": "27.21.14.5671"}


class FakeRegistry:
    """A :class:`~rigcheck.core.probe._windows.RegistryReader` over recorded values."""

    def __init__(self, adapters: dict[str, dict[str, object] | OSError]) -> None:
        self.adapters = adapters
        self.read: list[str] = []

    def subkeys(self, path: str) -> list[str]:
        assert path == CLASS_KEY
        # Real class keys also hold "Configuration" and "Properties" (the latter is access-denied).
        return [*self.adapters, "Configuration", "Properties"]

    def values(self, path: str) -> dict[str, object]:
        parent, _, name = path.rpartition("\\")
        assert parent == CLASS_KEY
        self.read.append(name)
        found = self.adapters[name]
        if isinstance(found, OSError):
            raise found
        return dict(found)


def probe(registry: _windows.RegistryReader) -> tuple[VendorResult, list[str]]:
    result = _windows.probe_gpus(ProbeContext(platform="win32"), registry=registry)
    return result, [note.message for note in result.notes]


# -- GPUs --------------------------------------------------------------------------------------


def test_nvidia_card_and_intel_integrated_graphics() -> None:
    result, messages = probe(FakeRegistry({"0000": INTEL_UHD_770, "0001": RTX_4090}))

    intel, nvidia = result.gpus
    assert nvidia.vendor == "nvidia"
    assert nvidia.name == "NVIDIA GeForce RTX 4090"
    assert nvidia.memory_total_bytes == 24 * GIB  # not WMI's 4293918720
    assert nvidia.pci_id == "10de:2684"
    assert nvidia.unified_memory is False
    assert nvidia.memory_free_bytes is None
    assert nvidia.source == "registry"

    assert intel.vendor == "intel"
    assert intel.name == "Intel(R) UHD Graphics 770"
    assert intel.pci_id == "8086:4680"
    assert intel.unified_memory is True
    assert intel.memory_total_bytes == 128 * MIB
    assert any("integrated graphics" in m and "128 MiB" in m and "carve-out" in m for m in messages)

    assert result.drivers.nvidia == "560.94"
    assert result.drivers.amdgpu is None
    assert "Intel(R) UHD Graphics 770: Windows driver version 31.0.101.4502" in messages
    assert "the registry does not say how much GPU memory is free" in messages
    assert all(note.probe == "windows" for note in result.notes)
    assert not [n for n in result.notes if n.level != "info"]


def test_amd_card_over_4_gib_reads_the_64_bit_size() -> None:
    result, messages = probe(FakeRegistry({"0001": RX_7900_XT}))

    (amd,) = result.gpus
    assert amd.vendor == "amd"
    assert amd.memory_total_bytes == 21458059264  # 0x4ff000000, about 20 GiB
    assert amd.pci_id == "1002:744c"
    assert amd.unified_memory is False
    assert result.drivers.amdgpu is None  # the Linux kernel driver field stays empty on Windows
    assert "AMD Radeon RX 7900 XT: Windows driver version 31.0.24033.1003" in messages
    assert not any("32-bit" in m for m in messages)


def test_without_the_64_bit_size_the_4_gib_cap_is_noted() -> None:
    capped = {k: v for k, v in RX_7900_XT.items() if k != "HardwareInformation.qwMemorySize"}
    result, _ = probe(FakeRegistry({"0000": capped}))

    assert result.gpus[0].memory_total_bytes == 0xFFF0_0000
    (warning,) = [n for n in result.notes if n.level == "warning"]
    assert "32-bit" in warning.message and "4 GiB" in warning.message and "likely has more" in warning.message


def test_intel_binary_memory_size_is_decoded() -> None:
    result, messages = probe(FakeRegistry({"0000": IRIS_XE_BINARY_ONLY}))

    (intel,) = result.gpus
    assert intel.memory_total_bytes == 0x7FFFF000  # little-endian 00 F0 FF 7F
    assert intel.unified_memory is True
    assert any("HardwareInformation.MemorySize" in m and "4 GiB" in m for m in messages)
    assert not [n for n in result.notes if n.level == "warning"]  # well under the cap: info only


def test_intel_arc_discrete_card_is_not_unified() -> None:
    result, _ = probe(FakeRegistry({"0000": ARC_A770}))

    (arc,) = result.gpus
    assert (arc.vendor, arc.pci_id, arc.memory_total_bytes) == ("intel", "8086:56a0", 16 * GIB)
    assert arc.unified_memory is False


def test_qword_stored_as_binary_is_decoded() -> None:
    # Some drivers write qwMemorySize as an 8-byte REG_BINARY (see Jinjinov/Hardware.Info#41).
    card = {**RTX_4090, "HardwareInformation.qwMemorySize": (12 * GIB).to_bytes(8, "little")}
    result, _ = probe(FakeRegistry({"0000": card}))
    assert result.gpus[0].memory_total_bytes == 12 * GIB


def test_no_memory_values_at_all_is_a_warning() -> None:
    bare = {k: v for k, v in RTX_4090.items() if not k.startswith("HardwareInformation")}
    result, messages = probe(FakeRegistry({"0000": bare}))
    assert result.gpus[0].memory_total_bytes is None
    assert "NVIDIA GeForce RTX 4090: the registry gives no memory size" in messages


# -- adapters that are not GPUs ------------------------------------------------------------------


def test_basic_display_remote_virtual_and_leftover_adapters_are_skipped() -> None:
    registry = FakeRegistry(
        {
            "0000": BASIC_DISPLAY,
            "0001": HYPER_V_VIDEO,
            "0002": BASIC_DISPLAY_VEN_1414,
            "0003": REMOTE_DISPLAY,
            "0004": VIRTUAL_DISPLAY,
            "0005": LEFTOVER_KEY,
            "0006": RX_7900_XT,
        }
    )
    result, messages = probe(registry)

    assert [g.name for g in result.gpus] == ["AMD Radeon RX 7900 XT"]
    assert any("Microsoft Basic Display Adapter" in m and "without its driver" in m for m in messages)
    assert "Configuration" not in registry.read and "Properties" not in registry.read


def test_unknown_pci_vendor_is_skipped_with_a_note() -> None:
    aspeed: dict[str, object] = {
        "DriverDesc": "ASPEED Graphics Family(WDDM)",
        "MatchingDeviceId": "PCI\\VEN_1A03&DEV_2000",
    }
    result, messages = probe(FakeRegistry({"0000": aspeed}))
    assert result.gpus == ()
    assert any("ASPEED" in m and "1a03" in m for m in messages)


# -- failures --------------------------------------------------------------------------------------


def test_winreg_unavailable_is_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_winreg() -> Any:
        raise ImportError("No module named 'winreg'")

    monkeypatch.setattr(_windows, "_import_winreg", no_winreg)
    result = _windows.probe_gpus(ProbeContext(platform="win32"))

    assert result.gpus == ()
    (note,) = result.notes
    assert note.level == "warning" and "winreg" in note.message


def test_a_key_that_refuses_access_is_noted_and_the_others_still_read() -> None:
    denied = PermissionError(13, "Access is denied")
    result, messages = probe(FakeRegistry({"0000": INTEL_UHD_770, "0001": denied, "0002": RX_7900_XT}))

    assert [g.name for g in result.gpus] == ["Intel(R) UHD Graphics 770", "AMD Radeon RX 7900 XT"]
    assert any(
        f"HKLM\\{CLASS_KEY}\\0001" in m and "permission denied" in m and "left out" in m for m in messages
    )


def test_a_class_key_that_cannot_be_listed_is_a_note() -> None:
    class Unlistable(FakeRegistry):
        def subkeys(self, path: str) -> list[str]:
            raise FileNotFoundError(2, "The system cannot find the file specified")

    result, messages = probe(Unlistable({}))
    assert result.gpus == ()
    assert any("cannot list the display adapters" in m and "cannot find the file" in m for m in messages)


# -- the winreg adapter ----------------------------------------------------------------------------


class FakeWinreg:
    """The few ``winreg`` calls :class:`WinregReader` makes, over a dict of key paths."""

    HKEY_LOCAL_MACHINE = object()

    class Key:
        def __init__(self, subkeys: list[str], values: list[tuple[str, object, int]]) -> None:
            self.subkeys, self.values = subkeys, values

        def __enter__(self) -> FakeWinreg.Key:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

    def __init__(self, tree: dict[str, dict[str, object] | OSError]) -> None:
        self.tree = tree

    def OpenKey(self, root: object, path: str) -> FakeWinreg.Key:
        assert root is self.HKEY_LOCAL_MACHINE
        if path == CLASS_KEY:
            return self.Key([*self.tree, "Properties"], [])
        found = self.tree.get(path.rpartition("\\")[2])
        if found is None:
            raise PermissionError(5, "Access is denied")  # as for the real "Properties" subkey
        if isinstance(found, OSError):
            raise found
        return self.Key([], [(name, data, 0) for name, data in found.items()])

    @staticmethod
    def QueryInfoKey(key: FakeWinreg.Key) -> tuple[int, int, int]:
        return len(key.subkeys), len(key.values), 0

    @staticmethod
    def EnumKey(key: FakeWinreg.Key, index: int) -> str:
        return key.subkeys[index]

    @staticmethod
    def EnumValue(key: FakeWinreg.Key, index: int) -> tuple[str, object, int]:
        return key.values[index]


def test_winreg_reader_end_to_end(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeWinreg(
        {"0000": INTEL_UHD_770, "0001": RTX_4090, "0002": PermissionError(5, "Access is denied")}
    )
    monkeypatch.setattr(_windows, "_import_winreg", lambda: fake)

    result = _windows.probe_gpus(ProbeContext(platform="win32"))

    assert [(g.vendor, g.memory_total_bytes) for g in result.gpus] == [
        ("intel", 128 * MIB),
        ("nvidia", 24 * GIB),
    ]
    assert any("0002" in n.message and "permission denied" in n.message for n in result.notes)


def test_winreg_reader_lists_and_reads_keys() -> None:
    reader = _windows.WinregReader(FakeWinreg({"0000": RX_7900_XT}))
    assert reader.subkeys(CLASS_KEY) == ["0000", "Properties"]
    assert reader.values(f"{CLASS_KEY}\\0000") == RX_7900_XT
    with pytest.raises(PermissionError):
        reader.values(f"{CLASS_KEY}\\Properties")


# -- driver versions -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("windows", "nvidia"),
    [
        ("32.0.15.6094", "560.94"),
        ("31.0.15.3667", "536.67"),
        ("27.21.14.5671", "456.71"),
        ("32.0.16.1714", "617.14"),
        ("not a version", None),
        ("1.2.3", None),
    ],
)
def test_nvidia_driver_version_from_the_windows_one(windows: str, nvidia: str | None) -> None:
    assert _windows.nvidia_driver_version(windows) == nvidia
