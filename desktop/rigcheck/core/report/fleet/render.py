"""A fleet rendered: the plain-text table, JSON (``rigcheck.fleet/1``) and one self-contained HTML page."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

from rigcheck.core.report.fleet.judge import Fleet
from rigcheck.core.report.fleet.records import FLEET_SCHEMA, RECOMMENDED, Drift, FleetCell, ModelColumn
from rigcheck.core.report.tables import render
from rigcheck.core.text import one_line

HEADERS = {
    "name": "node",
    "gpus": "GPUs",
    "vram": "VRAM",
    "driver": "driver",
    "cuda": "CUDA",
    "rocm": "ROCm",
    "torch": "torch",
    "failing": "failing",
}


def _cell_text(cell: FleetCell, with_quant: bool = False) -> str:
    said = cell.words
    if said is None:
        return cell.verdict
    text = said.short
    if said.tokens_per_s is not None:
        text += f" {said.speed.removeprefix('~')}"
    if with_quant and cell.quant:
        text += f" ({cell.quant})"
    return text


def _answer_lines(column: ModelColumn) -> list[str]:
    """One line per placement, in the words fit and the reports use: "runs on the CPU: 2 of 5: …"."""
    total = len(column.cells)
    groups: dict[tuple[int, str], list[str]] = {}
    for cell in column.cells:
        said = cell.words
        key = (said.rank, said.words) if said is not None else (99, "unknown")
        groups.setdefault(key, []).append(cell.node)
    return [
        f"  {words}: {len(names)} of {total}: {', '.join(names)}"
        for (_rank, words), names in sorted(groups.items())
    ]


def drift_heading(drift: Sequence[Drift]) -> str:
    """ "Drift from the fleet's majority", or "… most common values" when some value is held by no more
    than half of the nodes compared (3 of 8 with a torch, the other 5 without one, is not a majority)."""
    if all(d.majority_count * 2 > d.compared for d in drift):
        return "Drift from the fleet's majority"
    return "Drift from the fleet's most common values"


def render_table(
    fleet: Fleet, *, model_rows: Sequence[ModelColumn] | None = None, drift: Sequence[Drift] | None = None
) -> str:
    """The machine table, the drift, the machine × model matrix and the skipped files, as plain text."""
    drift = fleet.drift() if drift is None else drift
    skipped = len(fleet.problems)
    parts = [
        f"Fleet: {len(fleet.nodes)} machine{'s' if len(fleet.nodes) != 1 else ''} from {fleet.files} "
        f"file{'s' if fleet.files != 1 else ''}" + (f" ({skipped} skipped)" if skipped else "")
    ]
    rows = [list(fleet.row(n).values()) for n in fleet.nodes]
    parts.append(render(list(HEADERS.values()), rows, right={7}))
    if drift:
        parts.append(f"{drift_heading(drift)}:\n" + "\n".join(f"  {d.sentence()}" for d in drift))
    elif len(fleet.nodes) > 1:
        parts.append(
            "Drift: none (no node stands out from the others in driver, CUDA, ROCm, torch, GPUs, RAM or OS)"
        )
    asked = [c for c in model_rows or () if c.quant != "best"]
    held = [c for c in model_rows or () if c.quant == "best"]
    if asked:
        context = {c.context for c in asked}
        note = "" if context == {None} else f", context {'/'.join(str(c) for c in sorted(context, key=str))}"
        matrix = [
            [node.name, *(_cell_text(c.cells[i], c.quant == RECOMMENDED) for c in asked)]
            for i, node in enumerate(fleet.nodes)
        ]
        parts.append(
            f"Models (decode tokens/s{note}):\n" + render(["node", *(c.label for c in asked)], matrix)
        )
        for column in asked:
            at = "each machine's recommended format" if column.quant == RECOMMENDED else column.quant
            parts.append(f"{column.name} at {at}:\n" + "\n".join(_answer_lines(column)))
    if held:
        # One column per model and node would be far too wide for a terminal: counts here, the
        # whole matrix in --format html/json, one model's nodes with --model.
        counts = [
            [
                c.model_id,
                *(
                    str(len(c.nodes_with(v)))
                    for v in ("fits", "fits_with_offload", "does_not_fit", "unknown")
                ),
            ]
            for c in held
        ]
        parts.append(
            "Models judged on every machine (best format each runs, as its report would say; nodes per "
            "verdict):\n"
            + render(["model", "fits", "offload", "does not fit", "unknown"], counts, right={1, 2, 3, 4})
            + "\n--models ID lists the nodes for a model; --format html shows every machine × model."
        )
    if fleet.problems:
        parts.append("Skipped:\n" + "\n".join(f"  {one_line(p)}" for p in fleet.problems))
    return "\n\n".join(parts)


def fleet_json(
    fleet: Fleet, *, model_rows: Sequence[ModelColumn] | None = None, drift: Sequence[Drift] | None = None
) -> dict[str, Any]:
    drift = fleet.drift() if drift is None else drift
    return {
        "schema": FLEET_SCHEMA,
        "nodes": [
            {
                **fleet.row(n),
                "failing": n.failing,
                "path": n.path,
                "kind": n.kind,
                "hostname": n.machine.host.hostname,
                "taken_at": n.machine.taken_at,
                "created_at": n.report.created_at if n.report else None,
                "app_version": n.report.app_version if n.report else None,
            }
            for n in fleet.nodes
        ],
        "drift": [
            {
                "field": d.field,
                "majority": d.majority,
                "majority_count": d.majority_count,
                "compared": d.compared,
                "nodes": [
                    {"name": n, "value": v, "relation": r}
                    for n, v, r in zip(d.nodes, d.values, d.relations, strict=True)
                ],
            }
            for d in drift
        ],
        "models": [
            {
                "model_id": c.model_id,
                "name": c.name,
                "quant": c.quant,
                "context": c.context,
                "nodes": [
                    {
                        "name": cell.node,
                        "verdict": cell.verdict,
                        "decode_tokens_per_s": cell.decode_tokens_per_s,
                        "quant": cell.quant,
                        "source": cell.source,
                    }
                    for cell in c.cells
                ],
            }
            for c in model_rows or ()
        ],
        "problems": list(fleet.problems),
        "files": fleet.files,
    }


def render_fleet_json(
    fleet: Fleet, *, model_rows: Sequence[ModelColumn] | None = None, drift: Sequence[Drift] | None = None
) -> str:
    """``rigcheck.fleet/1``: nodes (the table's columns and where each came from), drift, models, problems."""
    return json.dumps(fleet_json(fleet, model_rows=model_rows, drift=drift), indent=2, ensure_ascii=False)


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}td.num{text-align:right}.drift{background:#fff3cd}.fail{color:#b00020;font-weight:600}
.fits{background:#d4edda}.fits_with_offload{background:#fff3cd}.does_not_fit{background:#f8d7da}
.unknown{color:#888}ul{margin:.3em 0}code{background:#f3f3f3;padding:0 .2em}
"""


def _escape(value: object) -> str:
    """Escaped for HTML, and one line: a file name with a line break does not break the page's lines
    on a terminal it is printed to (issue 30 #9)."""
    return html.escape(one_line(str(value)), quote=True)


def render_fleet_html(
    fleet: Fleet, *, model_rows: Sequence[ModelColumn] | None = None, drift: Sequence[Drift] | None = None
) -> str:
    """One self-contained page (no scripts, no external files); every value escaped."""
    e = _escape
    drift = fleet.drift() if drift is None else drift
    column_of = {
        "driver": "driver",
        "cuda_driver": "cuda",
        "rocm": "rocm",
        "torch": "torch",
        "gpu": "gpus",
        "gpu_count": "gpus",
        "gpu_mix": "gpus",
    }
    flagged = {(n, column_of[d.field]) for d in drift if d.field in column_of for n in d.nodes}
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>RigCheck fleet: {len(fleet.nodes)} machines</title><style>{_CSS}</style></head><body>",
        f"<h1>RigCheck fleet: {len(fleet.nodes)} machines</h1>",
        f"<p>{fleet.files} files read, {len(fleet.problems)} skipped.</p>",
        "<table><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in HEADERS.values()) + "</tr></thead><tbody>",
    ]
    for node in fleet.nodes:
        cells = []
        for key, value in fleet.row(node).items():
            classes = []
            if (node.name, key) in flagged:
                classes.append("drift")
            if key == "failing":
                classes.append("num")
                if node.failing:
                    classes.append("fail")
            attr = f' class="{" ".join(classes)}"' if classes else ""
            title = f' title="{e(node.path)}"' if key == "name" else ""
            cells.append(f"<td{attr}{title}>{e(value)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    if drift:
        out.append(f"<h2>{e(drift_heading(drift))}</h2><ul>")
        out.extend(f"<li>{e(d.sentence())}</li>" for d in drift)
        out.append("</ul>")
    columns = list(model_rows or ())
    if columns:
        out.append("<h2>Models</h2><table><thead><tr><th>node</th>")
        out.extend(f"<th>{e(c.label if c.quant != 'best' else c.model_id)}</th>" for c in columns)
        out.append("</tr></thead><tbody>")
        for i, node in enumerate(fleet.nodes):
            row = [f"<td>{e(node.name)}</td>"]
            for c in columns:
                cell = c.cells[i]
                with_quant = c.quant in ("best", RECOMMENDED)
                row.append(f'<td class="{e(cell.verdict)}">{e(_cell_text(cell, with_quant))}</td>')
            out.append("<tr>" + "".join(row) + "</tr>")
        out.append("</tbody></table>")
        for c in columns:
            if c.quant != "best":
                at = "each machine's recommended format" if c.quant == RECOMMENDED else c.quant
                out.append(f"<h3>{e(c.name)} at {e(at)}</h3><ul>")
                out.extend(f"<li>{e(line.strip())}</li>" for line in _answer_lines(c))
                out.append("</ul>")
    if fleet.problems:
        out.append("<h2>Skipped files</h2><ul>")
        out.extend(f"<li><code>{e(p)}</code></li>" for p in fleet.problems)
        out.append("</ul>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
