"""The macOS GPU probe against recorded ``sysctl`` and ``system_profiler`` output."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import NamedTuple

import pytest

from rigcheck.core.probe import _apple
from rigcheck.core.probe._common import ProbeContext, VendorResult

GIB = 1024**3
MIB = 1024**2

# -- recorded output ---------------------------------------------------------------------------
# system_profiler prints keys in sorted order with " : " separators; the display lists
# (spdisplays_ndrvs) are trimmed where they only describe monitors.

# Older macOS names the item by a localisation key ("kHW_AppleM1Item") and keeps the chip name in
# sppci_model. Shape as in public test fixtures of system_profiler parsers found through the code
# search index (repository not named by the index); 8 GPU cores and 8 GB as reported for a
# MacBook Air M1 in https://github.com/philipturner/applegpuinfo/issues/11.
M1_DISPLAYS = """{
  "SPDisplaysDataType" : [
    {
      "_name" : "kHW_AppleM1Item",
      "spdisplays_mtlgpufamilysupport" : "spdisplays_metal3",
      "spdisplays_ndrvs" : [
        {
          "_name" : "Color LCD",
          "_spdisplays_pixels" : "2560 x 1600",
          "_spdisplays_resolution" : "1440 x 900 @ 60.00Hz",
          "spdisplays_connection_type" : "spdisplays_internal",
          "spdisplays_display_type" : "spdisplays_built-in_retinaLCD",
          "spdisplays_main" : "spdisplays_yes",
          "spdisplays_online" : "spdisplays_yes"
        }
      ],
      "spdisplays_vendor" : "sppci_vendor_Apple",
      "sppci_bus" : "spdisplays_builtin",
      "sppci_cores" : "8",
      "sppci_device_type" : "spdisplays_gpu",
      "sppci_model" : "Apple M1"
    }
  ]
}
"""

# Recorded on an Apple M2 Max under macOS 15, as kept in a public Rust test fixture ("real
# system_profiler -json SPDisplaysDataType output") found through the code search index.
M2_MAX_DISPLAYS = """{
  "SPDisplaysDataType" : [
    {
      "_name" : "Apple M2 Max",
      "spdisplays_mtlgpufamilysupport" : "spdisplays_metal4",
      "spdisplays_ndrvs" : [
        {
          "_name" : "Color LCD",
          "spdisplays_connection_type" : "spdisplays_internal",
          "spdisplays_online" : "spdisplays_yes"
        }
      ],
      "spdisplays_vendor" : "sppci_vendor_Apple",
      "sppci_bus" : "spdisplays_builtin",
      "sppci_cores" : "30",
      "sppci_device_type" : "spdisplays_gpu",
      "sppci_model" : "Apple M2 Max"
    }
  ]
}
"""

# Shape from the M3 Pro output pasted in https://github.com/timmo001/system-bridge/pull/3408
# (displays trimmed); 18 GPU cores and 18 GB as in https://github.com/Lospi/MetalDuck/issues/16.
M3_PRO_DISPLAYS = """{
  "SPDisplaysDataType" : [
    {
      "_name" : "Apple M3 Pro",
      "spdisplays_mtlgpufamilysupport" : "spdisplays_metal3",
      "spdisplays_ndrvs" : [
        {
          "_name" : "DELL U2722DE",
          "_spdisplays_pixels" : "2560 x 1440",
          "_spdisplays_resolution" : "2560 x 1440 @ 60.00Hz",
          "spdisplays_main" : "spdisplays_yes",
          "spdisplays_mirror" : "spdisplays_off",
          "spdisplays_online" : "spdisplays_yes",
          "spdisplays_pixelresolution" : "spdisplays_qhd",
          "spdisplays_resolution" : "2560 x 1440 @ 60.00Hz",
          "spdisplays_rotation" : "spdisplays_supported"
        }
      ],
      "spdisplays_vendor" : "sppci_vendor_Apple",
      "sppci_bus" : "spdisplays_builtin",
      "sppci_cores" : "18",
      "sppci_device_type" : "spdisplays_gpu",
      "sppci_model" : "Apple M3 Pro"
    }
  ]
}
"""

# "Trimmed from real system_profiler SPDisplaysDataType -json output on a Mac mini M4" (16 GB), a
# Go test fixture found through the code search index.
M4_DISPLAYS = """{
  "SPDisplaysDataType" : [
    {
      "_name" : "Apple M4",
      "spdisplays_mtlgpufamilysupport" : "spdisplays_metal4",
      "spdisplays_vendor" : "sppci_vendor_Apple",
      "sppci_bus" : "spdisplays_builtin",
      "sppci_cores" : "10",
      "sppci_device_type" : "spdisplays_gpu",
      "sppci_model" : "Apple M4"
    }
  ]
}
"""

# An Intel MacBook Pro 16" (2019): Intel UHD Graphics 630 plus an AMD Radeon Pro 5500M 8 GB.
# Constructed: the values follow the text output in
# https://github.com/sebhildebrandt/systeminformation/issues/348 ("VRAM (Dynamic, Max): 1536 MB",
# device 0x3e9b) and public parser fixtures for the 5500M (device 0x7340, "8 GB"); the -json key
# names (spdisplays_vram, spdisplays_vram_shared, sppci_bus "spdisplays_pcie_device") are those of
# Intel-Mac fixtures in the code search index.
INTEL_MAC_DISPLAYS = """{
  "SPDisplaysDataType" : [
    {
      "_name" : "kHW_IntelUHDGraphics630Item",
      "spdisplays_automatic_graphics_switching" : "spdisplays_supported",
      "spdisplays_device-id" : "0x3e9b",
      "spdisplays_gmux-version" : "5.0.0",
      "spdisplays_mtlgpufamilysupport" : "spdisplays_metal3",
      "spdisplays_revision-id" : "0x0000",
      "spdisplays_vendor" : "sppci_vendor_intel",
      "spdisplays_vram_shared" : "1536 MB",
      "sppci_bus" : "spdisplays_builtin",
      "sppci_device_type" : "spdisplays_gpu",
      "sppci_model" : "Intel UHD Graphics 630"
    },
    {
      "_name" : "kHW_AMDRadeonPro5500MItem",
      "spdisplays_automatic_graphics_switching" : "spdisplays_supported",
      "spdisplays_device-id" : "0x7340",
      "spdisplays_gmux-version" : "5.0.0",
      "spdisplays_mtlgpufamilysupport" : "spdisplays_metal3",
      "spdisplays_pcie_width" : "x8",
      "spdisplays_revision-id" : "0x0040",
      "spdisplays_vendor" : "sppci_vendor_amd",
      "spdisplays_vram" : "8 GB",
      "sppci_bus" : "spdisplays_pcie_device",
      "sppci_device_type" : "spdisplays_gpu",
      "sppci_model" : "AMD Radeon Pro 5500M"
    }
  ]
}
"""

PROFILER = ("system_profiler", "SPDisplaysDataType", "-json")


def sysctl(key: str) -> tuple[str, ...]:
    return ("sysctl", "-n", key)


class FakeRunner:
    """Answers commands from a table; anything not in it fails, as a missing command would."""

    def __init__(self, outputs: dict[tuple[str, ...], str | None]) -> None:
        self.outputs = outputs
        self.calls: list[tuple[tuple[str, ...], float]] = []

    def __call__(self, args: Sequence[str], timeout: float) -> str | None:
        self.calls.append((tuple(args), timeout))
        return self.outputs.get(tuple(args))

    def ran(self, args: tuple[str, ...]) -> bool:
        return any(call == args for call, _timeout in self.calls)


def mac(
    displays: str | None, memsize: int | None, brand: str | None, wired_limit_mb: str | None = "0"
) -> FakeRunner:
    return FakeRunner(
        {
            sysctl("hw.memsize"): None if memsize is None else f"{memsize}\n",
            sysctl("machdep.cpu.brand_string"): None if brand is None else f"{brand}\n",
            sysctl("iogpu.wired_limit_mb"): None if wired_limit_mb is None else f"{wired_limit_mb}\n",
            PROFILER: displays,
        }
    )


def probe(runner: FakeRunner) -> tuple[VendorResult, list[str]]:
    result = _apple.probe_gpus(ProbeContext(platform="darwin", run=runner))
    return result, [note.message for note in result.notes]


# -- Apple Silicon -----------------------------------------------------------------------------


class Chip(NamedTuple):
    displays: str
    memsize: int
    name: str
    cores: int
    gpu_limit: int
    share: str


CHIPS = [
    Chip(M1_DISPLAYS, 8 * GIB, "Apple M1", 8, 8 * GIB * 2 // 3, "two thirds of 8 GiB"),
    Chip(M2_MAX_DISPLAYS, 64 * GIB, "Apple M2 Max", 30, 48 * GIB, "75% of 64 GiB"),
    Chip(M3_PRO_DISPLAYS, 18 * GIB, "Apple M3 Pro", 18, 12 * GIB, "two thirds of 18 GiB"),
    Chip(M4_DISPLAYS, 16 * GIB, "Apple M4", 10, 16 * GIB * 2 // 3, "two thirds of 16 GiB"),
]


@pytest.mark.parametrize("chip", CHIPS, ids=[c.name for c in CHIPS])
def test_m_series_without_a_wired_limit_gets_the_estimated_default(chip: Chip) -> None:
    displays, memsize, name, cores, expected_limit, share = chip
    result, messages = probe(mac(displays, memsize, name))

    (gpu,) = result.gpus
    assert gpu.vendor == "apple"
    assert gpu.name == name
    assert gpu.cores == cores
    assert gpu.unified_memory is True
    assert gpu.memory_total_bytes == expected_limit
    assert gpu.memory_free_bytes is None
    assert gpu.source == "sysctl/system_profiler"
    assert (
        f"GPU memory limit estimated as {share} unified memory "
        "(macOS default wired limit; set iogpu.wired_limit_mb to change it)"
    ) in messages
    assert any("free GPU memory is not reported" in m for m in messages)
    assert all(note.probe == "apple" for note in result.notes)
    assert not [n for n in result.notes if n.level != "info"]


def test_the_estimate_matches_recorded_metal_working_sets() -> None:
    # recommendedMaxWorkingSetSize as llama.cpp printed it (see the sources in _apple.py)
    assert _apple.default_gpu_limit(16 * GIB)[0] / MIB == pytest.approx(10922.67, abs=0.01)
    assert _apple.default_gpu_limit(32 * GIB)[0] / MIB == pytest.approx(21845.34, abs=0.01)
    assert _apple.default_gpu_limit(36 * GIB)[0] / 1e6 == pytest.approx(28991.03, abs=0.01)
    assert _apple.default_gpu_limit(48 * GIB)[0] / 1e6 == pytest.approx(38654.71, abs=0.01)
    assert _apple.default_gpu_limit(64 * GIB)[0] / 1e6 == pytest.approx(51539.61, abs=0.01)
    assert _apple.default_gpu_limit(96 * GIB)[0] / MIB == 73728


def test_a_set_wired_limit_is_the_gpu_memory() -> None:
    result, messages = probe(mac(M2_MAX_DISPLAYS, 64 * GIB, "Apple M2 Max", wired_limit_mb="57344"))

    (gpu,) = result.gpus
    assert gpu.memory_total_bytes == 56 * GIB
    assert "GPU memory limit 57344 MiB set by iogpu.wired_limit_mb" in messages
    assert not any("estimated" in m for m in messages)


def test_a_wired_limit_above_ram_counts_only_ram() -> None:
    result, _ = probe(mac(M4_DISPLAYS, 16 * GIB, "Apple M4", wired_limit_mb="65536"))

    assert result.gpus[0].memory_total_bytes == 16 * GIB
    assert any(n.level == "warning" and "iogpu.wired_limit_mb = 65536" in n.message for n in result.notes)


def test_an_unreadable_wired_limit_falls_back_to_the_estimate() -> None:
    absent, absent_messages = probe(mac(M1_DISPLAYS, 8 * GIB, "Apple M1", wired_limit_mb=None))
    garbled, _ = probe(mac(M1_DISPLAYS, 8 * GIB, "Apple M1", wired_limit_mb="unknown oid"))

    assert absent.gpus[0].memory_total_bytes == 8 * GIB * 2 // 3
    assert any("macOS before 14" in m for m in absent_messages)
    assert garbled.gpus[0].memory_total_bytes == 8 * GIB * 2 // 3
    assert any(n.level == "warning" and "iogpu.wired_limit_mb" in n.message for n in garbled.notes)


def test_missing_sysctl_leaves_memory_unknown_but_still_names_the_gpu() -> None:
    result, messages = probe(mac(M3_PRO_DISPLAYS, None, None, wired_limit_mb=None))

    (gpu,) = result.gpus
    assert gpu.name == "Apple M3 Pro"
    assert gpu.cores == 18
    assert gpu.memory_total_bytes is None
    assert "sysctl hw.memsize is not readable" in messages
    assert any("GPU memory limit is unknown" in m for m in messages)


def test_no_commands_at_all_is_notes_not_an_exception() -> None:
    result, messages = probe(FakeRunner({}))

    assert result.gpus == ()
    assert "system_profiler SPDisplaysDataType failed or is missing; GPU details unknown" in messages
    assert "sysctl hw.memsize is not readable" in messages


@pytest.mark.parametrize(
    "broken",
    [
        '{\n  "SPDisplaysDataType" : [\n    {\n      "_name" : "Apple M2 Max",',  # cut off mid-way
        "",
        '{"SPDisplaysDataType": {"_name": "Apple M2 Max"}}',
        '["SPDisplaysDataType"]',
    ],
)
def test_malformed_system_profiler_json_is_a_note(broken: str) -> None:
    result, messages = probe(mac(broken, 64 * GIB, "Apple M2 Max"))

    (gpu,) = result.gpus  # still known from the CPU brand string and sysctl
    assert gpu.name == "Apple M2 Max"
    assert gpu.cores is None
    assert gpu.memory_total_bytes == 48 * GIB
    assert any(n.level == "warning" and "system_profiler" in n.message for n in result.notes)
    assert messages  # no exception, and the reason is recorded


def test_commands_get_timeouts_and_sysctl_reads_the_documented_keys() -> None:
    runner = mac(M2_MAX_DISPLAYS, 64 * GIB, "Apple M2 Max")
    probe(runner)

    timeouts = dict(runner.calls)
    assert timeouts[PROFILER] >= 10
    assert all(0 < t <= timeouts[PROFILER] for t in timeouts.values())
    for key in ("hw.memsize", "machdep.cpu.brand_string", "iogpu.wired_limit_mb"):
        assert runner.ran(sysctl(key))


# -- Intel Macs --------------------------------------------------------------------------------


def test_intel_mac_reports_discrete_vram_and_shared_integrated_graphics() -> None:
    runner = mac(INTEL_MAC_DISPLAYS, 32 * GIB, "Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz")
    result, messages = probe(runner)

    intel, amd = result.gpus
    assert amd.vendor == "amd"
    assert amd.name == "AMD Radeon Pro 5500M"
    assert amd.memory_total_bytes == 8 * GIB
    assert amd.unified_memory is False
    assert amd.pci_id == "1002:7340"
    assert amd.cores is None
    assert intel.vendor == "intel"
    assert intel.name == "Intel UHD Graphics 630"
    assert intel.memory_total_bytes == 1536 * MIB
    assert intel.unified_memory is True
    assert intel.pci_id == "8086:3e9b"
    assert all(g.source == "sysctl/system_profiler" for g in result.gpus)
    assert any("Intel UHD Graphics 630 shares system RAM" in m for m in messages)
    assert not runner.ran(sysctl("iogpu.wired_limit_mb"))


def test_older_macos_vram_key_and_text_vendor_are_understood() -> None:
    # macOS 10.13 wrote "_spdisplays_vram" (https://github.com/OCSInventory-NG/UnixAgent/pull/170)
    # and older releases a plain vendor text such as "AMD (0x1002)".
    displays = json.dumps(
        {
            "SPDisplaysDataType": [
                {
                    "_name": "Radeon Pro 560X",
                    "_spdisplays_vram": "4096 MB",
                    "spdisplays_device-id": "0x67ef",
                    "spdisplays_vendor": "AMD (0x1002)",
                    "sppci_model": "Radeon Pro 560X",
                }
            ]
        }
    )
    result, _ = probe(mac(displays, 16 * GIB, "Intel(R) Core(TM) i7-8850H CPU @ 2.60GHz"))

    (gpu,) = result.gpus
    assert (gpu.vendor, gpu.memory_total_bytes, gpu.pci_id) == ("amd", 4 * GIB, "1002:67ef")
    assert gpu.unified_memory is False


def test_display_only_entries_and_unknown_vendors_are_skipped() -> None:
    displays = json.dumps(
        {
            "SPDisplaysDataType": [
                {"_name": "DisplayLink USB Adapter", "sppci_device_type": "spdisplays_display"},
                {"_name": "Mystery GPU", "spdisplays_vendor": "sppci_vendor_acme", "spdisplays_vram": "2 GB"},
            ]
        }
    )
    result, messages = probe(mac(displays, 16 * GIB, "Intel(R) Core(TM) i5-8259U CPU @ 2.30GHz"))

    assert result.gpus == ()
    assert "skipped Mystery GPU: unknown GPU vendor" in messages
    assert "system_profiler listed no GPU" in messages
