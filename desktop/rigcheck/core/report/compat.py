"""Compatibility findings as readable text (``rigcheck compat`` without ``--json``).

Root causes first: the one change that fixes the most, then the findings grouped by cause. Then each GPU's
findings (the machine-wide ones first): problems with installed software, unknowns, then software that is not
installed and would not work here (marked "n/a", never "FAIL"), then what works. Every finding shows its
reason, and its fix, command and install side effect when there is one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rigcheck.core.compat import (
    BUCKETS,
    DISPLAY_RANK,
    FRAMEWORKS,
    Finding,
    Summary,
    bucket,
    gpu_groups,
    root_causes,
)
from rigcheck.core.machine import Machine
from rigcheck.core.units import index_ranges

#: the label of each finding: a broken install says FAIL/WARN, software that cannot run here says n/a
_LABEL = {"fail": "FAIL", "warn": "WARN", "unknown": "?", "ok": "ok"}
_BUCKET_LABEL = {"not-here": "n/a", "limited": "limit"}
_INDENT = " " * 8
#: what each bucket is called in the counts line (one, many)
_BUCKET_ONE = {"problem": "needs attention"}
_BUCKET_WORDS = {
    "problem": "need attention",
    "unknown": "unknown",
    "not-here": "would not work here",
    "limited": "would work with limits",
    "ok": "ok",
}


def _gpu_title(machine: Machine, indices: tuple[int, ...]) -> str:
    """ "GPU 0 · RTX 4090 (CC 8.9)", or "GPUs 0–7 · 8 × H100 SXM5 80GB (CC 9.0)" for identical GPUs."""
    index = indices[0]
    gpu = next(
        (g for pos, g in enumerate(machine.gpus) if (g.index if g.index is not None else pos) == index), None
    )
    which = f"GPU {index}" if len(indices) == 1 else f"GPUs {index_ranges(indices)}"
    if gpu is None:
        return which
    name = gpu.name if len(indices) == 1 else f"{len(indices)} × {gpu.name}"
    arch = (gpu.compute_capability and f"CC {gpu.compute_capability}") or gpu.gfx_target
    return f"{which} · {name}" + (f" ({arch})" if arch else "")


def _order(finding: Finding) -> tuple[int, int, int, str]:
    framework = FRAMEWORKS.index(finding.framework) if finding.framework in FRAMEWORKS else len(FRAMEWORKS)
    return BUCKETS.index(bucket(finding)), DISPLAY_RANK[finding.status], framework, finding.subject


def label(finding: Finding) -> str:
    """FAIL / WARN / ? / ok, or n/a for software that is not installed and cannot run here."""
    return _BUCKET_LABEL.get(bucket(finding), _LABEL[finding.status])


def _lines(finding: Finding) -> list[str]:
    lines = [f"  {label(finding):<5} {finding.framework:<13} {finding.subject}"]
    lines.append(f"{_INDENT}{finding.reason}")
    if finding.fix:
        lines.append(f"{_INDENT}fix: {finding.fix}")
    if finding.side_effect:
        lines.append(f"{_INDENT}note: {finding.side_effect}")
    if finding.command:
        lines.append(f"{_INDENT}$ {finding.command}")
    return lines


def bucket_counts(findings: Sequence[Finding]) -> list[tuple[str, int, str]]:
    """(bucket, count, "3 need attention") for each bucket with findings, in display order, identical
    GPUs counted once: the one count the text, Markdown and HTML reports all show."""
    counts = Counter(bucket(f) for _indices, shown in gpu_groups(findings) for f in shown)
    return [
        (b, counts[b], f"{counts[b]} {(_BUCKET_ONE if counts[b] == 1 else {}).get(b, _BUCKET_WORDS[b])}")
        for b in BUCKETS
        if counts[b]
    ]


def counts_line(findings: Sequence[Finding]) -> str:
    """How many findings of each kind, identical GPUs counted once (as the list shows them)."""
    groups = gpu_groups(findings)
    line = ", ".join(words for _b, _n, words in bucket_counts(findings)) or "nothing to check"
    if any(len(indices) > 1 for indices, _shown in groups):
        line += " (identical GPUs counted once)"
    return line


def compat_text(findings: Sequence[Finding], machine: Machine, summary: Summary | None = None) -> str:
    lines = [f"RigCheck compatibility: {counts_line(findings)}"]
    groups = summary.groups if summary is not None else root_causes(findings, machine)
    if summary is not None:
        lines += ["", summary.sentence]
    if groups:
        lines += ["", "Root causes"]
        for group in groups:
            names = ", ".join(dict.fromkeys(f.framework for f in group.findings))
            lines.append(f"  [{group.cause}] {group.title} ({names})")
            if group.fix:
                lines.append(f"{_INDENT}fix: {group.fix}")
    for indices, shown in gpu_groups(findings):
        lines.append("")
        lines.append(_gpu_title(machine, indices) if indices else "This machine")
        for finding in sorted(shown, key=_order):
            lines += _lines(finding)
    legend = []
    if any(bucket(f) == "not-here" for f in findings):
        legend.append("n/a = not installed, and this hardware cannot run it (nothing is broken).")
    if any(f.status == "unknown" for f in findings):
        legend.append("? = unknown: no documented answer; the reason names the missing fact.")
    if legend:
        lines += ["", *legend]
    return "\n".join(lines)
