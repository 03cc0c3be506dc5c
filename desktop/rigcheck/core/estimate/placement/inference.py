"""Inference placement as llama.cpp does it: layers on the GPUs in order while they fit and the rest in RAM
(``layers``), or every layer on the GPUs with the routed experts of the first N layers in RAM (``experts``,
``--n-cpu-moe N``); tensor split shares every layer across the GPUs. When everything fits, llama.cpp spreads
the layers over all the GPUs (``split``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from rigcheck.core.estimate.memory import MemoryEstimate
from rigcheck.core.estimate.placement.split import only_main_gpu, split_layers
from rigcheck.core.estimate.placement.types import Budget, Placement, Split


def runtime_bytes(est: MemoryEstimate) -> int:
    return est.total("activations") + est.total("overhead")


def place_inference(
    est: MemoryEstimate,
    budget: Budget,
    offload: Literal["none", "layers"],
    split: Split,
    *,
    cpu_experts: int = 0,
    max_layers: int | None = None,
    tensor_split: Sequence[float] | None = None,
) -> Placement | None:
    """Layers on GPUs in order while they fit, the rest in RAM (when ``layers``); None if it cannot.

    With ``cpu_experts`` N, the routed experts of the first N layers stay in RAM (llama.cpp
    ``--n-cpu-moe N``): those layers take only their attention, shared weights and KV on the GPU.

    llama.cpp (``--split-mode layer``, its default) spreads a model that fits over every GPU by free memory,
    or by ``tensor_split`` (``-ts``); other engines, and a model that does not fit, fill the GPUs in order.
    ``split="none"`` uses the main GPU alone (``--split-mode none``).
    """
    if split == "none":
        budget, split = only_main_gpu(budget), "layer"
    expert = est.layer_expert_bytes or (0,) * len(est.layer_weight_bytes)
    layers = [
        w + k - (e if i < cpu_experts else 0)
        for i, (w, k, e) in enumerate(zip(est.layer_weight_bytes, layer_kv(est), expert, strict=True))
    ]
    other = est.other_weight_bytes
    runtime = runtime_bytes(est)
    n_gpu = len([b for b in budget.gpu_bytes if b > 0])
    total_layers = len(layers)
    in_ram = sum(expert[:cpu_experts])
    if est.engine == "ollama" and n_gpu > 1 and tensor_split is None and max_layers is None:
        # Ollama loads a model on the one GPU that holds all of it, the roomiest first, else spreads it
        # (ollama/ollama@fb30760 server/sched.go bestSingleGPUFit)
        for i in sorted(range(len(budget.gpu_bytes)), key=lambda i: -budget.gpu_bytes[i]):
            if budget.gpu_bytes[i] > 0:
                one = tuple(b if j == i else 0 for j, b in enumerate(budget.gpu_bytes))
                alone = place_inference(
                    est,
                    Budget(one, budget.cpu_bytes, budget.reasons_said),
                    "none",
                    "layer",
                    cpu_experts=cpu_experts,
                )
                if alone is not None:
                    return alone
    if (
        est.engine in ("vllm", "sglang")
        and n_gpu > 1
        and split == "layer"
        and max_layers is None
        and not cpu_experts
    ):
        # vLLM (and SGLang) serve on one GPU unless told --tensor-parallel-size N (--tp N), and then
        # shard every layer over the N: the first GPU alone when it holds the model, else tensor parallel
        # over all of them (else, with --cpu-offload-gb, the GPUs in order and the rest in RAM, below)
        first = next(i for i, b in enumerate(budget.gpu_bytes) if b > 0)
        first_only = Budget(
            tuple(b if j == first else 0 for j, b in enumerate(budget.gpu_bytes)),
            budget.cpu_bytes,
            budget.reasons_said,
        )
        alone = place_inference(est, first_only, "none", "layer")
        sharded = alone or place_inference(est, budget, "none", "tensor")
        if sharded is not None:
            return sharded
    if n_gpu and split == "tensor" and n_gpu > 1:
        share = (sum(layers) + other) // n_gpu + runtime
        gpus = tuple(share if b > 0 else 0 for b in budget.gpu_bytes)
        if all(share <= b for b in budget.gpu_bytes if b > 0):
            return Placement(gpus, 0, total_layers, total_layers, "none", "tensor")
        return None
    spread = est.engine in ("llama.cpp", "ollama") and (n_gpu > 1 or tensor_split is not None)
    if spread and (max_layers is None or max_layers >= total_layers) and in_ram <= budget.cpu_bytes:
        per_gpu = split_layers(layers, other, runtime, budget, tensor_split)
        if per_gpu is not None:
            mode: Literal["none", "experts"] = "experts" if cpu_experts else "none"
            return Placement(per_gpu, in_ram, total_layers, total_layers, mode, "layer", cpu_experts)
        if tensor_split is not None:
            return None  # the split asked for overflows a GPU: llama.cpp would fail to load
    used = [0] * len(budget.gpu_bytes)
    placed = 0
    gpu_order = [i for i, b in enumerate(budget.gpu_bytes) if b > 0]
    for position, i in enumerate(gpu_order):
        if placed == total_layers:
            break  # the rest of the GPUs stay idle: no buffers are allocated on them
        fixed = runtime + (other if position == 0 else 0)
        if fixed > budget.gpu_bytes[i]:
            continue
        used[i] = fixed
        limit = total_layers if max_layers is None else min(max_layers, total_layers)
        while placed < limit and used[i] + layers[placed] <= budget.gpu_bytes[i]:
            used[i] += layers[placed]
            placed += 1
    if placed == total_layers and gpu_order:
        if cpu_experts:
            if in_ram > budget.cpu_bytes:
                return None
            return Placement(tuple(used), in_ram, placed, total_layers, "experts", "layer", cpu_experts)
        return Placement(tuple(used), 0, placed, total_layers, "none", "layer")
    if offload == "none" or cpu_experts:
        return None
    cpu = sum(layers[placed:])
    if placed == 0:
        used = [0] * len(budget.gpu_bytes)
        cpu += other + runtime
    if cpu > budget.cpu_bytes:
        return None
    return Placement(tuple(used), cpu, placed, total_layers, "layers" if gpu_order else "none", "layer")


def layer_kv(est: MemoryEstimate) -> tuple[int, ...]:
    return est.layer_kv_bytes or tuple(0 for _ in est.layer_weight_bytes)


def place_experts(est: MemoryEstimate, budget: Budget, layers: int | None = None) -> Placement | None:
    """Expert offload: the fewest layers' routed experts in RAM that lets everything else fit the GPUs
    (or exactly ``layers`` of them, as ``--n-cpu-moe N`` asks)."""
    expert = est.layer_expert_bytes
    if not any(expert) or not any(budget.gpu_bytes):
        return None
    if layers is not None:
        return place_inference(est, budget, "none", "layer", cpu_experts=min(max(layers, 1), len(expert)))
    moe_layers = [i for i, e in enumerate(expert) if e]
    low, high = 1, moe_layers[-1] + 1
    if place_inference(est, budget, "none", "layer", cpu_experts=high) is None:
        return None
    while low < high:  # more layers' experts in RAM never needs more GPU memory: bisect
        mid = (low + high) // 2
        if place_inference(est, budget, "none", "layer", cpu_experts=mid) is not None:
            high = mid
        else:
            low = mid + 1
    return place_inference(est, budget, "none", "layer", cpu_experts=low)
