"""A recommendation, its format ladder and its commands as JSON and as text (``rigcheck fit``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rigcheck.core.estimate.commands import Commands, commands_json
from rigcheck.core.estimate.fit import FitResult
from rigcheck.core.estimate.recommend import (
    USABLE_DECODE_TOKENS_PER_S,
    Recommendation,
    Rung,
    display_quant,
    rung_json,
    verdict_words,
    where_of,
)
from rigcheck.core.estimate.training_profiles import stack_name
from rigcheck.core.report.estimate import fit_json
from rigcheck.core.units import fmt_bytes
from rigcheck.core.verdict_words import rounded_speed, speed_text


def recommendation_json(
    rec: Recommendation, commands: Commands, *, result: FitResult | None = None, pinned: bool = False
) -> dict[str, Any]:
    """``fit_json`` of the answer (the recommendation's fit, or the pinned ``--quant``'s), plus
    ``recommended``, ``where``, ``ladder``, ``why`` and ``commands``."""
    result = result if result is not None else rec.result
    data = fit_json(result)
    data["placement"]["where"] = where_of(result)
    data["where"] = where_of(result)
    data["words"] = verdict_words(result)
    data["recommended"] = not pinned and rec.best is not None
    data["prefer"] = rec.prefer
    data["engine"] = rec.engine
    data["training_stack"] = None if rec.workload == "inference" else stack_name(result.estimate.framework)
    data["quant"] = (
        rec.best.quant if not pinned and rec.best is not None else display_quant(data["estimate"]["quant"])
    )
    data["why"] = list(rec.why)
    data["ladder"] = [rung_json(r) for r in rec.ladder]
    data.update(commands_json(commands))
    return data


def _speed(rung: Rung) -> str:
    tps = rung.tokens_per_s
    if tps is None:
        return "?"
    shown = rounded_speed(tps)
    return f"{shown:,.0f}" if shown >= 10 else f"{shown:g}"


def ladder_lines(rec: Recommendation) -> list[str]:
    """The ladder as a table: format, verdict, memory, tokens/s, quality note; the pick marked ▶."""
    rows = [("", "format", "where", "memory", "tok/s", "quality (measured)")]
    for rung in rec.ladder:
        mark = "▶" if rung is rec.best else ""
        rows.append(
            (
                mark,
                rung.quant + (" (released)" if rung.native else ""),
                rung.words,
                fmt_bytes(rung.result.estimate.total_bytes),
                _speed(rung) if rung.runs else "-",
                rung.quality_note(),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for row in rows:
        cells = [row[i].rjust(widths[i]) if i in (3, 4) else row[i].ljust(widths[i]) for i in range(len(row))]
        out.append("  " + "  ".join(cells).rstrip())
    return out


def recommendation_text(rec: Recommendation, commands: Commands, *, pinned: FitResult | None = None) -> str:
    best = rec.best
    lines: list[str] = []
    if pinned is not None:
        hint = f"; the recommendation is {rec.best.quant}, {rec.best.words}" if rec.best else ""
        lines.append(f"As asked (--quant/--offload): {display_quant(pinned.estimate.quant_name)}{hint}")
    elif best is None and rec.workload != "inference" and rec.ladder:
        # a training run has one format: what does not fit is this stack's setup; the advice says what would
        stack = stack_name(rec.ladder[0].result.estimate.framework)
        lines.append(f"DOES NOT FIT: {rec.model.name}, {rec.workload} with {stack}, on this machine as asked")
    elif best is None:
        lines.append(f"DOES NOT FIT: {rec.model.name} in any format on this machine")
    else:
        # the speed as every surface shows it (rigcheck.core.verdict_words), rounded once
        speed = ", " + speed_text(best.tokens_per_s, training=rec.workload != "inference")
        stack = rec.engine if rec.workload == "inference" else stack_name(best.result.estimate.framework)
        lines.append(f"BEST WAY: {best.quant} with {stack}: {best.words}{speed}")
    lines += [f"  {w}" for w in rec.why]
    if rec.workload == "inference" and len(rec.ladder) > 1:
        lines += [
            "",
            f"Formats (prefer {rec.prefer}; usable = ≥ {USABLE_DECODE_TOKENS_PER_S:g} tokens/s, "
            f"context {rec.context:,}):",
            *ladder_lines(rec),
        ]
        cited = {r.quality.source for r in rec.ladder if r.quality}
        if cited:
            lines.append(
                "  quality: perplexity change measured by llama.cpp's quantize tool (catalog/quality.toml)"
            )
    if commands.commands:
        size = ""
        if commands.download_bytes:
            # a file read from this disk is run from there: nothing to download
            local = rec.model.source_kind == "file" and Path(rec.model.source).is_file()
            size = f" ({fmt_bytes(commands.download_bytes)} {'on disk' if local else 'to download'})"
        lines += ["", f"Run it{size}:"]
        for engine, command in commands.commands.items():
            lines.append(f"  {engine}: {command}")
    for engine, note in commands.notes.items():
        lines.append(f"  {engine}: {note}")
    return "\n".join(lines)
