"""Compatibility checks: the catalog's matrices evaluated against a Machine (the real one or a snapshot).

Rules are data (``catalog/compat/*.toml``); this package holds only the evaluation logic, one small
evaluator per kind of rule:

- ``_cuda``: the NVIDIA driver against CUDA versions ([[cuda_release]], [[cuda_major]]) and a toolkit
  against a GPU's architecture ([[arch]] ``min_cuda``);
- ``_torch``: the installed PyTorch build against each GPU ([[torch_variant]] cubins/PTX) and the driver,
  and the wheel to install ([[torch_release]]); builds, wheels and kernel checks in ``_torch_builds``,
  the recommendation in ``_torch_recommend``;
- ``_rocm``: an AMD GPU's gfx target against [[rocm_release]], with the unofficial [[gfx_override]]s;
- ``_precision``: bf16/fp8/fp4 per GPU from [[arch]];
- ``_rules``: every other framework's [[framework]] rules (CC, gfx, CUDA, driver, ROCm, torch, OS, Python,
  CPU flags), each requirement checked in ``_requirements``.

Each answer is a frozen :class:`Finding` with status ``ok``, ``warn``, ``fail`` or ``unknown``; ``unknown``
whenever the machine or the catalog lacks a fact a rule needs — never a guessed ``ok``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace
from datetime import date
from typing import Any

from rigcheck.core.catalog import Catalog
from rigcheck.core.compat._base import (
    CAUSES,
    DISPLAY_RANK,
    HARDWARE_CAUSES,
    Check,
    Facts,
    Finding,
    Status,
    combine,
)
from rigcheck.core.compat._cuda import driver_findings, toolkit_driver_finding, toolkit_targets
from rigcheck.core.compat._deps import block, torch_blocker
from rigcheck.core.compat._precision import PRECISIONS, precision_findings
from rigcheck.core.compat._rocm import rocm_findings
from rigcheck.core.compat._rules import evaluate_rule, framework_finding
from rigcheck.core.compat._summary import (
    BUCKETS,
    CauseGroup,
    Summary,
    apply_actions,
    bucket,
    describe_action,
    root_causes,
    summarize,
)
from rigcheck.core.compat._torch import TorchWheel, bare_torch_findings, recommend, torch_findings
from rigcheck.core.machine import GPU, Machine

#: every framework id the checks report under, in the order reports list them
FRAMEWORKS = (
    "nvidia-driver", "cuda-toolkit", "rocm", "pytorch", "flash-attn-2", "flash-attn-3", "flash-attn-4",
    "xformers", "bitsandbytes", "vllm", "sglang", "tensorrt-llm", "transformer-engine", "llama.cpp", "ollama",
    "exllamav2", "deepspeed", "unsloth", "mlx", "containers", "bf16", "fp8", "fp4",
)  # fmt: skip

#: frameworks with their own evaluator; every other [[framework]] id goes through the generic one
_SPECIAL = frozenset({"pytorch", "cuda-toolkit", *PRECISIONS})

__all__ = [
    "BUCKETS",
    "CAUSES",
    "DISPLAY_RANK",
    "FRAMEWORKS",
    "HARDWARE_CAUSES",
    "CauseGroup",
    "Finding",
    "Status",
    "Summary",
    "TorchWheel",
    "apply_actions",
    "bucket",
    "check_compat",
    "describe_action",
    "findings_json",
    "gpu_groups",
    "recommend_torch",
    "root_causes",
    "summarize",
]


def gpu_groups(findings: Sequence[Finding]) -> list[tuple[tuple[int, ...], list[Finding]]]:
    """The machine-wide findings (indices ``()``), then the GPUs whose findings are the same but for their
    index, together: an 8-GPU server is one list, not eight copies. Each group keeps its first GPU's
    findings; groups follow their first GPU's order."""
    by_gpu: dict[int | None, list[Finding]] = {}
    for finding in findings:
        by_gpu.setdefault(finding.gpu_index, []).append(finding)
    groups: list[tuple[tuple[int, ...], list[Finding]]] = []
    if None in by_gpu:
        groups.append(((), by_gpu[None]))
    seen: dict[tuple[Finding, ...], int] = {}
    for index in sorted(i for i in by_gpu if i is not None):
        key = tuple(sorted((replace(f, gpu_index=None) for f in by_gpu[index]), key=repr))
        if key in seen:
            first = seen[key]
            groups[first] = ((*groups[first][0], index), groups[first][1])
        else:
            seen[key] = len(groups)
            groups.append(((index,), by_gpu[index]))
    return groups


def _order(framework: str) -> tuple[int, str]:
    return (FRAMEWORKS.index(framework) if framework in FRAMEWORKS else len(FRAMEWORKS), framework)


def _generic_frameworks(catalog: Catalog) -> list[str]:
    return sorted({r.framework for r in catalog.frameworks} - _SPECIAL, key=_order)


def _concerns(catalog: Catalog, framework: str, gpu: GPU | None) -> bool:
    """A framework made for one platform only (MLX: Apple's Metal) is not reported on other GPUs."""
    backends = {r.backend for r in catalog.frameworks if r.framework == framework}
    return backends != {"metal"} or (gpu is not None and gpu.vendor == "apple")


def _toolkit_on_gpu(facts: Facts, toolkit: str, index: int, gpu: GPU) -> Finding:
    """cuda-toolkit rules (chosen by the toolkit's version) and the architecture's first toolkit."""
    from rigcheck.core.compat._base import in_range, version

    have = version(toolkit)
    rules = [
        r
        for r in facts.catalog.frameworks
        if r.framework == "cuda-toolkit" and have is not None and in_range(r.versions, have)
    ]
    checks: list[Check] = [c for r in rules if (c := evaluate_rule(r, facts, gpu)) is not None]
    checks.append(toolkit_targets(facts, toolkit, gpu))
    return combine(checks).finding("cuda-toolkit", f"CUDA toolkit {toolkit}", index, installed=True)


def _toolkit_findings(facts: Facts) -> list[Finding]:
    findings = []
    for toolkit in facts.machine.software.cuda_toolkits:
        findings.append(toolkit_driver_finding(facts, toolkit.version))
        findings += [_toolkit_on_gpu(facts, toolkit.version, i, g) for i, g in facts.gpus_of("nvidia")]
    return findings


def check_compat(machine: Machine, catalog: Catalog, today: date | None = None) -> tuple[Finding, ...]:
    """Every finding for this machine: the machine's own first, then each GPU's; failures first in each.

    Lifecycles are judged as of the snapshot's ``taken_at``, else ``today`` (default: the clock's date)."""
    facts = Facts(machine, catalog, today)
    bare = bare_torch_findings(facts)
    findings = (
        driver_findings(facts) + _toolkit_findings(facts) + torch_findings(facts, bare) + rocm_findings(facts)
    )
    frameworks = _generic_frameworks(catalog)
    if not facts.gpus:
        findings += [
            framework_finding(facts, f, None, None) for f in frameworks if _concerns(catalog, f, None)
        ]
    for index, gpu in facts.gpus:
        blocker = torch_blocker(bare, index)
        for framework in (f for f in frameworks if _concerns(catalog, f, gpu)):
            finding = framework_finding(facts, framework, index, gpu)
            findings.append(block(facts, finding, blocker) if blocker is not None else finding)
        findings += precision_findings(facts, index, gpu)
    return tuple(
        sorted(
            findings,
            key=lambda f: (
                -1 if f.gpu_index is None else f.gpu_index,
                BUCKETS.index(bucket(f)),
                DISPLAY_RANK[f.status],
                _order(f.framework),
            ),
        )
    )


def recommend_torch(machine: Machine, catalog: Catalog, today: date | None = None) -> TorchWheel | None:
    """The PyTorch wheel to install on this machine, with its pip command (None when none fits)."""
    return recommend(Facts(machine, catalog, today))


def findings_json(
    findings: tuple[Finding, ...] | list[Finding], summary: Summary | None = None
) -> dict[str, Any]:
    """``{"findings": [...], "root_causes": [...], "summary": ...}``: every field of every finding
    (``command`` is null when there is none) with its display bucket, the findings grouped by cause, and the
    one change that fixes the most."""
    groups = summary.groups if summary is not None else root_causes(findings)
    return {
        "findings": [{**asdict(f), "bucket": bucket(f)} for f in findings],
        "root_causes": [group.json() for group in groups],
        "summary": summary.json() if summary is not None else None,
    }
