"""The dependency chain: software built on PyTorch is judged on the torch it would run on.

Facts: torch 2.6 cu124 cubins sm_50…sm_90, no sm_120 (moi90/pytorch_compute_capabilities PR #3, cuobjdump);
torch 2.7 cu128 sm_75…sm_120, no Pascal (same); a +cu121 build needs a CUDA 12 driver, >= 525.60.13 (CUDA 13.2
U2 release notes, Table 2); Transformer Engine needs "NVIDIA Driver supporting CUDA 12.1 or later" (its
installation guide).
"""

from __future__ import annotations

from datetime import date

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.compat import Finding, apply_actions, check_compat, root_causes, summarize
from rigcheck.core.compat._torch import parse_build
from rigcheck.core.machine import CPU, GPU, Drivers, Host, Machine, Memory, Software

GIB = 1024**3
TODAY = date(2026, 12, 1)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def box(name: str, cc: str, driver: str, cuda: str, packages: dict[str, str]) -> Machine:
    return Machine(
        cpu=CPU(logical_cores=16, arch="x86_64", flags=("avx", "avx2", "fma", "f16c")),
        memory=Memory(total_bytes=64 * GIB),
        gpus=(GPU("nvidia", name, 24 * GIB, index=0, compute_capability=cc),),
        host=Host(os="linux", python="3.11.9", os_version="Ubuntu 22.04.4 LTS"),
        drivers=Drivers(nvidia=driver, cuda_driver=cuda),
        software=Software(python_packages=packages),
        taken_at="2026-12-01T09:00:00Z",
    )


RTX5090_CU124 = box(
    "NVIDIA GeForce RTX 5090", "12.0", "570.133.07", "12.8",
    {"torch": "2.6.0+cu124", "flash-attn": "2.7.4.post1", "bitsandbytes": "0.45.2", "unsloth": "2025.3.1"},
)  # fmt: skip
GTX1060_CU128 = box(
    "NVIDIA GeForce GTX 1060 6GB", "6.1", "580.95.05", "13.0",
    {"torch": "2.7.1+cu128", "bitsandbytes": "0.46.0", "unsloth": "2025.6.1"},
)  # fmt: skip
RTX3060_470 = box(
    "NVIDIA GeForce RTX 3060", "8.6", "470.256.02", "11.4",
    {"torch": "2.1.2+cu121", "flash-attn": "2.5.6", "deepspeed": "0.14.0"},
)  # fmt: skip
BROKEN = {"rtx5090-cu124": RTX5090_CU124, "gtx1060-cu128": GTX1060_CU128, "rtx3060-470": RTX3060_470}


def find(findings: tuple[Finding, ...], framework: str) -> Finding:
    return next(f for f in findings if f.framework == framework and f.gpu_index == 0)


@pytest.mark.parametrize(
    ("name", "framework"),
    [
        ("rtx5090-cu124", "flash-attn-2"),  # FA2 builds sm_120, but torch +cu124 has no sm_120 kernels
        ("rtx5090-cu124", "bitsandbytes"),
        ("rtx5090-cu124", "unsloth"),
        ("gtx1060-cu128", "bitsandbytes"),  # CC 6.0+ would do, torch cu128 has no Pascal kernels
        ("gtx1060-cu128", "unsloth"),
        ("rtx3060-470", "flash-attn-2"),
        ("rtx3060-470", "deepspeed"),
    ],
)
def test_software_on_a_torch_that_cannot_run_is_blocked_by_it(
    catalog: Catalog, name: str, framework: str
) -> None:
    machine = BROKEN[name]
    findings = check_compat(machine, catalog, TODAY)
    torch = next(f for f in findings if f.framework == "pytorch" and f.status == "fail")
    finding = find(findings, framework)
    assert finding.status == "fail" and finding.blocked_by == torch.subject, finding
    assert finding.reason.startswith(
        f"blocked by the installed torch {machine.software.python_packages['torch']}"
    )
    # the torch fix first: the same fix, command and actions as the torch finding
    assert (finding.fix, finding.command, finding.actions) == (torch.fix, torch.command, torch.actions)
    # and following it makes the finding OK again (or leaves only what the GPU itself limits)
    after = find(check_compat(apply_actions(machine, catalog, finding.actions), catalog, TODAY), framework)
    assert after.blocked_by is None and after.status in ("ok", "warn"), after
    assert not after.actions, after


def test_transformer_engine_does_not_work_on_driver_470(catalog: Catalog) -> None:
    finding = find(check_compat(RTX3060_470, catalog, TODAY), "transformer-engine")
    assert finding.status == "fail" and "CUDA ≥ 12.1" in finding.reason, finding


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_no_command_pins_a_torch_that_fails_here(catalog: Catalog, name: str) -> None:
    machine = BROKEN[name]
    installed = machine.software.python_packages["torch"]
    for finding in check_compat(machine, catalog, TODAY):
        assert f"torch=={installed}" not in (finding.command or ""), finding


def test_a_torch_pip_would_bring_is_checked_too(catalog: Catalog) -> None:
    """Unsloth not installed on driver 470: pip would bring torch 2.14.1, and no build of it runs on 470, so it
    is not 'would work if installed' with a command that installs a broken torch."""
    machine = box("NVIDIA GeForce RTX 3060", "8.6", "470.256.02", "11.4", {"torch": "2.1.2+cu121"})
    finding = find(check_compat(machine, catalog, TODAY), "unsloth")
    assert finding.status == "fail" and finding.cause == "driver-too-old", finding
    assert finding.command is None and finding.actions == ("driver:580.65.06",)
    fixed = find(check_compat(apply_actions(machine, catalog, finding.actions), catalog, TODAY), "unsloth")
    # PyPI's torch 2.14.1 is a cu130 build (its wheel depends on cuda-toolkit==13.0.3), which R580 runs fully
    assert fixed.status == "ok" and fixed.command == "pip install unsloth==2026.10.9 torch==2.14.1"


def test_a_package_that_takes_any_torch_build_gets_the_one_that_runs(catalog: Catalog) -> None:
    """A GTX 1060 on R580 with no torch: PyPI's cu130 torch has no Pascal kernels; cu126 has sm_60."""
    machine = box("NVIDIA GeForce GTX 1060 6GB", "6.1", "580.95.05", "13.0", {})
    finding = find(check_compat(machine, catalog, TODAY), "unsloth")
    assert finding.command is not None
    build = parse_build(finding.command.split("torch==")[1].split()[0])
    assert build is not None and build.variant == "cu126", finding.command
    assert finding.command.endswith("--extra-index-url https://download.pytorch.org/whl/cu126")


def test_the_root_causes_count_the_broken_torch_once(catalog: Catalog) -> None:
    findings = check_compat(RTX5090_CU124, catalog, TODAY)
    groups = {g.cause: g for g in root_causes(findings, RTX5090_CU124)}
    torch = groups["wheel-cuda-mismatch"]
    assert torch.title == (
        "The installed PyTorch wheel (2.6.0+cu124) does not fit this GPU or driver: 1 thing. The installed "
        "PyTorch also blocks 3 things that run on it (flash-attn-2, bitsandbytes, unsloth)."
    )
    summary = summarize(RTX5090_CU124, catalog, findings, TODAY)
    assert {"pytorch", "flash-attn-2", "bitsandbytes", "unsloth"} <= {f.framework for f in summary.fixes}
