"""The prefill fit of each class × backend: its share of the compute peak and its multipliers for
unquantized weights, mixtures of experts and cooperative matrices (benchmarks/fit_speed.py).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass

from fit_points import Point, gemm_rate
from measurements import row_micro_batch
from power_fit import dense_rate, fit_power, power_pool
from rigcheck.core.estimate import speed
from sycl_expert_fit import expert_us as sycl_expert_us


@dataclass(frozen=True)
class PrefillFit:
    efficiency: float
    float_factor: float
    moe_factor: float
    moe_exponent: float
    #: TFLOPS per watt of board power (speed.prefill_compute), None where no cap is fitted
    tflops_per_watt: float | None
    #: in words: how many rows of which kind set each figure
    said: str
    #: a mixture of experts with unquantized experts, relative to the dense quantised share (per backend)
    float_moe_factor: float = 1.0
    #: prompt GEMMs on matrix engines through Vulkan cooperative matrices (Point.coopmat), relative to the
    #: shader-core share
    coopmat_factor: float = 1.0
    #: µs per expert launch of SYCL's per-expert loop (sycl_expert_fit; 0: not fitted)
    expert_us: float = 0.0
    #: the MoE factor of rows on cooperative matrices (coop_moe_group), 1 where the class has none
    coopmat_moe_factor: float = 1.0


#: a matrix-engine factor needs this many rows on cooperative matrices and this many without in one class ×
#: backend; elsewhere the efficiency covers both
MIN_COOPMAT_ROWS = 2


#: a float-weight factor needs this many dense unquantized rows: a class × backend with that many of its own
#: gets its own factor, the others the median over their backend's rows. The GEMM path for F16/BF16 weights
#: is the backend's, but the units it runs on are the class's: GCN 5.1 (gfx906, amd-gcn) has no matrix
#: units (catalog/gpus/amd.toml, MI50 notes) while RDNA 3 has BF16 WMMA (catalog/compat/arch.toml), and
#: the FP16-accumulate peak the estimate measures against is twice the FP32-accumulate rate on GeForce
#: cards only (speed.prefill_peak_tflops). Leave-one-out over the fit split
#: (benchmarks/prefill_analysis.py --loo): all prefill 16.5% median |error|, 70% within ±35% per class
#: against 19.4%, 68% pooled per backend. An MoE factor needs this many MoE rows and dense rows in its class
MIN_FLOAT_ROWS = 3
MIN_MOE_ROWS = 2
#: a backend's factor for unquantized experts needs this many MoE rows with F16/BF16 experts, pooled over its
#: classes (the path is the backend's kernels). One: the set has one such prefill row per backend, and the
#: factor's decode consequence (speed.TILED_EXPERT_DECODE) is checked on rows it was not fitted on
MIN_FLOAT_MOE_ROWS = 1
#: classes with no MoE prefill row of their own take the MoE factor of a class running the same kernels
BORROWED_MOE = {"nvidia-datacenter": "nvidia-consumer"}
#: backends whose MUL_MAT_ID in a prompt is not one tiled kernel but a loop over experts, so their MoE rows set
#: a factor of their own instead of the class's: SYCL copies the expert ids to the host (``stream->wait()``),
#: sorts the rows by expert and runs one full ggml_sycl_mul_mat (to_fp16_sycl + a oneDNN/oneMKL GEMM) per used
#: expert (ggml-org/ggml src/ggml-sycl/ggml-sycl.cpp@d99724f, ggml_sycl_mul_mat_id), where Vulkan gathers each
#: expert's tokens inside one matmul_id dispatch (ggml_vk_mul_mat_id_q_f16, ggml-vulkan.cpp@d99724f)
OWN_MOE_BACKENDS = frozenset({"sycl"})


def moe_group(key: tuple[str, str]) -> str:
    """The rows that share one MoE prefill factor: the class's, except a backend of OWN_MOE_BACKENDS."""
    cls, backend = key
    return f"{cls}/{backend}" if backend in OWN_MOE_BACKENDS else cls


#: A MoE factor is the ratio of an expert GEMM to the dense GEMM of one kernel family, so rows whose prompt
#: GEMMs run on cooperative matrices (Point.coopmat: Intel Xe2 on Vulkan) fit one of their own: there
#: ``ggml_vk_mul_mat_id_q_f16`` runs the KHR_coopmat ``matmul_id_subgroup_*_f16`` shaders with the generic
#: 128-invocation ``l_warptile_mmqid`` beside the dense coopmat shaders on the 512-invocation tiles tuned for
#: Intel coopmat (``l_warptile``/``l_warptile_mmq``), where Alchemist runs both on the shader-core family's
#: 64 × 64 tiles (ggml-org/ggml src/ggml-vulkan/ggml-vulkan.cpp@d99724f, ggml_vk_load_shaders and the Intel
#: case of ``mul_mat_id_l``). Where a class has fewer than MIN_MOE_ROWS such rows, the factor is the one of
#: the class whose fitted Vulkan MoE rows run the same KHR_coopmat matmul_id shaders: Strix Halo's RDNA 3.5
#: on RADV ("matrix cores: KHR_coopmat", ggml-org/llama.cpp PR #21344's device line;
#: ``ggml_vk_khr_cooperative_matrix_support`` returns true for RADV), whose class factor pools those Vulkan
#: rows with its ROCm ones
BORROWED_COOPMAT_MOE = {"intel": "amd-apu"}


def coop_moe_group(key: tuple[str, str]) -> str:
    """The rows on cooperative matrices of ``key`` that share one MoE factor (BORROWED_COOPMAT_MOE)."""
    return f"{moe_group(key)}/coopmat"


def fit_prefill(
    prefill: dict[tuple[str, str], list[Point]],
    decode_eff: dict[tuple[str, str], float],
    *,
    power: str = "pooled",
    float_by: str = "class",
) -> dict[tuple[str, str], PrefillFit]:
    """Each class × backend's share of its prefill compute peak, its power cap, and its multipliers for
    unquantized weights (per class × backend where it has MIN_FLOAT_ROWS of them, else pooled per backend;
    ``float_by="backend"`` pools them all, as before) and for a mixture of experts (per class), fitted
    together.

    A row's rate is measured tokens/s × FLOPs per token. Its expected rate is the class × backend's dense
    rate (dense_rate: min(peak × efficiency, board power × TFLOPS per watt); ``power=False`` fits no cap)
    × the float factor (unquantized weights) × the MoE factor (mixture of experts). They are found by
    alternating: the efficiency and cap from the rows with the other factors divided out (fit_power), each
    factor the median of its rows' ratios to the dense rate, until they settle. Rows at the memory floor
    (every weight read once per micro-batch at the class's decode bandwidth efficiency) say nothing about
    compute and are left out, as are MoE rows with unquantized experts (UNQUANTISED: a format effect of its
    own).
    """
    rows: dict[tuple[str, str], list[tuple[Point, float]]] = {}
    for key, points in prefill.items():
        eff = decode_eff.get(key, 0.8)
        kept = [
            (p, gemm_rate(p))
            for p in points
            if p.peak_flops and not at_memory_floor(p, eff) and not (p.moe and p.unquantized)
        ]
        if kept:
            rows[key] = kept
    backends = {b for _c, b in rows}
    # the float factor of a class × backend: its own unquantized rows where it has MIN_FLOAT_ROWS of them,
    # else the median over its backend's (see MIN_FLOAT_ROWS)
    f_float = dict.fromkeys(rows, 1.0)
    groups_moe = {moe_group(key) for key in rows} | {
        coop_moe_group(key) for key, kept in rows.items() if any(p.coopmat for p, _r in kept)
    }
    f_moe = dict.fromkeys(groups_moe, 1.0)
    eff = {key: statistics.median(r / (p.peak_flops or 1.0) for p, r in kept) for key, kept in rows.items()}
    cap: dict[tuple[str, str], float | None] = dict.fromkeys(rows)
    exponent = 0.0
    float_n = {b: sum(1 for (_c, kb), kept in rows.items() if kb == b for p, _s in kept if p.unquantized)
               for b in backends}  # fmt: skip
    own_float_n = {key: sum(1 for p, _s in kept if p.unquantized) for key, kept in rows.items()}
    dense_n = {c: sum(1 for key, kept in rows.items() if moe_group(key) == c for p, _s in kept if not p.moe)
               for c in groups_moe}  # fmt: skip
    moe_n = dict.fromkeys(groups_moe, 0)
    # The efficiency is the dense model's: where a class × backend has dense rows enough, they alone set it,
    # and its MoE rows set the class's MoE factor; elsewhere all its rows do, with the factor divided out.
    dense_key = {key: sum(1 for p, _s in kept if not p.moe) >= MIN_MOE_ROWS for key, kept in rows.items()}

    def group_of(key: tuple[str, str], p: Point) -> str:
        return coop_moe_group(key) if p.coopmat else moe_group(key)

    def moe_share(key: tuple[str, str], p: Point) -> float:
        factor = f_moe[group_of(key, p)]
        return min(factor * (p.tokens_per_expert / speed.MOE_TOKENS_REF) ** exponent, 1.0) if p.moe else 1.0

    # the matrix-engine factor (Point.coopmat) of a class × backend with MIN_COOPMAT_ROWS rows on each side
    f_coop = dict.fromkeys(rows, 1.0)
    coop_n = {key: sum(1 for p, _s in kept if p.coopmat) for key, kept in rows.items()}
    coop_fits = {key for key, n in coop_n.items() if n >= MIN_COOPMAT_ROWS <= len(rows[key]) - n}

    def coop(key: tuple[str, str], p: Point) -> float:
        return f_coop[key] if p.coopmat else 1.0

    for _ in range(50):
        before = (dict(eff), dict(cap), dict(f_float), dict(f_moe), exponent, dict(f_coop))
        pools: dict[tuple[str, str], dict[tuple[str, str], list[tuple[Point, float]]]] = defaultdict(dict)
        for key, kept in rows.items():
            pools[power_pool(key, power)][key] = [
                (
                    p,
                    r
                    / (
                        (f_float[key] if p.unquantized else 1.0)
                        * (f_moe[group_of(key, p)] if p.moe else 1.0)
                        * coop(key, p)
                    ),
                )
                for p, r in kept
                if not (p.moe and dense_key[key]) and p.expert_loop is None
            ]
        for groups in pools.values():
            if power == "none":
                found = {
                    k: statistics.median(r / (p.peak_flops or 1.0) for p, r in g) for k, g in groups.items()
                }
                per_watt = None
            else:
                found, per_watt = fit_power(groups)
            for key, value in found.items():
                eff[key], cap[key] = value, per_watt
        pooled_float = {
            b: statistics.median(
                r / dense_rate(p, eff[key], cap[key]) / coop(key, p)
                for key, kept in rows.items()
                if key[1] == b
                for p, r in kept
                if p.unquantized
            )
            for b in backends
            if float_n[b] >= MIN_FLOAT_ROWS
        }
        for key, kept in rows.items():
            if float_by == "class" and own_float_n[key] >= MIN_FLOAT_ROWS:
                f_float[key] = statistics.median(
                    r / dense_rate(p, eff[key], cap[key]) / coop(key, p) for p, r in kept if p.unquantized
                )
            else:
                f_float[key] = pooled_float.get(key[1], 1.0)
        # MoE rows: ratio to the dense rate = f_class × (tokens per expert / 64) ** exponent; the exponent is
        # pooled over classes (least squares of log ratio on log tokens within each class)
        moe_rows = {
            c: [
                (p.tokens_per_expert, r / dense_rate(p, eff[key], cap[key]) / coop(key, p))
                for key, kept in rows.items()
                if dense_key[key]
                for p, r in kept
                if p.moe and p.expert_loop is None and group_of(key, p) == c
            ]
            for c in groups_moe
        }
        num = den = 0.0
        for found in moe_rows.values():
            if len(found) >= MIN_MOE_ROWS:
                xs = [math.log(b / speed.MOE_TOKENS_REF) for b, _r in found]
                ys = [math.log(r) for _b, r in found]
                mx, my = statistics.fmean(xs), statistics.fmean(ys)
                num += sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
                den += sum((x - mx) ** 2 for x in xs)
        exponent = min(max(num / den, 0.0), 1.0) if den else 0.0
        for c, found in moe_rows.items():
            if len(found) >= MIN_MOE_ROWS:
                f_moe[c] = statistics.median(r / (b / speed.MOE_TOKENS_REF) ** exponent for b, r in found)
                moe_n[c] = len(found)
        for c in groups_moe:
            cls = c.split("/")[0]
            if c.endswith("/coopmat") and moe_n[c] < MIN_MOE_ROWS and cls in BORROWED_COOPMAT_MOE:
                f_moe[c] = f_moe.get(BORROWED_COOPMAT_MOE[cls], 1.0)
        for key in coop_fits:
            f_coop[key] = statistics.median(
                r
                / (
                    dense_rate(p, eff[key], cap[key])
                    * (f_float[key] if p.unquantized else 1.0)
                    * moe_share(key, p)
                )
                for p, r in rows[key]
                if p.coopmat
            )
        if (dict(eff), dict(cap), dict(f_float), dict(f_moe), exponent, dict(f_coop)) == before:
            break
    exponent_n = sum(n for n in moe_n.values() if n >= MIN_MOE_ROWS)
    # SYCL's per-expert loop (speed/sycl_experts.py): its launch cost from its MoE rows, the dense rate settled
    loop_us = {
        key: sycl_expert_us(
            kept,
            lambda p, key=key: dense_rate(p, eff[key], cap[key]) * coop(key, p),  # type: ignore[misc]
            decode_eff.get(key, 0.8),
        )
        for key, kept in rows.items()
    }
    # Unquantized experts (kept out above): per backend, the median of their shares over the dense efficiency
    # of their class × backend. A separate multiplier, not the float × MoE product: their expert products
    # leave the quantised MUL_MAT_ID kernels altogether (UNQUANTISED, speed.prefill_path).
    float_moe: dict[str, tuple[float, int, list[str]]] = {}
    for b in {kb for _c, kb in prefill}:
        found = [
            (gemm_rate(p) / p.peak_flops / eff[key] / coop(key, p), p.row.format.upper())
            for key, points in prefill.items()
            if key[1] == b and key in eff
            for p in points
            if p.moe and p.unquantized and p.peak_flops and not at_memory_floor(p, decode_eff.get(key, 0.8))
        ]
        if len(found) >= MIN_FLOAT_MOE_ROWS:
            float_moe[b] = (
                statistics.median(r for r, _f in found),
                len(found),
                sorted({f for _r, f in found}),
            )
    for c, neighbour in BORROWED_MOE.items():
        if c in f_moe and f_moe[c] == 1.0 and moe_n.get(c, 0) == 0:
            f_moe[c] = f_moe.get(neighbour, 1.0)
    fits = {}
    for key, kept in rows.items():
        cls, backend = key
        group = moe_group(key)
        own = float_by == "class" and own_float_n[key] >= MIN_FLOAT_ROWS
        n_float = (own_float_n[key] if own else float_n[backend]) if f_float[key] != 1.0 else 0
        said = (
            f"median of {sum(1 for p, _s in kept if not p.moe)} dense rows"
            if dense_key[key]
            else f"median of {len(kept)} rows"
        )
        if cap[key] is not None:
            dense = [p for p, _r in kept if not (p.moe and dense_key[key])]
            capped = {
                p.row.gpu_id
                for p in dense
                if dense_rate(p, eff[key], None) > dense_rate(p, eff[key], cap[key])
            }
            pool = power_pool(key, power)
            pooled = [k for k in rows if power_pool(k, power) == pool]
            pooled_rows = [p for k in pooled for p, _r in rows[k] if not (p.moe and dense_key[k])]
            said = (
                f"efficiency fitted with the power cap on {len(dense)} {'dense ' if dense_key[key] else ''}rows "
                f"of {len({p.row.gpu_id for p in dense})} GPUs ({len(capped)} at the cap"
                + (
                    f"); TFLOPS per watt pooled over {pool[0]} {pool[1]} ({len(pooled_rows)} rows of "
                    f"{len({p.row.gpu_id for p in pooled_rows})} GPUs; least |log error|)"
                    if len(pooled) > 1
                    else "; least |log error|)"
                )
            )
        if n_float:
            said += (
                f"; float factor from its {n_float} unquantized rows"
                if own
                else f"; float factor from {n_float} unquantized {backend} rows"
            )
        if f_moe[group] != 1.0:
            said += (
                f"; MoE factor from {moe_n[group]} MoE and {dense_n[group]} dense rows of the "
                + ("class" if group == cls else f"class on {backend} (its own MUL_MAT_ID loop)")
                if moe_n.get(group, 0)
                else f"; MoE factor borrowed from {BORROWED_MOE[cls]} (no MoE row of its own)"
            )
        coop_group = coop_moe_group(key)
        coop_moe = f_moe.get(coop_group, 1.0)
        if coop_moe != 1.0:
            said += (
                f"; MoE factor on cooperative matrices from {moe_n[coop_group]} MoE rows on them"
                if moe_n[coop_group] >= MIN_MOE_ROWS
                else f"; MoE factor on cooperative matrices borrowed from {BORROWED_COOPMAT_MOE[cls]} (the same "
                "Vulkan KHR_coopmat matmul_id shaders; no MoE rows enough of its own on them)"
            )
        if f_moe[group] != 1.0:
            said += f"; exponent pooled over {exponent_n} MoE rows"
        if loop_us[key][0]:
            said += (
                f"; {loop_us[key][0]:.0f} µs per expert launch of the per-expert loop from its "
                f"{loop_us[key][1]} MoE rows (in place of the MoE factor there)"
            )
        if key in coop_fits:
            said += (
                f"; matrix-engine factor from {coop_n[key]} rows on cooperative matrices against "
                f"{len(kept) - coop_n[key]} on shader cores"
            )
        fm, fm_n, fm_formats = float_moe.get(backend, (1.0, 0, []))
        if fm_n:
            said += (
                f"; unquantized-expert factor from {fm_n} MoE {backend} row{'s' if fm_n > 1 else ''} with "
                f"{'/'.join(fm_formats)} experts"
            )
        fits[key] = PrefillFit(
            eff[key],
            f_float[key],
            f_moe[group],
            exponent if f_moe[group] != 1.0 else 0.0,
            cap[key],
            said,
            fm,
            f_coop[key],
            loop_us[key][0],
            coop_moe,
        )
    return fits


def at_memory_floor(p: Point, bandwidth_efficiency: float) -> bool:
    """The measured prefill is within 15% of the time it takes to stream the weights once per micro-batch."""
    ubatch = row_micro_batch(p.row)
    floor_s = p.weight_bytes / (p.bandwidth * bandwidth_efficiency) / ubatch
    return bool(p.weight_bytes) and 1 / p.row.value < 1.15 * floor_s


def prefill_lines(fit: PrefillFit) -> list[str]:
    """A class × backend's fitted prefill shares as TOML lines (the multipliers that differ from 1)."""
    lines = [f"prefill_compute_efficiency = {min(fit.efficiency, 2.0):.2f}"]
    if fit.float_factor != 1.0:
        lines.append(f"prefill_float_factor = {min(fit.float_factor, 2.0):.2f}")
    if fit.moe_factor != 1.0:
        lines.append(f"prefill_moe_factor = {min(fit.moe_factor, 2.0):.2f}")
        lines.append(f"prefill_moe_exponent = {fit.moe_exponent:.2f}")
    if fit.float_moe_factor != 1.0:
        lines.append(f"prefill_float_moe_factor = {min(fit.float_moe_factor, 2.0):.2f}")
    if fit.tflops_per_watt is not None:
        lines.append(f"prefill_tflops_per_watt = {fit.tflops_per_watt:.3f}")
    if fit.coopmat_factor != 1.0:
        lines.append(f"prefill_coopmat_factor = {min(fit.coopmat_factor, 16.0):.2f}")
    if fit.coopmat_moe_factor != 1.0:
        lines.append(f"prefill_coopmat_moe_factor = {min(fit.coopmat_moe_factor, 2.0):.2f}")
    if fit.expert_us:
        lines.append(f"prefill_expert_us = {min(fit.expert_us, 1000.0):.1f}")
    return lines
