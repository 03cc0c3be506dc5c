"""Several GPUs as llama.cpp uses them. ``--split-mode layer`` (its default) spreads the layers over every
visible GPU in proportion to each one's free memory, or to ``--tensor-split``; ``--split-mode none`` keeps
everything on the main GPU; ``--split-mode row`` splits each matrix by rows (the estimator's tensor split).

The rule is llama.cpp's own (``LLAMA_CPP_SPLIT_SOURCE``): the split points are the cumulative shares of the
devices' free memory (or of ``--tensor-split``); layer ``il`` goes to the first device whose split point
exceeds ``il / (n_layer + 1)``, the output layer takes slot ``n_layer`` (the last device), and the input
layer stays on the CPU.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

from rigcheck.core.estimate.placement.types import Budget

LLAMA_CPP_SPLIT_SOURCE = (
    "ggml-org/llama.cpp src/llama-model.cpp@a5410f0, load_tensors: 'default split, by free memory'"
)


def only_main_gpu(budget: Budget) -> Budget:
    """``--split-mode none``: the main GPU (the first with room) alone."""
    main = next((i for i, b in enumerate(budget.gpu_bytes) if b > 0), None)
    gpus = tuple(b if i == main else 0 for i, b in enumerate(budget.gpu_bytes))
    return Budget(gpus, budget.cpu_bytes, budget.reasons_said)


def layer_devices(n_layers: int, shares: Sequence[float]) -> list[int]:
    """The device (an index into ``shares``) of each of ``n_layers`` layers and, last, of the output layer."""
    total = sum(shares)
    points = list(accumulate(s / total for s in shares))
    last = len(points) - 1
    return [min(bisect_right(points, il / (n_layers + 1)), last) for il in range(n_layers + 1)]


def split_layers(
    layers: Sequence[int],
    output: int,
    runtime: int,
    budget: Budget,
    tensor_split: Sequence[float] | None = None,
) -> tuple[int, ...] | None:
    """Bytes on each GPU when llama.cpp splits every layer by layer (``layers`` the bytes of each, ``output``
    the head's, ``runtime`` each used GPU's buffers), or None where a GPU's share exceeds its budget."""
    weights = [
        (tensor_split[i] if i < len(tensor_split) else 0.0) if tensor_split is not None else float(b)
        for i, b in enumerate(budget.gpu_bytes)
    ]
    devices = [i for i, (b, w) in enumerate(zip(budget.gpu_bytes, weights, strict=True)) if b > 0 and w > 0]
    if not devices:
        return None
    used = [0] * len(budget.gpu_bytes)
    where = layer_devices(len(layers), [weights[i] for i in devices])
    for size, d in zip([*layers, output], where, strict=True):
        used[devices[d]] += size
    for i in {devices[d] for d in where}:
        used[i] += runtime
    if any(u > b for u, b in zip(used, budget.gpu_bytes, strict=True)):
        return None
    return tuple(used)
