"""Compatibility checks over synthetic snapshots built from real combinations.

Every expected status names the fact behind it; the keys are those of /work/shared/reference/compat-facts.md
and of the catalog's `source` fields: C1 = CUDA 13.2 U2 release notes (driver tables), C5 = NVIDIA's
minor-version-compatibility page, A1 = TransformerEngine support matrix, K2 = llama.cpp's ggml-cuda
CMakeLists, P3/P4 = moi90/pytorch_compute_capabilities cubin lists, P5 = pytorch#157517, F1 = FlashAttention
README, F4 = bitsandbytes install docs, F6 = vLLM install docs, F8 = Ollama gpu.mdx, R3/R6/R7 = ROCm
compatibility matrices, A2 = TensorRT-LLM supported hardware.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import date

import pytest

from rigcheck.core.catalog import Catalog, load_catalog, parse_file
from rigcheck.core.compat import FRAMEWORKS, Finding, check_compat, findings_json, recommend_torch
from rigcheck.core.compat._base import Facts
from rigcheck.core.compat._rules import evaluate_rule
from rigcheck.core.errors import InputError
from rigcheck.core.machine import CPU, GPU, CudaToolkit, Drivers, Executable, Host, Machine, Memory, Software

GIB = 1024**3
#: these snapshots carry no taken_at: they are judged as of this day (the brief's today)
TODAY = date(2026, 12, 1)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def nv(name: str, cc: str | None, gib: int = 24) -> GPU:
    return GPU(vendor="nvidia", name=name, memory_total_bytes=gib * GIB, compute_capability=cc)


def amd(name: str, gfx: str, gib: int = 24) -> GPU:
    return GPU(vendor="amd", name=name, memory_total_bytes=gib * GIB, gfx_target=gfx)


def box(
    *gpus: GPU,
    os: str | None = "linux",
    container: str | None = None,
    python: str | None = "3.11.7",
    driver: str | None = None,
    cuda: str | None = None,
    rocm: str | None = None,
    toolkits: tuple[str, ...] = (),
    packages: Mapping[str, str] | None = None,
    executables: Mapping[str, str] | None = None,
    flags: tuple[str, ...] = ("avx", "avx2", "fma", "f16c"),
    arch: str | None = "x86_64",
) -> Machine:
    return Machine(
        cpu=CPU(logical_cores=16, arch=arch, flags=flags),
        memory=Memory(total_bytes=64 * GIB),
        gpus=tuple(dataclasses.replace(g, index=i) for i, g in enumerate(gpus)),
        host=Host(os=os, python=python, container=container),  # type: ignore[arg-type]
        drivers=Drivers(nvidia=driver, cuda_driver=cuda, rocm=rocm),
        software=Software(
            cuda_toolkits=tuple(CudaToolkit(v) for v in toolkits),
            python_packages=dict(packages or {}),
            executables={k: Executable(f"/usr/bin/{k}", v) for k, v in (executables or {}).items()},
        ),
    )


def find(findings: tuple[Finding, ...], framework: str, gpu: int | None) -> Finding:
    matches = [f for f in findings if f.framework == framework and f.gpu_index == gpu]
    assert matches, f"no {framework} finding for GPU {gpu}: {[(f.framework, f.gpu_index) for f in findings]}"
    # the worst one when a framework reports several (a machine-wide and a per-toolkit finding, say)
    order = {"fail": 0, "unknown": 1, "warn": 2, "ok": 3}
    return min(matches, key=lambda f: order[f.status])


GTX_1080TI_535 = box(nv("NVIDIA GeForce GTX 1080 Ti", "6.1", 11), driver="535.104.05", cuda="12.2")
RTX_5090_OLD_TORCH = box(
    nv("NVIDIA GeForce RTX 5090", "12.0", 32),
    driver="570.133.07",
    cuda="12.8",
    packages={"torch": "2.5.1+cu124"},
)
DRIVER_470_CU12 = box(
    nv("NVIDIA GeForce RTX 3090", "8.6"), driver="470.182.03", cuda="11.4", packages={"torch": "2.5.1+cu124"}
)
H100 = box(
    nv("NVIDIA H100 80GB HBM3", "9.0", 80),
    driver="550.54.15",
    cuda="12.4",
    toolkits=("12.4.131",),
    packages={"torch": "2.5.1+cu124", "flash-attn": "2.7.4.post1"},
)
MI300X = box(amd("AMD Instinct MI300X", "gfx942", 192), rocm="6.2.0", packages={"torch": "2.5.1+rocm6.2"})
RX_7900_XTX = box(amd("AMD Radeon RX 7900 XTX", "gfx1100"), rocm="6.2.4")
RX_6700_XT = box(amd("AMD Radeon RX 6700 XT", "gfx1031", 12), rocm="6.2.4")
M2_ULTRA = box(
    GPU(vendor="apple", name="Apple M2 Ultra", memory_total_bytes=None, unified_memory=True),
    os="macos",
    arch="arm64",
)
CPU_LAPTOP = box()
WSL_4090 = box(nv("NVIDIA GeForce RTX 4090", "8.9"), container="wsl", driver="560.94")
WINDOWS_4090 = box(nv("NVIDIA GeForce RTX 4090", "8.9"), os="windows", driver="560.94")
NO_DRIVER = box(nv("NVIDIA GeForce RTX 4090", "8.9"), packages={"torch": "2.5.1+cu124"})
RTX_2080 = box(nv("NVIDIA GeForce RTX 2080", "7.5", 8), driver="550.54.15", cuda="12.4")
ADA_OLD_TOOLKIT = box(
    nv("NVIDIA GeForce RTX 4090", "8.9"), driver="550.54.15", cuda="12.4", toolkits=("11.4.4",)
)
PASCAL_CUDA13 = box(
    nv("NVIDIA GeForce GTX 1080 Ti", "6.1", 11), driver="580.65.06", cuda="13.0", toolkits=("13.0.88",)
)
PASCAL_575 = box(nv("NVIDIA GeForce GTX 1080 Ti", "6.1", 11), driver="575.57.08", cuda="12.9")
OLD_BNB = box(
    nv("NVIDIA GeForce RTX 3090", "8.6"), driver="550.54.15", cuda="12.4", packages={"bitsandbytes": "0.43.1"}
)
B300 = box(nv("NVIDIA B300", "10.3", 288), driver="580.65.06", cuda="13.0", toolkits=("12.0.1",))

CASES = [
    # GTX 1080 Ti (Pascal 6.1) on driver 535 (CUDA 12.2)
    (
        GTX_1080TI_535,
        "nvidia-driver",
        None,
        "warn",
    ),  # 535 >= 525.60.13, the CUDA 12 floor (C1 Table 2/3), but R535 LTSB ended June 2026 (judged 2026-12-01)
    (
        GTX_1080TI_535,
        "pytorch",
        None,
        "warn",
    ),  # newest fit 2.14.1+cu126 (Pascal only in cu126, P5) needs driver 560+: advice R580, Pascal's last branch
    (GTX_1080TI_535, "bf16", 0, "fail"),  # BF16 needs CC >= 8.0 (A1)
    (GTX_1080TI_535, "fp8", 0, "fail"),  # FP8 needs CC >= 8.9 (A1)
    (GTX_1080TI_535, "flash-attn-2", 0, "fail"),  # Ampere or newer (F1)
    (GTX_1080TI_535, "vllm", 0, "fail"),  # CC >= 7.5 (F6)
    (GTX_1080TI_535, "bitsandbytes", 0, "warn"),  # CC >= 6.0 runs, but LLM.int8() needs 7.5 (F4)
    (
        GTX_1080TI_535,
        "ollama",
        0,
        "warn",
    ),  # CUDA path needs driver >= 550, >= 570 for CC 5.0-6.2 (F8); Vulkan remains
    (GTX_1080TI_535, "unsloth", 0, "warn"),  # "GTX 1070, 1080 works, but is slow" (F13)
    (GTX_1080TI_535, "tensorrt-llm", 0, "fail"),  # wheels carry sm_80+ kernels only (A2, issue 16 audit)
    (GTX_1080TI_535, "llama.cpp", 0, "ok"),  # CUDA backend from CC 5.0 (K2)
    # RTX 5090 (Blackwell 12.0) with torch 2.5.1+cu124
    (RTX_5090_OLD_TORCH, "pytorch", 0, "fail"),  # 2.5 cu124 has sm_50..sm_90a, no sm_120 and no PTX (P3)
    (RTX_5090_OLD_TORCH, "pytorch", None, "ok"),  # driver 570 reports CUDA 12.8 >= 12.4
    (RTX_5090_OLD_TORCH, "fp4", 0, "ok"),  # FP4 tensor cores on 12.0 (K2)
    (RTX_5090_OLD_TORCH, "bf16", 0, "ok"),  # CC >= 8.0 (A1)
    (
        RTX_5090_OLD_TORCH,
        "vllm",
        0,
        "fail",
    ),  # vLLM 0.33 installs torch 2.14.0, a CUDA 13 build; driver 570 (wheel METADATA)
    # setup.py@ea6443c builds sm_120 with CUDA >= 12.8, but it would run on the installed torch 2.5.1+cu124, which
    # has no sm_120 kernels: blocked by that torch
    (RTX_5090_OLD_TORCH, "flash-attn-2", 0, "fail"),
    (RTX_5090_OLD_TORCH, "flash-attn-3", 0, "fail"),  # H100/H800 only (F1)
    # driver 470 (CUDA 11.4) with a CUDA 12 wheel
    (DRIVER_470_CU12, "pytorch", None, "fail"),  # CUDA 12 needs driver >= 525.60.13 (C1)
    (DRIVER_470_CU12, "nvidia-driver", None, "warn"),  # meets only the CUDA 11 floor 450.80.02 (C1)
    (DRIVER_470_CU12, "pytorch", 0, "ok"),  # sm_86 cubin is in the wheel (P3)
    # H100 with torch 2.5.1+cu124 and CUDA 12.4
    (H100, "pytorch", 0, "ok"),  # sm_90 cubin (P3)
    (H100, "cuda-toolkit", None, "ok"),  # driver reports CUDA 12.4
    (H100, "cuda-toolkit", 0, "ok"),  # 12.x targets 5.0-12.1; sm_90 needs 11.8 (K2)
    (H100, "flash-attn-2", 0, "ok"),  # installed 2.7.4: CC 9.0, CUDA >= 12.0, torch >= 2.2, Linux (F1)
    (H100, "flash-attn-3", 0, "ok"),  # Hopper, CUDA >= 12.3 (F1)
    (H100, "fp8", 0, "ok"),  # Hopper FP8 (A1)
    (H100, "fp4", 0, "fail"),  # no FP4 on Hopper (A1)
    (H100, "sglang", 0, "fail"),  # current SGLang requires CUDA 13 (F7); the driver reports 12.4
    (H100, "tensorrt-llm", 0, "fail"),  # official GPU, but the 1.2 wheels are CUDA 13 builds; driver 550 (A3)
    # MI300X on ROCm 6.2 with torch 2.5.1+rocm6.2
    (MI300X, "rocm", 0, "ok"),  # gfx942 is official in 6.0-6.3 (R3)
    (MI300X, "pytorch", 0, "ok"),  # same list for the rocm6.2 wheel
    (MI300X, "fp8", 0, "ok"),  # MI300X FP8 2610 TFLOPS (ml-engineering, secondary)
    (MI300X, "fp4", 0, "fail"),  # MI300X FP4 'X'
    (MI300X, "flash-attn-2", 0, "ok"),  # ROCm >= 6.0, MI300x (F1)
    (MI300X, "vllm", 0, "fail"),  # ROCm >= 6.3 and Python 3.12 wheels (F6)
    # RX 7900 XTX on ROCm 6.2
    (RX_7900_XTX, "rocm", 0, "ok"),  # gfx1100 official from 6.0 (R2, R3)
    (RX_7900_XTX, "pytorch", None, "ok"),  # rocm7.2 wheel of 2.13; 7.2 lists gfx1100 (R7)
    (RX_7900_XTX, "bf16", 0, "ok"),  # RDNA 3 WMMA has V_WMMA_F32_16X16X16_BF16 (RDNA 3 ISA guide)
    (RX_7900_XTX, "fp8", 0, "fail"),  # no FP8 on RDNA 3 (FP8 WMMA arrives with RDNA 4)
    (RX_7900_XTX, "tensorrt-llm", 0, "fail"),  # NVIDIA-only (A2)
    # gfx1100 is on Ollama's list (F8), but current Ollama (0.18+) "requires the AMD ROCm v7 driver on Linux":
    # on ROCm 6.2 it runs through Vulkan until ROCm is upgraded
    (RX_7900_XTX, "ollama", 0, "warn"),
    # RX 6700 XT (gfx1031): not official, documented override
    (RX_6700_XT, "rocm", 0, "warn"),  # HSA_OVERRIDE_GFX_VERSION=10.3.0 (ROCm/ROCm#2353)
    (RX_6700_XT, "ollama", 0, "warn"),  # not on Ollama's list; override to gfx1030 (F8)
    # M2 Ultra
    (M2_ULTRA, "pytorch", None, "ok"),  # macOS wheels are CPU/MPS (P13)
    (M2_ULTRA, "llama.cpp", 0, "ok"),  # Metal is first-class (llama.cpp README)
    (M2_ULTRA, "ollama", 0, "ok"),  # Metal (F8)
    (M2_ULTRA, "vllm", 0, "ok"),  # the vllm-metal plugin: "vLLM ... on Apple Silicon Macs using MLX"
    (M2_ULTRA, "bf16", 0, "unknown"),  # no Apple precision facts collected
    # CPU-only laptop
    (CPU_LAPTOP, "pytorch", None, "ok"),  # the /whl/cpu wheel (previous-versions page)
    (CPU_LAPTOP, "vllm", None, "warn"),  # avx512f recommended, avx2 limited (F6)
    (CPU_LAPTOP, "llama.cpp", None, "ok"),  # CPU backend, no flag required
    (CPU_LAPTOP, "ollama", None, "ok"),  # runs on the CPU (F8)
    (CPU_LAPTOP, "flash-attn-2", None, "fail"),  # GPU-only: CUDA and ROCm backends (F1)
    (CPU_LAPTOP, "tensorrt-llm", None, "fail"),  # NVIDIA GPUs only (A2)
    # WSL and Windows with an RTX 4090 on a Windows-numbered driver
    (
        WSL_4090,
        "vllm",
        0,
        "unknown",
    ),  # WSL is Linux to vLLM (F6); CUDA 13's Windows driver floor is N/A in the release notes (C1)
    (WINDOWS_4090, "vllm", 0, "fail"),  # Linux only (F6)
    (WSL_4090, "pytorch", None, "ok"),  # cu126 needs Windows driver 560.76 (C1 Table 3)
    # missing facts
    (NO_DRIVER, "nvidia-driver", None, "unknown"),
    (NO_DRIVER, "pytorch", None, "unknown"),  # which CUDA the driver runs is not known
    (NO_DRIVER, "vllm", 0, "unknown"),
    # Turing: no bf16 advice
    (RTX_2080, "bf16", 0, "fail"),  # CC 7.5: no bf16 (A1)
    # toolkits against architectures
    (ADA_OLD_TOOLKIT, "cuda-toolkit", 0, "fail"),  # sm_89 needs CUDA 11.8 (K2)
    (PASCAL_CUDA13, "cuda-toolkit", 0, "fail"),  # CUDA 13 dropped Maxwell/Pascal/Volta (C1)
    (B300, "cuda-toolkit", 0, "unknown"),  # no source for the first toolkit that targets CC 10.3
    # Ollama's CC 5.0-6.2 driver floor
    (PASCAL_575, "ollama", 0, "ok"),  # >= 570 (F8)
    # an installed version the pre-0.50 rules cover
    (OLD_BNB, "bitsandbytes", 0, "ok"),  # 0.43-era docs: CUDA 11.0-12.3, no Kepler; LLM.int8() on Turing+
]


@pytest.mark.parametrize(("machine", "framework", "gpu", "expected"), CASES)
def test_status(catalog: Catalog, machine: Machine, framework: str, gpu: int | None, expected: str) -> None:
    finding = find(check_compat(machine, catalog, TODAY), framework, gpu)
    assert finding.status == expected, finding


def test_findings_are_frozen_and_use_known_ids(catalog: Catalog) -> None:
    for machine in (GTX_1080TI_535, H100, MI300X, M2_ULTRA, CPU_LAPTOP, RX_6700_XT):
        findings = check_compat(machine, catalog)
        assert findings
        for finding in findings:
            assert finding.framework in FRAMEWORKS, finding
            assert finding.status in ("ok", "warn", "fail", "unknown")
            assert finding.reason
            if finding.status == "fail":
                assert finding.fix, finding
    with pytest.raises(dataclasses.FrozenInstanceError):
        findings[0].status = "ok"  # type: ignore[misc]


def test_failures_come_first_within_each_gpu(catalog: Catalog) -> None:
    findings = check_compat(GTX_1080TI_535, catalog)
    groups = [f.gpu_index for f in findings]
    assert groups == sorted(groups, key=lambda g: -1 if g is None else g)
    gpu0 = [f.status for f in findings if f.gpu_index == 0]
    assert gpu0.index("fail") < gpu0.index("ok")


@pytest.mark.parametrize(
    ("machine", "pin", "index"),
    [
        # the newest release (2.14.1; 2.15.0 lists no CUDA wheels yet) with the driver it takes: R580
        (RTX_5090_OLD_TORCH, "2.14.1", "cu130"),  # sm_120 in cu130; R580 runs CUDA 13.0 fully
        (GTX_1080TI_535, "2.14.1", "cu126"),  # Pascal only in cu126 from 2.8 (P5); R580 is its last branch
        (DRIVER_470_CU12, "2.14.1", "cu130"),
        (H100, "2.14.1", "cu130"),
        (RX_7900_XTX, "2.13.0", "rocm7.2"),  # 2.14's ROCm wheel is not catalogued (uncertain '7.14')
        (CPU_LAPTOP, "2.15.0", "cpu"),  # PyPI: torch 2.15.0, 2026-10-28
    ],
)
def test_recommended_wheel(catalog: Catalog, machine: Machine, pin: str, index: str) -> None:
    wheel = recommend_torch(machine, catalog)
    assert wheel is not None
    assert wheel.command == f"pip install torch=={pin} --index-url https://download.pytorch.org/whl/{index}"


def test_failing_torch_build_recommends_the_wheel(catalog: Catalog) -> None:
    finding = find(check_compat(RTX_5090_OLD_TORCH, catalog), "pytorch", 0)
    assert "sm_120" in finding.reason
    assert finding.command == "pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu130"
    assert finding.actions == ("driver:580.65.06", "torch:2.14.1+cu130")
    assert finding.cause == "wheel-cuda-mismatch" and finding.installed is True


def test_macos_gets_plain_pip_install(catalog: Catalog) -> None:
    wheel = recommend_torch(M2_ULTRA, catalog)
    assert wheel is not None and wheel.command == "pip install torch==2.15.0"
    assert "mps" in wheel.reason


def test_python_range_limits_the_wheel(catalog: Catalog) -> None:
    old_python = dataclasses.replace(CPU_LAPTOP, host=Host(os="linux", python="3.8.10"))
    wheel = recommend_torch(old_python, catalog)
    assert wheel is not None and wheel.version == "2.5.1"  # 2.5.1 is the last release allowing 3.8 (P1)


def test_ptx_only_is_a_jit_warning(catalog: Catalog) -> None:
    # GB10 (12.1) on 2.13 cu130: sm_120 cubin runs on 12.1 (same major), so take a CC only PTX reaches
    from rigcheck.core.compat._torch import arch_check, variant_entry

    facts = Facts(CPU_LAPTOP, catalog)
    entry = variant_entry(facts, "2.13", "cu130")
    assert entry is not None
    assert arch_check(entry, nv("GB10", "12.1")).status == "ok"
    assert arch_check(entry, nv("future", "13.0")).status == "warn"  # compute_120 PTX JIT-compiles on >= 12.0
    hopper_a = variant_entry(facts, "2.5", "cu124")
    assert hopper_a is not None
    assert arch_check(hopper_a, nv("H100", "9.0")).status == "ok"
    assert arch_check(hopper_a, nv("future", "9.5")).status == "ok"  # sm_90 (not sm_90a) runs on 9.x


def test_override_advice_is_unofficial_and_copyable(catalog: Catalog) -> None:
    finding = find(check_compat(RX_6700_XT, catalog), "rocm", 0)
    assert finding.command == "export HSA_OVERRIDE_GFX_VERSION=10.3.0"
    assert "unofficial" in finding.reason or "not an official" in finding.reason
    windows = dataclasses.replace(RX_6700_XT, host=Host(os="windows", python="3.11.7"))
    assert find(check_compat(windows, catalog), "ollama", 0).command is None  # Linux-only variable


def test_vllm_on_windows_says_wsl(catalog: Catalog) -> None:
    finding = find(check_compat(WINDOWS_4090, catalog), "vllm", 0)
    assert finding.fix and "WSL" in finding.fix


def test_json_has_every_field(catalog: Catalog) -> None:
    data = findings_json(check_compat(H100, catalog))
    keys = {"framework", "subject", "gpu_index", "status", "reason", "fix", "source", "command", "installed",
            "cause", "actions", "side_effect", "blocked_by", "bucket"}  # fmt: skip
    assert data["findings"] and all(set(f) == keys for f in data["findings"])
    assert set(data) == {"findings", "root_causes", "summary"}


def test_every_framework_rule_evaluates(catalog: Catalog) -> None:
    """Each [[framework]] rule runs against a GPU of its backend without error and gives a known status."""
    gpu_for = {
        "cuda": nv("NVIDIA GeForce RTX 4090", "8.9"),
        "rocm": amd("AMD Radeon RX 7900 XTX", "gfx1100"),
        "metal": GPU(vendor="apple", name="Apple M2 Ultra", memory_total_bytes=None),
        "vulkan": amd("AMD Radeon RX 7900 XTX", "gfx1100"),
        "sycl": GPU(vendor="intel", name="Intel Arc A770", memory_total_bytes=16 * GIB),
    }
    facts = Facts(H100, catalog)
    for rule in catalog.frameworks:
        check = evaluate_rule(rule, facts, gpu_for.get(rule.backend))
        assert check is None or check.status in ("ok", "warn", "fail", "unknown"), rule.id


def test_gfx_override_records_are_checked() -> None:
    bad = '[[gfx_override]]\ngfx_target = "navi22"\noverride = "10.3.0"\nruns_as = "gfx1030"\nsource = "x"\n'
    with pytest.raises(InputError, match="gfx_target"):
        parse_file("bad.toml", bad)
    bad_value = (
        '[[gfx_override]]\ngfx_target = "gfx1031"\noverride = "10.3"\nruns_as = "gfx1030"\nsource = "x"\n'
    )
    with pytest.raises(InputError, match="override"):
        parse_file("bad.toml", bad_value)


def test_arch_min_cuda_comes_from_data(catalog: Catalog) -> None:
    table = {cc: cuda for arch in catalog.archs for cc, cuda in arch.min_cuda.items()}
    # compat-facts §2.1: 11.1 for 8.6, 11.8 for 8.9/9.0, 12.8 for 10.0/12.0, 12.9 for 12.1
    assert table["8.6"] == "11.1" and table["8.9"] == table["9.0"] == "11.8"
    assert table["10.0"] == table["12.0"] == "12.8" and table["12.1"] == "12.9"
    assert "10.3" not in table  # no source: the check answers unknown


def test_llama_cpp_executable_counts_as_installed(catalog: Catalog) -> None:
    machine = box(nv("NVIDIA GeForce RTX 4090", "8.9"), driver="550.54.15", cuda="12.4",
                  executables={"llama-server": "b4410 (6e1531ad)", "ollama": "0.5.7"})  # fmt: skip
    findings = check_compat(machine, catalog)
    assert "llama-server" in find(findings, "llama.cpp", 0).subject
    assert find(findings, "ollama", 0).status == "ok"  # 550 >= 550 (F8)
