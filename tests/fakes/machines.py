"""Ready-made Machine records for tests: one with every field set, one bare."""

from __future__ import annotations

from rigcheck.core.machine import (
    CPU,
    GPU,
    PSU,
    CudaToolkit,
    Disk,
    Drivers,
    Executable,
    Host,
    Machine,
    Memory,
    Note,
    Software,
)

GIB = 1024**3


def full_machine() -> Machine:
    """A machine with every field set, including the ones only some vendors fill."""
    return Machine(
        taken_at="2026-11-29T19:00:00Z",
        host=Host("lab-7", "linux", "Ubuntu 22.04.4 LTS", "6.5.0-41-generic", "3.11.7", "docker"),
        cpu=CPU(
            logical_cores=32,
            model="AMD Ryzen 9 7950X 16-Core Processor",
            vendor="AuthenticAMD",
            arch="x86_64",
            physical_cores=16,
            max_mhz=5881.0,
            flags=("avx", "avx2", "fma", "f16c", "avx512f", "avx512_bf16"),
        ),
        memory=Memory(total_bytes=64 * GIB, available_bytes=50 * GIB, swap_total_bytes=8 * GIB),
        disks=(Disk("/home/ana/.cache/huggingface/hub", 2000 * GIB, 900 * GIB, "huggingface"),),
        gpus=(
            GPU(
                vendor="nvidia",
                name="NVIDIA GeForce RTX 4090",
                memory_total_bytes=24564 * 1024**2,
                index=0,
                uuid="GPU-1a2b3c4d-0000-0000-0000-000000000000",
                serial="1322322000000",
                pci_bus_id="00000000:01:00.0",
                pci_id="10de:2684",
                memory_free_bytes=23000 * 1024**2,
                unified_memory=False,
                compute_capability="8.9",
                power_limit_watts=450.0,
                power_default_limit_watts=450.0,
                power_max_limit_watts=600.0,
                pcie_gen=4,
                pcie_width=16,
                pcie_max_gen=4,
                pcie_max_width=16,
                nvlink_links=0,
                mig_enabled=False,
                source="nvml",
            ),
            GPU(
                vendor="amd", name="AMD Radeon RX 7900 XTX", memory_total_bytes=24 * GIB, gfx_target="gfx1100"
            ),
        ),
        drivers=Drivers(nvidia="550.54.14", cuda_driver="12.4", rocm="6.2.0"),
        software=Software(
            cuda_toolkits=(CudaToolkit("12.4.131", "/usr/local/cuda-12.4"),),
            python_packages={"torch": "2.5.1+cu124", "vllm": "0.6.4"},
            executables={"ollama": Executable("/usr/local/bin/ollama", "0.5.7")},
        ),
        psu=PSU(850.0, "user"),
        notes=(Note("nvidia", "info", "power draw not supported on GPU 1"),),
    )


def small_machine(hostname: str = "test-box") -> Machine:
    """A CPU-only machine with little more than the required fields."""
    return Machine(
        cpu=CPU(logical_cores=4, model="Test CPU"),
        memory=Memory(total_bytes=8 * GIB),
        gpus=(),
        host=Host(hostname=hostname),
        taken_at="2026-11-29T12:00:00Z",
    )
