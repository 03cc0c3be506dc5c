"""The public probe entry: backends combined per platform, and a broken driver never hides a GPU."""

from __future__ import annotations

from pathlib import Path

import pynvml

from fakes.fake_nvml import FakeNvml
from fakes.nvidia_gpus import RTX_3090, RTX_4090
from rigcheck.core.machine import Machine
from rigcheck.core.probe import ProbeContext, probe_gpus, probe_machine


def pci_device(root: Path, bus_id: str, vendor: str, device: str, klass: str = "0x030000") -> None:
    folder = root / "sys/bus/pci/devices" / bus_id
    folder.mkdir(parents=True)
    (folder / "class").write_text(klass + "\n")
    (folder / "vendor").write_text(f"0x{vendor}\n")
    (folder / "device").write_text(f"0x{device}\n")


def linux(root: Path, nvml: FakeNvml | None) -> ProbeContext:
    def load() -> FakeNvml:
        if nvml is None:
            raise ImportError("No module named 'pynvml'")
        return nvml

    return ProbeContext(root=root, platform="linux", env={"HOME": str(root)}, load_nvml=load)


def test_nvidia_card_with_driver_not_loaded_is_still_listed(tmp_path: Path) -> None:
    pci_device(tmp_path, "0000:01:00.0", "10de", "2684")
    pci_device(tmp_path, "0000:00:1f.3", "8086", "7ad0", klass="0x040380")  # audio: ignored
    (tmp_path / "usr/share/hwdata").mkdir(parents=True)
    (tmp_path / "usr/share/hwdata/pci.ids").write_text(
        "10de  NVIDIA Corporation\n\t2684  AD102 [GeForce RTX 4090]\n"
    )
    result = probe_gpus(linux(tmp_path, FakeNvml(init_error=pynvml.NVML_ERROR_DRIVER_NOT_LOADED)))
    assert len(result.gpus) == 1
    gpu = result.gpus[0]
    assert (gpu.index, gpu.vendor, gpu.name, gpu.pci_id) == (
        0,
        "nvidia",
        "AD102 [GeForce RTX 4090]",
        "10de:2684",
    )
    assert gpu.memory_total_bytes is None  # unknown, not zero
    messages = [n.message for n in result.notes]
    assert any("Driver Not Loaded" in m or "not loaded" in m for m in messages)
    assert any("0000:01:00.0" in m and "not visible to NVML" in m for m in messages)
    assert not any("no GPU found" in m for m in messages)


def test_nvml_gpus_are_not_listed_twice_from_pci(tmp_path: Path) -> None:
    for gpu in (RTX_4090, RTX_3090):
        assert isinstance(gpu.pci_bus_id, str)
        domain, rest = gpu.pci_bus_id.split(":", 1)
        pci_device(
            tmp_path, f"{int(domain, 16):04x}:{rest.lower()}", "10de", f"{gpu.pci_device_id >> 16:04x}"
        )
    result = probe_gpus(linux(tmp_path, FakeNvml([RTX_4090, RTX_3090])))
    assert [(g.index, g.name, g.source) for g in result.gpus] == [
        (0, "NVIDIA GeForce RTX 4090", "nvml"),
        (1, "NVIDIA GeForce RTX 3090", "nvml"),
    ]
    assert result.drivers.nvidia == "550.54.14"
    assert result.drivers.cuda_driver == "12.4"


def test_no_gpu_and_no_nvml_says_why(tmp_path: Path) -> None:
    result = probe_gpus(linux(tmp_path, None))
    assert result.gpus == ()
    probes = {n.probe for n in result.notes}
    assert "nvidia" in probes and "gpu" in probes


def test_unknown_platform_is_a_note_not_an_error(tmp_path: Path) -> None:
    result = probe_gpus(ProbeContext(root=tmp_path, platform="sunos5"))
    assert result.gpus == ()
    assert "not implemented" in result.notes[0].message


def test_whole_machine_from_a_bare_root_round_trips(tmp_path: Path) -> None:
    machine = probe_machine(linux(tmp_path, FakeNvml([RTX_4090])), psu_watts=1000)
    assert machine.gpus[0].compute_capability == "8.9"
    assert machine.gpus[0].catalog_id == "nvidia-geforce-rtx-4090"
    assert machine.psu.watts == 1000.0
    assert machine.taken_at and machine.taken_at.endswith("Z")
    assert Machine.from_json(machine.to_json()) == machine


def test_gpu_missing_from_the_catalog_gets_a_note(tmp_path: Path) -> None:
    from dataclasses import replace

    prototype = replace(RTX_4090, name="NVIDIA Imaginary 9000", pci_device_id=0x99990000 | 0x10DE)
    machine = probe_machine(linux(tmp_path, FakeNvml([prototype])))
    assert machine.gpus[0].catalog_id is None
    assert any(
        n.probe == "catalog" and "NVIDIA Imaginary 9000 is not in the catalog" in n.message
        for n in machine.notes
    )
