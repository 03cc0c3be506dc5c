"""A report as Markdown (``rigcheck audit --format markdown``): headings, lists and tables.

Every string from the machine, the catalog or a finding goes through :func:`md`, which escapes
Markdown's active characters (pipes included, so a value never splits a table cell) and HTML's, so a
hostile GPU or model name shows as text in any renderer and never becomes a link, image or markup.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from rigcheck.core.compat import BUCKETS, bucket, root_causes
from rigcheck.core.machine import Machine
from rigcheck.core.report.compat import counts_line
from rigcheck.core.report.compat import label as compat_label
from rigcheck.core.report.report import (
    Report,
    fit_label,
    gpu_facts,
    machine_facts,
    memory_use,
    model_speed,
    scope_of,
)
from rigcheck.core.units import fmt_bytes

#: Markdown's active characters; "_" only where it could start or end emphasis (not in Q4_K_M)
_ACTIVE = re.compile(r"([\\`*\[\]|]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")


def md(value: object) -> str:
    """One line of inert Markdown text: whitespace folded, Markdown and HTML characters escaped."""
    text = " ".join(str(value).split())
    return html.escape(_ACTIVE.sub(r"\\\1", text), quote=False)


def _table(head: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(md(h) for h in head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(md(c) for c in row) + " |" for row in rows]
    return lines


def _gpus(machine: Machine) -> list[str]:
    if not machine.gpus:
        return ["No GPU found."]
    rows = []
    for pos, gpu in enumerate(machine.gpus):
        used = memory_use(gpu, machine.memory.total_bytes)
        rows.append(
            [
                gpu.index if gpu.index is not None else pos,
                gpu.name,
                used.words,
                *(value for _label, value in gpu_facts(gpu)),
            ]
        )
    head = ["GPU", "Name", "Memory", *(label for label, _value in gpu_facts(machine.gpus[0]))]
    return _table(head, rows)


def markdown_report(report: Report) -> str:
    machine = report.machine
    title = machine.host.hostname or "a machine (host name not recorded)"
    lines = [
        f"# RigCheck report: {md(title)}",
        "",
        f"- Snapshot taken: {md(machine.taken_at or 'unknown')}",
        f"- Report created: {md(report.created_at)} by RigCheck {md(report.app_version)}",
        "",
        "## Machine",
        "",
        *_table(["", ""], machine_facts(machine)),
        "",
        "## GPUs",
        "",
        *_gpus(machine),
        "",
        "## Models",
        "",
    ]
    if report.fits:
        fits = report.fits
        lines.append(
            f"{sum(f.verdict == 'fits' for f in fits)} of {len(fits)} models run on the GPUs, "
            f"{sum(f.verdict == 'fits_with_offload' for f in fits)} with part in RAM or on the CPU "
            "(inference, the recommended format: docs/recommendation.md)."
        )
        lines.append("")
        lines += _table(
            ["Model", "Id", "Where", "Format", "Speed", "Run it"],
            [
                [f.name, f.model_id, fit_label(f), f.quant or "—", model_speed(f),
                 f.command or "—"]
                for f in fits
            ],
        )  # fmt: skip
    else:
        lines.append("No models were checked.")
    lines += ["", "## Compatibility", ""]
    if report.findings:
        lines.append(counts_line(report.findings))
        lines.append("")
        for group in root_causes(report.findings, machine):
            names = ", ".join(dict.fromkeys(f.framework for f in group.findings))
            fix = f" Fix: {md(group.fix)}" if group.fix else ""
            lines.append(f"- **{md(group.title)}** ({md(names)}){fix}")
        lines.append("")
        lines += _table(
            ["Status", "Where", "Framework", "Subject", "Reason", "Fix"],
            [
                [
                    compat_label(f),
                    scope_of(machine, f.gpu_index),
                    f.framework,
                    f.subject,
                    f.reason,
                    " ".join(x for x in (f.fix or "", f"$ {f.command}" if f.command else "") if x) or "—",
                ]
                for f in sorted(report.findings, key=lambda f: BUCKETS.index(bucket(f)))
            ],
        )
    else:
        lines.append("Nothing to check.")
    if machine.disks:
        lines += ["", "## Disks", ""]
        lines += _table(
            ["Purpose", "Path", "Free", "Total"],
            [
                [d.purpose or "folder", d.path, fmt_bytes(d.free_bytes), fmt_bytes(d.total_bytes)]
                for d in machine.disks
            ],
        )
    if machine.notes:
        lines += ["", "## Notes", ""]
        lines += [f"- {md(n.level)}: {md(n.probe)}: {md(n.message)}" for n in machine.notes]
    return "\n".join(lines) + "\n"
