"""Plain-text tables of catalog entries (``rigcheck gpus`` and ``rigcheck models``)."""

from __future__ import annotations

from collections.abc import Sequence

from rigcheck.core.catalog import GpuSpec, ModelSpec


def _num(value: float | None, unit: str = "", digits: int = 0) -> str:
    if value is None:
        return "?"
    return f"{value:.{digits}f}{unit}"


def render(headers: Sequence[str], rows: Sequence[Sequence[str]], right: set[int] | None = None) -> str:
    """Columns padded to their widest cell; numbers (``right``) aligned right."""
    right = right or set()
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def gpu_table(gpus: Sequence[GpuSpec]) -> str:
    rows = []
    for g in gpus:
        # the catalog's sizes are what the probe reads (GiB), as every other page shows them
        memory = "/".join(f"{m:g}" for m in g.memory_gb) + " GiB" if g.memory_gb else "?"
        if g.unified_memory:
            memory += " unified"
        rows.append(
            [
                g.id,
                g.name,
                memory,
                _num(g.bandwidth_gbs),
                _num(g.fp16_tflops, digits=1),
                g.compute_capability or g.gfx_target or "",
                _num(g.tdp_watts),
                g.confidence,
            ]
        )
    headers = ["id", "name", "memory", "GB/s", "FP16 TF", "arch", "W", "confidence"]
    table = render(headers, rows, right={3, 4, 6})
    return f"{table}\n\n{len(gpus)} GPUs. FP16 TF: dense tensor TFLOPS; ? = not published."


def model_table(models: Sequence[ModelSpec]) -> str:
    rows = []
    for m in models:
        params = _num(m.params_b, "B", 1 if m.params_b and m.params_b < 10 else 0)
        active = _num(m.active_params_b, "B", 1) if m.is_moe else ""
        context = f"{m.max_context // 1024}k" if m.max_context else "?"
        released = m.released or (str(m.release_year) if m.release_year else "?")
        rows.append([m.id, m.name, m.family, params, active, context, released, m.license or "?"])
    headers = ["id", "name", "family", "params", "active", "context", "released", "licence"]
    table = render(headers, rows, right={3, 4, 5})
    years = [int((m.released or "")[:4] or m.release_year or 0) for m in models]
    newest = max(years, default=0)
    latest = f" {sum(1 for y in years if y == newest)} released in {newest}." if newest else ""
    return f"{table}\n\n{len(models)} models.{latest} active: parameters used per token (mixture of experts)."
