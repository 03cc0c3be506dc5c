"""Compatibility findings as readable text (``rigcheck compat`` without ``--json``).

Grouped by GPU (the machine-wide findings first), failures first within each group; every finding
shows its reason, and its fix and command when there is something to do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rigcheck.core.compat import DISPLAY_RANK, FRAMEWORKS, Finding
from rigcheck.core.machine import Machine

_LABEL = {"fail": "FAIL", "warn": "WARN", "unknown": "?", "ok": "ok"}
_INDENT = " " * 8


def _gpu_title(machine: Machine, index: int) -> str:
    gpu = next(
        (g for pos, g in enumerate(machine.gpus) if (g.index if g.index is not None else pos) == index), None
    )
    if gpu is None:
        return f"GPU {index}"
    arch = (gpu.compute_capability and f"CC {gpu.compute_capability}") or gpu.gfx_target
    return f"GPU {index} · {gpu.name}" + (f" ({arch})" if arch else "")


def _order(finding: Finding) -> tuple[int, int, str]:
    framework = FRAMEWORKS.index(finding.framework) if finding.framework in FRAMEWORKS else len(FRAMEWORKS)
    return DISPLAY_RANK[finding.status], framework, finding.subject


def _lines(finding: Finding) -> list[str]:
    lines = [f"  {_LABEL[finding.status]:<5} {finding.framework:<13} {finding.subject}"]
    lines.append(f"{_INDENT}{finding.reason}")
    if finding.fix:
        lines.append(f"{_INDENT}fix: {finding.fix}")
    if finding.command:
        lines.append(f"{_INDENT}$ {finding.command}")
    return lines


def compat_text(findings: Sequence[Finding], machine: Machine) -> str:
    counts = Counter(f.status for f in findings)
    summary = ", ".join(f"{counts[s]} {s}" for s in ("fail", "warn", "unknown", "ok") if counts[s])
    lines = [f"RigCheck compatibility: {summary or 'nothing to check'}"]
    groups: dict[int | None, list[Finding]] = {}
    for finding in findings:
        groups.setdefault(finding.gpu_index, []).append(finding)
    for index in sorted(groups, key=lambda i: -1 if i is None else i):
        lines.append("")
        lines.append("This machine" if index is None else _gpu_title(machine, index))
        for finding in sorted(groups[index], key=_order):
            lines += _lines(finding)
    if any(f.status == "unknown" for f in findings):
        lines += ["", "? = unknown: the machine or the catalog lacks a fact this check needs."]
    return "\n".join(lines)
