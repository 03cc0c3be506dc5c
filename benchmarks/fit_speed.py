"""Fit the speed model's per-class factors (catalog/speed.toml) on the measurement set's fit split.

Run: ``.venv/bin/python benchmarks/fit_speed.py``. For every decode row run entirely on one kind of GPU
(no offload), it works out the bytes one token reads and the layers it runs, then for each hardware
class × backend finds the bandwidth efficiency and the fixed per-layer cost that minimise the squared
log error of tokens/s; prefill rows give the class's share of its compute peak (median of its dense rows,
or fitted with a board-power cap pooled over a vendor's classes on one backend: fit_power), its factor for
unquantized weights and for mixtures of experts (fit_prefill). Several GPUs in llama.cpp's
layer split count as one (they run one after another). Rows in the held-out quarter (``Measurement.split == "holdout"``) are never used. It prints TOML to paste into
``catalog/speed.toml`` with each class's row count and fit error, and the source URLs of its rows.
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bf16_fit import fit_bf16
from borrowed_factors import DEFAULT_BACKEND, print_borrowed, print_borrowed_backend, printed_per_layer_us
from cpu_decode_fit import fit_cpu
from cpu_fit import print_cpu_classes
from decode_fit import (
    MIN_MOE_COST_ROWS,
    MIN_ROWS_FOR_FIXED_COST,
    POOL_APART,
    decode_seconds,
    fit_decode,
    fit_moe_cost,
    keeps_median,
    separates_moe,
)
from dp4a_fit import fit_nodp4a
from fit_points import (
    Point,
    current_build_row,
    gemm_rate,
    llama_cpp_build,
    point,
    points_by_key,
    slow_bf16_points,
)
from ktransformers_fit import print_ktransformers
from maturity_fit import estimate, fit_maturity, print_maturity
from measurements import Measurement, load
from per_hop_fit import fit_per_hop
from power_fit import dense_rate
from prefill_fallback import generic_prefill
from prefill_fit import (
    BORROWED_COOPMAT_MOE,
    OWN_MOE_BACKENDS,
    PrefillFit,
    at_memory_floor,
    fit_prefill,
    moe_group,
    prefill_lines,
)
from rigcheck.core.catalog import load_catalog
from rigcheck.core.estimate import speed
from scan_fit import ScanFit, fit_scan
from sycl_matvec_fit import fit_unreordered, unreordered_row

#: what other scripts and tests take from here: the fit's parts live in the modules imported above
__all__ = [
    "BORROWED_COOPMAT_MOE",
    "MIN_MOE_COST_ROWS",
    "MIN_ROWS_FOR_FIXED_COST",
    "OWN_MOE_BACKENDS",
    "POOL_APART",
    "Measurement",
    "Point",
    "PrefillFit",
    "at_memory_floor",
    "current_build_row",
    "decode_seconds",
    "dense_rate",
    "estimate",
    "fit_cpu",
    "fit_decode",
    "fit_maturity",
    "fit_moe_cost",
    "fit_prefill",
    "fit_scan",
    "gemm_rate",
    "keeps_median",
    "llama_cpp_build",
    "main",
    "moe_group",
    "point",
    "points_by_key",
    "print_borrowed",
    "separates_moe",
]

HEADER = """# Speed factors: how close each class of hardware, with each backend, gets to its peaks when llama.cpp
# decodes (tokens/s at batch 1) and prefills. Decode time per token on a device =
#   max(bytes read ÷ (peak bandwidth × decode_bandwidth_efficiency),
#       FLOPs ÷ (peak compute × decode_compute_efficiency))
#   + per_layer_us × the layers it runs + per_gpu_us for each further GPU.
# Prefill = 2 × the active layer parameters (fit.prefill_flops_per_token) FLOPs per token at
# prefill_compute_efficiency × the compute peak llama.cpp's prompt kernels see (speed.prefill_peak_tflops):
# the catalog's dense FP16/BF16 tensor figure (FP32 accumulate), doubled on GeForce cards (their
# FP16-accumulate rate); the FP32 peak where no tensor figure exists (Apple GPUs: FP16 = FP32 rate; M3/M4
# have no published figure and get no prefill estimate), and the FP32 peak for BF16 on Vulkan where the
# driver has no BF16 matrices (speed.bf16_on_scalar_shaders), and at most prefill_tflops_per_watt × the GPU's
# power limit (its board power): a GPU at its power limit lowers its clocks (speed.prefill_compute; the figure
# is pooled over a vendor's classes on one backend and fitted with the efficiencies, least |log error|);
# never faster than reading the device's weights
# (every routed expert touched) once per micro-batch at decode_bandwidth_efficiency. The efficiency is the
# dense model's with quantised weights; prefill_float_factor multiplies it for F16/BF16/F32 weights (another
# GEMM path; per class where it has 3 such rows, else pooled over its backend's) and, for a mixture of
# experts, prefill_moe_factor ×
# (prompt tokens per expert and micro-batch / 64) ** prefill_moe_exponent, at most 1 (speed.prefill_path;
# the factor per class against its dense rows, the exponent pooled within classes); with F16/BF16 experts,
# prefill_float_moe_factor alone (per backend). Vulkan decodes BF16 experts through that tiled GEMM
# (speed.TILED_EXPERT_DECODE), at that rate. Offloaded weights add their PCIe copy per micro-batch to the
# compute time. A hybrid's Gated DeltaNet / Mamba-2 layers add their recurrent scans, run token by token in
# FP32 (speed/recurrent_scan.py): their FLOPs at prefill_scan_efficiency × the FP32 peak, one share pooled over
# every GPU class and backend (benchmarks/scan_fit.py; the prompt rows of hybrids are fitted above on what is
# left of their time).
# The CPU class: decode relative to the host's peak bandwidth (catalog/cpu_platforms.toml or a measurement);
# prefill relative to cores × max clock × FP32 FLOPs per cycle by ISA (speed.cpu_compute), from CPU-only rows.
# The CPU × "ktransformers" row: ktransformers' own CPU kernels for the routed experts it keeps in RAM
# (fit.ktransformers_parts), the same two shares from ktransformers rows, after their GPU part.
# MLX rows (engine mlx-lm) are left out here: mlx-lm's own class × "mlx" rows are fitted by
# benchmarks/engine_factors.py into catalog/speed_engines.toml (speed.engine_gpu_factor reads both files).
#
# GENERATED by `benchmarks/fit_speed.py --maturity > catalog/speed.toml` from the fit split of
# benchmarks/data/measurements.csv (the held-out quarter is never used); `sources` lists the measurement
# rows' own sources. Classes are hardware tiers (core/estimate/speed.py hardware_class), never single chips.
"""


def main() -> None:
    catalog = load_catalog(use_overlay=False)
    rows = [r for r in load() if r.split == "fit" and r.speed]
    decode, prefill = points_by_key(rows, catalog)
    # each further GPU's hand-off, from one-GPU and N-GPU runs of one source, fitted first and then held
    # fixed in the efficiency and per-layer fits, so multi-GPU rows do not inflate the per-layer cost
    hop_fits = fit_per_hop(rows, catalog)
    decode = {
        key: [replace(p, per_hop_us=hop_fits[key].us if key in hop_fits else 0.0) for p in points]
        for key, points in decode.items()
    }
    cpu_efficiency = fit_cpu(rows, catalog, decode.get((speed.CPU_CLASS, "cpu"), []))
    # a hybrid's recurrent scans, against the catalog's class factors (scan_fit): the prompt rows' GEMM time is
    # what is left of them (gemm_rate)
    scan: ScanFit | None = fit_scan(rows, catalog, estimate)
    if scan is not None:
        prefill = {
            key: [replace(p, scan_efficiency=scan.efficiency) for p in points]
            for key, points in prefill.items()
        }
    #: each class × backend's decode factors, for a class that borrows its neighbour's on the same backend
    fitted: dict[tuple[str, str], tuple[float, float]] = {}
    #: every fitted class × backend row as printed, for a class that borrows its vendor's backend row
    printed: dict[tuple[str, str], list[str]] = {}
    print(HEADER)
    pools: dict[tuple[str, str], list[Point]] = defaultdict(list)
    for (cls, backend), points in decode.items():
        if cls not in POOL_APART:
            pools[(cls.split("-")[0], backend)].extend(points)
    pool_tau = {
        key: fit_decode(points)[1] for key, points in pools.items() if len(points) >= MIN_ROWS_FOR_FIXED_COST
    }
    decode_fits: dict[tuple[str, str], tuple[float, float, float, str, list[str]]] = {}
    moe_fits: dict[tuple[str, str], tuple[float, str]] = {}
    for key, points in decode.items():
        if not points:
            continue
        tau_fixed = None
        if len(points) < MIN_ROWS_FOR_FIXED_COST:
            tau_fixed = pool_tau.get((key[0].split("-")[0], key[1]))
            if tau_fixed is None:
                tau_fixed = next((t for (_v, b), t in pool_tau.items() if b == key[1]), 0.0)
        moe_found = (
            fit_moe_cost(points, tau_fixed) if key[0] != speed.CPU_CLASS and separates_moe(points) else None
        )
        plain = fit_decode(points, tau_fixed)
        if moe_found is not None and moe_found[2] and keeps_median(points, moe_found, plain):
            eff, tau, moe_us = moe_found
            moe_how = "the MoE rows' against the dense rows' efficiency and per-layer cost"
        else:
            # none: a pool's figure would be set by another class's rows (a vendor × backend pool fits one
            # efficiency for all its classes, so its MoE cost stands in for their differences too)
            moe_us, moe_how = 0.0, ""
            eff, tau, _err = plain
        err = statistics.median(
            abs(1 / decode_seconds(p, eff, tau, moe_us) / p.row.value - 1) for p in points
        )
        if moe_us:
            moe_fits[key] = (moe_us, moe_how)
        how = "fitted with the efficiency" if tau_fixed is None else "taken from its vendor × backend pool"
        extra_urls: list[str] = []
        if key == (speed.CPU_CLASS, "cpu") and cpu_efficiency is not None:
            eff, n_rows, err, extra_urls = cpu_efficiency
            tau = 0.0
            how = f"none; the efficiency is the median over {n_rows} CPU-only and offloaded rows, |error| on those"
        decode_fits[key] = (eff, tau, err, how, extra_urls)
    # each prompt row pays its layers' fixed cost once per micro-batch at the decode figure its class × backend
    # prints (a borrowing class: its neighbour's), as the estimator takes it (speed/fixed.py)
    prefill = {
        key: [
            replace(
                p,
                prompt_layer_us=printed_per_layer_us(key, decode_fits),
                per_hop_us=hop_fits[key].us if key in hop_fits else 0.0,
            )
            for p in points
        ]
        for key, points in prefill.items()
    }
    prefill_fits = fit_prefill(prefill, {key: f[0] for key, f in decode_fits.items()})
    # a class × backend with no prompt rows at all: its backend's median share (prefill_fallback)
    generic = generic_prefill(prefill_fits, prefill, POOL_APART)
    bf16 = fit_bf16(
        [
            replace(
                p,
                per_hop_us=hop_fits[(p.hw_class, p.backend)].us
                if (p.hw_class, p.backend) in hop_fits
                else 0.0,
            )
            for p in slow_bf16_points(rows, catalog)
        ],
        lambda cls, b: decode_fits[(cls, b)][:2] if (cls, b) in decode_fits else None,
    )
    unreordered = fit_unreordered(
        [
            replace(
                p,
                per_hop_us=hop_fits[(p.hw_class, p.backend)].us
                if (p.hw_class, p.backend) in hop_fits
                else 0.0,
            )
            for r in rows
            if unreordered_row(r) and (p := point(r, catalog)) is not None
        ],
        lambda cls, b: decode_fits[(cls, b)][:2] if (cls, b) in decode_fits else None,
    )
    nodp4a = fit_nodp4a(
        rows,
        catalog,
        {
            cls: (fit[1], hop_fits[(cls, b)].us if (cls, b) in hop_fits else 0.0)
            for (cls, b), fit in decode_fits.items()
            if b == "cuda"
        },
    )
    for key in sorted(decode_fits):
        points = decode[key]
        pre = prefill.get(key, [])
        eff, tau, err, how, extra_urls = decode_fits[key]
        prefill_fit = prefill_fits.get(key)
        prefill_from = ""
        if prefill_fit is None and not pre:
            # decode rows only: the class's default backend's prefill shares, as print_borrowed_backend does
            # for a class × backend with no rows at all (prefill rides the chip's matrix path)
            default = (key[0], DEFAULT_BACKEND.get(key[0].split("-")[0], "cpu"))
            prefill_fit = prefill_fits.get(default) if default != key else None
            prefill_from = f" (no prefill rows of its own: the {default[0]}-{default[1]} shares)"
        fallback = generic.get(key[1]) if prefill_fit is None else None
        urls = sorted({p.row.source_url for p in points + pre} | set(extra_urls))
        with_nodp4a = nodp4a is not None and key[0].startswith("nvidia") and key[1] == "cuda"
        if with_nodp4a:
            urls = sorted(set(urls) | set(nodp4a.urls))
        slow_bf16 = bf16.get(key[1])
        if slow_bf16 is not None:
            urls = sorted(set(urls) | set(slow_bf16.urls))
        slow_matvec = unreordered.get(key[1], [])
        for matvec in slow_matvec:
            urls = sorted(set(urls) | set(matvec.urls))
        if scan is not None and key[1] != "cpu":
            urls = sorted(set(urls) | set(scan.urls))
        print("[[speed_factor]]")
        print(f'id = "{key[0]}-{key[1]}"')
        print(f'hw_class = "{key[0]}"')
        print(f'backend = "{key[1]}"')
        if key[1] == DEFAULT_BACKEND.get(key[0].split("-")[0], "cpu"):
            print("default = true")
        factor_lines = [f"decode_bandwidth_efficiency = {eff:.2f}", f"per_layer_us = {tau:g}"]
        if key in moe_fits:
            factor_lines.append(f"moe_layer_us = {moe_fits[key][0]:g}")
        fitted[key] = (eff, tau)
        if key in hop_fits and hop_fits[key].us:
            factor_lines.append(f"per_gpu_us = {hop_fits[key].us:g}")
        if prefill_fit is not None:
            factor_lines += prefill_lines(prefill_fit)
        if fallback is not None and key[1] != "cpu":
            factor_lines += fallback.lines()
        if scan is not None and key[1] != "cpu":
            factor_lines.append(f"prefill_scan_efficiency = {scan.efficiency:.3f}")
        if with_nodp4a:
            factor_lines.append(f"decode_nodp4a_efficiency = {nodp4a.efficiency:.2f}")
        if slow_bf16 is not None:
            factor_lines.append(f"decode_bf16_factor = {slow_bf16.factor:.2f}")
        for matvec in slow_matvec:
            factor_lines.append(f"{matvec.field} = {matvec.factor:.2f}")
        print("\n".join(factor_lines))
        printed[key] = [line for line in factor_lines if not line.startswith("per_gpu_us")]
        print('source = "benchmarks/data/measurements.csv (fit split; benchmarks/fit_speed.py)"')
        print(
            f'measured = "{len(points)} decode rows (median |error| {err:.0%} on them; per-layer cost {how})'
            + (f", prefill{prefill_from}: {prefill_fit.said}" if prefill_fit is not None else "")
            + (f"; per further GPU: {hop_fits[key].said}" if key in hop_fits and hop_fits[key].us else "")
            + (f"; cost per mixture-of-experts layer {moe_fits[key][1]}" if key in moe_fits else "")
            + (f"; {scan.said}" if scan is not None and key[1] != "cpu" else "")
            + (f"; {nodp4a.said}" if with_nodp4a else "")
            + (f"; {slow_bf16.said}" if slow_bf16 is not None else "")
            + "".join(f"; {matvec.said}" for matvec in slow_matvec)
            + '"'
        )
        print("sources = [")
        for url in urls:
            print(f'  "{url}",')
        print("]")
        print()
    print_ktransformers(rows, catalog)
    print_cpu_classes(rows, catalog)
    print_borrowed(fitted, hop_fits, generic, prefill_fits=prefill_fits, prefill=prefill, scan=scan)
    print_borrowed_backend(printed, generic)


if __name__ == "__main__":
    main()
    if "--maturity" in sys.argv:
        print_maturity([r for r in load() if r.split == "fit" and r.speed], load_catalog(use_overlay=False))
