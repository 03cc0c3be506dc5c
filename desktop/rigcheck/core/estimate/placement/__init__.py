"""Where it goes: the memory each device may use (``budget``), inference placement as llama.cpp does it
(``inference``), training placement with or without offload (``training``); :func:`place` picks among them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from rigcheck.core.estimate.memory import MemoryEstimate
from rigcheck.core.estimate.placement.budget import (
    GPU_MARGIN,
    LLAMA_CPP_GPU_MARGIN_BYTES,
    VLLM_GPU_UTILIZATION,
    budgets,
    gpu_margin,
    host_reserve,
    vllm_budget,
)
from rigcheck.core.estimate.placement.inference import layer_kv, place_experts, place_inference, runtime_bytes
from rigcheck.core.estimate.placement.training import (
    DEEPSPEED_BUFFER,
    MEGATRAIN_CHECKPOINT_INTERVAL,
    MEGATRAIN_CUDA_CONTEXT,
    MEGATRAIN_GRAD_SLABS,
    MEGATRAIN_HOST_BYTES,
    largest_layer_params,
    place_training,
    zero2_offload_bytes,
    zero3_offload_bytes,
)
from rigcheck.core.estimate.placement.types import Budget, Offload, Placement, Split, TrainOffload


def place(
    est: MemoryEstimate,
    budget: Budget,
    offload: Offload,
    split: Split = "layer",
    *,
    cpu_expert_layers: int | None = None,
    gpu_layers: int | None = None,
    tensor_split: Sequence[float] | None = None,
) -> Placement | None:
    """Where it goes. With ``auto`` this is the least offload that fits; :func:`fit` compares speeds.

    ``gpu_layers`` caps the layers on the GPUs for ``layers`` (llama.cpp ``-ngl N``); ``tensor_split``
    is each GPU's share of the layers (llama.cpp ``-ts``; default: by free memory)."""
    if est.workload == "inference":
        if offload == "experts":
            return place_experts(est, budget, cpu_expert_layers)
        if offload == "layers" and gpu_layers is not None:
            return place_inference(
                est, budget, "layers", split, max_layers=gpu_layers, tensor_split=tensor_split
            )
        modes: Sequence[Literal["none", "layers"]] = ("none", "layers") if offload == "auto" else (offload,)  # type: ignore[assignment]
        for mode in modes:
            if mode not in ("none", "layers"):
                return None
            placement = place_inference(est, budget, mode, split, tensor_split=tensor_split)
            if placement is not None:
                return placement
        return None
    # auto: LoRA/QLoRA keep everything on the GPU (their trainable part is tiny); full fine-tuning tries
    # ZeRO-Offload, then MegaTrain. ZeRO-3 (params) only when asked for: MegaTrain needs less RAM.
    auto: tuple[TrainOffload, ...] = ("none", "optimizer", "full") if est.workload == "full" else ("none",)
    train_modes: Sequence[TrainOffload] = auto if offload == "auto" else (offload,)  # type: ignore[assignment]
    for train_mode in train_modes:
        if train_mode not in ("none", "optimizer", "params", "full"):
            return None
        placement = place_training(est, budget, train_mode)
        if placement is not None:
            return placement
    return None


__all__ = [
    "DEEPSPEED_BUFFER",
    "GPU_MARGIN",
    "LLAMA_CPP_GPU_MARGIN_BYTES",
    "MEGATRAIN_CHECKPOINT_INTERVAL",
    "MEGATRAIN_CUDA_CONTEXT",
    "MEGATRAIN_GRAD_SLABS",
    "MEGATRAIN_HOST_BYTES",
    "VLLM_GPU_UTILIZATION",
    "Budget",
    "Offload",
    "Placement",
    "Split",
    "TrainOffload",
    "budgets",
    "gpu_margin",
    "host_reserve",
    "largest_layer_params",
    "layer_kv",
    "place",
    "place_experts",
    "place_inference",
    "place_training",
    "runtime_bytes",
    "vllm_budget",
    "zero2_offload_bytes",
    "zero3_offload_bytes",
]
