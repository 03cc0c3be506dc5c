"""The NVIDIA probe through NVML, against a fake ``pynvml`` built from real captures."""

from __future__ import annotations

from dataclasses import replace
from types import ModuleType

import pynvml
import pytest

from fakes.fake_nvml import MIB, NO_PERMISSION, FakeGPU, FakeNvml, Raise
from fakes.nvidia_gpus import (
    A100_SXM4_80GB_MIG,
    ALL,
    H100_80GB_HBM3,
    L40S,
    QUADRO_P400,
    RTX_2080_SUPER,
    RTX_3080_WINDOWS,
    RTX_3090,
    RTX_4090,
    TESLA_T4,
)
from rigcheck.core.machine import Note
from rigcheck.core.probe import _nvidia
from rigcheck.core.probe._common import ProbeContext, VendorResult


def probe(fake: FakeNvml, platform: str = "linux") -> VendorResult:
    return _nvidia.probe_gpus(ProbeContext(load_nvml=lambda: fake, platform=platform))


def messages(result: VendorResult, level: str | None = None) -> list[str]:
    return [n.message for n in result.notes if level is None or n.level == level]


# -- the library and the driver ---------------------------------------------------------------


def test_bindings_not_installed() -> None:
    def missing() -> ModuleType:
        raise ImportError("No module named 'pynvml'")

    result = _nvidia.probe_gpus(ProbeContext(load_nvml=missing, platform="linux"))

    assert result.gpus == ()
    assert result.drivers.nvidia is None
    assert result.notes == (
        Note("nvidia", "warning", "NVIDIA driver library bindings (nvidia-ml-py) not installed"),
    )


def test_no_driver_installed() -> None:
    fake = FakeNvml([RTX_4090], init_error=pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)

    result = probe(fake)

    assert result.gpus == ()
    assert result.notes == (
        Note("nvidia", "info", "NVIDIA driver library (NVML) not found: no NVIDIA driver installed"),
    )
    assert fake.init_called
    assert not fake.shutdown_called  # nothing to shut down after a failed nvmlInit


def test_driver_not_loaded() -> None:
    result = probe(FakeNvml([RTX_4090], init_error=pynvml.NVML_ERROR_DRIVER_NOT_LOADED))

    assert result.gpus == ()
    (note,) = result.notes
    assert note.level == "warning"
    assert "installed but not loaded" in note.message
    assert "Driver Not Loaded" in note.message


def test_driver_library_version_mismatch() -> None:
    result = probe(FakeNvml([RTX_4090], init_error=pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH))

    assert result.gpus == ()
    assert result.notes == (
        Note("nvidia", "error", "NVIDIA driver/library version mismatch: reboot after a driver update"),
    )


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (pynvml.NVML_ERROR_NO_PERMISSION, "Insufficient Permissions"),
        (pynvml.NVML_ERROR_UNKNOWN, "Unknown Error"),
    ],
)
def test_other_init_failures_name_the_error(code: int, expected: str) -> None:
    result = probe(FakeNvml([RTX_4090], init_error=code))

    assert result.gpus == ()
    (note,) = result.notes
    assert note.level == "warning"
    assert expected in note.message


# -- reading GPUs -------------------------------------------------------------------------------


def test_two_gpus_mixed() -> None:
    fake = FakeNvml([RTX_4090, RTX_3090], driver_version="535.86.05", cuda_driver_version=12020)

    result = probe(fake)

    assert result.drivers.nvidia == "535.86.05"
    assert result.drivers.cuda_driver == "12.2"
    first, second = result.gpus
    assert [g.index for g in result.gpus] == [0, 1]
    assert first.vendor == "nvidia"
    assert first.name == "NVIDIA GeForce RTX 4090"
    assert first.uuid == "GPU-71d1acc2-662d-2166-bf9f-65272d2fc437"
    assert first.serial is None  # GeForce cards have none: Not Supported
    assert first.pci_bus_id == "00000000:84:00.0"
    assert first.pci_id == "10de:2684"
    assert first.memory_total_bytes == 24564 * 1048576
    assert first.memory_free_bytes == 24214 * 1048576
    assert first.unified_memory is False
    assert first.compute_capability == "8.9"
    assert first.power_limit_watts == 450.0
    assert first.power_default_limit_watts == 450.0
    assert first.power_max_limit_watts == 600.0
    assert (first.pcie_gen, first.pcie_width, first.pcie_max_gen, first.pcie_max_width) == (1, 16, 3, 16)
    assert first.nvlink_links is None
    assert first.mig_enabled is None
    assert first.driver_model is None
    assert first.catalog_id is None
    assert first.source == "nvml"

    assert second.name == "NVIDIA GeForce RTX 3090"
    assert second.compute_capability == "8.6"
    assert second.pci_id == "10de:2204"
    assert second.memory_total_bytes == 25769803776  # 24 GiB
    assert second.power_limit_watts == 200.0  # lowered by the owner
    assert second.power_default_limit_watts == 350.0
    assert second.power_max_limit_watts == 375.0
    assert result.notes == ()
    assert fake.shutdown_called


def test_every_captured_gpu_reads_without_surprises() -> None:
    fake = FakeNvml(ALL)

    result = probe(fake)

    assert [g.name for g in result.gpus] == [g.name for g in ALL]
    for gpu, described in zip(result.gpus, ALL, strict=True):
        assert gpu.memory_total_bytes == described.memory_total
        assert gpu.pci_bus_id == str(described.pci_bus_id).lower()
        assert gpu.pci_id is not None and gpu.pci_id.startswith("10de:")
        assert gpu.compute_capability is not None
    # Only the Quadro P400 lacks a reading, and the MIG-enabled A100 gets its explanation.
    assert {n.message.split(":")[0] for n in result.notes} == {
        "GPU 0 (Quadro P400)",
        "GPU 1 (NVIDIA A100-SXM4-80GB)",
    }
    assert fake.shutdown_called


def test_bus_id_is_lower_case() -> None:
    (gpu,) = probe(FakeNvml([TESLA_T4])).gpus

    assert gpu.pci_bus_id == "00000000:00:1e.0"
    assert gpu.pci_id == "10de:1eb8"
    assert (gpu.pcie_gen, gpu.pcie_width) == (3, 8)


@pytest.mark.parametrize(
    ("reported", "expected"),
    [(12040, "12.4"), (13020, "13.2"), (12020, "12.2"), (11080, "11.8"), (10010, "10.1"), (13010, "13.1")],
)
def test_cuda_driver_version_as_text(reported: int, expected: str) -> None:
    result = probe(FakeNvml([L40S], cuda_driver_version=reported))

    assert result.drivers.cuda_driver == expected


def test_cuda_driver_version_from_older_bindings_without_v2() -> None:
    fake = FakeNvml([L40S], cuda_driver_version=13020, missing={"nvmlSystemGetCudaDriverVersion_v2"})

    result = probe(fake)

    assert result.drivers.cuda_driver == "13.2"
    assert "nvmlSystemGetCudaDriverVersion" in fake.calls
    assert result.notes == ()  # the fallback worked: nothing to tell


def test_power_not_supported_loses_power_fields_only() -> None:
    fake = FakeNvml([QUADRO_P400], driver_version="418.43", cuda_driver_version=10010)

    result = probe(fake)

    (gpu,) = result.gpus
    assert gpu.power_limit_watts is None
    assert gpu.power_default_limit_watts is None
    assert gpu.power_max_limit_watts is None
    assert gpu.name == "Quadro P400"
    assert gpu.uuid == "GPU-8f750be4-dfbc-23b9-b33f-da729a536494"
    assert gpu.serial == "0424418054852"
    assert gpu.pci_bus_id == "00000000:43:00.0"
    assert gpu.pci_id == "10de:1cb3"
    assert gpu.memory_total_bytes == 1998 * MIB
    assert gpu.memory_free_bytes == 1998 * MIB
    assert gpu.compute_capability == "6.1"
    assert (gpu.pcie_gen, gpu.pcie_width, gpu.pcie_max_gen, gpu.pcie_max_width) == (1, 16, 3, 16)
    assert result.drivers.nvidia == "418.43"
    assert result.drivers.cuda_driver == "10.1"
    assert result.notes == (
        Note("nvidia", "info", "GPU 0 (Quadro P400): power limit not supported on this GPU"),
    )


def test_one_unsupported_field_loses_that_field_only() -> None:
    gpu_description = replace(H100_80GB_HBM3, compute_capability=None)

    (gpu,) = probe(FakeNvml([gpu_description])).gpus

    assert gpu.compute_capability is None
    assert gpu.memory_total_bytes == 81559 * MIB
    assert gpu.power_limit_watts == 700.0
    assert gpu.nvlink_links == 18


def test_permission_refused_is_a_warning() -> None:
    result = probe(FakeNvml([replace(RTX_4090, serial=NO_PERMISSION)]))

    (gpu,) = result.gpus
    assert gpu.serial is None
    assert gpu.name == "NVIDIA GeForce RTX 4090"
    assert messages(result, "warning") == ["NVML refused nvmlDeviceGetSerial (Insufficient Permissions)"]


def test_function_missing_in_old_driver_is_noted_once() -> None:
    too_old = Raise(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
    fake = FakeNvml([replace(RTX_4090, mig_enabled=too_old), replace(RTX_3090, mig_enabled=too_old)])

    result = probe(fake)

    assert [g.mig_enabled for g in result.gpus] == [None, None]
    assert result.notes == (Note("nvidia", "info", "NVIDIA driver too old for nvmlDeviceGetMigMode"),)


def test_function_missing_in_old_bindings_is_noted_once() -> None:
    fake = FakeNvml([RTX_4090, RTX_3090], missing={"nvmlDeviceGetMigMode"})

    result = probe(fake)

    assert len(result.gpus) == 2
    assert [g.mig_enabled for g in result.gpus] == [None, None]
    assert [g.compute_capability for g in result.gpus] == ["8.9", "8.6"]
    assert messages(result) == ["nvidia-ml-py too old for nvmlDeviceGetMigMode; consider updating it"]


# -- GPUs that fail -------------------------------------------------------------------------------


def test_gpu_lost_while_probing() -> None:
    lost = replace(RTX_3090, lost_after_calls=3)  # answers name, UUID and serial, then falls off
    fake = FakeNvml([RTX_4090, lost, TESLA_T4])

    result = probe(fake)

    first, second, third = result.gpus
    assert first.name == "NVIDIA GeForce RTX 4090"
    assert first.power_limit_watts == 450.0
    assert second.name == "NVIDIA GeForce RTX 3090"
    assert second.uuid == "GPU-12345678-aaaa-bbbb-cccc-0123456789ab"
    assert second.pci_bus_id is None
    assert second.memory_total_bytes is None
    assert second.compute_capability is None
    assert second.index == 1
    assert third.name == "Tesla T4"
    assert third.memory_total_bytes == 15360 * MIB
    assert third.index == 2
    assert result.notes == (
        Note(
            "nvidia", "error", "GPU 1 (NVIDIA GeForce RTX 3090) fell off the bus while probing (GPU is lost)"
        ),
    )
    # Nothing more is asked of a lost GPU: name, UUID, serial, then the PCI query that found it lost.
    start = fake.calls.index("nvmlDeviceGetName", fake.calls.index("nvmlDeviceGetName") + 1)
    end = fake.calls.index("nvmlDeviceGetHandleByIndex", start)
    assert fake.calls[start:end] == [
        "nvmlDeviceGetName",
        "nvmlDeviceGetUUID",
        "nvmlDeviceGetSerial",
        "nvmlDeviceGetPciInfo",
    ]
    assert fake.shutdown_called


def test_gpu_lost_at_one_call() -> None:
    result = probe(FakeNvml([replace(L40S, pcie_gen=Raise(pynvml.NVML_ERROR_GPU_IS_LOST)), TESLA_T4]))

    first, second = result.gpus
    assert first.power_limit_watts == 350.0  # read before the loss
    assert first.pcie_gen is None
    assert first.pcie_max_width is None  # not asked after the loss
    assert second.name == "Tesla T4"
    assert messages(result, "error") == ["GPU 0 (NVIDIA L40S) fell off the bus while probing (GPU is lost)"]


def test_handle_failure_skips_that_gpu() -> None:
    broken = replace(RTX_3090, handle_error=pynvml.NVML_ERROR_UNKNOWN)

    result = probe(FakeNvml([RTX_4090, broken, TESLA_T4]))

    assert [g.name for g in result.gpus] == ["NVIDIA GeForce RTX 4090", "Tesla T4"]
    assert [g.index for g in result.gpus] == [0, 2]  # NVML's indices; the probe entry re-indexes
    (note,) = result.notes
    assert note.level == "warning"
    assert note.message.startswith("GPU 1: NVML could not open it")
    assert "Unknown Error" in note.message


def test_handle_failure_for_a_lost_gpu_is_an_error() -> None:
    broken = replace(RTX_3090, handle_error=pynvml.NVML_ERROR_GPU_IS_LOST)

    result = probe(FakeNvml([broken, RTX_4090]))

    assert [g.name for g in result.gpus] == ["NVIDIA GeForce RTX 4090"]
    assert messages(result, "error") == ["GPU 0 fell off the bus before it could be probed (GPU is lost)"]


def test_shutdown_even_after_an_unexpected_exception() -> None:
    exploding = replace(RTX_3090, compute_capability=Raise(RuntimeError("ctypes went wrong")))
    fake = FakeNvml([RTX_4090, exploding])

    with pytest.raises(RuntimeError, match="ctypes went wrong"):
        probe(fake)

    assert fake.shutdown_called


def test_device_count_failure() -> None:
    class CountFails(FakeNvml):
        def nvmlDeviceGetCount(self) -> int:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_UNKNOWN)

    fake = CountFails([RTX_4090])

    result = probe(fake)

    assert result.gpus == ()
    assert result.drivers.nvidia == "550.54.14"
    assert "NVML could not count the NVIDIA GPUs" in messages(result, "warning")
    assert fake.shutdown_called


# -- NVLink, MIG, driver model, unified memory -----------------------------------------------------


def test_nvlink_counts_active_links() -> None:
    partly = replace(H100_80GB_HBM3, nvlink=(True,) * 4 + (False,) * 14)

    gpus = probe(FakeNvml([H100_80GB_HBM3, partly, RTX_2080_SUPER, L40S])).gpus

    assert [g.nvlink_links for g in gpus] == [18, 4, 0, None]


def test_mig_mode() -> None:
    gpus = probe(FakeNvml([A100_SXM4_80GB_MIG, H100_80GB_HBM3, RTX_4090])).gpus

    assert [g.mig_enabled for g in gpus] == [True, False, None]
    a100 = gpus[0]
    assert a100.nvlink_links is None  # NVLink cannot be queried in MIG mode
    assert a100.memory_total_bytes == 81920 * MIB  # the whole GPU, not a MIG slice
    assert a100.compute_capability == "8.0"


def test_mig_note() -> None:
    result = probe(FakeNvml([A100_SXM4_80GB_MIG]))

    (note,) = result.notes
    assert note.level == "info"
    assert note.message.startswith("GPU 0 (NVIDIA A100-SXM4-80GB): MIG is enabled")


def test_driver_model_on_windows() -> None:
    (gpu,) = probe(FakeNvml([RTX_3080_WINDOWS]), platform="win32").gpus

    assert gpu.driver_model == "WDDM"
    assert gpu.power_limit_watts == 336.0
    assert gpu.power_default_limit_watts == 320.0


def test_driver_model_not_asked_on_linux() -> None:
    fake = FakeNvml([RTX_3080_WINDOWS])

    (gpu,) = probe(fake, platform="linux").gpus

    assert gpu.driver_model is None
    assert not any(call.startswith("nvmlDeviceGetDriverModel") for call in fake.calls)


@pytest.mark.parametrize(
    ("model", "expected"),
    [(pynvml.NVML_DRIVER_WDDM, "WDDM"), (pynvml.NVML_DRIVER_WDM, "TCC"), (pynvml.NVML_DRIVER_MCDM, "MCDM")],
)
def test_driver_models(model: int, expected: str) -> None:
    (gpu,) = probe(FakeNvml([replace(TESLA_T4, driver_model=model)]), platform="win32").gpus

    assert gpu.driver_model == expected


def test_driver_model_with_bindings_before_v2() -> None:
    fake = FakeNvml(
        [RTX_3080_WINDOWS], missing={"nvmlDeviceGetDriverModel_v2", "nvmlDeviceGetDriverModel_v1"}
    )

    result = probe(fake, platform="win32")

    assert result.gpus[0].driver_model == "WDDM"
    assert result.notes == ()


def test_unified_memory_gb10() -> None:
    spark = FakeGPU(
        name="NVIDIA GB10",
        uuid="GPU-00000000-0000-0000-0000-000000000000",
        pci_bus_id="0000000F:01:00.0",
        pci_device_id=0x2E1210DE,
        memory_total=None,
        memory_free=0,
        compute_capability=(12, 1),
    )

    result = probe(FakeNvml([spark]))

    (gpu,) = result.gpus
    assert gpu.unified_memory is True
    assert gpu.memory_total_bytes is None
    assert gpu.memory_free_bytes is None
    assert gpu.compute_capability == "12.1"
    assert gpu.pci_bus_id == "0000000f:01:00.0"
    assert any("unified memory" in m for m in messages(result, "info"))


def test_memory_unreadable_elsewhere_is_a_warning() -> None:
    result = probe(FakeNvml([replace(RTX_4090, memory_total=None)]))

    (gpu,) = result.gpus
    assert gpu.memory_total_bytes is None
    assert gpu.unified_memory is None
    assert messages(result, "warning") == [
        "GPU 0 (NVIDIA GeForce RTX 4090): memory size not reported by NVML"
    ]


# -- older bindings ---------------------------------------------------------------------------------


def test_bytes_returning_bindings() -> None:
    fake = FakeNvml([RTX_4090, TESLA_T4], driver_version="535.86.05", bytes_strings=True)

    result = probe(fake)

    assert result.drivers.nvidia == "535.86.05"
    first, second = result.gpus
    assert first.name == "NVIDIA GeForce RTX 4090"
    assert first.uuid == "GPU-71d1acc2-662d-2166-bf9f-65272d2fc437"
    assert first.pci_bus_id == "00000000:84:00.0"
    assert second.serial == "0000000000000"
    assert second.pci_bus_id == "00000000:00:1e.0"
    assert all(isinstance(g.name, str) for g in result.gpus)
