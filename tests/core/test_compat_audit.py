"""The issue-16 audit: ten realistic machines, each finding judged against its primary source.

Every expected (status, cause) below was judged by hand against the source the catalog row quotes (the row's
``quote`` and ``source``); the comment names the fact. Then, for every finding that proposes actions, the
actions are applied to the snapshot (new driver with the CUDA version it reports, new torch wheel, ROCm or
Python) and the same check must come back OK — a fix that, once followed, still fails or asks for yet another
change is a bug.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes.machines import AUDIT_MACHINES
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.compat import (
    CAUSES,
    HARDWARE_CAUSES,
    Finding,
    apply_actions,
    bucket,
    check_compat,
    findings_json,
    summarize,
)
from rigcheck.core.machine import Machine, load_machine

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def find(findings: tuple[Finding, ...], framework: str, gpu: int | None) -> Finding:
    matches = [f for f in findings if f.framework == framework and f.gpu_index == gpu]
    assert len(matches) == 1, (framework, gpu, matches)
    return matches[0]


# (machine, framework, gpu index, status, cause)
JUDGED = [
    # GTX 1080 Ti on 535: R535 LTSB ended 2026-06 (NVIDIA data-center driver table); R580 is Pascal's last branch
    ("pascal", "nvidia-driver", None, "warn", "driver-eol"),
    ("pascal", "pytorch", 0, "ok", None),  # torch 2.3 cu121 has sm_60, which runs on 6.1
    ("pascal", "vllm", 0, "fail", "arch-unsupported"),  # "compute capability 7.5 or higher"
    ("pascal", "sglang", 0, "fail", "arch-unsupported"),  # CUDA 13 torch 2.14 wheels start at sm_75
    ("pascal", "tensorrt-llm", 0, "fail", "arch-unsupported"),  # sm_80+ kernels only
    ("pascal", "unsloth", 0, "warn", "limited"),  # "GTX 1070, 1080 works, but is slow"
    ("pascal", "ollama", 0, "warn", "driver-too-old"),  # CC 5.0-6.2 need driver 570+; Vulkan meanwhile
    ("pascal", "bf16", 0, "fail", "arch-unsupported"),  # BF16 needs CC 8.0+ (Transformer Engine)
    ("pascal", "flash-attn-2", 0, "fail", "arch-unsupported"),  # Ampere or newer
    ("pascal", "llama.cpp", 0, "ok", None),  # 61-virtual in the default CUDA 12 build
    ("pascal", "bitsandbytes", 0, "warn", "limited"),  # 0.43.1: runs (Maxwell+), LLM.int8() needs Turing
    # RTX 2080 Ti, driver 550 (not in NVIDIA's supported branches any more)
    ("turing", "nvidia-driver", None, "warn", "driver-eol"),
    ("turing", "vllm", 0, "fail", "driver-too-old"),  # vLLM 0.33 installs torch 2.14.0, a CUDA 13 build
    ("turing", "tensorrt-llm", 0, "fail", "arch-unsupported"),  # A100 (sm_80) is the oldest supported
    ("turing", "unsloth", 0, "ok", None),  # CC 7.0+
    ("turing", "xformers", 0, "ok", None),  # installed 0.0.28.post3, built for its torch 2.5.1
    # RTX 3090, driver 560
    ("ampere", "flash-attn-2", 0, "ok", None),  # installed; sm_80 cubin runs on 8.6
    ("ampere", "flash-attn-3", 0, "fail", "arch-unsupported"),  # H100/H800 only: no driver update helps
    ("ampere", "tensorrt-llm", 0, "fail", "driver-too-old"),  # 1.2 wheels are CUDA 13 builds
    ("ampere", "fp8", 0, "fail", "arch-unsupported"),  # FP8 needs CC 8.9+
    # RTX 4090, driver 570
    ("ada", "fp4", 0, "fail", "arch-unsupported"),  # no FP4 before Blackwell: shown as "would not work here"
    ("ada", "fp8", 0, "ok", None),
    ("ada", "flash-attn-3", 0, "fail", "arch-unsupported"),
    ("ada", "unsloth", 0, "ok", None),
    # 2x H100, driver 575
    ("hopper", "flash-attn-3", 0, "ok", None),
    ("hopper", "tensorrt-llm", 0, "ok", None),  # installed 1.0.0 (CUDA 12 era); H100 officially supported
    ("hopper", "sglang", 1, "fail", "driver-too-old"),  # "SGLang requires CUDA 13"
    ("hopper", "fp4", 1, "fail", "arch-unsupported"),
    # RTX 5090 on 580 (CUDA 13.0)
    ("blackwell", "nvidia-driver", None, "ok", None),  # R580 LTSB until 2028-06
    ("blackwell", "flash-attn-2", 0, "ok", None),  # setup.py builds sm_120 with CUDA >= 12.8
    ("blackwell", "tensorrt-llm", 0, "warn", "not-official"),  # GeForce: community support only
    ("blackwell", "flash-attn-4", 0, "ok", None),  # "for Hopper and Blackwell GPUs" (FA4 README)
    ("blackwell", "fp4", 0, "ok", None),  # "120 == Blackwell ... FP4 tensor cores"
    # RTX 3060 left on 470 with torch 2.0.1 cu117
    ("old-470", "nvidia-driver", None, "warn", "driver-too-old"),
    ("old-470", "pytorch", None, "warn", "driver-too-old"),  # cu117 on an 11.4 driver: minor-version compat
    ("old-470", "flash-attn-2", 0, "fail", "driver-too-old"),  # CUDA >= 12.0 and torch >= 2.2
    ("old-470", "flash-attn-3", 0, "fail", "arch-unsupported"),  # not "update the driver"
    ("old-470", "exllamav2", 0, "fail", "torch-too-old"),
    # RX 7900 XTX on ROCm 6.2
    ("rdna3", "rocm", 0, "ok", None),  # gfx1100 official since 6.0
    ("rdna3", "ollama", 0, "ok", None),  # gfx1100 on Ollama's list
    ("rdna3", "tensorrt-llm", 0, "fail", "vendor-only"),
    ("rdna3", "flash-attn-3", 0, "fail", "vendor-only"),
    ("rdna3", "bf16", 0, "ok", None),  # V_WMMA_F32_16X16X16_BF16
    ("rdna3", "fp8", 0, "fail", "arch-unsupported"),  # FP8 WMMA arrives with RDNA 4
    ("rdna3", "vllm", 0, "fail", "rocm-too-old"),  # "vLLM supports AMD GPUs with ROCm 6.3 or above"
    ("rdna3", "sglang", 0, "fail", "arch-unsupported"),  # official ROCm build: gfx942/gfx950
    ("rdna3", "unsloth", 0, "ok", None),  # Unsloth's AMD guide: RDNA 3/3.5/4 on Linux and Windows
    # 2x MI300X on ROCm 6.3
    ("mi300x", "vllm", 1, "ok", None),
    ("mi300x", "fp8", 1, "ok", None),
    ("mi300x", "fp4", 1, "fail", "arch-unsupported"),
    ("mi300x", "tensorrt-llm", 1, "fail", "vendor-only"),
    # CPU only
    ("cpu", "pytorch", None, "ok", None),
    ("cpu", "flash-attn-2", None, "fail", "no-gpu"),
    ("cpu", "tensorrt-llm", None, "fail", "no-gpu"),
    ("cpu", "exllamav2", None, "fail", "no-gpu"),
    ("cpu", "unsloth", None, "fail", "no-gpu"),
    ("cpu", "llama.cpp", None, "ok", None),
    ("cpu", "ollama", None, "ok", None),
]


@pytest.mark.parametrize(("name", "framework", "gpu", "status", "cause"), JUDGED)
def test_judged_findings(
    catalog: Catalog, name: str, framework: str, gpu: int | None, status: str, cause: str | None
) -> None:
    finding = find(check_compat(AUDIT_MACHINES[name](), catalog), framework, gpu)
    assert (finding.status, finding.cause) == (status, cause), finding


def _key(finding: Finding) -> tuple[str, int | None, str]:
    return (
        finding.framework,
        finding.gpu_index,
        finding.subject if finding.framework == "cuda-toolkit" else "",
    )


@pytest.mark.parametrize("name", sorted(AUDIT_MACHINES))
def test_every_fix_once_applied_makes_its_finding_ok(catalog: Catalog, name: str) -> None:
    machine: Machine = AUDIT_MACHINES[name]()
    findings = check_compat(machine, catalog)
    for finding in findings:
        if not finding.actions:
            continue
        assert finding.cause not in HARDWARE_CAUSES, finding  # never a fix for what hardware lacks
        after = {_key(f): f for f in check_compat(apply_actions(machine, catalog, finding.actions), catalog)}
        again = after[_key(finding)]
        # OK — or, where the hardware also limits it (community support only), no longer failing and with
        # nothing left that any change could fix
        assert again.status == "ok" or (
            again.status == "warn" and again.cause in ("not-official", "limited") and not again.actions
        ), (finding, again)


@pytest.mark.parametrize("name", sorted(AUDIT_MACHINES))
def test_every_finding_says_what_kind_of_problem_it_is(catalog: Catalog, name: str) -> None:
    for finding in check_compat(AUDIT_MACHINES[name](), catalog):
        assert (finding.cause is None) == (finding.status == "ok"), finding
        assert finding.cause is None or finding.cause in CAUSES
        if finding.installed is False and finding.status == "fail":
            assert bucket(finding) == "not-here"  # muted, never a red failure
            assert finding.reason.startswith("would not work")
        if finding.status == "unknown":
            assert finding.cause == "missing-fact" and finding.reason


def test_pascal_is_never_told_to_leave_r580(catalog: Catalog) -> None:
    for finding in check_compat(AUDIT_MACHINES["pascal"](), catalog):
        for action in finding.actions:
            if action.startswith("driver:"):
                assert action.split(":")[1].startswith("580."), finding
        if finding.fix and "driver" in finding.fix and "R5" in finding.fix:
            assert "R580" in finding.fix and "last branch for Pascal" in finding.fix, finding


def test_installing_vllm_says_it_replaces_torch_and_pins_the_set(catalog: Catalog) -> None:
    vllm = find(check_compat(AUDIT_MACHINES["blackwell"](), catalog), "vllm", 0)
    assert vllm.installed is True and vllm.status == "ok"
    assert vllm.side_effect == "Installing vllm 0.33.0 replaces torch 2.9.1+cu130 with torch 2.14.0."
    # the wheel's METADATA says Requires-Dist: torch==2.14.0 (catalog/compat/wheels.toml); pip resolves this
    assert vllm.command == "pip install vllm==0.33.0 torch==2.14.0"
    xformers = find(check_compat(AUDIT_MACHINES["ampere"](), catalog), "xformers", 0)
    # wheels built for torch 2.10.0; the variant that fits a 560 driver (CUDA 12.6) and sm_86
    assert xformers.command == (
        "pip install xformers==0.0.35 torch==2.10.0 --index-url https://download.pytorch.org/whl/cu126"
    )


def test_installing_next_to_no_torch_says_it_brings_one(catalog: Catalog) -> None:
    """With no torch installed there is nothing to replace: the note says which torch pip brings."""
    machine = load_machine(FIXTURES / "hgx-h100x8-2tb.json")
    assert "torch" not in machine.software.python_packages
    xformers = find(check_compat(machine, catalog), "xformers", 0)
    assert xformers.side_effect is not None
    assert xformers.side_effect.startswith("Installing xformers 0.0.35 also installs torch 2.10.0")
    assert "None" not in xformers.side_effect


def test_summary_names_the_change_that_fixes_the_most(catalog: Catalog) -> None:
    machine = AUDIT_MACHINES["old-470"]()
    findings = check_compat(machine, catalog)
    summary = summarize(machine, catalog, findings)
    assert summary.best_actions == ("driver:580.65.06", "torch:2.14.1+cu130")
    assert summary.sentence.startswith(
        "The one change that fixes the most: update the NVIDIA driver to the R580"
    )
    fixed = {f.framework for f in summary.fixes}
    assert {"nvidia-driver", "pytorch", "ollama"} <= fixed
    data = findings_json(findings, summary)
    assert data["summary"]["actions"] == ["driver:580.65.06", "torch:2.14.1+cu130"]
    causes = [g["cause"] for g in data["root_causes"]]
    assert causes[0] == "driver-too-old"  # the biggest group first
    cpu = AUDIT_MACHINES["cpu"]()
    assert summarize(cpu, catalog, check_compat(cpu, catalog)).sentence == "Nothing installed here is broken."


def test_software_that_is_not_installed_is_judged_as_its_newest_release(catalog: Catalog) -> None:
    """The pre-0.50 bitsandbytes rules describe installed old versions only, not a new install."""
    finding = find(check_compat(AUDIT_MACHINES["blackwell"](), catalog), "bitsandbytes", 0)
    assert finding.installed is False
    assert "CUDA ≥ 11.8" in finding.reason and "CUDA ≥ 11.0" not in finding.reason


def test_reports_keep_causes_and_actions(catalog: Catalog) -> None:
    import json

    from rigcheck.core.report.report import build_report, report_from_dict, report_to_dict

    report = build_report(AUDIT_MACHINES["old-470"](), catalog, models=[])
    again = report_from_dict(json.loads(json.dumps(report_to_dict(report))), "old-470.json")
    assert again.findings == report.findings
    assert any(f.actions == ("driver:580.65.06", "torch:2.14.1+cu130") for f in again.findings)


def test_a_fix_that_replaces_torch_says_so(catalog: Catalog) -> None:
    finding = find(check_compat(AUDIT_MACHINES["old-470"](), catalog), "exllamav2", 0)
    assert "torch:2.14.1+cu130" in finding.actions
    assert finding.side_effect == "Following this fix replaces torch 2.0.1+cu117 with torch 2.14.1+cu130."


def test_identical_gpus_are_listed_and_counted_once(catalog: Catalog) -> None:
    """An 8-GPU server: one list for GPUs 0–7 in the text, counts and the summary sentence as shown; JSON
    keeps every GPU's findings."""
    from rigcheck.core.compat import gpu_groups
    from rigcheck.core.report.compat import compat_text
    from rigcheck.core.units import index_ranges

    machine = load_machine(FIXTURES / "hgx-h100x8-2tb.json")
    findings = check_compat(machine, catalog)
    groups = gpu_groups(findings)
    assert [indices for indices, _f in groups] == [(), tuple(range(8))]
    text = compat_text(findings, machine, summarize(machine, catalog, findings))
    assert text.count("GPUs 0–7 · 8 × H100 SXM5 80GB (CC 9.0)") == 1 and "GPU 1 ·" not in text
    assert "(identical GPUs counted once)" in text.splitlines()[0]
    assert "lets 3 things more run here" in text  # vLLM, SGLang and TensorRT-LLM, not 24
    assert (
        len({f["gpu_index"] for f in findings_json(findings)["findings"] if f["gpu_index"] is not None}) == 8
    )
    assert (
        index_ranges([0, 1, 2]) == "0–2" and index_ranges([0, 2, 5]) == "0, 2, 5" and index_ranges([3]) == "3"
    )
    # different GPUs keep their own lists
    two = load_machine(FIXTURES / "two-gpus-128gb.json")
    assert [i for i, _f in gpu_groups(check_compat(two, catalog))] == [(), (0,), (1,)]
