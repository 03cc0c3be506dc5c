"""The hub search as a plain-text table (``rigcheck models --hub QUERY``): each result, how it runs."""

from __future__ import annotations

from collections.abc import Sequence

from rigcheck.core.models.hub_search import HubAnswer
from rigcheck.core.report.tables import render
from rigcheck.core.text import terminal_safe

_WHERE = {"gpu": "on the GPU", "gpu+ram": "GPU + RAM", "cpu": "on the CPU"}


def _count(value: int | None) -> str:
    if value is None:
        return "?"
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if value >= size:
            return f"{value / size:.1f}{unit}"
    return str(value)


def hub_table(answers: Sequence[HubAnswer], *, sort: str, query: str) -> str:
    rows = []
    for a in answers:
        if a.problem is not None:
            verdict, speed = f"not read: {a.problem}", ""
        elif a.where is None:
            verdict, speed = "does not fit", ""
        else:
            verdict = f"{a.quant} {_WHERE.get(a.where, a.where)}"
            speed = f"~{a.decode_tokens_per_s:.0f} tok/s" if a.decode_tokens_per_s else "?"
        rows.append(
            [terminal_safe(a.hit.id), a.hit.kind, _count(a.hit.downloads), terminal_safe(verdict), speed]
        )
    table = render(["repository", "format", "downloads", "best way here", "decode"], rows, right={2, 4})
    shown = f"{len(answers)} results for {terminal_safe(query)!r} on the Hugging Face hub, by {sort}"
    return (
        f"{table}\n\n{shown}. Each was read from config.json and weight headers only (estimated speeds; "
        "'rigcheck fit REPO' gives the breakdown)."
    )
