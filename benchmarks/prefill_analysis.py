"""What sets prefill (prompt processing) speed: the fit split's GPU prefill rows against candidate causes.

Run: ``.venv/bin/python benchmarks/prefill_analysis.py`` (``--loo`` adds the leave-one-out comparison of
prefill model variants through the real estimator; see ``loo`` below).

For every fit-split prefill row run wholly on GPUs (no offload) it prints the *implied efficiency*: the
measured FLOP rate (tokens/s × 2 × active layer parameters) ÷ the peak the estimator measures prefill
against (``speed.prefill_peak_tflops``: the dense FP16 tensor figure, doubled on GeForce cards and on RDNA 4),
next to quantities that could explain why one card reaches a larger share of that peak than another:

- ``i8/pk``: INT8 dense tensor TOPS ÷ that peak. llama.cpp's quantised prompt kernels (MMQ) multiply int8
  (``mma.sync ... m16n8k32 .s8.s8.s32`` on Ampere and later, ggml/src/ggml-cuda/mma.cuh), so a card whose
  int8 rate is a larger multiple of its FP16 rate would run them relatively faster;
- ``fp32``: FP32 (CUDA-core) TFLOPS, which the dequantisation of each weight tile runs on;
- ``TDP`` and ``TF/W``: the board power limit and the measured TFLOPS per watt of it. A GPU at its power
  limit lowers its clock (NVML's "SW Power Cap" throttle reason), so its sustained rate is set by watts,
  not by the boost-clock peak;
- ``B/F``: memory bandwidth (GB/s) per peak TFLOPS: MMQ reloads each weight tile for every 128-token column
  tile (``mmq_x`` up to 128, ggml/src/ggml-cuda/mmq.cuh), 4 times per 512-token micro-batch;
- ``attn``: attention FLOPs (FlashAttention, causal: 2 × layers × prompt length × attention width per token)
  as a share of the matrix FLOPs the estimate counts;
- ``us/L``: measured time per layer per micro-batch, in µs: a fixed cost per layer (kernel launches) would
  weigh most on small models on fast GPUs;
- ``hid``: the model's hidden size (GEMM shape) and ``GF/t`` its GFLOPs per token.

The rows are grouped by hardware class × backend; ``rel`` is a row's implied efficiency ÷ its class ×
backend's median (dense quantised rows), the spread a class factor alone cannot remove.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import estimate_accuracy
import fit_speed
from fit_points import UNQUANTISED
from measurements import Measurement, load
from rigcheck.core.catalog import Catalog, GpuSpec, Maturity, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import prefill_flops_per_token
from rigcheck.core.estimate.memory import LLAMA_CPP_UBATCH
from rigcheck.core.models.resolve import from_catalog


@dataclass(frozen=True)
class Row:
    row: Measurement
    spec: GpuSpec
    hw_class: str
    #: measured FLOP rate per GPU, TFLOPS
    tflops: float
    peak: float
    flops_per_token: float
    hidden: int
    layers: int
    attention_share: float
    moe: bool

    @property
    def implied(self) -> float:
        return self.tflops / self.peak

    @property
    def unquantized(self) -> bool:
        return self.row.format.upper() in UNQUANTISED


def rows(catalog: Catalog, split: str = "fit") -> list[Row]:
    found = []
    for r in load():
        if r.split != split or r.metric != "prefill_tokens_per_s" or not r.gpu_id or r.offloaded:
            continue
        spec = catalog.gpu(r.gpu_id)
        spec_model = catalog.model(r.model_id) if r.model_id else None
        if spec is None:
            continue
        scalar = speed.bf16_on_scalar_shaders(r.backend, r.format.lower(), spec.vendor)  # type: ignore[arg-type]
        peak = speed.prefill_peak_tflops(spec, fp32=scalar is True)
        if spec_model is None or peak is None:
            continue
        arch = from_catalog(spec_model).arch
        flops = prefill_flops_per_token(arch)
        tokens = r.tokens or LLAMA_CPP_UBATCH
        attention = 2 * arch.num_layers * tokens * arch.num_heads * arch.head_dim
        # llama.cpp's default layer split runs its GPUs one after another: each does its share at its rate
        found.append(
            Row(
                r,
                spec,
                speed.hardware_class(spec.vendor, spec.name, spec, spec.unified_memory),
                r.value * flops / 1e12,
                peak[0],
                flops,
                arch.hidden_size,
                arch.num_layers,
                attention / flops,
                arch.is_moe,
            )
        )
    return found


def _f(value: float | None, spec: str) -> str:
    width = int(spec.split(".", maxsplit=1)[0])
    return "–".rjust(width) if value is None else format(value, spec)


def table(found: Sequence[Row]) -> None:
    by_key: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for x in found:
        by_key[(x.hw_class, x.row.backend)].append(x)
    head = (
        f"{'row':<46}{'fmt':<8}{'TF/s':>7}{'peak':>7}{'eff':>6}{'rel':>6}{'i8/pk':>6}{'fp32':>6}"
        f"{'TDP':>5}{'TF/W':>6}{'B/F':>6}{'attn':>6}{'us/L':>7}{'hid':>6}{'GF/t':>6}"
    )
    for key in sorted(by_key):
        group = by_key[key]
        dense = [x.implied for x in group if not x.moe and not x.unquantized] or [x.implied for x in group]
        median = statistics.median(dense)
        print(f"\n== {key[0]} × {key[1]}: median implied efficiency of dense quantised rows {median:.2f}")
        print(head)
        for x in sorted(group, key=lambda x: (x.moe, x.unquantized, x.spec.id, x.hidden)):
            s = x.spec
            i8 = s.int8_tops / x.peak if s.int8_tops else None
            tdp = s.tdp_watts
            us_per_layer = (x.row.tokens or LLAMA_CPP_UBATCH) / x.row.value / x.layers * 1e6
            if x.row.tokens and x.row.tokens > LLAMA_CPP_UBATCH:
                us_per_layer = LLAMA_CPP_UBATCH / x.row.value / x.layers * 1e6
            print(
                f"{x.row.id[:45]:<46}{x.row.format[:7]:<8}{x.tflops:7.1f}{x.peak:7.0f}{x.implied:6.2f}"
                f"{x.implied / median:6.2f}{_f(i8, '6.2f')}{_f(s.fp32_tflops, '6.1f')}{_f(tdp, '5.0f')}"
                f"{_f(x.tflops / tdp if tdp else None, '6.3f')}"
                f"{_f(s.bandwidth_gbs / x.peak if s.bandwidth_gbs else None, '6.2f')}"
                f"{x.attention_share:6.1%}{us_per_layer:7.0f}{x.hidden:6d}{x.flops_per_token / 1e9:6.1f}"
                + ("  MoE" if x.moe else "")
            )


def correlations(found: Sequence[Row], value: Callable[[Row], float | None], title: str) -> None:
    """Within each class × backend, how a dense quantised row's log ``value`` (less the class mean) moves
    with each candidate's log (a slope of -1 on peak per watt: the watts, not the peak, set the rate)."""
    candidates = {
        "peak per watt (TFLOPS/W of the listed peak)": lambda x: (
            x.peak / x.spec.tdp_watts if x.spec.tdp_watts else None
        ),
        "bandwidth per peak TFLOPS": lambda x: (
            x.spec.bandwidth_gbs / x.peak if x.spec.bandwidth_gbs else None
        ),
        "FP32 TFLOPS per peak": lambda x: x.spec.fp32_tflops / x.peak if x.spec.fp32_tflops else None,
        "hidden size": lambda x: float(x.hidden),
        "attention share": lambda x: x.attention_share,
    }
    by_key: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for x in found:
        if not x.moe and not x.unquantized:
            by_key[(x.hw_class, x.row.backend)].append(x)
    print(f"\n== {title} against log candidate, dense quantised rows, within class × backend")
    for name, get in candidates.items():
        xs: list[float] = []
        ys: list[float] = []
        for group in by_key.values():
            pairs = [(get(x), value(x)) for x in group]
            pairs = [(a, b) for a, b in pairs if a and b]
            if len(pairs) < 3 or len({a for a, _ in pairs}) < 2:
                continue
            lx = [math.log(a) for a, _ in pairs]
            ly = [math.log(b) for _, b in pairs]
            mx, my = statistics.fmean(lx), statistics.fmean(ly)
            xs += [v - mx for v in lx]
            ys += [v - my for v in ly]
        if len(xs) < 3:
            continue
        sxx = sum(v * v for v in xs)
        sxy = sum(a * b for a, b in zip(xs, ys, strict=True))
        syy = sum(v * v for v in ys)
        slope = sxy / sxx if sxx else 0.0
        r = sxy / math.sqrt(sxx * syy) if sxx and syy else 0.0
        print(f"  {name:<46} n={len(xs):3d}  slope {slope:+.2f}  r {r:+.2f}")


# -- leave-one-out over the fit split, through the real estimator ---------------------------------------

#: prefill model variants compared by ``--loo``: keyword arguments of fit_speed.fit_prefill
VARIANTS: dict[str, dict[str, object]] = {
    "share of the peak per class × backend (before)": {"power": "none"},
    "power cap, TFLOPS/W per class × backend": {"power": "class"},
    "power cap, TFLOPS/W per vendor × backend, float factor per backend": {
        "power": "pooled",
        "float_by": "backend",
    },
    "power cap, TFLOPS/W per vendor × backend": {"power": "pooled"},
}


def with_prefill(catalog: Catalog, fits: dict[tuple[str, str], fit_speed.PrefillFit]) -> Catalog:
    """``catalog`` with its prefill factors replaced by ``fits``, rounded as fit_speed prints them; a class ×
    backend without a fit loses its prefill efficiency (it has no row left to set one)."""
    factors = []
    for f in catalog.speed_factors:
        found = fits.get((f.hw_class, f.backend))
        if found is None:
            factors.append(replace(f, prefill_compute_efficiency=None) if f.prefill_compute_efficiency else f)
            continue
        factors.append(
            replace(
                f,
                prefill_compute_efficiency=round(min(found.efficiency, 2.0), 2),
                prefill_float_factor=round(min(found.float_factor, 2.0), 2),
                prefill_moe_factor=round(min(found.moe_factor, 2.0), 2),
                prefill_moe_exponent=round(found.moe_exponent, 2) if found.moe_factor != 1.0 else 0.0,
                prefill_tflops_per_watt=None
                if found.tflops_per_watt is None
                else round(found.tflops_per_watt, 3),
            )
        )
    return replace(catalog, speed_factors=tuple(factors))


def with_prefill_maturity(catalog: Catalog, prefill_rows: list[Measurement]) -> Catalog:
    """``catalog`` with the prefill maturity factors fitted again on ``prefill_rows`` (fit_speed.fit_maturity;
    decode factors as they are)."""
    fitted, _urls, _builds = fit_speed.fit_maturity(prefill_rows, catalog)
    kept = {m.model_type: replace(m, prefill_factor=1.0) for m in catalog.maturities}
    for model_type, factors in fitted.items():
        if "prefill_factor" in factors:
            value = round(factors["prefill_factor"][0], 2)
            base = kept.get(model_type) or Maturity(
                f"llama.cpp-{model_type}", "llama.cpp", model_type, "leave-one-out refit"
            )
            kept[model_type] = replace(base, prefill_factor=value)
    return replace(catalog, maturities=tuple(kept.values()))


def loo(catalog: Catalog, variant: dict[str, object]) -> dict[str, estimate_accuracy.Outcome]:
    """Each fit-split prefill row estimated with the prefill factors (and prefill maturity) fitted on the
    other fit rows, as fit_speed fits them, the decode factors as catalog/speed.toml has them."""
    fit_rows = [r for r in load() if r.split == "fit" and r.speed]
    prefill_rows = [r for r in fit_rows if r.metric == "prefill_tokens_per_s"]
    decode_eff = {(f.hw_class, f.backend): f.decode_bandwidth_efficiency for f in catalog.speed_factors}
    _decode, points = fit_speed.points_by_key(prefill_rows, catalog)
    bare = replace(catalog, maturities=tuple(replace(m, prefill_factor=1.0) for m in catalog.maturities))
    outcomes = {}
    for row in prefill_rows:
        rest = {key: [p for p in found if p.row.id != row.id] for key, found in points.items()}
        fits = fit_speed.fit_prefill({k: v for k, v in rest.items() if v}, decode_eff, **variant)  # type: ignore[arg-type]
        fitted = with_prefill(bare, fits)
        fitted = with_prefill_maturity(fitted, [r for r in prefill_rows if r.id != row.id])
        outcomes[row.id] = estimate_accuracy.estimate(row, fitted)
    return outcomes


def loo_report(catalog: Catalog) -> None:
    print("\n== leave-one-out on the fit split (prefill rows; each refitted without the row it estimates)")
    results = {name: loo(catalog, variant) for name, variant in VARIANTS.items()}
    for subset in ("all speed", "NVIDIA discrete", "MoE", "unified memory"):
        print(f"  {subset} / prefill:")
        for name, outcomes in results.items():
            chosen = [o for o in outcomes.values() if subset in o.row.subsets()]
            s = estimate_accuracy.summarise(chosen)
            print(
                f"    {name:<64} n={s.expressible:3d}  median |error| {_f(s.median, '5.1%')}  "
                f"within ±35% {_f(s.within, '4.0%')}"
            )
    names = list(results)
    print(f"\n  per row: {' | '.join(f'[{i}] {n}' for i, n in enumerate(names))}")
    for row_id in results[names[0]]:
        errors = [results[n][row_id].error for n in names]
        cells = "".join(_f(None if e is None else 100 * e, "+8.0f") for e in errors)
        print(f"  {row_id[:62]:<63}{cells}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loo", action="store_true", help="compare prefill model variants by leave-one-out")
    args = parser.parse_args(argv)
    catalog = load_catalog(use_overlay=False)
    found = rows(catalog)
    table(found)
    correlations(found, lambda x: x.implied, "log implied efficiency")
    left = {}
    for x in found:
        estimate = estimate_accuracy.estimate(x.row, catalog).estimate
        if estimate:
            left[x.row.id] = x.row.value / estimate
    correlations(found, lambda x: left.get(x.row.id), "log measured ÷ estimate (catalog/speed.toml as it is)")
    if args.loo:
        loo_report(catalog)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
