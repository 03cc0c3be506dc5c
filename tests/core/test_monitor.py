"""The live monitor: the sampler on a fake NVML and copied amdgpu sysfs trees, History, alerts, columns.

NVIDIA GPUs come from ``fakes.nvidia_gpus`` (real captures) with live readings added per test; the
fake answers Not Supported for any reading left at ``None``, and tests change readings between ticks
with ``FakeNvml.update`` and ``FakeNvml.lose``. AMD cards are the real files of
``tests/fixtures/amdgpu`` copied into ``tmp_path``, plus the live attribute files each test writes in
amdgpu's own formats (Documentation/gpu/amdgpu/thermal.rst in the kernel: ``pp_dpm_*`` tables with
the current level marked ``*``, hwmon power in µW, temperature in m°C, ``pwm1`` 0-255).
"""

from __future__ import annotations

import math
import os
import shutil
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import numpy as np
import pynvml
import pytest

from fakes.fake_nvml import (
    FUNCTION_NOT_FOUND,
    GPU_IS_LOST,
    NO_PERMISSION,
    FakeNvml,
    FakeProcess,
    Raise,
)
from fakes.nvidia_gpus import H100_80GB_HBM3, QUADRO_P400, RTX_3090, RTX_4090
from rigcheck.core import monitor
from rigcheck.core.machine import Note
from rigcheck.core.monitor import (
    Alert,
    GpuSample,
    History,
    ProcessMemory,
    Sample,
    Sampler,
    alerts,
    columns,
    row,
    throttle_ids,
    ticks,
)
from rigcheck.core.probe._common import ProbeContext

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "amdgpu"
GIB = 1024**3
MIB = 1024**2

#: an RTX 4090 under a training load, as nvidia-smi would show it
LIVE_4090 = replace(
    RTX_4090,
    memory_free=2 * GIB,
    utilization=97,
    power_usage_mw=431_250,
    temperature=71,
    sm_clock_mhz=2520,
    mem_clock_mhz=10501,
    fan_percent=60,
    pcie_rx_kbps=2_000,
    pcie_tx_kbps=500,
    clocks_event_reasons=0x4,  # SwPowerCap
    processes=(FakeProcess(4242, 21 * GIB), FakeProcess(777, None)),
)
#: an H100 SXM: no fan of its own
LIVE_H100 = replace(
    H100_80GB_HBM3,
    utilization=12,
    power_usage_mw=118_000,
    temperature=34,
    sm_clock_mhz=1980,
    mem_clock_mhz=2619,
    fan_percent=None,
    pcie_rx_kbps=0,
    pcie_tx_kbps=0,
    clocks_event_reasons=0x0,
    processes=(),
)


class FakeClock:
    def __init__(self, start: float = 1000.0, step: float = 1.0) -> None:
        self.now = start
        self.step = step

    def __call__(self) -> float:
        value = self.now
        self.now += self.step
        return value


def nvidia_sampler(fake: FakeNvml, tmp_path: Path, **kwargs: object) -> Sampler:
    """A Linux sampler on the fake NVML and an empty sysfs (no AMD cards)."""
    ctx = ProbeContext(root=tmp_path, platform="linux", load_nvml=lambda: fake)
    return Sampler(ctx, clock=FakeClock(), wall=FakeClock(1.8e9), **kwargs)  # type: ignore[arg-type]


def messages(sampler: Sampler, level: str | None = None) -> list[str]:
    return [n.message for n in sampler.notes if level is None or n.level == level]


# -- NVIDIA ----------------------------------------------------------------------------------------


def test_every_live_field_of_an_nvidia_gpu(tmp_path: Path) -> None:
    fake = FakeNvml([LIVE_4090], process_names={4242: "python3"})
    with nvidia_sampler(fake, tmp_path) as sampler:
        sample = sampler.sample()

    assert sample.t == 1000.0 and sample.wall == 1.8e9
    assert sample.gpus == (
        GpuSample(
            index=0,
            name="NVIDIA GeForce RTX 4090",
            utilization_percent=97.0,
            memory_used_bytes=24564 * MIB - 2 * GIB,
            memory_total_bytes=24564 * MIB,
            power_watts=431.25,  # NVML gives mW
            power_limit_watts=450.0,
            temperature_c=71.0,
            sm_clock_mhz=2520.0,
            memory_clock_mhz=10501.0,
            fan_percent=60.0,
            pcie_rx_bytes_per_s=2_000 * 1024.0,  # NVML gives KB/s
            pcie_tx_bytes_per_s=500 * 1024.0,
            throttle_reasons=("power_cap",),
            processes=(
                ProcessMemory(4242, "python3", 21 * GIB),
                # another container's process: NVML will not name it; WDDM-style unknown memory
                ProcessMemory(777, None, None),
            ),
        ),
    )
    assert sampler.notes == ()


def test_slowdown_threshold_is_read_once_and_missing_is_quiet(tmp_path: Path) -> None:
    live_3090 = replace(RTX_3090, utilization=50, temperature=60)  # temp_slowdown_c=95 from its capture
    fake = FakeNvml([live_3090, LIVE_4090])  # the 4090 capture has no threshold: Not Supported
    with nvidia_sampler(fake, tmp_path) as sampler:
        first, second = sampler.sample(), sampler.sample()
        assert [g.temperature_slowdown_c for g in first.gpus] == [95.0, None]
        assert second.gpus[0].temperature_slowdown_c == 95.0
        assert fake.calls.count("nvmlDeviceGetTemperatureThreshold") == 2  # once per GPU, not per tick
        # an optional reference line: no note when a GPU lacks it (the 3090's unset fields have theirs)
        assert not any("threshold" in n.message or "GPU 1" in n.message for n in sampler.notes)
    assert fake.shutdown_called


def test_nvml_stays_initialised_for_the_samplers_life(tmp_path: Path) -> None:
    fake = FakeNvml([LIVE_4090])
    sampler = nvidia_sampler(fake, tmp_path)
    for _ in range(5):
        sampler.sample()
    assert fake.calls.count("nvmlInit") == 1
    assert fake.calls.count("nvmlDeviceGetHandleByIndex") == 1
    assert fake.calls.count("nvmlDeviceGetName") == 1  # the name is read once
    assert fake.calls.count("nvmlDeviceGetPowerUsage") == 5
    assert not fake.shutdown_called
    sampler.close()
    sampler.close()  # twice is harmless
    assert fake.shutdown_called and fake.calls.count("nvmlShutdown") == 1


def test_unsupported_fields_are_none_with_one_note_each(tmp_path: Path) -> None:
    """The Quadro P400 capture reports no power readings at all; every other live field is N/A too."""
    sampler = nvidia_sampler(FakeNvml([QUADRO_P400]), tmp_path)
    first = sampler.sample().gpus[0]
    for _ in range(3):
        sampler.sample()

    assert first.memory_total_bytes == 1998 * MIB  # what it does report
    assert (first.utilization_percent, first.power_watts, first.fan_percent, first.temperature_c) == (
        None,
    ) * 4
    assert (first.throttle_reasons, first.processes, first.lost) == ((), (), False)
    label = "GPU 0 (Quadro P400)"
    assert messages(sampler) == [
        f"{label}: {what} not available (NVML: Not Supported on this GPU)"
        for what in (
            "utilisation",
            "power draw",
            "power limit",
            "temperature",
            "GPU clock",
            "memory clock",
            "fan speed",
            "PCIe throughput",
            "throttle reasons",
            "per-process memory",
        )
    ]


def test_field_that_vanishes_mid_run(tmp_path: Path) -> None:
    fake = FakeNvml([LIVE_4090])
    sampler = nvidia_sampler(fake, tmp_path)
    history = History(60, 1)
    for tick in range(6):
        if tick == 3:
            fake.update(0, fan_percent=None, temperature=Raise(pynvml.NVML_ERROR_NOT_SUPPORTED))
        history.append(sampler.sample())

    gpus = [s.gpus[0] for s in history.samples()]
    assert [g.fan_percent for g in gpus] == [60.0, 60.0, 60.0, None, None, None]
    assert [g.temperature_c for g in gpus] == [71.0, 71.0, 71.0, None, None, None]
    assert {g.power_watts for g in gpus} == {431.25}  # the rest carries on
    _t, fan = history.series("gpu0_fan_percent")
    np.testing.assert_array_equal(fan, [60, 60, 60, np.nan, np.nan, np.nan])
    assert messages(sampler) == [
        "GPU 0 (NVIDIA GeForce RTX 4090): temperature not available (NVML: Not Supported on this GPU)",
        "GPU 0 (NVIDIA GeForce RTX 4090): fan speed not available (NVML: Not Supported on this GPU)",
    ]


def test_gpu_lost_at_tick_n_the_others_continue(tmp_path: Path) -> None:
    fake = FakeNvml([LIVE_4090, LIVE_H100])
    sampler = nvidia_sampler(fake, tmp_path)
    history = History(600, 1)
    for tick in range(40):
        if tick == 3:
            fake.lose(0)
        history.append(sampler.sample())

    samples = history.samples()
    assert [s.gpus[0].lost for s in samples[:4]] == [False, False, False, True]
    lost = samples[3].gpus[0]
    assert lost == GpuSample(index=0, name="NVIDIA GeForce RTX 4090", lost=True)
    assert all(s.gpus[0].lost for s in samples[3:])
    assert all(s.gpus[1] == samples[0].gpus[1] for s in samples)  # the H100 is unaffected
    assert samples[-1].gpus[1].power_watts == 118.0
    # the 4090 is not asked again once lost (its first call of tick 3 found it gone); the H100 every tick
    assert fake.calls.count("nvmlDeviceGetPowerUsage") == 3 + 40
    assert messages(sampler, "error") == [
        "GPU 0 (NVIDIA GeForce RTX 4090) fell off the bus (GPU is lost): no readings from it since"
    ]
    assert alerts(history) == (
        Alert(
            "sensor_lost",
            0,
            "GPU 0 (NVIDIA GeForce RTX 4090) stopped answering (it fell off the bus or its driver lost it); "
            "its readings are gone",
            since=samples[3].t,
        ),
    )
    _t, temp = history.series("gpu0_temp_c")
    assert np.isnan(temp[3:]).all() and (temp[:3] == 71).all()


def test_gpu_lost_half_way_through_a_tick(tmp_path: Path) -> None:
    """Calls before the loss answered, but the whole GPU is reported lost: no half-read sample."""
    fake = FakeNvml([replace(LIVE_4090, lost_after_calls=1 + 14 + 4)])  # name, one tick, 4 calls
    sampler = nvidia_sampler(fake, tmp_path)
    assert not sampler.sample().gpus[0].lost
    assert sampler.sample().gpus[0] == GpuSample(index=0, name="NVIDIA GeForce RTX 4090", lost=True)


def test_gpu_lost_before_the_first_tick(tmp_path: Path) -> None:
    fake = FakeNvml([replace(LIVE_4090, handle_error=pynvml.NVML_ERROR_GPU_IS_LOST), LIVE_H100])
    sample = nvidia_sampler(fake, tmp_path).sample()
    assert [(g.index, g.name) for g in sample.gpus] == [(0, "NVIDIA H100 80GB HBM3")]


def test_nvml_not_installed_cpu_and_ram_only(tmp_path: Path) -> None:
    def missing() -> ModuleType:
        raise ImportError("No module named 'pynvml'")

    sampler = Sampler(ProbeContext(root=tmp_path, platform="linux", load_nvml=missing))
    sample = sampler.sample()
    assert sample.gpus == ()
    assert sample.cpu_percent is not None and 0 <= sample.cpu_percent <= 100
    assert sample.ram_total_bytes and sample.ram_used_bytes
    assert 0 < sample.ram_used_bytes < sample.ram_total_bytes
    assert sampler.notes == (
        Note("nvidia", "warning", "NVIDIA driver library bindings (nvidia-ml-py) not installed"),
    )
    sampler.close()


def test_no_nvidia_driver(tmp_path: Path) -> None:
    sampler = nvidia_sampler(FakeNvml(init_error=pynvml.NVML_ERROR_LIBRARY_NOT_FOUND), tmp_path)
    assert sampler.sample().gpus == ()
    assert messages(sampler) == ["NVIDIA driver library (NVML) not found: no NVIDIA driver installed"]


def test_power_limit_falls_back_to_the_management_limit(tmp_path: Path) -> None:
    older = FakeNvml([LIVE_4090], missing={"nvmlDeviceGetEnforcedPowerLimit"})
    assert nvidia_sampler(older, tmp_path).sample().gpus[0].power_limit_watts == 450.0
    refused = FakeNvml([replace(LIVE_4090, enforced_power_limit_mw=None)])
    sampler = nvidia_sampler(refused, tmp_path)
    assert sampler.sample().gpus[0].power_limit_watts == 450.0
    assert sampler.notes == ()  # a limit was found: nothing to say


def test_throttle_reasons_from_the_older_function(tmp_path: Path) -> None:
    """Drivers before 535 have only nvmlDeviceGetCurrentClocksThrottleReasons."""
    hot = replace(LIVE_4090, clocks_event_reasons=0x20 | 0x40 | 0x4)
    for fake in (
        FakeNvml([hot], missing={"nvmlDeviceGetCurrentClocksEventReasons"}),
        FakeNvml([replace(hot, clocks_event_reasons=0x64)]),
    ):
        assert nvidia_sampler(fake, tmp_path).sample().gpus[0].throttle_reasons == (
            "power_cap",
            "thermal",
            "hw_thermal",
        )


def test_throttle_function_missing_in_the_driver(tmp_path: Path) -> None:
    fake = FakeNvml([replace(LIVE_4090, clocks_event_reasons=FUNCTION_NOT_FOUND)])
    sampler = nvidia_sampler(fake, tmp_path)
    assert sampler.sample().gpus[0].throttle_reasons == ()
    assert messages(sampler) == ["NVIDIA driver too old for nvmlDeviceGetCurrentClocksEventReasons"]


def test_throttle_ids() -> None:
    assert throttle_ids(0) == ()
    assert throttle_ids(0x1) == ("idle",)
    assert throttle_ids(0x24) == ("power_cap", "thermal")
    assert throttle_ids(0x1FF) == tuple(monitor.THROTTLE_REASONS.values())
    assert throttle_ids(0x400) == ()  # bits newer than this table are ignored


def test_refused_reading_and_refused_process_name(tmp_path: Path) -> None:
    fake = FakeNvml([replace(LIVE_4090, fan_percent=NO_PERMISSION)], process_names={4242: NO_PERMISSION})
    sampler = nvidia_sampler(fake, tmp_path)
    for _ in range(3):
        gpu = sampler.sample().gpus[0]
    assert gpu.fan_percent is None and gpu.power_watts == 431.25
    assert gpu.processes[0] == ProcessMemory(4242, None, 21 * GIB)
    # the refused fan says so once; a refused process name is normal (other users) and silent
    assert sampler.notes == (
        Note("nvidia", "warning", "NVML refused nvmlDeviceGetFanSpeed (Insufficient Permissions)"),
    )


def test_process_names_are_asked_once_per_pid(tmp_path: Path) -> None:
    fake = FakeNvml([LIVE_4090], process_names={4242: "python3", 777: "ollama"})
    sampler = nvidia_sampler(fake, tmp_path)
    for _ in range(4):
        procs = sampler.sample().gpus[0].processes
    assert [p.name for p in procs] == ["python3", "ollama"]
    assert fake.calls.count("nvmlSystemGetProcessName") == 2
    # pid 777 ends; a new process that gets the same pid later is asked about afresh
    fake.update(0, processes=(FakeProcess(4242, GIB),))
    sampler.sample()
    fake.update(0, processes=(FakeProcess(4242, GIB), FakeProcess(777, GIB)))
    fake.process_names[777] = "llama-server"
    assert [p.name for p in sampler.sample().gpus[0].processes] == ["python3", "llama-server"]
    assert fake.calls.count("nvmlSystemGetProcessName") == 3


def test_unexpected_error_costs_one_tick_of_one_gpu(tmp_path: Path) -> None:
    fake = FakeNvml([replace(LIVE_4090, power_usage_mw=Raise(RuntimeError("ctypes went wrong"))), LIVE_H100])
    sampler = nvidia_sampler(fake, tmp_path)
    sample = sampler.sample()
    assert sample.gpus[0] == GpuSample(index=0, name="NVIDIA GeForce RTX 4090")
    assert sample.gpus[1].power_watts == 118.0
    fake.update(0, power_usage_mw=400_000)
    assert sampler.sample().gpus[0].power_watts == 400.0
    assert messages(sampler, "warning") == [
        "GPU 0 (NVIDIA GeForce RTX 4090): reading failed (RuntimeError: ctypes went wrong)"
    ]


def test_gpu_is_lost_on_a_single_field(tmp_path: Path) -> None:
    fake = FakeNvml([replace(LIVE_4090, temperature=GPU_IS_LOST)])
    assert nvidia_sampler(fake, tmp_path).sample().gpus[0].lost


def test_windows_reads_nvidia_only(tmp_path: Path) -> None:
    fake = FakeNvml([LIVE_4090])
    install_amd(tmp_path, "card0", "0000:0c:00.0", "rx6900xt")
    sampler = Sampler(ProbeContext(root=tmp_path, platform="win32", load_nvml=lambda: fake))
    assert [g.name for g in sampler.sample().gpus] == ["NVIDIA GeForce RTX 4090"]


def test_macos_has_cpu_and_ram_and_a_note(tmp_path: Path) -> None:
    def never() -> ModuleType:
        raise AssertionError("NVML must not be loaded on macOS")

    sampler = Sampler(ProbeContext(root=tmp_path, platform="darwin", load_nvml=never))
    sample = sampler.sample()
    assert sample.gpus == ()
    assert sample.cpu_percent is not None and sample.ram_used_bytes is not None
    assert messages(sampler) == [
        "GPU utilisation and power are not available on macOS without root (powermetrics); "
        "only CPU and RAM are sampled"
    ]


# -- AMD -------------------------------------------------------------------------------------------

#: live readings of an RX 6900 XT under load, in amdgpu's sysfs formats
RX6900XT_LIVE = {
    "gpu_busy_percent": "97\n",
    "pp_dpm_sclk": "0: 500Mhz \n1: 2250Mhz *\n2: 2340Mhz \n",
    "pp_dpm_mclk": "0: 96Mhz \n1: 456Mhz \n2: 673Mhz \n3: 1000Mhz *\n",
    "hwmon/hwmon5/power1_average": "255000000\n",
    "hwmon/hwmon5/temp1_input": "71000\n",
    "hwmon/hwmon5/pwm1": "153\n",
    "hwmon/hwmon5/pwm1_max": "255\n",
}


def install_amd(
    root: Path, card: str, bus_id: str, fixture: str | None, files: dict[str, str] | None = None
) -> Path:
    """The kernel's layout: the PCI device folder, and ``sys/class/drm/<card>/device`` linking to it."""
    card_dir = root / "sys/class/drm" / card
    card_dir.mkdir(parents=True)
    device = root / "sys/devices/pci0000:00" / bus_id
    if fixture:
        shutil.copytree(FIXTURES / fixture, device)
    for name, text in (files or {}).items():
        (device / name).parent.mkdir(parents=True, exist_ok=True)
        (device / name).write_text(text)
    (card_dir / "device").symlink_to(os.path.relpath(device, card_dir))
    return device


def amd_sampler(root: Path) -> Sampler:
    def missing() -> ModuleType:
        raise ImportError("pynvml")

    return Sampler(ProbeContext(root=root, platform="linux", load_nvml=missing))


def test_amd_card_from_sysfs(tmp_path: Path) -> None:
    install_amd(tmp_path, "card0", "0000:0c:00.0", "rx6900xt", RX6900XT_LIVE)
    (tmp_path / "usr/share/libdrm").mkdir(parents=True)
    (tmp_path / "usr/share/libdrm/amdgpu.ids").write_text("73BF,\tC0,\tAMD Radeon RX 6900 XT\n")
    sampler = amd_sampler(tmp_path)
    (gpu,) = sampler.sample().gpus

    assert gpu == GpuSample(
        index=0,
        name="AMD Radeon RX 6900 XT",
        utilization_percent=97.0,
        memory_used_bytes=668274688,  # the fixture's real, NUL-padded files
        memory_total_bytes=17163091968,
        power_watts=255.0,
        power_limit_watts=289.0,
        temperature_c=71.0,
        sm_clock_mhz=2250.0,
        memory_clock_mhz=1000.0,
        fan_percent=60.0,
    )
    assert [n.message for n in sampler.notes if n.probe == "amd"] == [
        "card0 (AMD Radeon RX 6900 XT): amdgpu reports no PCIe throughput, throttle reasons or "
        "per-process VRAM in sysfs"
    ]


def test_amd_power1_input_on_newer_kernels(tmp_path: Path) -> None:
    """Kernels from 6.x on some GPUs publish power1_input (instantaneous) instead of power1_average."""
    files = {k: v for k, v in RX6900XT_LIVE.items() if not k.endswith("power1_average")}
    files["hwmon/hwmon5/power1_input"] = "187000000\n"
    install_amd(tmp_path, "card0", "0000:0c:00.0", "rx6900xt", files)
    assert amd_sampler(tmp_path).sample().gpus[0].power_watts == 187.0


def test_amd_prefers_power1_average_when_both_exist(tmp_path: Path) -> None:
    install_amd(
        tmp_path, "card0", "0000:0c:00.0", "rx6900xt", {**RX6900XT_LIVE, "hwmon/hwmon5/power1_input": "1\n"}
    )
    assert amd_sampler(tmp_path).sample().gpus[0].power_watts == 255.0


def test_amd_readings_change_between_ticks(tmp_path: Path) -> None:
    device = install_amd(tmp_path, "card0", "0000:0c:00.0", "rx6900xt", RX6900XT_LIVE)
    sampler = amd_sampler(tmp_path)
    first = sampler.sample().gpus[0]
    (device / "gpu_busy_percent").write_text("3\n")
    (device / "pp_dpm_sclk").write_text("0: 500Mhz *\n1: 2250Mhz \n2: 2340Mhz \n")
    (device / "hwmon/hwmon5/power1_average").write_text("31000000\n")
    second = sampler.sample().gpus[0]
    assert (first.utilization_percent, second.utilization_percent) == (97.0, 3.0)
    assert (first.sm_clock_mhz, second.sm_clock_mhz) == (2250.0, 500.0)
    assert (first.power_watts, second.power_watts) == (255.0, 31.0)


def test_amd_fan_in_rpm(tmp_path: Path) -> None:
    files = {k: v for k, v in RX6900XT_LIVE.items() if "pwm1" not in k}
    files |= {"hwmon/hwmon5/fan1_input": "1650\n", "hwmon/hwmon5/fan1_max": "3300\n"}
    install_amd(tmp_path, "card0", "0000:0c:00.0", "rx6900xt", files)
    assert amd_sampler(tmp_path).sample().gpus[0].fan_percent == 50.0


def test_amd_partial_tree_says_what_is_missing(tmp_path: Path) -> None:
    """The RX 7900 XT fixture has only a power cap: every live reading is None, each with a note."""
    install_amd(tmp_path, "card1", "0000:03:00.0", "rx7900xt")
    sampler = amd_sampler(tmp_path)
    for _ in range(3):
        (gpu,) = sampler.sample().gpus
    assert gpu == GpuSample(index=0, name="AMD GPU 1002:744c", power_limit_watts=290.0)
    label = "card1 (AMD GPU 1002:744c)"
    assert [n.message for n in sampler.notes if n.probe == "amd"][1:] == [
        f"{label}: utilisation not available (no readable gpu_busy_percent)",
        f"{label}: VRAM use not available (no readable mem_info_vram_used)",
        f"{label}: power draw not available (no readable hwmon power1_average or power1_input)",
        f"{label}: temperature not available (no readable hwmon temp1_input)",
        f"{label}: GPU clock not available (no readable pp_dpm_sclk)",
        f"{label}: memory clock not available (no readable pp_dpm_mclk)",
        f"{label}: fan speed not available (no readable hwmon pwm1 or fan1_input with its maximum)",
    ]


def test_amd_card_removed_mid_run(tmp_path: Path) -> None:
    device = install_amd(tmp_path, "card0", "0000:0c:00.0", "rx6900xt", RX6900XT_LIVE)
    sampler = amd_sampler(tmp_path)
    assert not sampler.sample().gpus[0].lost
    shutil.rmtree(device)
    gpu = sampler.sample().gpus[0]
    assert gpu.lost and gpu.utilization_percent is None
    assert "disappeared from sysfs" in messages(sampler, "error")[0]


def test_amd_apu_power_is_the_package(tmp_path: Path) -> None:
    """A Granite Ridge iGPU (figures from amdgpu_top's dump.json): 512 MiB carve-out, 15.2 GiB GTT."""
    install_amd(
        tmp_path,
        "card1",
        "0000:13:00.0",
        None,
        {
            "vendor": "0x1002\n",
            "device": "0x13c0\n",
            "uevent": "DRIVER=amdgpu\nPCI_ID=1002:13C0\n",
            "mem_info_vram_total": "536870912\n",
            "mem_info_vram_used": "487604224\n",
            "mem_info_gtt_total": "16360906752\n",
            "gpu_busy_percent": "4\n",
            "hwmon/hwmon3/power1_input": "45000000\n",
        },
    )
    sampler = amd_sampler(tmp_path)
    assert sampler.sample().gpus[0].power_watts == 45.0
    assert "card1 (AMD GPU 1002:13c0): an APU: its power reading is the whole package, CPU included" in (
        messages(sampler)
    )


def test_nvidia_first_then_amd(tmp_path: Path) -> None:
    install_amd(tmp_path, "card0", "0000:0c:00.0", "rx6900xt", RX6900XT_LIVE)
    fake = FakeNvml([LIVE_4090, LIVE_H100])
    sample = nvidia_sampler(fake, tmp_path).sample()
    assert [(g.index, g.power_watts) for g in sample.gpus] == [(0, 431.25), (1, 118.0), (2, 255.0)]


# -- columns ---------------------------------------------------------------------------------------


def gpu(index: int, **fields: object) -> GpuSample:
    return GpuSample(index, f"GPU{index}", **fields)  # type: ignore[arg-type]


def sample(t: float, *gpus: GpuSample, cpu: float | None = 10.0, ram: int | None = 8 * GIB) -> Sample:
    return Sample(
        t=t, wall=1.8e9 + t, gpus=gpus, cpu_percent=cpu, ram_used_bytes=ram, ram_total_bytes=64 * GIB
    )


def test_columns_are_stable_and_carry_units() -> None:
    two = sample(0.0, gpu(0), gpu(1))
    per_gpu = [
        "util_percent",
        "mem_used_bytes",
        "power_w",
        "power_limit_w",
        "temp_c",
        "sm_clock_mhz",
        "mem_clock_mhz",
        "fan_percent",
        "pcie_rx_bytes_per_s",
        "pcie_tx_bytes_per_s",
        # added later, at the end of each GPU's group: older readers keep their positions
        "mem_total_bytes",
        "temp_slowdown_c",
    ]
    assert columns(two) == [
        "time",
        "wall",
        "cpu_percent",
        "ram_used_bytes",
        *(f"gpu0_{c}" for c in per_gpu),
        *(f"gpu1_{c}" for c in per_gpu),
    ]
    assert columns(sample(0.0)) == ["time", "wall", "cpu_percent", "ram_used_bytes"]
    # the same GPUs give the same columns whatever their readings, lost or not
    assert columns(sample(5.0, gpu(0, power_watts=300.0), gpu(1, lost=True), cpu=None)) == columns(two)


def test_row_values_under_the_columns() -> None:
    values = row(
        sample(2.5, gpu(0, utilization_percent=97.0, memory_used_bytes=21 * GIB, temperature_c=71.0))
    )
    assert list(values) == columns(sample(0.0, gpu(0)))
    assert values["time"] == 2.5 and values["wall"] == 1.8e9 + 2.5
    assert values["cpu_percent"] == 10.0 and values["ram_used_bytes"] == 8 * GIB
    assert values["gpu0_util_percent"] == 97.0 and values["gpu0_mem_used_bytes"] == 21 * GIB
    assert values["gpu0_temp_c"] == 71.0 and values["gpu0_power_w"] is None


# -- History ---------------------------------------------------------------------------------------


def test_history_capacity_and_order() -> None:
    history = History(window_s=10, interval_s=1)
    assert history.capacity == 11
    assert len(history) == 0 and history.latest() is None and history.samples() == []
    for t in range(25):
        history.append(sample(float(t), gpu(0, power_watts=float(t))))
        assert len(history) == min(t + 1, 11)
    assert [s.t for s in history.samples()] == [float(t) for t in range(14, 25)]
    assert history.latest() == history.samples()[-1]
    t, watts = history.series("gpu0_power_w")
    np.testing.assert_array_equal(t, np.arange(14, 25))
    np.testing.assert_array_equal(watts, np.arange(14, 25))
    assert History(window_s=1, interval_s=0.1).capacity == 11  # no float surprise from 1 / 0.1
    assert History(window_s=10, interval_s=3).capacity == 5


def test_history_series_nan_for_missing_and_unknown_keys() -> None:
    history = History(60, 1)
    history.append(sample(0.0, gpu(0, temperature_c=70.0), cpu=None))
    history.append(sample(1.0, gpu(0), cpu=5.0))
    history.append(sample(2.0, gpu(0, lost=True), cpu=6.0))
    history.append(sample(3.0, gpu(0, temperature_c=72.0), gpu(1, temperature_c=40.0), cpu=7.0))

    t, temp = history.series("gpu0_temp_c")
    np.testing.assert_array_equal(t, [0, 1, 2, 3])
    np.testing.assert_array_equal(temp, [70, np.nan, np.nan, 72])
    np.testing.assert_array_equal(history.series("cpu_percent")[1], [np.nan, 5, 6, 7])
    # a GPU that appears later has NaN before it did
    np.testing.assert_array_equal(history.series("gpu1_temp_c")[1], [np.nan, np.nan, np.nan, 40])
    assert temp.dtype == np.float64
    t, values = history.series("gpu7_temp_c")
    assert t.size == 0 and values.size == 0
    assert history.keys()[:2] == ["cpu_percent", "ram_used_bytes"]
    assert history.keys() == [c for c in columns(history.samples()[-1]) if c not in ("time", "wall")]
    # series are copies: the caller may keep them while sampling goes on
    temp[0] = -1
    assert history.series("gpu0_temp_c")[1][0] == 70


def test_history_gpu_that_disappears_leaves_nan() -> None:
    history = History(60, 1)
    history.append(sample(0.0, gpu(0, temperature_c=70.0), gpu(1, temperature_c=40.0)))
    history.append(sample(1.0, gpu(1, temperature_c=41.0)))
    np.testing.assert_array_equal(history.series("gpu0_temp_c")[1], [70, np.nan])
    np.testing.assert_array_equal(history.series("gpu1_temp_c")[1], [40, 41])


def test_history_resize_keeps_the_newest() -> None:
    history = History(window_s=100, interval_s=1)
    for t in range(50):
        history.append(sample(float(t), gpu(0, power_watts=float(t))))
    history.resize(window_s=10, interval_s=1)
    assert history.capacity == 11 and len(history) == 11
    assert [s.t for s in history.samples()] == [float(t) for t in range(39, 50)]
    np.testing.assert_array_equal(history.series("gpu0_power_w")[1], np.arange(39, 50))
    history.resize(window_s=30, interval_s=0.5)  # larger: everything kept, room to grow
    assert history.capacity == 61 and len(history) == 11
    history.append(sample(50.0, gpu(0, power_watts=50.0)))
    np.testing.assert_array_equal(history.series("gpu0_power_w")[1], np.arange(39, 51))
    history.clear()
    assert len(history) == 0 and history.capacity == 61 and history.keys() == []


def test_history_rejects_a_zero_window() -> None:
    with pytest.raises(ValueError, match="above 0"):
        History(window_s=0)
    with pytest.raises(ValueError, match="above 0"):
        History(interval_s=-1)


@pytest.mark.slow
def test_history_soak_a_simulated_day_at_a_tenth_of_a_second() -> None:
    """864,000 samples (a day at 0.1 s) into a one-hour window: length and memory stay bounded.

    tracemalloc slows every allocation several times over, so it traces hours 0-2 and 23-24 only:
    the first hour fills the buffer, the second must add nothing, and the last hour (everything in
    the buffer then allocated under the new trace) must cost no more than the first did.
    """
    history = History(window_s=3600, interval_s=0.1)
    capacity = history.capacity
    assert capacity == 36_001
    hour = 36_000
    gpus = (
        gpu(0, utilization_percent=97.0, memory_used_bytes=21 * GIB, power_watts=431.0, temperature_c=71.0),
        gpu(1, utilization_percent=12.0, memory_used_bytes=3 * GIB, power_watts=118.0, temperature_c=34.0),
    )
    used, total = 8 * GIB, 64 * GIB
    traced: dict[int, int] = {}
    start_at, stop_at = (0, 23 * hour), 2 * hour
    started = time.perf_counter()
    try:
        for tick in range(24 * hour):
            if not tick % hour:
                assert len(history) <= capacity
                if tracemalloc.is_tracing():
                    traced[tick // hour] = tracemalloc.get_traced_memory()[0]
            if tick in start_at:
                tracemalloc.start()
                traced[tick // hour] = tracemalloc.get_traced_memory()[0]
            elif tick == stop_at:
                tracemalloc.stop()
            t = tick * 0.1
            # each tick brings its own floats, as a real one does; the GPU records are shared
            history.append(Sample(t, 1.8e9 + t, gpus, float(tick % 100), used, total))
        traced[24] = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    elapsed = time.perf_counter() - started

    assert len(history) == capacity
    assert history.samples()[0].t == pytest.approx((24 * hour - capacity) * 0.1)
    first_hour = traced[1] - traced[0]
    assert first_hour < 32 * MIB  # measured: 14 MB for 36,001 samples with 2 GPUs, 9 MB of it the columns
    assert traced[2] - traced[1] < 1 * MIB  # a second hour replaces the first: nothing added
    assert traced[24] - traced[23] < first_hour + 1 * MIB  # nor after a day
    assert elapsed < 60, f"soak took {elapsed:.1f} s"


# -- alerts ----------------------------------------------------------------------------------------


def run(history: History, seconds: int, **fields: object) -> None:
    """Append one sample per second for ``seconds``, GPU 0 with ``fields``."""
    start = history.latest().t + 1 if history.latest() else 0.0  # type: ignore[union-attr]
    for i in range(seconds):
        history.append(sample(start + i, GpuSample(0, "NVIDIA GeForce RTX 4090", **fields)))  # type: ignore[arg-type]


AT_LIMIT = {"power_watts": 440.0, "power_limit_watts": 450.0}


def test_no_alerts_on_an_empty_history() -> None:
    assert alerts(History()) == ()


def test_power_at_limit_only_once_sustained() -> None:
    history = History(600, 1)
    run(history, 10, power_watts=200.0, power_limit_watts=450.0)
    run(history, 30, **AT_LIMIT)  # t = 10..39: 29 s at the limit so far
    assert alerts(history) == ()
    run(history, 1, **AT_LIMIT)  # t = 40: 30 s
    assert alerts(history) == (
        Alert(
            "power_at_limit",
            0,
            "GPU 0 (NVIDIA GeForce RTX 4090) has drawn ≥ 95% of its 450 W limit for 30 s",
            since=10.0,
        ),
    )
    assert alerts(history, sustained_s=31) == ()
    assert alerts(history, sustained_s=5)[0].since == 10.0
    run(history, 1, power_watts=300.0, power_limit_watts=450.0)  # a dip resets it
    assert alerts(history) == ()
    run(history, 200, **AT_LIMIT)
    (alert,) = alerts(history)
    assert alert.since == 42.0 and alert.message.endswith("for 3 min")


def test_thermal_and_power_throttle() -> None:
    history = History(600, 1)
    run(history, 5, throttle_reasons=("idle",))
    run(history, 40, throttle_reasons=("power_cap", "thermal"))
    run(history, 20, throttle_reasons=("hw_thermal",))
    assert alerts(history, sustained_s=30) == (
        Alert(
            "thermal_throttle",
            0,
            "GPU 0 (NVIDIA GeForce RTX 4090) has been slowing its clocks to keep cool (thermal throttling) "
            "for 59 s",
            since=5.0,
        ),
    )
    assert [a.kind for a in alerts(history, sustained_s=15)] == ["thermal_throttle"]
    history.clear()
    run(history, 31, throttle_reasons=("power_brake",))
    assert [(a.kind, a.since) for a in alerts(history)] == [("power_throttle", 0.0)]
    assert "held back by its power limit for 30 s" in alerts(history)[0].message


def test_vram_nearly_full() -> None:
    history = History(600, 1)
    total = 24 * GIB
    run(history, 31, memory_used_bytes=int(0.97 * total), memory_total_bytes=total)
    assert alerts(history) == (
        Alert(
            "vram_nearly_full",
            0,
            "GPU 0 (NVIDIA GeForce RTX 4090) has had ≥ 95% of its 24.0 GiB in use for 30 s",
            since=0.0,
        ),
    )
    run(history, 1, memory_used_bytes=int(0.5 * total), memory_total_bytes=total)
    assert alerts(history) == ()


def test_missing_readings_never_alert() -> None:
    history = History(600, 1)
    run(history, 60, power_watts=None, power_limit_watts=450.0, memory_used_bytes=10, memory_total_bytes=None)
    assert alerts(history, sustained_s=0) == ()


def test_several_alerts_at_once_by_gpu() -> None:
    history = History(600, 1)
    for t in range(40):
        history.append(
            sample(
                float(t),
                GpuSample(0, "A", lost=t >= 20),
                GpuSample(1, "B", throttle_reasons=("thermal",), power_watts=450.0, power_limit_watts=450.0),
            )
        )
    assert [(a.kind, a.gpu_index, a.since) for a in alerts(history)] == [
        ("sensor_lost", 0, 20.0),
        ("thermal_throttle", 1, 0.0),
        ("power_at_limit", 1, 0.0),
    ]


# -- ticks -----------------------------------------------------------------------------------------


class TickSampler:
    """Sampling takes ``cost`` seconds of a fake clock; ``sleep`` advances the same clock."""

    def __init__(self, cost: float = 0.02) -> None:
        self.now = 100.0
        self.cost = cost
        self.slept: list[float] = []
        self.notes: tuple[Note, ...] = ()

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds

    def sample(self) -> Sample:
        taken = sample(self.now)
        self.now += self.cost
        return taken

    def close(self) -> None:
        pass


def test_ticks_keep_time_without_drift() -> None:
    fake = TickSampler()
    taken = list(ticks(fake, 0.5, 2.0, sleep=fake.sleep))
    assert [s.t for s in taken] == [100.0, 100.5, 101.0, 101.5]  # ceil(2.0 / 0.5) samples
    assert fake.slept == [0.48, 0.48, 0.48]
    assert len(list(ticks(TickSampler(), 1.0, 0.3, sleep=fake.sleep))) == 1
    assert len(list(ticks(TickSampler(), 0.1, 1.0, sleep=fake.sleep))) == 10


def test_ticks_after_a_stall_start_again_from_now() -> None:
    fake = TickSampler(cost=5.0)  # a tick that took five intervals (the laptop slept)
    taken = list(ticks(fake, 1.0, 3.0, sleep=fake.sleep))
    assert [s.t for s in taken] == [100.0, 105.0, 110.0]
    assert fake.slept == []


def test_ticks_forever_until_the_caller_stops() -> None:
    fake = TickSampler()
    stream = ticks(fake, 1.0, sleep=fake.sleep)
    assert [next(stream).t for _ in range(100)][-1] == 199.0
    assert math.isclose(sum(fake.slept), 99 * 0.98)
