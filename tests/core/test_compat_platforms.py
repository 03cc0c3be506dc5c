"""Twelve machines users really have in 2026 (tests/fixtures/machines/platforms), each given advice an ML
engineer would follow. Facts, by machine:

- RTX 5090, driver 570, torch 2.6+cu124: the cu124 wheel has no sm_120 kernels; software on it is blocked by
  it; the fix is R580 and a cu130 torch (the snapshot has no taken_at: judged as of today).
- RTX 5060 Ti on Windows, torch 2.14.1 from PyPI: PyPI's Windows wheel is CPU-only (its CUDA dependencies are
  marked platform_system == "Linux", wheels.toml); SGLang and vLLM have no Windows wheel.
- DGX Spark (GB10, CC 12.1, aarch64): the aarch64 cu130 wheel's sm_120 cubin runs on 12.1.
- Jetson AGX Orin, JetPack 6.2 (an old snapshot: no arch, no l4t; "-tegra" kernel, "JetPack 6.2" in the OS
  string): the driver comes with JetPack; torch comes from Jetson's own index; Ollama ships a JetPack runner;
  xformers has no aarch64 wheel.
- Jetson Thor, JetPack 7: download.pytorch.org's cu130 aarch64 wheels carry sm_110 (pytorch#178665, #197555).
- Strix Halo (gfx1151) on ROCm 7.1: supported from ROCm 7.0.2 (AMD's Radeon/Ryzen docs, vLLM's ROCm docs).
- RX 9070 XT on ROCm 6.4: current Ollama "requires the AMD ROCm v7 driver on Linux" (gpu.mdx).
- 8× MI355X (gfx950) on ROCm 7.2: official target; one list for eight GPUs.
- Arc B580 with torch +xpu: the XPU build runs on Arc (PyTorch's Intel GPU page); never replaced by +cpu.
- M4 Max: CUDA/ROCm-only libraries are not applicable (not unknown); MLX and vllm-metal are the routes.
- GTX 1060 with torch cu128: no Pascal kernels; cu126 has sm_60.
- WSL2 RTX 4070: the Windows driver; TensorRT-LLM 1.2 wheels are CUDA 13 builds, so its torch is +cu130.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.compat import Finding, check_compat, recommend_torch, root_causes
from rigcheck.core.compat._base import Facts
from rigcheck.core.machine import Machine, load_machine

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines" / "platforms"
TODAY = date(2026, 12, 1)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def machine(name: str) -> Machine:
    return load_machine(FIXTURES / f"{name}.json")


def findings(name: str, catalog: Catalog) -> tuple[Finding, ...]:
    return check_compat(machine(name), catalog, TODAY)


def find(found: tuple[Finding, ...], framework: str, gpu: int | None = 0) -> Finding:
    matches = [f for f in found if f.framework == framework and f.gpu_index == gpu]
    assert len(matches) == 1, (framework, gpu, matches)
    return matches[0]


# (machine, framework, gpu, status, cause)
JUDGED = [
    ("rtx5090-driver570-cu124", "pytorch", 0, "fail", "wheel-cuda-mismatch"),
    ("rtx5090-driver570-cu124", "flash-attn-2", 0, "fail", "wheel-cuda-mismatch"),  # blocked by the torch
    (
        "rtx5090-driver570-cu124",
        "nvidia-driver",
        None,
        "warn",
        "driver-eol",
    ),  # R570 is not a supported branch
    ("rtx5060ti-windows", "pytorch", None, "warn", "wheel-cuda-mismatch"),  # PyPI's Windows torch: CPU only
    ("rtx5060ti-windows", "sglang", 0, "fail", "os-unsupported"),  # manylinux wheels only
    ("rtx5060ti-windows", "vllm", 0, "fail", "os-unsupported"),
    ("dgx-spark", "pytorch", None, "ok", None),
    ("jetson-agx-orin-jp62", "pytorch", None, "ok", None),  # a Jetson build
    ("jetson-agx-orin-jp62", "ollama", 0, "ok", None),  # the JetPack 6 runner; no desktop driver floor
    ("jetson-agx-orin-jp62", "xformers", 0, "warn", "limited"),  # no aarch64 wheel: a source build
    ("jetson-agx-orin-jp62", "nvidia-driver", None, "ok", None),  # no desktop lifecycle on a Jetson
    ("jetson-thor-jp7", "pytorch", None, "ok", None),
    ("strix-halo-rocm7", "rocm", 0, "ok", None),
    ("strix-halo-rocm7", "vllm", 0, "ok", None),
    ("strix-halo-rocm7", "pytorch", None, "ok", None),
    ("rx9070xt-rocm64", "ollama", 0, "warn", "rocm-too-old"),  # ROCm v7 driver; Vulkan meanwhile
    ("rx9070xt-rocm64", "rocm", 0, "ok", None),
    ("mi355x-8", "rocm", 7, "ok", None),
    ("mi355x-8", "vllm", 7, "ok", None),
    ("arc-b580-xpu", "pytorch", None, "ok", None),
    ("arc-b580-xpu", "flash-attn-2", 0, "fail", "vendor-only"),
    ("arc-b580-xpu", "vllm", 0, "warn", "limited"),  # XPU: source build or Intel's image
    ("m4-max", "flash-attn-2", 0, "fail", "vendor-only"),
    ("m4-max", "xformers", 0, "fail", "vendor-only"),
    ("m4-max", "tensorrt-llm", 0, "fail", "vendor-only"),
    ("m4-max", "exllamav2", 0, "fail", "vendor-only"),
    ("m4-max", "mlx", 0, "ok", None),
    ("m4-max", "vllm", 0, "ok", None),  # vllm-metal
    ("m4-max", "unsloth", 0, "fail", "vendor-only"),  # no Metal build, no CPU training
    ("m4-max", "bitsandbytes", 0, "ok", None),  # its macosx_14_0_arm64 wheel: on the CPU
    ("gtx1060-cu128", "pytorch", 0, "fail", "wheel-cuda-mismatch"),
    ("gtx1060-cu128", "unsloth", 0, "fail", "wheel-cuda-mismatch"),  # blocked by the cu128 torch
    ("wsl2-rtx4070", "pytorch", 0, "ok", None),
]


@pytest.mark.parametrize(("name", "framework", "gpu", "status", "cause"), JUDGED)
def test_judged(
    catalog: Catalog, name: str, framework: str, gpu: int | None, status: str, cause: str
) -> None:
    finding = find(findings(name, catalog), framework, gpu)
    assert (finding.status, finding.cause) == (status, cause), finding


def test_platforms_are_recognised_from_what_old_snapshots_hold(catalog: Catalog) -> None:
    orin = Facts(machine("jetson-agx-orin-jp62"), catalog).platform
    assert (orin.arch, orin.jetson, orin.jetpack, orin.glibc) == ("aarch64", True, (6, 2), (2, 35))
    thor = Facts(machine("jetson-thor-jp7"), catalog).platform
    assert (thor.jetpack, thor.l4t, thor.glibc) == ((7, None), "38.2.1", (2, 39))  # L4T 38 = JetPack 7
    assert Facts(machine("wsl2-rtx4070"), catalog).platform.wsl
    assert "windows" in Facts(machine("rtx5060ti-windows"), catalog).platform.tags


def test_a_jetson_is_never_told_to_update_its_driver(catalog: Catalog) -> None:
    for finding in findings("jetson-agx-orin-jp62", catalog):
        assert not any(a.startswith("driver:") for a in finding.actions), finding
        assert "R580" not in (finding.fix or "") and "R595" not in (finding.fix or ""), finding
    trt = find(findings("jetson-agx-orin-jp62", catalog), "tensorrt-llm")
    assert trt.fix and trt.fix.startswith("On a Jetson the driver comes with JetPack 6.2")
    assert "container" not in trt.fix  # the desktop images are x86-64/SBSA builds, not JetPack 6 ones
    # vLLM has Jetson builds (the NVIDIA-AI-IOT container, Jetson AI Lab's index), not PyPI's CUDA 13 wheel
    vllm = find(findings("jetson-agx-orin-jp62", catalog), "vllm")
    assert vllm.status == "ok" and "pypi.jetson-ai-lab.io/jp6/cu126" in (vllm.side_effect or ""), vllm
    assert vllm.command is None  # nothing pins PyPI's vllm/torch on a Jetson
    wheel = recommend_torch(machine("jetson-agx-orin-jp62"), catalog, TODAY)
    assert wheel is not None and wheel.command == (
        "pip install torch torchvision --index-url https://pypi.jetson-ai-lab.io/jp6/cu126"
    )


def test_thor_gets_the_cuda_wheel_with_its_kernels_not_the_cpu_one(catalog: Catalog) -> None:
    wheel = recommend_torch(machine("jetson-thor-jp7"), catalog, TODAY)
    assert wheel is not None and wheel.variant == "cu130" and "sm_110" in wheel.reason
    spark = recommend_torch(machine("dgx-spark"), catalog, TODAY)
    assert spark is not None and spark.variant == "cu130" and "CC 12.1" in spark.reason


def test_windows_cuda_commands_always_name_the_pytorch_index(catalog: Catalog) -> None:
    found = findings("rtx5060ti-windows", catalog)
    torch = find(found, "pytorch", None)
    # the installed CPU build is 2.14.1 too: "torch==2.14.1" would match it (PEP 440 ignores the local label)
    # and pip would change nothing, so the command pins the CUDA build's label
    assert (
        torch.command == "pip install torch==2.14.1+cu130 --index-url https://download.pytorch.org/whl/cu130"
    )
    for finding in found:
        if finding.command and "torch==" in finding.command:
            assert "download.pytorch.org/whl/cu" in finding.command, finding
    machine_ = machine("rtx5060ti-windows")
    bare = machine_.__class__.from_dict({**machine_.to_dict(), "software": {"python_packages": {}}})
    unsloth = find(check_compat(bare, catalog, TODAY), "unsloth")
    assert (
        unsloth.command is not None
        and "--extra-index-url https://download.pytorch.org/whl/cu" in unsloth.command
    )


def test_arc_keeps_its_xpu_torch(catalog: Catalog) -> None:
    for finding in findings("arc-b580-xpu", catalog):
        assert "+cpu" not in (finding.command or "") and "whl/cpu" not in (finding.command or ""), finding
    bare = machine("arc-b580-xpu")
    bare = bare.__class__.from_dict({**bare.to_dict(), "software": {"python_packages": {}}})
    wheel = recommend_torch(bare, catalog, TODAY)
    assert wheel is not None and wheel.command == (
        "pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/xpu"
    )


def test_wsl_driver_advice_and_tensorrt_llm_torch(catalog: Catalog) -> None:
    found = findings("wsl2-rtx4070", catalog)
    trt = find(found, "tensorrt-llm")
    assert trt.command is not None and "torch==2.9.1+cu130" in trt.command, trt  # not the installed +cu128
    old = machine("wsl2-rtx4070")
    old = old.__class__.from_dict({**old.to_dict(), "drivers": {"nvidia": "552.44", "cuda_driver": "12.4"}})
    vllm = find(check_compat(old, catalog, TODAY), "vllm")
    assert vllm.fix and "on Windows" in vllm.fix and "WSL2 uses the Windows driver" in vllm.fix


def test_apple_has_no_unknown_for_what_is_documented_cuda_only(catalog: Catalog) -> None:
    found = findings("m4-max", catalog)
    cuda_only = {"flash-attn-2", "flash-attn-3", "flash-attn-4", "xformers", "tensorrt-llm", "transformer-engine",
                 "exllamav2", "unsloth"}  # fmt: skip
    for finding in found:
        if finding.framework in cuda_only:
            assert finding.status == "fail" and finding.reason.startswith("would not work here"), finding
    # SGLang has an Apple Metal route (a source install, docs.sglang.io apple_metal), not PyPI's Linux wheels
    sglang = find(found, "sglang")
    assert sglang.status == "warn" and "python[all_mps]" in (sglang.side_effect or ""), sglang


def test_eight_identical_gpus_are_one_root_cause_entry(catalog: Catalog) -> None:
    found = findings("mi355x-8", catalog)
    assert {f.gpu_index for f in found if f.gpu_index is not None} == set(range(8))
    for group in root_causes(found, machine("mi355x-8")):
        assert "×8" not in group.title or "1 thing" in group.title


@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.json")))
def test_every_machine_gets_followable_advice(catalog: Catalog, name: str) -> None:
    """No fix asks for what the platform cannot do, every failing installed finding says what to do, and an
    unknown names its missing fact."""
    snapshot = machine(name)
    for finding in check_compat(snapshot, catalog, TODAY):
        if finding.status == "unknown":
            assert finding.cause == "missing-fact" and finding.reason
        if finding.installed and finding.status == "fail":
            assert finding.fix, finding
        if snapshot.host.os == "windows":
            assert "amdgpu-install" not in (finding.fix or "")


def test_the_probe_reads_the_l4t_release(tmp_path: Path) -> None:
    """/etc/nv_tegra_release's first line, as Jetson Linux 36.4.3 writes it."""
    from rigcheck.core.probe._common import ProbeContext
    from rigcheck.core.probe._host import _l4t

    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "nv_tegra_release").write_text(
        "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, DATE: Wed Jan  8\n"
    )
    assert _l4t(ProbeContext(root=tmp_path, platform="linux")) == "36.4.3"
    assert _l4t(ProbeContext(root=tmp_path / "none", platform="linux")) is None


@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("*.json")))
def test_every_fix_once_applied_makes_its_finding_ok(catalog: Catalog, name: str) -> None:
    """The issue-16 invariant on these machines too: following a finding's actions makes it OK (or leaves only
    what the hardware limits), never a half fix (Python 3.11 for vLLM on a JetPack 6 driver)."""
    from rigcheck.core.compat import HARDWARE_CAUSES, apply_actions

    def key(f: Finding) -> tuple[str, int | None, str]:
        return f.framework, f.gpu_index, f.subject if f.framework == "cuda-toolkit" else ""

    snapshot = machine(name)
    for finding in check_compat(snapshot, catalog, TODAY):
        if not finding.actions:
            continue
        assert finding.cause not in HARDWARE_CAUSES, finding
        after = {
            key(f): f for f in check_compat(apply_actions(snapshot, catalog, finding.actions), catalog, TODAY)
        }
        again = after[key(finding)]
        assert again.status == "ok" or (
            again.status == "warn" and again.cause in ("not-official", "limited") and not again.actions
        ), (finding, again)
