"""A report as one self-contained HTML page (``rigcheck audit --format html``).

Inline CSS (light, printable) and inline SVG charts: each GPU's memory and the RAM as bars, and the
models' verdicts and speeds as a bar chart. No script, no font or image from anywhere; a
Content-Security-Policy says so to the browser as well. Every status is a glyph and a word, never a
colour alone. Every interpolated string goes through :func:`_e` (``html.escape``), so a hostile GPU,
note or model name is shown as text and never becomes markup.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from rigcheck.core.compat import BUCKETS, Finding, bucket, root_causes
from rigcheck.core.machine import Machine
from rigcheck.core.report.compat import bucket_counts
from rigcheck.core.report.compat import label as compat_label
from rigcheck.core.report.report import (
    MemoryUse,
    ModelFit,
    Report,
    fit_label,
    gpu_facts,
    machine_facts,
    memory_use,
    model_speed,
    ram_use,
    scope_of,
    words_of,
)
from rigcheck.core.units import fmt_bytes
from rigcheck.core.verdict_words import COLOURS


def _e(value: object) -> str:
    """Escaped for HTML text and attribute values (and SVG, which is XML), on one line: HTML shows a
    line break as a space anyway, and one printed to a terminal would forge a line (issue 30 #9)."""
    return html.escape(_LINE_BREAKS.sub(" ", str(value)), quote=True)


_LINE_BREAKS = re.compile("\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


_CSS = """
:root { --ink:#1f2328; --muted:#57606a; --line:#d0d7de; --soft:#f6f8fa; --ok:#1a7f37; --warn:#9a6700;
        --fail:#cf222e; --unknown:#6e7781; --offload:#bc4c00; --bar:#3b6fb6; }
* { box-sizing: border-box; }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { margin: 0; background: #fff; color: var(--ink);
       font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 28px 32px 40px; }
header { border-bottom: 3px solid var(--ink); padding-bottom: 10px; margin-bottom: 18px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 28px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 18px 0 6px; }
.meta { color: var(--muted); margin: 0; }
.chips { display: flex; flex-wrap: wrap; gap: 8px; margin: 10px 0 0; padding: 0; list-style: none; }
.chips li { border: 1px solid var(--line); border-radius: 14px; padding: 2px 12px; background: var(--soft); }
table { border-collapse: collapse; width: 100%; margin: 6px 0 4px; }
th, td { text-align: left; vertical-align: top; padding: 5px 8px; border-bottom: 1px solid var(--line); }
th { background: var(--soft); font-weight: 600; }
thead { display: table-header-group; }
tr { break-inside: avoid; page-break-inside: avoid; }
#compat table { table-layout: fixed; }
#compat th:nth-child(1) { width: 100px; } #compat th:nth-child(2) { width: 130px; }
#compat th:nth-child(3) { width: 190px; }
table.kv th { width: 170px; background: none; color: var(--muted); font-weight: 500; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.status { white-space: nowrap; font-weight: 600; }
.s-ok { color: var(--ok); } .s-warn { color: var(--warn); } .s-fail { color: var(--fail); }
.s-na { color: var(--unknown); }
.s-unknown { color: var(--unknown); }
.s-na, tr.muted td { color: var(--unknown); } .s-fits { color: var(--ok); }
.s-fits_with_offload { color: var(--offload); } .s-does_not_fit { color: var(--fail); }
.s-partial { color: var(--offload); } .s-slow { color: var(--offload); }
code { font: 12px/1.4 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
       background: var(--soft); padding: 1px 4px; border-radius: 3px; overflow-wrap: anywhere; }
.fix { margin-top: 2px; } .src { color: var(--muted); font-size: 12px; overflow-wrap: anywhere; }
svg { display: block; width: 100%; height: auto; margin: 8px 0 4px; }
svg text { font-family: system-ui, "DejaVu Sans", sans-serif; fill: var(--ink); }
.empty { color: var(--muted); font-style: italic; }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--line);
         padding-top: 8px; }
@page { size: A4; margin: 14mm; }
@media print {
  body { font-size: 11px; }
  main { max-width: none; padding: 0; }
  section { break-inside: auto; }
  h2, h3 { break-after: avoid; page-break-after: avoid; }
  svg { break-inside: avoid; page-break-inside: avoid; }
}
"""

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def _kv(rows: Iterable[tuple[str, str]]) -> str:
    body = "".join(f"<tr><th scope='row'>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f"<table class='kv'>{body}</table>"


def _table(head: Sequence[str], rows: Iterable[str], numeric: Sequence[int] = ()) -> str:
    num = " class='num'"
    cells = "".join(f"<th scope='col'{num if i in numeric else ''}>{_e(h)}</th>" for i, h in enumerate(head))
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- charts ---------------------------------------------------------------------------------------


def _memory_chart(machine: Machine) -> str:
    """One bar per GPU (and one for the RAM): the part in use filled, the rest empty."""
    rows: list[tuple[str, MemoryUse]] = []
    for pos, gpu in enumerate(machine.gpus):
        rows.append(
            (
                f"GPU {gpu.index if gpu.index is not None else pos} · {gpu.name}",
                memory_use(gpu, machine.memory.total_bytes),
            )
        )
    rows.append(("System RAM", ram_use(machine)))
    width, left, bar_w, row_h = 760, 10, 740, 46
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {row_h * len(rows) + 6}' "
        "role='img' aria-labelledby='memchart-title'>",
        "<title id='memchart-title'>Memory in use on each GPU and in system RAM</title>",
    ]
    for i, (label, use) in enumerate(rows):
        y = i * row_h + 4
        parts.append(
            f"<text x='{left}' y='{y + 13}' font-size='13' font-weight='600'>{_e(_short(label, 60))}</text>"
        )
        parts.append(
            f"<text x='{left + bar_w}' y='{y + 13}' font-size='12' text-anchor='end'>{_e(use.words)}</text>"
        )
        parts.append(
            f"<rect x='{left}' y='{y + 19}' width='{bar_w}' height='16' rx='3' fill='#eef1f4' "
            "stroke='#8c959f'/>"
        )
        if use.total_bytes and use.used_bytes is not None:
            share = min(1.0, use.used_bytes / use.total_bytes)
            parts.append(
                f"<rect x='{left}' y='{y + 19}' width='{bar_w * share:.1f}' height='16' rx='3' "
                "fill='#3b6fb6'>"
                f"<title>{_e(label)}: {_e(use.words)} ({share:.0%})</title></rect>"
            )
        elif use.total_bytes:
            parts.append(
                f"<text x='{left + 8}' y='{y + 31}' font-size='11' fill='#57606a'>"
                "free memory unknown: use not shown</text>"
            )
    parts.append("</svg>")
    return "".join(parts)


def _fits_chart(fits: Sequence[ModelFit]) -> str:
    """Decode speed per model as bars, each with its verdict's glyph and words beside it."""
    speeds = [f.decode_tokens_per_s for f in fits if f.decode_tokens_per_s is not None]
    top = max(speeds, default=0.0) or 1.0
    width, name_w, bar_x, bar_w, row_h = 760, 250, 260, 300, 22
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {row_h * len(fits) + 30}' "
        "role='img' aria-labelledby='fitchart-title'>",
        "<title id='fitchart-title'>Inference verdict and decode speed of each model</title>",
        f"<text x='{bar_x}' y='12' font-size='11' fill='#57606a'>decode tokens/s (longer is faster; "
        f"scale 0–{top:.0f})</text>",
    ]
    for i, fit in enumerate(fits):
        y = 20 + i * row_h
        said = words_of(fit)  # the table's words beside the bar, not a chart dialect
        label = said.label
        fill = COLOURS[said.colour]
        parts.append(
            f"<text x='{name_w}' y='{y + 14}' font-size='12' text-anchor='end'>"
            f"{_e(_short(fit.name, 34))}<title>{_e(fit.name)} ({_e(fit.model_id)})</title></text>"
        )
        parts.append(f"<line x1='{bar_x}' y1='{y + 2}' x2='{bar_x}' y2='{y + 19}' stroke='#8c959f'/>")
        end = float(bar_x)
        if fit.decode_tokens_per_s is not None:
            length = max(2.0, bar_w * fit.decode_tokens_per_s / top)
            dash = " stroke='#8c4c00' stroke-dasharray='4 2'" if said.tier != "gpu" else ""
            parts.append(
                f"<rect x='{bar_x}' y='{y + 4}' width='{length:.1f}' height='13' fill='{fill}'{dash}>"
                f"<title>{_e(fit.name)}: {_e(model_speed(fit))}</title></rect>"
            )
            end = bar_x + length
        words = [label, fit.quant or ""]
        if said.speed:
            words.append(said.speed)
        parts.append(
            f"<text x='{end + 6:.1f}' y='{y + 14}' font-size='12' fill='{fill}'>"
            f"{_e(' · '.join(w for w in words if w))}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


# -- sections -------------------------------------------------------------------------------------


#: the colour and glyph of each compatibility bucket's chip: only a broken install is red
_BUCKET_CHIP = {
    "problem": ("fail", "✗"),
    "unknown": ("unknown", "?"),
    "not-here": ("na", "n/a:"),
    "limited": ("warn", "⚠"),
    "ok": ("ok", "✓"),
}


def _header(report: Report) -> str:
    machine = report.machine
    name = machine.host.hostname or "host name not recorded"
    meta = [
        f"Snapshot taken {machine.taken_at or 'at an unknown time'}",
        f"report created {report.created_at}",
        f"RigCheck {report.app_version}",
    ]
    chips = []
    if report.fits:
        said = [words_of(f) for f in report.fits]
        labels = Counter((w.rank, w.colour, w.label) for w in said)
        chips += [
            f"<li class='status s-{_e(colour)}'>{_e(label)}: {count} of {len(report.fits)} models</li>"
            for (_rank, colour, label), count in sorted(labels.items())
        ]
    # the same counts, in the same words, as the text and Markdown reports (n/a is not a failure)
    chips += [
        f"<li class='status s-{_BUCKET_CHIP[b][0]}'>{_e(_BUCKET_CHIP[b][1])} {_e(words)}</li>"
        for b, _n, words in bucket_counts(report.findings)
    ]
    gpus = " + ".join(g.name for g in machine.gpus) or "no GPU"
    return (
        f"<header><h1>RigCheck report: {_e(name)}</h1>"
        f"<p class='meta'>{_e(gpus)} · {_e(fmt_bytes(machine.memory.total_bytes))} RAM</p>"
        f"<p class='meta'>{_e(' · '.join(meta))}</p>"
        f"<ul class='chips'>{''.join(chips)}</ul></header>"
    )


def _gpus(machine: Machine) -> str:
    parts = ["<section id='gpus'><h2>GPUs and memory</h2>", _memory_chart(machine)]
    if machine.gpus:
        head = ["GPU", "Name", "Memory", *(label for label, _v in gpu_facts(machine.gpus[0]))]
        rows = []
        for pos, gpu in enumerate(machine.gpus):
            cells = [
                gpu.index if gpu.index is not None else pos,
                gpu.name,
                memory_use(gpu, machine.memory.total_bytes).words,
                *(v for _l, v in gpu_facts(gpu)),
            ]
            rows.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>")
        parts.append(_table(head, rows))
    else:
        parts.append("<p class='empty'>No GPU found.</p>")
    parts.append("</section>")
    return "".join(parts)


def _models(fits: Sequence[ModelFit]) -> str:
    parts = ["<section id='models'><h2>Models</h2>"]
    if not fits:
        parts.append("<p class='empty'>No models were checked.</p></section>")
        return "".join(parts)
    parts.append(
        "<p>Inference in the recommended format: the highest-quality one that runs at a usable speed, "
        "entirely on the GPUs where one does (docs/recommendation.md), and the command that runs it.</p>"
    )
    parts.append(_fits_chart(fits))
    rows = [
        f"<tr><td>{_e(f.name)}</td><td><code>{_e(f.model_id)}</code></td>"
        f"<td class='status s-{_e(words_of(f).colour)}'>{_e(fit_label(f))}</td>"
        f"<td>{_e(f.quant or '—')}</td><td class='num'>{_e(model_speed(f))}</td>"
        f"<td>{f'<code>{_e(f.command)}</code>' if f.command else '—'}</td></tr>"
        for f in fits
    ]
    parts.append(_table(["Model", "Id", "Where", "Format", "Speed", "Run it"], rows, numeric=(4,)))
    parts.append("</section>")
    return "".join(parts)


def _source(source: str | None) -> str:
    if not source:
        return ""
    if source.startswith("https://"):
        return f"<div class='src'>source: <a href='{_e(source)}'>{_e(source)}</a></div>"
    return f"<div class='src'>source: {_e(source)}</div>"


def _finding_row(finding: Finding) -> str:
    what = [f"<div>{_e(finding.reason)}</div>"]
    if finding.fix:
        what.append(f"<div class='fix'><strong>Fix:</strong> {_e(finding.fix)}</div>")
    if finding.side_effect:
        what.append(f"<div class='fix'><strong>Note:</strong> {_e(finding.side_effect)}</div>")
    if finding.command:
        what.append(f"<div class='fix'><code>{_e(finding.command)}</code></div>")
    what.append(_source(finding.source))
    muted = bucket(finding) in ("not-here", "limited")
    row = " class='muted'" if muted else ""
    status = "na" if muted else _e(finding.status)
    return (
        f"<tr{row}><td class='status s-{status}'>{_e(compat_label(finding))}</td>"
        f"<td>{_e(finding.framework)}</td><td>{_e(finding.subject)}</td><td>{''.join(what)}</td></tr>"
    )


def _root_causes(report: Report) -> str:
    groups = root_causes(report.findings, report.machine)
    if not groups:
        return ""
    items = []
    for group in groups:
        names = ", ".join(dict.fromkeys(f.framework for f in group.findings))
        fix = f"<div class='fix'><strong>Fix:</strong> {_e(group.fix)}</div>" if group.fix else ""
        items.append(f"<li><strong>{_e(group.title)}</strong> ({_e(names)}){fix}</li>")
    return f"<h3>Root causes</h3><ul class='causes'>{''.join(items)}</ul>"


def _findings(report: Report) -> str:
    parts = ["<section id='compat'><h2>Compatibility</h2>"]
    if not report.findings:
        parts.append("<p class='empty'>Nothing to check.</p></section>")
        return "".join(parts)
    parts.append(_root_causes(report))
    groups: dict[int | None, list[Finding]] = {}
    for finding in report.findings:
        groups.setdefault(finding.gpu_index, []).append(finding)
    for index in sorted(groups, key=lambda i: -1 if i is None else i):
        title = "This machine" if index is None else scope_of(report.machine, index)
        parts.append(f"<h3>{_e(title)}</h3>")
        rows = sorted(groups[index], key=lambda f: BUCKETS.index(bucket(f)))
        parts.append(_table(["Status", "Framework", "Subject", "Details"], (_finding_row(f) for f in rows)))
    if any(bucket(f) == "not-here" for f in report.findings):
        parts.append(
            "<p class='empty'>n/a: not installed, and this hardware cannot run it (nothing is broken).</p>"
        )
    parts.append("</section>")
    return "".join(parts)


def _disks_and_notes(machine: Machine) -> str:
    parts = []
    if machine.disks:
        rows = [
            f"<tr><td>{_e(d.purpose or 'folder')}</td><td><code>{_e(d.path)}</code></td>"
            f"<td class='num'>{_e(fmt_bytes(d.free_bytes))}</td>"
            f"<td class='num'>{_e(fmt_bytes(d.total_bytes))}</td></tr>"
            for d in machine.disks
        ]
        parts.append(
            "<section id='disks'><h2>Disks</h2>"
            + _table(["Purpose", "Path", "Free", "Total"], rows, numeric=(2, 3))
            + "</section>"
        )
    if machine.notes:
        rows = [
            f"<tr><td class='status'>{_e(n.level)}</td><td>{_e(n.probe)}</td><td>{_e(n.message)}</td></tr>"
            for n in machine.notes
        ]
        parts.append(
            "<section id='notes'><h2>Probe notes</h2>"
            + _table(["Level", "Probe", "Message"], rows)
            + "</section>"
        )
    return "".join(parts)


def html_report(report: Report) -> str:
    machine = report.machine
    title = f"RigCheck report: {machine.host.hostname or 'machine'} ({report.created_at})"
    body = "".join(
        [
            _header(report),
            "<section id='machine'><h2>Machine</h2>",
            _kv(machine_facts(machine)),
            "</section>",
            _gpus(machine),
            _models(report.fits),
            _findings(report),
            _disks_and_notes(machine),
            f"<footer>Made by RigCheck {_e(report.app_version)} at {_e(report.created_at)}. "
            "Verdicts and speeds are estimates from the catalog's specifications; "
            "? unknown means a fact a check needs is missing.</footer>",
        ]
    )
    return (
        "<!DOCTYPE html>\n"
        "<html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{_e(_CSP)}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        "<meta name='generator' content='RigCheck'>"
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>\n"
        f"<body><main>{body}</main></body></html>\n"
    )
