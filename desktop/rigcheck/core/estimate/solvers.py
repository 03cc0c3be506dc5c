"""Questions answered by fitting many times: the longest context that fits, the best format, the fewest GPUs
of a kind; and the grid of verdicts for many models × formats × GPUs at once (arithmetic only).

The solvers call :func:`rigcheck.core.estimate.fit.fit`, which imports this module to re-export them: so
they import it when called.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from rigcheck.core.catalog import Catalog, GpuSpec
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.exllamav3 import EXL3_FORMATS
from rigcheck.core.estimate.memory import GIB, Request, estimate_memory
from rigcheck.core.estimate.mlx import MLX_FORMATS
from rigcheck.core.estimate.placement.budget import gpu_margin, host_reserve
from rigcheck.core.estimate.placement.inference import layer_kv, runtime_bytes
from rigcheck.core.estimate.speed.fixed import block_layers
from rigcheck.core.estimate.speed.reads import active_bytes
from rigcheck.core.estimate.verdict import Verdict
from rigcheck.core.machine import Machine
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.whatif import simulate


def max_context(
    model: ModelInfo, machine: Machine, req: Request, catalog: Catalog, *, live: bool = True
) -> int | None:
    """The longest context that fits entirely in GPU memory, or None if not even 512 tokens do (or the engine,
    ktransformers, keeps the routed experts in RAM whatever fits)."""
    from rigcheck.core.estimate.fit import fit  # fit.py re-exports the solvers: imported when called

    if req.engine == "ktransformers":
        return None
    upper = model.arch.max_context or 131072

    def fits(context: int) -> bool:
        result = fit(
            model, machine, replace(req, context=context), catalog, offload="none", live=live, advise=False
        )
        if (
            req.workload != "inference"
        ):  # training: the step fits the GPU (its offloaded checkpoints may be in RAM)
            return result.verdict != "does_not_fit" and result.placement.offload == "none"
        return result.verdict == "fits"

    return largest_context(fits, upper)


def largest_context(ok: Callable[[int], bool], upper: int) -> int | None:
    """The largest context in [512, ``upper``] for which ``ok`` holds (to 256 tokens, bisecting; more
    context never needs less memory), or None if not even 512 tokens do."""
    if not ok(512):
        return None
    if ok(upper):
        return upper
    low, high = 512, upper
    while high - low > 256:
        mid = (low + high) // 2
        low, high = (mid, high) if ok(mid) else (low, mid)
    return low


#: from best quality to smallest; GGUF mixes by llama.cpp's measured perplexity order
QUANT_LADDER = ("bf16", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "q3_k_m", "iq3_xxs", "q2_k")


def best_quant(
    model: ModelInfo, machine: Machine, req: Request, catalog: Catalog, *, live: bool = True
) -> tuple[str, int] | None:
    """The highest-quality format that fits on the GPUs, and the bytes it leaves spare."""
    from rigcheck.core.estimate.fit import fit  # fit.py re-exports the solvers: imported when called

    # MLX and ExLlamaV3 run their own formats, never a GGUF mix
    ladder = {"mlx": MLX_FORMATS, "exllamav3": EXL3_FORMATS}.get(req.engine, QUANT_LADDER)
    for name in ladder:
        result = fit(
            model, machine, replace(req, quant=name), catalog, offload="none", live=live, advise=False
        )
        if result.verdict == "fits":
            spare = sum(result.budget.gpu_bytes) - sum(result.placement.gpu_bytes)
            return result.estimate.quant_name, spare
    return None


def fewest_gpus(
    model: ModelInfo, machine: Machine, spec: GpuSpec, req: Request, catalog: Catalog, *, limit: int = 16
) -> int | None:
    """How many of a catalog GPU it takes to fit entirely in GPU memory (layer split)."""
    from rigcheck.core.estimate.fit import fit  # fit.py re-exports the solvers: imported when called

    for count in range(1, limit + 1):
        trial = simulate(machine, [spec] * count)
        if fit(model, trial, req, catalog, offload="none", live=False, advise=False).verdict == "fits":
            return count
    return None


@dataclass(frozen=True)
class Cell:
    """One model × format × GPU: the verdict and decode speed, without the explanations."""

    model_id: str
    quant: str
    gpu_id: str
    verdict: Verdict
    gpu_layers: int
    decode_tokens_per_s: float | None


def grid(
    models: Sequence[ModelInfo],
    quants: Sequence[str],
    gpus: Sequence[GpuSpec],
    catalog: Catalog,
    *,
    ram_bytes: int = 64 * GIB,
    context: int | None = None,
) -> list[Cell]:
    """Inference verdicts for every combination, sharing each model × format estimate across GPUs.

    The same placement rule as :func:`fit` on one GPU (layers in order, the rest in RAM), in
    arithmetic only, so the Overview's "what you can run" and the benchmarks stay instant.
    """
    from bisect import bisect_right
    from itertools import accumulate

    cells: list[Cell] = []
    cpu_budget = ram_bytes - host_reserve(ram_bytes)
    capacities = [
        (int(max(g.memory_gb) * GIB) - gpu_margin(int(max(g.memory_gb) * GIB)) if g.memory_gb else 0)
        for g in gpus
    ]
    factors = [
        speed.speed_factor(
            catalog,
            speed.hardware_class(g.vendor, g.name, g, g.unified_memory),
            speed.default_backend(g.vendor),
        )
        for g in gpus
    ]
    cpu_factor = speed.speed_factor(catalog, speed.CPU_CLASS, "cpu")
    host_rate = speed.DEFAULT_HOST_BANDWIDTH * (cpu_factor.decode_bandwidth_efficiency if cpu_factor else 1.0)
    cpu_layer_s = (cpu_factor.per_layer_us if cpu_factor else 0.0) * 1e-6
    for model in models:
        mature = speed.maturity(catalog, "llama.cpp", model.arch.model_type)
        slowdown = mature.decode_factor if mature else 1.0
        for quant in quants:
            est = estimate_memory(model, Request(quant=quant, context=context), catalog)
            layer_bytes = [w + k for w, k in zip(est.layer_weight_bytes, layer_kv(est), strict=True)]
            prefix = list(accumulate(layer_bytes))
            body = prefix[-1] if prefix else 0
            fixed = runtime_bytes(est) + est.other_weight_bytes
            active, _routed, head = active_bytes(est)
            read_prefix = list(accumulate(active))
            read_total = (read_prefix[-1] if read_prefix else 0) + head
            n_layers = len(layer_bytes)
            for spec, capacity, factor in zip(gpus, capacities, factors, strict=True):
                room = capacity - fixed
                layers = bisect_right(prefix, room) if room > 0 else 0
                if layers == n_layers and room >= 0:
                    verdict: Verdict = "fits"
                elif body + fixed - (prefix[layers - 1] if layers else 0) <= cpu_budget:
                    verdict = "fits_with_offload"
                else:
                    verdict = "does_not_fit"
                tokens = None
                if verdict != "does_not_fit" and spec.bandwidth_gbs and factor is not None:
                    on_gpu = (read_prefix[layers - 1] + head) if layers else 0
                    seconds = on_gpu / (spec.bandwidth_gbs * 1e9 * factor.decode_bandwidth_efficiency)
                    # fixed costs per transformer layer (a single-mixer block is half: speed/fixed.py)
                    mixers = model.arch.layer_mixers
                    kernels = model.arch.layer_kernels
                    seconds += block_layers(mixers, 0, layers, kernels) * factor.per_layer_us * 1e-6
                    seconds += (read_total - on_gpu) / host_rate + block_layers(
                        mixers, layers, n_layers, kernels
                    ) * cpu_layer_s
                    tokens = slowdown / seconds if seconds > 0 else None
                cells.append(Cell(model.id, est.quant_name, spec.id, verdict, layers, tokens))
    return cells
