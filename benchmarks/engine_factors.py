"""Engines with numbers of their own: MLX's decode factors per Apple class, and Ollama against its rows.

Run: ``.venv/bin/python benchmarks/engine_factors.py`` (``--toml`` prints catalog/speed_engines.toml,
``--markdown`` the BENCHMARKS.md tables, ``--rows`` every row's estimate).

MLX (mlx-lm, LM Studio's MLX runtime) decodes with its own Metal kernels, not llama.cpp's, so llama.cpp's
Metal factors read its speed ~30% low. The mechanism is the one llama.cpp's factors use (catalog/speed.toml):
time per token = weight bytes read ÷ (peak bandwidth × decode_bandwidth_efficiency) + per_layer_us × layers.
Both numbers are fitted per Apple class (core/estimate/speed hardware_class: apple-base, apple-pro,
apple-max) on the *fit* split of the cited MLX rows in benchmarks/data/measurements.csv, by least absolute
log error over a grid; the held-out quarter (measurements.split_of, one rule for every data set) is never
used, and is reported apart. A class needs MIN_ROWS fit rows; below that it keeps llama.cpp's Metal factors.
The rows are decode only, so an MLX row carries the class's Metal prefill shares unchanged (and says so).

Ollama runs GGUF through llama.cpp's kernels (core/estimate/ollama.py): its own numbers are its defaults
(num_ctx by GPU memory, one parallel request, num_gpu auto, f16 KV, flash attention as upstream decides),
which the estimate applies. Its cited rows (benchmarks/data/ollama.csv, kept out of llama.cpp's fit) are
estimated with ``--engine ollama`` and the rows' own context; an Ollama factor per backend would be fitted
only where its fit rows show a bias beyond the spread, and today they do not (see BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from estimate_accuracy import Outcome, estimate, row_machine
from measurements import Measurement, load
from rigcheck.core.catalog import Catalog, SpeedFactor, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.models.resolve import from_catalog

OLLAMA_DATA = Path(__file__).resolve().parent / "data" / "ollama.csv"
#: fit rows a class needs before it gets MLX factors of its own (two numbers are fitted)
MIN_ROWS = 5
#: a share of the peak bandwidth: at most 1 (a fit above it would hide a bytes-read error in the factor)
EFFICIENCIES = [round(0.40 + 0.005 * i, 3) for i in range(121)]  # 0.40 … 1.00
PER_LAYER_US = list(range(0, 402, 2))


def mlx_rows(rows: Sequence[Measurement]) -> list[Measurement]:
    return [r for r in rows if r.engine.lower().startswith("mlx") and r.metric == "decode_tokens_per_s"]


def _hw_class(row: Measurement, catalog: Catalog) -> str:
    machine = row_machine(row, catalog)
    gpu = machine.gpus[0]
    return speed.hardware_class(gpu.vendor, gpu.name, catalog.gpu(row.gpu_id), gpu.unified_memory)


def _with_mlx(catalog: Catalog, factors: dict[str, SpeedFactor]) -> Catalog:
    """The catalog with exactly these MLX rows (any shipped ones dropped)."""
    others = tuple(f for f in catalog.speed_factors if f.backend != speed.MLX)
    return replace(catalog, speed_factors=(*others, *factors.values()))


def _probe(catalog: Catalog, hw_class: str) -> SpeedFactor:
    """An MLX row for the class at efficiency 1 and no per-layer cost: its estimate is bytes ÷ bandwidth."""
    metal = speed.speed_factor(catalog, hw_class, "metal")
    assert metal is not None, hw_class
    return replace(
        metal, id=f"{hw_class}-mlx", backend=speed.MLX, default=False, decode_bandwidth_efficiency=1.0,
        per_layer_us=0.0,
    )  # fmt: skip


@dataclass(frozen=True)
class Fitted:
    factor: SpeedFactor
    rows: int
    median: float


def fit_mlx(rows: Sequence[Measurement], catalog: Catalog) -> dict[str, Fitted]:
    """Per Apple class: (efficiency, per-layer µs) minimising Σ|log(estimate / measured)| on the fit rows."""
    by_class: dict[str, list[tuple[float, int, float]]] = {}
    for row in mlx_rows(rows):
        if row.split != "fit" or not row.model_id or not row.gpu_id:
            continue
        cls = _hw_class(row, catalog)
        probe = _with_mlx(catalog, {cls: _probe(catalog, cls)})
        outcome = estimate(row, probe)
        if outcome.estimate is None:
            continue  # does not fit here: a miss in the report, no time to fit
        layers = from_catalog(catalog.model(row.model_id)).arch.num_layers  # type: ignore[arg-type]
        by_class.setdefault(cls, []).append((1 / outcome.estimate, layers, row.value))
    fitted = {}
    for cls, points in sorted(by_class.items()):
        if len(points) < MIN_ROWS:
            continue
        best = min(
            ((e, us) for e in EFFICIENCIES for us in PER_LAYER_US),
            key=lambda p: sum(
                abs(math.log(v * (t0 / p[0] + layers * p[1] * 1e-6))) for t0, layers, v in points
            ),
        )
        errors = [abs(1 / (v * (t0 / best[0] + n * best[1] * 1e-6)) - 1) for t0, n, v in points]
        metal = speed.speed_factor(catalog, cls, "metal")
        assert metal is not None
        measured = f"decode: {len(points)} fit rows, mlx-lm and LM Studio MLX (median |error| {statistics.median(errors):.0%})"
        factor = replace(
            metal,
            id=f"{cls}-mlx",
            backend=speed.MLX,
            default=False,
            decode_bandwidth_efficiency=best[0],
            per_layer_us=float(best[1]),
            source="benchmarks/data/measurements.csv (fit split; benchmarks/engine_factors.py)",
            measured=measured + "; prefill: the class's llama.cpp Metal shares (no MLX prefill rows fitted)",
            sources=tuple(
                sorted(
                    {
                        r.source_url
                        for r in mlx_rows(rows)
                        if r.split == "fit" and _hw_class(r, catalog) == cls
                    }
                )
            ),
            confidence="secondary",
            notes=None,
        )
        fitted[cls] = Fitted(factor, len(points), statistics.median(errors))
    return fitted


def toml(fitted: dict[str, Fitted]) -> str:
    out = [
        "# Engines' own speed factors (backend = the engine), beside llama.cpp's per-backend rows in speed.toml.",
        "# MLX: decode_bandwidth_efficiency and per_layer_us per Apple class, fitted on the fit split of the MLX",
        "# rows of benchmarks/data/measurements.csv (the held-out quarter is never used). Prefill shares are the",
        "# class's llama.cpp Metal ones (no MLX prefill rows fitted). A class without MLX rows keeps Metal's.",
        "# GENERATED by `benchmarks/engine_factors.py --toml > catalog/speed_engines.toml`.",
        "",
    ]
    for f in (x.factor for x in fitted.values()):
        out += [
            "[[speed_factor]]",
            f'id = "{f.id}"',
            f'hw_class = "{f.hw_class}"',
            f'backend = "{f.backend}"',
        ]
        # every figure the fit used: the fitted two, and the Metal row's others where they differ from the defaults
        for field in fields(SpeedFactor):
            value = getattr(f, field.name)
            if (
                isinstance(value, float)
                and not isinstance(value, bool)
                and (field.name in ("decode_bandwidth_efficiency", "per_layer_us") or value != field.default)
            ):
                shown = (
                    f"{value:g}" if field.name.endswith("_us") or not value.is_integer() else f"{value:.1f}"
                )
                out.append(f"{field.name} = {shown}")
        if f.prefill_rule:
            # the Metal row's prefill share is a generic rule, not its own fit: said as assumed (prefill_fallback)
            out.append(f'prefill_rule = "{f.prefill_rule}"')
        out += [
            f'source = "{f.source}"',
            f'measured = "{f.measured}"',
            f'confidence = "{f.confidence}"',
            "sources = [",
        ]
        out += [f'  "{s}",' for s in f.sources] + ["]", ""]
    return "\n".join(out)


def _summary(outcomes: Sequence[Outcome]) -> tuple[int, str, str, str]:
    errors = [abs(o.error) for o in outcomes if o.error is not None]
    signed = sorted(o.error for o in outcomes if o.error is not None)
    median = f"{statistics.median(errors):.0%}" if errors else "–"
    within = f"{sum(e <= 0.35 for e in errors) / len(outcomes):.0%}" if outcomes else "–"
    spread = f"{signed[0]:+.0%} … {signed[-1]:+.0%}" if signed else "–"
    return len(outcomes), median, within, spread


def report(
    rows: Sequence[Measurement], ollama: Sequence[Measurement], shipped: Catalog, fitted: dict[str, Fitted]
) -> list[str]:
    metal_only = _with_mlx(shipped, {})
    own = _with_mlx(shipped, {c: f.factor for c, f in fitted.items()})
    lines = [
        "| engine | subset | split | rows | median abs error | within ±35% | range |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for label, cat in (("MLX, llama.cpp Metal factors (before)", metal_only), ("MLX, its own factors", own)):
        for split in ("fit", "holdout"):
            picked = [r for r in mlx_rows(rows) if r.split == split and r.model_id and r.gpu_id]
            for cls in sorted({_hw_class(r, cat) for r in picked}):
                outs = [estimate(r, cat) for r in picked if _hw_class(r, cat) == cls]
                n, med, within, spread = _summary(outs)
                lines.append(
                    f"| {label} | {cls} | {'held out' if split == 'holdout' else split} | {n} | {med} | {within} | {spread} |"
                )
    for split in ("fit", "holdout"):
        picked = [r for r in ollama if r.split == split]
        for backend in sorted({r.backend for r in picked}):
            outs = [estimate(r, shipped) for r in picked if r.backend == backend]
            n, med, within, spread = _summary(outs)
            lines.append(
                f"| Ollama (llama.cpp factors, Ollama's defaults) | {backend} | {'held out' if split == 'holdout' else split} | {n} | {med} | {within} | {spread} |"
            )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--toml", action="store_true", help="print catalog/speed_engines.toml")
    parser.add_argument("--markdown", action="store_true", help="print the accuracy table alone")
    parser.add_argument("--rows", action="store_true", help="every row's estimate with the shipped factors")
    args = parser.parse_args(argv)
    catalog = load_catalog(use_overlay=False)
    rows, ollama = load(), load(OLLAMA_DATA)
    fitted = fit_mlx(rows, catalog)
    if args.toml:
        print(toml(fitted))
        return 0
    if args.rows:
        for row in [*mlx_rows(rows), *ollama]:
            o = estimate(row, catalog)
            err = f"{o.error:+.0%}" if o.error is not None else (o.reason or "")
            print(f"{row.id:60} {row.split:8} {row.value:9.1f} {o.estimate or 0:9.1f} {err}")
        return 0
    if not args.markdown:
        for cls, f in fitted.items():
            print(
                f"{cls}: decode_bandwidth_efficiency {f.factor.decode_bandwidth_efficiency}, per_layer_us "
                f"{f.factor.per_layer_us:g} from {f.rows} fit rows (median |error| {f.median:.0%})"
            )
        print()
    print("\n".join(report(rows, ollama, catalog, fitted)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
