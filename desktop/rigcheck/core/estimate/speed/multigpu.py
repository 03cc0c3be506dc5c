"""Tensor parallelism's cost: every GPU reads its share of every layer at once, then the GPUs add their
partial results. A decoded token's hidden state is a few kilobytes, so each all-reduce costs its latency,
not its bandwidth, and there are two per layer (after attention and after the MLP: the Megatron-LM split
vLLM and SGLang use, arXiv 1909.08053 §3).

Latency per all-reduce of one decoded token, by interconnect, from cited measurements (``ALLREDUCE_US``):

- NVLink: vLLM's custom all-reduce on HGX H100 for 32 KB, 8.7 / 9.2 / 11.8 µs at 2 / 4 / 8 GPUs
  (sgl-project/sglang PR #2904, its "vllm" table, without CUDA graphs);
- PCIe: NCCL on 16 RTX PRO 6000 (PCIe peer-to-peer, no NVLink) for one token's [1, 7168] BF16 vector, 36 µs
  (local-inference-lab/b12x PR #139); one measurement at 16 GPUs, used at every count: uncertain.

Other links (AMD Infinity Fabric, a mix) have no cited figure: their all-reduces are not counted, and the
explanation says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from rigcheck.core.catalog import GpuSpec
from rigcheck.core.machine import GPU

Link = Literal["nvlink", "pcie", "unknown"]

#: µs per all-reduce of a decoded token, by link and GPU count (the nearest count measured at or below)
ALLREDUCE_US: dict[Link, dict[int, float]] = {
    "nvlink": {2: 8.7, 4: 9.2, 8: 11.8},
    "pcie": {16: 36.07},
}
ALLREDUCE_SOURCES: dict[Link, str] = {
    "nvlink": "sgl-project/sglang PR #2904 (vLLM custom all-reduce, H100, 32 KB)",
    "pcie": "local-inference-lab/b12x PR #139 (NCCL, 16 × RTX PRO 6000 over PCIe, M=1)",
}
#: all-reduces per transformer layer in the Megatron-LM split (attention output, MLP output)
ALLREDUCES_PER_LAYER = 2


def link_between(gpus: Sequence[GPU], specs: Sequence[GpuSpec | None]) -> Link:
    """NVLink where every GPU is an NVIDIA SXM part (or reports NVLink links) with an NVLink figure; PCIe
    where none has such a link and all are NVIDIA PCIe cards; else unknown."""
    nvlink = [
        spec is not None
        and spec.vendor == "nvidia"
        and bool(spec.nvlink_gbs)
        and (spec.form_factor == "sxm" or bool(gpu.nvlink_links))
        for gpu, spec in zip(gpus, specs, strict=True)
    ]
    if all(nvlink):
        return "nvlink"
    pcie = [spec is not None and spec.form_factor in (None, "pcie") for spec in specs]
    if not any(nvlink) and all(pcie) and all(spec is not None and spec.vendor == "nvidia" for spec in specs):
        return "pcie"
    return "unknown"


def allreduce_us(link: Link, gpus: int) -> float | None:
    """Latency of one all-reduce of a decoded token over ``gpus`` GPUs on ``link``; None if not measured."""
    table = ALLREDUCE_US.get(link)
    if not table or gpus < 2:
        return None
    counts = [n for n in sorted(table) if n <= gpus]
    return table[counts[-1]] if counts else table[min(table)]


def allreduce_seconds(layers: int, link: Link, gpus: int) -> float | None:
    """Seconds per decoded token spent in tensor parallelism's all-reduces."""
    us = allreduce_us(link, gpus)
    return None if us is None else layers * ALLREDUCES_PER_LAYER * us * 1e-6
