"""Mixture-of-experts prompt GEMMs by tile shape, against the fit split's rows (issue 28, branch 28-moe-pp).

Run: ``PYTHONPATH=desktop .venv/bin/python benchmarks/moe_tiles.py``

What llama.cpp's code says (ggml-org/ggml src/ggml-cuda/mmq.cu, mmq.cuh, mmq-config-*.cuh@d99724f, the
ggml/ tree llama.cpp vendors): ``ggml_cuda_mul_mat_q`` with expert ids sorts the micro-batch's token slots by
expert (``mm_ids_helper``, src/ggml-cuda/mmid.cu) and launches one MMQ kernel over every expert, its grid
(row tiles × column tiles × experts). The column-tile width J is chosen once, by ``mul_mat_q_switch_J``, for
``ncols_max``: the micro-batch's tokens (``ne12``), not an expert's share. The J with the fewest tiles wins,
so 512 tokens get J = 128 where the architecture's config table has it (Volta and later, RDNA 3/3.5/4) and 64
where it stops there (Pascal, GCN/RDNA 2, CDNA). Each expert's tokens fill whole J-wide tiles; a tile past an
expert's last token returns at once, and ``mul_mat_q_process_tile`` loads and multiplies all J columns of a
tile whatever the expert's count (its loops run to the compile-time J). So an expert with n ≤ J tokens costs
one full tile, and the routed experts reach n / (J × ceil(n / J)) of a dense 512-token GEMM's tile use
(``tile_fill``: the expectation over binomial routing). Vulkan's ``ggml_vk_guess_matmul_id_pipeline``
(src/ggml-vulkan/ggml-vulkan.cpp@d99724f) likewise picks its tile by the micro-batch's tokens: the large
tile, 128 columns, for more than 64. Later llama.cpp PRs choose J from the mean tokens per expert instead:
#28552 (merged 2026-09-07) on RDNA 3.0 and RDNA 4, #26977 (open, 2026-08-12) on NVIDIA Ampere to Blackwell.

This script sets that mechanism (routed-expert FLOPs at the tile fill × a class's expert-tile rate, the rest
of the model at the dense rate) beside the estimator's fitted rule (``prefill_moe_factor`` ×
(tokens per expert / 64) ** ``prefill_moe_exponent`` on the whole model) on the fit and held-out MoE prompt
rows, each class's figure taken from its fit rows only. Blind rows are never read.
"""

from __future__ import annotations

import math
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fit_speed
from measurements import load
from rigcheck.core.catalog import load_catalog
from rigcheck.core.models.resolve import from_catalog

#: the column-tile widths J of each config table for a K-quant (Q4_K, no out-of-bounds fallback), as
#: ggml-org/ggml src/ggml-cuda/mmq-config-{ampere,rdna3,rdna3-5,rdna4,rdna2,cdna,pascal}.cuh@d99724f list them
AMPERE_WIDTHS = (8, 16, 24, 32, 40, 48, 64, 80, 96, 112, 128)
RDNA3_WIDTHS = (16, 32, 48, 64, 80, 96, 112, 128)
DP4A_WIDTHS = (8, 16, 24, 32, 40, 48, 64)  # Pascal and RDNA 2 (which GCN 5.1 also takes)
CDNA_WIDTHS = (16, 32, 48, 64)
#: Vulkan's mul_mm_id tiles: small, medium, large (ggml-vulkan.cpp@d99724f, *_warptile_mmqid)
VULKAN_WIDTHS = (32, 64, 128)


def tile_widths(backend: str, arch: str) -> tuple[int, ...]:
    """The column-tile widths llama.cpp's MUL_MAT_ID prompt kernel can pick on this backend and GPU
    architecture (lower case, as the catalog spells it); empty where it runs no MMQ-style tiled kernel."""
    arch = arch.lower().replace(" ", "")
    if backend == "vulkan":
        return VULKAN_WIDTHS
    if backend not in ("cuda", "rocm"):
        return ()
    if arch.startswith("cdna"):
        return CDNA_WIDTHS
    if arch.startswith(("rdna3", "rdna4")):
        return RDNA3_WIDTHS
    if arch.startswith(("pascal", "rdna2", "rdna1", "gcn")):
        return DP4A_WIDTHS
    return AMPERE_WIDTHS


def ids_tile_width(ncols: int, widths: tuple[int, ...]) -> int:
    """The J ``mul_mat_q_switch_J`` picks for ``ncols`` columns: the narrowest width with the fewest tiles."""
    best, best_tiles = widths[0], math.inf
    for width in widths:
        tiles = math.ceil(ncols / width)
        if tiles < best_tiles:
            best, best_tiles = width, tiles
    return best


def tile_fill(tokens: int, used: int, experts: int, width: int) -> float:
    """The share of the J-wide tiles an expert GEMM computes that routed tokens fill, each token routed to
    ``used`` of ``experts`` at random (binomial counts): tokens × used / (J × E[Σ ceil(n_e / J)])."""
    p = min(used / experts, 1.0)
    tiles = 0.0
    for n in range(tokens + 1):
        prob = math.comb(tokens, n) * p**n * (1 - p) ** (tokens - n)
        if prob > 1e-12:
            tiles += prob * math.ceil(n / width)
    return tokens * p / (width * tiles) if tiles else 1.0


def fill_share(expert_flops: float, fill: float, tile_rate: float) -> float:
    """A model's share of the dense prompt rate when its routed experts (``expert_flops`` of its FLOPs) run
    at ``fill`` × ``tile_rate`` of it (at most 1) and the rest at the dense rate."""
    share = min(fill * tile_rate, 1.0)
    return 1 / (expert_flops / share + (1 - expert_flops))


@dataclass(frozen=True)
class MoeRow:
    split: str
    hw_class: str
    backend: str
    row_id: str
    #: the row's prompt FLOP rate over its class's dense rate
    share: float
    #: routed-expert FLOPs over all the FLOPs the estimate counts
    expert_flops: float
    #: the tile fill, None where the backend runs no tiled MUL_MAT_ID kernel
    fill: float | None
    #: the estimator's fitted rule for the row
    fitted: float


def moe_rows() -> list[MoeRow]:
    """The fit and held-out MoE prompt rows run wholly on GPUs, against their class's fitted dense rate."""
    catalog = load_catalog(use_overlay=False)
    rows = [r for r in load() if r.speed and r.split in ("fit", "holdout")]
    fit_rows = [r for r in rows if r.split == "fit"]
    decode, prefill = fit_speed.points_by_key(fit_rows, catalog)
    _decode, held = fit_speed.points_by_key([r for r in rows if r.split == "holdout"], catalog)
    scan = fit_speed.fit_scan(fit_rows, catalog, fit_speed.estimate)
    if scan is not None:
        prefill = {k: [replace(p, scan_efficiency=scan.efficiency) for p in v] for k, v in prefill.items()}
        held = {k: [replace(p, scan_efficiency=scan.efficiency) for p in v] for k, v in held.items()}
    bandwidth = {key: fit_speed.fit_decode(points)[0] for key, points in decode.items() if points}
    fits = fit_speed.fit_prefill(prefill, bandwidth)
    found: list[MoeRow] = []
    for split, source in (("fit", prefill), ("holdout", held)):
        for key, points in source.items():
            fit = fits.get(key)
            if fit is None:
                continue
            for p in points:
                if not p.moe or p.unquantized or not p.peak_flops:
                    continue
                if fit_speed.at_memory_floor(p, bandwidth.get(key, 0.8)):
                    continue
                coop = fit.coopmat_factor if p.coopmat else 1.0
                share = fit_speed.gemm_rate(p) / fit_speed.dense_rate(p, fit.efficiency, fit.tflops_per_watt)
                spec = catalog.model(p.row.model_id)
                gpu = catalog.gpu(p.row.gpu_id) if p.row.gpu_id else None
                if spec is None or gpu is None:
                    continue
                arch = from_catalog(spec).arch
                used, experts = arch.experts_per_token or 1, arch.num_experts or 1
                expert_flops = 2 * used * arch.expert_params * sum(arch.moe_layers) / p.flops_per_token
                tokens = min(512, p.row.tokens or 512)
                widths = tile_widths(p.backend, gpu.architecture or "")
                fill = tile_fill(tokens, used, experts, ids_tile_width(tokens, widths)) if widths else None
                fitted = min(fit.moe_factor * (p.tokens_per_expert / 64) ** fit.moe_exponent, 1.0)
                found.append(
                    MoeRow(split, key[0], key[1], p.row.id, share / coop, expert_flops, fill, fitted)
                )
    return found


def main() -> None:
    rows = moe_rows()
    # each class's expert-tile rate: the median over its fit rows of what the row implies
    implied: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        left = 1 / r.share - (1 - r.expert_flops)
        if r.split == "fit" and r.fill is not None and left > 0:
            implied[r.hw_class].append(r.expert_flops / (r.fill * left))
    rate = {c: statistics.median(v) for c, v in implied.items()}
    print("expert-tile rate per class (fit rows):", {c: round(v, 2) for c, v in sorted(rate.items())})
    print(
        f"{'split':8} {'class':16} {'backend':7} {'row':48} {'fill':>5} {'fitted rule':>11} {'tile fill':>9}"
    )
    for split in ("fit", "holdout"):
        fitted_err: list[float] = []
        tile_err: list[float] = []
        for r in (r for r in rows if r.split == split):
            tiled = (
                fill_share(r.expert_flops, r.fill, rate[r.hw_class])
                if r.fill is not None and r.hw_class in rate
                else r.fitted
            )
            fitted_err.append(r.fitted / r.share - 1)
            tile_err.append(tiled / r.share - 1)
            fill = f"{r.fill:.3f}" if r.fill is not None else "-"
            print(
                f"{split:8} {r.hw_class:16} {r.backend:7} {r.row_id[:48]:48} {fill:>5} "
                f"{fitted_err[-1]:>+10.0%} {tile_err[-1]:>+9.0%}"
            )
        for name, errors in (("fitted rule", fitted_err), ("tile fill", tile_err)):
            within = sum(abs(e) <= 0.35 for e in errors) / len(errors)
            median = statistics.median(abs(e) for e in errors)
            print(
                f"{split}: {name}: {len(errors)} rows, median |error| {median:.0%}, within ±35% {within:.0%}"
            )


if __name__ == "__main__":
    main()
