"""The third audit (docs/compat-audit.md): one regression test per class of finding that was wrong on the 22
machines (the ten of fakes.machines plus tests/fixtures/machines/platforms), judged against the sources the
catalog rows quote.

Each test asserts the mechanism on the machine where the wrong finding was seen, and where it matters that a
neighbour stays as it was (Thor is not given Orin's Jetson rules, an RDNA 3 card keeps its own precision row).
"""

from __future__ import annotations

import re
import shlex
from datetime import date

import pytest

from fakes.machines import AUDIT_MACHINES, PLATFORMS, audit_machine
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.compat import Finding, check_compat, recommend_torch
from rigcheck.core.compat._torch import parse_build

TODAY = date(2026, 12, 1)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


machine = audit_machine


ALL = sorted([*AUDIT_MACHINES, *(p.stem for p in PLATFORMS.glob("*.json"))])


def findings(name: str, catalog: Catalog) -> tuple[Finding, ...]:
    return check_compat(machine(name), catalog, TODAY)


def find(found: tuple[Finding, ...], framework: str, gpu: int | None = 0) -> Finding:
    matches = [f for f in found if f.framework == framework and f.gpu_index == gpu]
    assert len(matches) == 1, (framework, gpu, matches)
    return matches[0]


def test_there_are_22_machines() -> None:
    assert len(ALL) == 22


@pytest.mark.parametrize("name", ALL)
def test_no_torch_command_is_a_no_op_over_the_same_release(catalog: Catalog, name: str) -> None:
    """``torch==2.14.1`` matches an installed 2.14.1 of any build (PEP 440 ignores the local label): a command
    replacing a build of the same release must pin the label, or pip keeps the wrong build."""
    snapshot = machine(name)
    installed = snapshot.software.python_packages.get("torch")
    build = parse_build(installed) if installed else None
    if build is None:
        return
    for finding in check_compat(snapshot, catalog, TODAY):
        command = finding.command or ""
        for word in shlex.split(command) if command.startswith("pip install") else ():
            match = re.fullmatch(r"torch==([^+\s]+)(\+\S+)?", word)
            if match and match.group(1) == build.release and match.group(2) is None:
                assert "--index-url" not in command and "--extra-index-url" not in command, (finding, build)


def test_windows_cpu_torch_is_replaced_by_the_labelled_cuda_build(catalog: Catalog) -> None:
    torch = find(findings("rtx5060ti-windows", catalog), "pytorch", None)
    assert (
        torch.command == "pip install torch==2.14.1+cu130 --index-url https://download.pytorch.org/whl/cu130"
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("jetson-thor-jp7", {"bf16": "ok", "fp8": "ok", "fp4": "ok"}),  # Blackwell tensor cores, CC 11.0
        ("strix-halo-rocm7", {"bf16": "ok", "fp8": "fail", "fp4": "fail"}),  # RDNA 3.5: gfx11 WMMA
        ("rx9070xt-rocm64", {"bf16": "ok", "fp8": "ok", "fp4": "fail"}),  # RDNA 4: FP8 WMMA, no FP4
        ("rdna3", {"bf16": "ok", "fp8": "fail", "fp4": "fail"}),  # unchanged neighbour
        (
            "arc-b580-xpu",
            {"bf16": "ok", "fp8": "unknown", "fp4": "unknown"},
        ),  # Xe2 by name; fp8/fp4 unsourced
    ],
)
def test_precision_is_known_where_a_source_says(
    catalog: Catalog, name: str, expected: dict[str, str]
) -> None:
    found = findings(name, catalog)
    for precision, status in expected.items():
        finding = find(found, precision)
        assert finding.status == status, finding
        if status == "unknown":
            assert "Xe2" in finding.reason  # names the architecture whose fact is missing


@pytest.mark.parametrize(
    ("name", "status", "words"),
    [
        ("strix-halo-rocm7", "ok", "unsloth[amd]"),
        ("rdna3", "ok", "unsloth[amd]"),
        ("arc-b580-xpu", "ok", "intel-gpu-torch290"),
    ],
)
def test_unsloth_on_amd_and_intel_follows_its_guides(
    catalog: Catalog, name: str, status: str, words: str
) -> None:
    unsloth = find(findings(name, catalog), "unsloth")
    assert unsloth.status == status and words in (unsloth.side_effect or ""), unsloth


def test_unsloth_on_a_target_its_guide_does_not_name_is_unknown_not_unsupported(catalog: Catalog) -> None:
    unsloth = find(findings("mi355x-8", catalog), "unsloth")
    assert unsloth.status == "unknown" and "gfx950" in unsloth.reason, unsloth


def test_bitsandbytes_on_jetpack6_is_not_pypis_sbsa_wheel(catalog: Catalog) -> None:
    orin = find(findings("jetson-agx-orin-jp62", catalog), "bitsandbytes")
    assert orin.status == "warn" and "pypi.jetson-ai-lab.io/jp6/cu126" in (orin.fix or ""), orin
    thor = find(findings("jetson-thor-jp7", catalog), "bitsandbytes")  # JetPack 7 runs the SBSA wheels
    assert thor.status == "ok", thor


def test_container_routes_follow_the_platform(catalog: Catalog) -> None:
    for name in ("dgx-spark", "jetson-thor-jp7"):
        containers = find(findings(name, catalog), "containers")
        assert "nvcr.io/nvidia/pytorch:25.11-py3" in (containers.side_effect or ""), containers
    orin = find(findings("jetson-agx-orin-jp62", catalog), "containers")
    assert "-igpu" in (orin.side_effect or "") and "25.11-py3 " not in (orin.side_effect or ""), orin
    assert "525.60.13" not in orin.reason  # a desktop driver floor means nothing on JetPack
    x86 = find(findings("ada", catalog), "containers")
    assert x86.side_effect is None or "nvcr.io/nvidia/pytorch:25.11" not in x86.side_effect


@pytest.mark.parametrize("name", ["dgx-spark", "jetson-thor-jp7"])
def test_xformers_on_aarch64_is_a_source_build_pip_can_find(catalog: Catalog, name: str) -> None:
    xformers = find(findings(name, catalog), "xformers")
    assert xformers.status == "warn" and xformers.cause == "limited", xformers
    assert xformers.command and "--extra-index-url" in xformers.command  # PyPI keeps the source archive


def test_intel_gpu_routes_are_documented_not_unknown(catalog: Catalog) -> None:
    found = findings("arc-b580-xpu", catalog)
    for framework, words in (("sglang", "pyproject_xpu"), ("deepspeed", "2.8"), ("containers", "/dev/dri")):
        finding = find(found, framework)
        assert finding.status in ("ok", "warn") and words in (finding.side_effect or ""), finding
    torch = find(found, "pytorch", None)
    assert torch.status == "ok" and "+xpu" in torch.subject  # never replaced by +cpu


def test_sglang_on_a_mac_is_the_metal_source_route(catalog: Catalog) -> None:
    sglang = find(findings("m4-max", catalog), "sglang")
    assert sglang.status == "warn" and "all_mps" in (sglang.side_effect or ""), sglang


def test_the_rocm_recommendation_says_what_it_skipped(catalog: Catalog) -> None:
    wheel = recommend_torch(machine("strix-halo-rocm7"), catalog, TODAY)
    assert wheel is not None and wheel.variant == "rocm7.2"
    assert "2.14.1" in wheel.reason and "no ROCm wheel" in wheel.reason


def test_unknowns_are_only_the_named_missing_facts(catalog: Catalog) -> None:
    """After the audit, six distinct unknowns remain on the 22 machines, each naming its missing fact."""
    left = set()
    for name in ALL:
        for finding in findings(name, catalog):
            if finding.status == "unknown":
                assert finding.cause == "missing-fact", finding
                left.add((name, finding.framework))
    assert left == {
        ("arc-b580-xpu", "fp8"),
        ("arc-b580-xpu", "fp4"),
        ("m4-max", "bf16"),
        ("m4-max", "fp8"),
        ("m4-max", "fp4"),
        ("mi355x-8", "unsloth"),
    }


def test_containers_on_an_old_driver_run_cuda_11_images_only(catalog: Catalog) -> None:
    """Driver 470 runs CUDA 11 images (floor 450.80.02); today's CUDA 12/13 images need 525.60.13/580."""
    containers = find(findings("old-470", catalog), "containers")
    assert containers.status == "warn" and "525.60.13" in containers.reason, containers


def test_cpu_backends_name_their_own_install_route(catalog: Catalog) -> None:
    found = findings("cpu", catalog)
    for framework in ("vllm", "sglang"):
        finding = find(found, framework, None)
        assert finding.status == "ok" and "CUDA torch" in (finding.side_effect or ""), finding


def test_vllm_and_sglang_on_jetpack6_take_the_jetson_routes(catalog: Catalog) -> None:
    found = findings("jetson-agx-orin-jp62", catalog)
    assert "NVIDIA-AI-IOT" in (find(found, "vllm").side_effect or "")
    assert "jetson-containers build sglang" in (find(found, "sglang").side_effect or "")
    thor = findings("jetson-thor-jp7", catalog)  # JetPack 7: upstream wheels, not the Jetson 6 routes
    assert find(thor, "vllm").command == "pip install vllm==0.33.0 torch==2.14.0"


def test_flash_attention_2_on_thor_has_no_cubin_and_on_windows_is_a_warning(catalog: Catalog) -> None:
    thor = find(findings("jetson-thor-jp7", catalog), "flash-attn-2")
    assert thor.status == "fail" and thor.cause == "arch-unsupported" and "11.0" in thor.reason, thor
    spark = find(findings("dgx-spark", catalog), "flash-attn-2")  # 12.1 runs the sm_120 cubin
    assert spark.status == "ok", spark
    windows = find(findings("rtx5060ti-windows", catalog), "flash-attn-2")
    assert "an official Windows build" in windows.reason and windows.blocked_by, windows
