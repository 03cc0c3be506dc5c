"""Candidate mechanisms behind mixture-of-experts decode errors, checked on the fit rows (issue 28).

Run: ``PYTHONPATH=desktop .venv/bin/python benchmarks/moe_decode_checks.py`` (add ``--rows`` for every row).

The blind set's MoE decode rows read high (estimate above measurement) on many classes; three mechanisms
from llama.cpp's code that the decode model (speed/decode.py) leaves out would each make an MoE token
slower than its bytes say. Each is checked here against the signed errors of the fit split's llama.cpp MoE
decode rows on GPUs (no offload), never against the blind set:

1. **Idle threads in a mat-vec block over a short row.** At batch 1 a quantised mat-vec (ggml-cuda
   mmvq.cu, built for HIP too) gives each output row one block of ``nwarps`` warps, which steps along the
   row ``vdr × nwarps × warp_size / qi`` quant blocks at a time (``blocks_per_iter``); a row shorter than
   one step leaves the rest of the block's threads idle (ggml-org/llama.cpp
   ggml/src/ggml-cuda/mmvq.cu@000f4625abc4efd46ee160e4473ffe0da004082e ``mul_mat_vec_q``; nwarps 4 × 32 on
   NVIDIA, 2 × 64 on GCN/CDNA, 1 × 32 on RDNA for one column, ``calc_nwarps``). An expert's down projection
   runs along the expert's width (768 in Qwen3-30B-A3B, 512 in Qwen3.5/3.6-35B-A3B and Qwen3-Next), so on
   NVIDIA and GCN most of its block is idle: PR #20635 ("Increase number of output elements per-thread
   block if the K-dimension is small", https://github.com/ggml-org/llama.cpp/pull/20635, 2026-03-16) gave
   such rows more output rows per block, +3% tokens/s on Qwen3-30B-A3B Q4_K_M at one token per micro-batch
   on an RTX Pro 6000. :func:`filled_share` is the share of a block's row steps the row fills.
2. **Too few blocks to fill a large GPU.** The k routed experts' rows are few (768 × 8 for Qwen3-30B-A3B's
   gate) next to a dense layer's (14,336 for Llama-3-8B's), so on a GPU with many SMs a MUL_MAT_ID launch
   runs a wave or two and its tail leaves SMs idle: if it mattered, large GPUs (here: peak bandwidth of
   800 GB/s and more, the catalog has no SM counts) would read higher than small ones.
3. **A cost per MoE layer on classes whose rows do not fit one.** ``moe_layer_us`` (speed/fixed.py) is fitted
   only where a class has MoE and dense rows enough and the cost lowers its median error
   (benchmarks/decode_fit.py ``fit_moe_cost``); :func:`pooled_moe_costs` gives every other class on a backend
   the median of that backend's fitted costs, to see what the fit rows of those classes say to it.

And one not special to experts, the brief's "compute-bound dequantisation of K-quants": :func:`type_errors`
groups every fit decode row on a GPU (llama.cpp, no offload; dense and MoE) by the ggml type of its bulk
weights; a type whose mat-vec is bound by its unpacking instructions rather than its bytes reads high there.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from estimate_accuracy import estimate
from measurements import Measurement, load
from rigcheck.core.catalog import Catalog, GpuSpec, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.memory import expert_params_per_layer
from rigcheck.core.estimate.speed.kernels import ggml_type
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ArchConfig

#: per ggml type: (qk: weights per quant block, qi: 32-bit ints of quants per block, vdr: ints per thread
#: and step), ggml-org/llama.cpp ggml/src/ggml-cuda/vecdotq.cuh and ggml-common.h (QI = QK / (4 × QR);
#: VDR_*_Q8_1_MMVQ)
MMVQ_LAYOUT = {
    "Q4_0": (32, 4, 2),
    "Q4_1": (32, 4, 2),
    "Q5_0": (32, 4, 2),
    "Q5_1": (32, 4, 2),
    "Q8_0": (32, 8, 2),
    "Q2_K": (256, 16, 1),
    "Q3_K": (256, 16, 1),
    "Q4_K": (256, 32, 2),
    "Q5_K": (256, 32, 2),
    "Q6_K": (256, 32, 1),
}
#: (nwarps, warp size) of a one-column mat-vec block by GPU family (mmvq.cu@000f4625 calc_nwarps:
#: MMVQ_PARAMETERS_GENERIC, _GCN, _RDNA2, which RDNA 3/4 share)
MMVQ_BLOCK = {"nvidia": (4, 32), "gcn": (2, 64), "rdna": (1, 32)}
#: peak bandwidth from which a GPU counts as large for check 2, GB/s
LARGE_GPU_GBS = 800.0
UNQUANTISED = frozenset({"F16", "BF16", "F32"})


def filled_share(k: int, kind: str, family: str) -> float | None:
    """The share of a mat-vec block's row steps a row of ``k`` weights of ``kind`` fills at batch 1 on a
    GPU ``family`` (MMVQ_BLOCK): quant blocks in the row over the steps' capacity; None for a type or
    family the table does not hold, or a row that is not whole blocks of ``kind`` (llama-quantize stores
    such a tensor in another type)."""
    layout = MMVQ_LAYOUT.get(kind)
    block = MMVQ_BLOCK.get(family)
    if layout is None or block is None or k <= 0 or k % layout[0]:
        return None
    qk, qi, vdr = layout
    nwarps, warp = block
    per_row = k // qk
    per_step = vdr * nwarps * warp // qi
    if per_row == 0:
        return None
    return per_row / (math.ceil(per_row / per_step) * per_step)


def expert_width(arch: ArchConfig, config: dict[str, object] | None = None) -> int | None:
    """A routed expert's intermediate width: the model config's ``moe_intermediate_size``, else its
    parameters over experts × 3 matrices (gate, up, down) × the hidden size in the first layer with
    experts."""
    given = (config or {}).get("moe_intermediate_size") or arch.moe_intermediate_size
    if isinstance(given, int) and given > 0:
        return given
    per_layer = [p for p in expert_params_per_layer(arch) if p] if arch.is_moe else []
    if not per_layer or not arch.num_experts or not arch.hidden_size:
        return None
    return round(per_layer[0] / (arch.num_experts * 3 * arch.hidden_size))


def gpu_family(spec: GpuSpec | None) -> str | None:
    """Which MMVQ_BLOCK row a GPU's CUDA/HIP mat-vec kernel runs with."""
    if spec is None:
        return None
    if spec.vendor == "nvidia":
        return "nvidia"
    if spec.vendor != "amd":
        return None
    arch = (spec.architecture or "").lower()
    if arch.startswith(("gcn", "cdna")):
        return "gcn"
    return "rdna" if arch.startswith("rdna") else None


@dataclass(frozen=True)
class MoeRow:
    row: Measurement
    hw_class: str
    #: estimate / measurement - 1
    error: float
    #: the routed experts' width: the length of their down projection's rows
    expert_width: int | None
    #: filled_share of that row on this GPU's CUDA/HIP mat-vec block (None: another backend or type)
    filled: float | None
    bandwidth_gbs: float


def moe_rows(catalog: Catalog, rows: Sequence[Measurement]) -> list[MoeRow]:
    """The fit split's llama.cpp MoE decode rows on GPUs without offload that the estimator answers."""
    found: list[MoeRow] = []
    for row in rows:
        if row.split != "fit" or row.metric != "decode_tokens_per_s" or not row.moe:
            continue
        if not row.gpu_count or row.offloaded or not row.gpu_id or not row.model_id:
            continue
        if row.engine.lower().startswith(("mlx", "ollama", "ktransformers")):
            continue
        spec = catalog.gpu(row.gpu_id)
        model = catalog.model(row.model_id)
        if spec is None or model is None or spec.bandwidth_gbs is None:
            continue
        outcome = estimate(row, catalog)
        if outcome.error is None:
            continue
        width = expert_width(from_catalog(model).arch, model.config)
        kind = ggml_type(row.format.lower())
        filled = None
        if row.backend in ("cuda", "rocm") and width and kind and row.format.upper() not in UNQUANTISED:
            filled = filled_share(width, kind, gpu_family(spec) or "")
        hw_class = speed.hardware_class(spec.vendor, spec.name, spec, spec.unified_memory)
        found.append(MoeRow(row, hw_class, outcome.error, width, filled, spec.bandwidth_gbs))
    return found


def pooled_moe_costs(catalog: Catalog) -> dict[str, float]:
    """Per backend, the median ``moe_layer_us`` of its classes that have one fitted."""
    by_backend: dict[str, list[float]] = defaultdict(list)
    for factor in catalog.speed_factors:
        if factor.moe_layer_us:
            by_backend[factor.backend].append(factor.moe_layer_us)
    return {backend: statistics.median(costs) for backend, costs in by_backend.items()}


def with_pooled_costs(catalog: Catalog, pooled: dict[str, float]) -> tuple[Catalog, set[str]]:
    """The catalog with every class × backend that has no ``moe_layer_us`` given its backend's pooled one,
    and the ids of the factors changed."""
    changed: set[str] = set()
    factors = []
    for factor in catalog.speed_factors:
        cost = pooled.get(factor.backend)
        if not factor.moe_layer_us and cost:
            factors.append(replace(factor, moe_layer_us=cost))
            changed.add(f"{factor.hw_class}-{factor.backend}")
        else:
            factors.append(factor)
    return replace(catalog, speed_factors=tuple(factors)), changed


def type_errors(catalog: Catalog, rows: Sequence[Measurement]) -> dict[str, list[float]]:
    """Signed errors of the fit split's llama.cpp decode rows on GPUs without offload, by the bulk ggml type
    of their format (F16/BF16 under their own names)."""
    by_type: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if row.split != "fit" or row.metric != "decode_tokens_per_s" or not row.gpu_count or row.offloaded:
            continue
        if row.engine.lower().startswith(("mlx", "ollama", "ktransformers")):
            continue
        kind = row.format.upper() if row.format.upper() in UNQUANTISED else ggml_type(row.format.lower())
        outcome = estimate(row, catalog)
        if kind and outcome.error is not None:
            by_type[kind].append(outcome.error)
    return dict(by_type)


def _medians(errors: Sequence[float]) -> str:
    if not errors:
        return "no rows"
    signed = statistics.median(errors)
    absolute = statistics.median(abs(e) for e in errors)
    return f"{len(errors)} rows, median {signed:+.0%} signed, {absolute:.0%} absolute"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", action="store_true", help="print every fit row checked")
    args = parser.parse_args(argv)
    catalog = load_catalog(use_overlay=False)
    rows = load()
    found = moe_rows(catalog, rows)
    if args.rows:
        for m in sorted(found, key=lambda m: (m.filled or 2.0, m.error)):
            filled = "-" if m.filled is None else f"{m.filled:.2f}"
            print(
                f"{m.error:+6.0%} filled {filled:>4} width {m.expert_width} {m.bandwidth_gbs:>6g} GB/s {m.row.id}"
            )
        print()
    short = [m.error for m in found if m.filled is not None and m.filled < 0.5]
    full = [m.error for m in found if m.filled is not None and m.filled >= 0.5]
    print("1. CUDA/HIP mat-vec blocks over the experts' down-projection rows (fit rows):")
    print(f"   under half the block's steps filled: {_medians(short)}")
    print(f"   half or more filled:                 {_medians(full)}")
    large = [m.error for m in found if m.bandwidth_gbs >= LARGE_GPU_GBS]
    small = [m.error for m in found if m.bandwidth_gbs < LARGE_GPU_GBS]
    print(f"2. GPUs of {LARGE_GPU_GBS:g} GB/s and more: {_medians(large)}")
    print(f"   smaller GPUs:              {_medians(small)}")
    pooled = pooled_moe_costs(catalog)
    changed_catalog, changed = with_pooled_costs(catalog, pooled)
    print(
        f"3. pooled moe_layer_us by backend: {', '.join(f'{b} {us:g} µs' for b, us in sorted(pooled.items()))}"
    )
    before = [m for m in found if m.hw_class + "-" + m.row.backend in changed]
    after = moe_rows(changed_catalog, [m.row for m in before])
    print(f"   fit rows of the classes that would take one, as fitted: {_medians([m.error for m in before])}")
    print(f"   with the pooled cost:                                   {_medians([m.error for m in after])}")
    print("4. every fit decode row on a GPU, by the bulk weights' ggml type:")
    for kind, errors in sorted(type_errors(catalog, rows).items(), key=lambda kv: -len(kv[1])):
        print(f"   {kind:<8} {_medians(errors)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
