"""The hidden state a layer split hands from one GPU to the next, once per prompt micro-batch.

With ``--split-mode layer`` each GPU boundary is a split of ggml's scheduler: the next GPU's split takes the
previous layer's output as its input, and ``ggml_backend_sched_compute_splits`` copies it across before the
split runs (ggml-org/ggml src/ggml-backend.cpp@d99724f). What crosses is the residual stream, one F32 vector
of ``hidden_size`` per token of the micro-batch: 512 × 4096 × 4 B = 8.4 MB for an 8B model's 512-token
micro-batch, a few kilobytes for a decoded token (which is why the decode hand-off, ``per_gpu_us``, is a
latency). CUDA copies it with ``cudaMemcpyPeerAsync`` on the source GPU's stream and makes the next GPU's
stream wait for it (src/ggml-cuda/ggml-cuda.cu@d99724f, ``ggml_backend_cuda_cpy_tensor_async``), so the copy
is part of the source GPU's turn: it adds to a prompt run one GPU after another, and to each stage of a
pipelined one.

The copy goes over PCIe at the slower of the two cards' links. A GeForce RTX 40 card cannot reach another
card's memory over PCIe (P2P "is not present or disabled in hardware on the 4090s":
tinygrad/open-gpu-kernel-modules README.md@1f40371), so its peer copy is staged through host memory: the
bytes cross PCIe twice, counted here as two transfers one after the other, as ggml's own fallback copy
does (src/ggml-backend.cpp@d99724f ``ggml_backend_tensor_copy``: get to host, then set). How CUDA's driver
stages it is not public; the one-vs-N 4090 rows read slower still (BENCHMARKS.md, 28-mgpu-pp).
Each boundary also pays the hand-off's latency (``per_gpu_us``), once per micro-batch.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from rigcheck.core.catalog import GpuSpec, SpeedFactor
from rigcheck.core.estimate.placement.types import Placement
from rigcheck.core.estimate.speed.reads import pcie_gbs
from rigcheck.core.machine import GPU
from rigcheck.core.said import Bytes, Num, Said, say

#: bytes per token of the hidden state crossing a GPU boundary: the F32 residual stream
HIDDEN_STATE_BYTES = 4
STAGED_SOURCE = "tinygrad/open-gpu-kernel-modules README.md@1f40371"
COPY_SOURCE = "ggml-org/ggml src/ggml-cuda/ggml-cuda.cu@d99724f, ggml_backend_cuda_cpy_tensor_async"


def staged_through_host(spec: GpuSpec | None) -> bool:
    """True for a card whose peer copies go through host memory: NVIDIA GeForce Ada (the cited 4090 case)."""
    return (
        spec is not None
        and spec.vendor == "nvidia"
        and "geforce" in spec.name.lower()
        and spec.architecture == "Ada Lovelace"
    )


def hidden_state_bytes(hidden_size: int, ubatch: int) -> int:
    """Bytes one GPU boundary copies per micro-batch of ``ubatch`` tokens."""
    return hidden_size * HIDDEN_STATE_BYTES * max(ubatch, 1)


def boundary_seconds(
    hidden_size: int, ubatch: int, link_gbs: float, *, staged: bool, latency_us: float
) -> float:
    """Seconds per prompt token one GPU boundary adds: the micro-batch's hidden state over a ``link_gbs``
    link (twice when ``staged`` through host memory) plus the hand-off latency, shared by its tokens."""
    crossings = 2 if staged else 1
    copy_s = hidden_state_bytes(hidden_size, ubatch) * crossings / (link_gbs * 1e9) if link_gbs > 0 else 0.0
    return (copy_s + latency_us * 1e-6) / max(ubatch, 1)


@dataclass(frozen=True)
class HandOffs:
    #: seconds per prompt token each used GPU (in split order) spends sending to the next; 0 for the last
    seconds: tuple[float, ...]
    said: Said | None


def layer_split_hand_offs(
    placement: Placement,
    used: Sequence[int],
    gpus: Sequence[GPU],
    specs: Sequence[GpuSpec | None],
    factors: dict[int, SpeedFactor | None],
    *,
    hidden_size: int,
    ubatch: int,
) -> HandOffs:
    """Each boundary of a layer split over the GPUs ``used``: the sending GPU's seconds per prompt token."""
    if placement.split == "tensor" or len(used) < 2:
        return HandOffs((0.0,) * len(used), None)
    seconds = []
    staged_any = False
    for sender, receiver in itertools.pairwise(used):
        link = min(pcie_gbs(gpus[sender], specs[sender]), pcie_gbs(gpus[receiver], specs[receiver]))
        staged = staged_through_host(specs[sender]) or staged_through_host(specs[receiver])
        staged_any = staged_any or staged
        factor = factors.get(receiver)
        latency = factor.per_gpu_us if factor is not None else 0.0
        seconds.append(boundary_seconds(hidden_size, ubatch, link, staged=staged, latency_us=latency))
    seconds.append(0.0)
    template = (
        "prefill: each of the {hops} GPU boundaries copies a {size} hidden state per {ubatch}-token "
        "micro-batch through host memory (no peer-to-peer on GeForce RTX 40 cards: {source}), "
        "{us} µs per token in all"
        if staged_any
        else "prefill: each of the {hops} GPU boundaries copies a {size} hidden state per {ubatch}-token "
        "micro-batch over PCIe, {us} µs per token in all"
    )
    values: dict[str, object] = {
        "hops": len(used) - 1,
        "size": Bytes(hidden_state_bytes(hidden_size, ubatch)),
        "ubatch": ubatch,
        "us": Num(sum(seconds) * 1e6, 2),
    }
    if staged_any:
        values["source"] = STAGED_SOURCE
    return HandOffs(tuple(seconds), say(template, **values))
