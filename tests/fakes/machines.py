"""Ready-made Machine records for tests: one with every field set, one bare."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rigcheck.core.catalog import Catalog
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
    load_machine,
)

GIB = 1024**3


def one_catalog_gpu(catalog: Catalog, gpu_id: str, ram_gib: int = 128) -> Machine:
    """A 16-core box with ``ram_gib`` of RAM and one GPU from the catalog, as the speed tests build it."""
    from rigcheck.core.whatif import simulate

    gpu = catalog.gpu(gpu_id)
    assert gpu is not None, gpu_id
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=ram_gib * GIB), gpus=())
    return simulate(bare, [gpu], ram_gib)


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


# -- ten realistic machines for the compatibility audit (issue 16) -------------------------------------
# Each is a plausible lab or hobby box of its generation: the driver a distro shipped then, the torch wheel
# people installed with it, the tools they added. Drivers report the CUDA version nvidia-smi prints for
# that branch (CUDA release notes, Table 3).


def _box(
    name: str,
    *gpus: GPU,
    driver: str | None = None,
    cuda: str | None = None,
    rocm: str | None = None,
    python: str = "3.11.9",
    os_version: str = "Ubuntu 22.04.4 LTS",
    packages: dict[str, str] | None = None,
    executables: dict[str, str] | None = None,
    toolkits: tuple[str, ...] = (),
    cpu_model: str = "AMD Ryzen 9 5950X 16-Core Processor",
    flags: tuple[str, ...] = ("avx", "avx2", "fma", "f16c"),
    memory_gib: int = 64,
) -> Machine:
    return Machine(
        taken_at="2026-11-30T12:00:00Z",
        host=Host(name, "linux", os_version, "6.5.0-41-generic", python),
        cpu=CPU(logical_cores=32, model=cpu_model, arch="x86_64", physical_cores=16, flags=flags),
        memory=Memory(total_bytes=memory_gib * GIB),
        gpus=tuple(replace(g, index=i) for i, g in enumerate(gpus)),
        drivers=Drivers(nvidia=driver, cuda_driver=cuda, rocm=rocm),
        software=Software(
            cuda_toolkits=tuple(CudaToolkit(v, f"/usr/local/cuda-{v[:4]}") for v in toolkits),
            python_packages=dict(packages or {}),
            executables={k: Executable(f"/usr/local/bin/{k}", v) for k, v in (executables or {}).items()},
        ),
    )


def _nv(name: str, cc: str, gib: int) -> GPU:
    return GPU(vendor="nvidia", name=name, memory_total_bytes=gib * GIB, compute_capability=cc)


def _amd(name: str, gfx: str, gib: int) -> GPU:
    return GPU(vendor="amd", name=name, memory_total_bytes=gib * GIB, gfx_target=gfx)


def pascal_1080ti() -> Machine:
    """GTX 1080 Ti on the 535 driver Ubuntu 22.04 ships, torch 2.3 cu121, bitsandbytes and Ollama."""
    return _box(
        "pascal",
        _nv("NVIDIA GeForce GTX 1080 Ti", "6.1", 11),
        driver="535.183.01",
        cuda="12.2",
        python="3.10.12",
        packages={"torch": "2.3.1+cu121", "bitsandbytes": "0.43.1", "transformers": "4.41.2"},
        executables={"ollama": "0.3.12"},
    )


def turing_2080ti() -> Machine:
    """RTX 2080 Ti, driver 550, torch 2.5.1 cu124 with xformers; a CUDA 12.4 toolkit."""
    return _box(
        "turing",
        _nv("NVIDIA GeForce RTX 2080 Ti", "7.5", 11),
        driver="550.127.05",
        cuda="12.4",
        packages={"torch": "2.5.1+cu124", "xformers": "0.0.28.post3", "bitsandbytes": "0.45.0"},
        toolkits=("12.4.131",),
    )


def ampere_3090() -> Machine:
    """RTX 3090, driver 560, torch 2.6 cu124 with flash-attn 2 and vLLM 0.7."""
    return _box(
        "ampere",
        _nv("NVIDIA GeForce RTX 3090", "8.6", 24),
        driver="560.35.03",
        cuda="12.6",
        packages={"torch": "2.6.0+cu124", "flash-attn": "2.7.4.post1", "vllm": "0.7.3"},
    )


def ada_4090() -> Machine:
    """RTX 4090, driver 570, torch 2.7.1 cu128 with Unsloth and bitsandbytes; llama.cpp server."""
    return _box(
        "ada",
        _nv("NVIDIA GeForce RTX 4090", "8.9", 24),
        driver="570.133.07",
        cuda="12.8",
        python="3.12.3",
        os_version="Ubuntu 24.04.1 LTS",
        packages={"torch": "2.7.1+cu128", "unsloth": "2025.6.1", "bitsandbytes": "0.46.0"},
        executables={"llama-server": "5600"},
    )


def hopper_h100() -> Machine:
    """Two H100 SXM on driver 575, torch 2.8 cu128, flash-attn 3, TensorRT-LLM and vLLM."""
    return _box(
        "hopper",
        _nv("NVIDIA H100 80GB HBM3", "9.0", 80),
        _nv("NVIDIA H100 80GB HBM3", "9.0", 80),
        driver="575.57.08",
        cuda="12.9",
        python="3.12.3",
        packages={
            "torch": "2.8.0+cu128",
            "flash-attn-3": "3.0.0b1",
            "vllm": "0.10.1",
            "tensorrt-llm": "1.0.0",
        },
        toolkits=("12.8.93",),
        cpu_model="Intel(R) Xeon(R) Platinum 8480+",
        flags=("avx", "avx2", "fma", "f16c", "avx512f", "avx512_bf16", "amx_tile"),
        memory_gib=2048,
    )


def blackwell_5090() -> Machine:
    """RTX 5090 on driver 580 (CUDA 13.0), torch 2.9.1 cu130, vLLM."""
    return _box(
        "blackwell",
        _nv("NVIDIA GeForce RTX 5090", "12.0", 32),
        driver="580.95.05",
        cuda="13.0",
        python="3.12.3",
        os_version="Ubuntu 24.04.3 LTS",
        packages={"torch": "2.9.1+cu130", "vllm": "0.11.2"},
        memory_gib=128,
    )


def old_470() -> Machine:
    """RTX 3060 left on the 470 driver (CUDA 11.4) with torch 2.0.1 cu117 and Ollama."""
    return _box(
        "old-470",
        _nv("NVIDIA GeForce RTX 3060", "8.6", 12),
        driver="470.256.02",
        cuda="11.4",
        python="3.10.12",
        os_version="Ubuntu 20.04.6 LTS",
        packages={"torch": "2.0.1+cu117"},
        executables={"ollama": "0.5.7"},
        memory_gib=32,
    )


def rdna3_7900xtx() -> Machine:
    """RX 7900 XTX with ROCm 6.2, torch 2.5.1 rocm6.2, Ollama."""
    return _box(
        "rdna3",
        _amd("AMD Radeon RX 7900 XTX", "gfx1100", 24),
        rocm="6.2.0",
        python="3.10.12",
        packages={"torch": "2.5.1+rocm6.2"},
        executables={"ollama": "0.6.2"},
    )


def cdna3_mi300x() -> Machine:
    """Two MI300X (gfx942) on ROCm 6.3, torch 2.7 rocm6.3 and vLLM."""
    return _box(
        "mi300x",
        _amd("AMD Instinct MI300X", "gfx942", 192),
        _amd("AMD Instinct MI300X", "gfx942", 192),
        rocm="6.3.1",
        python="3.12.3",
        packages={"torch": "2.7.0+rocm6.3", "vllm": "0.8.5"},
        cpu_model="AMD EPYC 9654 96-Core Processor",
        flags=("avx", "avx2", "fma", "f16c", "avx512f", "avx512_bf16"),
        memory_gib=2048,
    )


def cpu_only() -> Machine:
    """No GPU: a Xeon with AVX-512, torch 2.6 CPU wheel, llama-cpp-python and Ollama."""
    return _box(
        "cpu-box",
        packages={"torch": "2.6.0+cpu", "llama-cpp-python": "0.3.8"},
        executables={"ollama": "0.9.0"},
        cpu_model="Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz",
        flags=("avx", "avx2", "fma", "f16c", "avx512f"),
    )


#: the audit's ten machines, by name
AUDIT_MACHINES = {
    "pascal": pascal_1080ti,
    "turing": turing_2080ti,
    "ampere": ampere_3090,
    "ada": ada_4090,
    "hopper": hopper_h100,
    "blackwell": blackwell_5090,
    "old-470": old_470,
    "rdna3": rdna3_7900xtx,
    "mi300x": cdna3_mi300x,
    "cpu": cpu_only,
}


#: the twelve 2026 platform snapshots of the compatibility audit (tests/fixtures/machines/platforms)
PLATFORMS = Path(__file__).resolve().parent.parent / "fixtures" / "machines" / "platforms"


def audit_machine(name: str) -> Machine:
    """One of the audit's 22 machines: the ten above by name, or a platform snapshot by file stem."""
    if name in AUDIT_MACHINES:
        return AUDIT_MACHINES[name]()
    return load_machine(PLATFORMS / f"{name}.json")
