"""Quantized decode on an NVIDIA GPU without ``__dp4a``: integer dot products in plain instructions.

llama.cpp's CUDA mat-vec kernels for quantized weights (ggml-cuda mmvq.cu, through vecdotq.cuh) multiply
4 int8 weights by 4 int8 activations with one ``ggml_cuda_dp4a`` call. That is the ``__dp4a`` instruction
from compute capability 6.1 on (``GGML_CUDA_CC_DP4A 610``, "minimum compute capability for __dp4a"); below
it, the function falls back to four byte multiplies and adds (ggml-org/llama.cpp
ggml/src/ggml-cuda/common.cuh@00108827d87949b538ad1821f81a6b111827fcda, ``ggml_cuda_dp4a``). On such a
GPU (the Tesla P100, sm_60; Maxwell and older) a decoded token is bound by those instructions, not by the
memory: its time follows the weights' element count (2 FLOPs each) at the GPU's FP32 issue rate ×
``decode_nodp4a_efficiency``, whatever the bits per weight.

The efficiency is fitted by benchmarks/dp4a_fit.py on fit rows of such GPUs (catalog/speed.toml). A GTX 1080
(sm_61, with ``__dp4a``, 320 GB/s) reads the same tokens/s as a P100 (732 GB/s) on the same models in one
table (pavlokhmel.com, 2026-06-07): the P100's bandwidth is not what sets its pace. Unquantized weights take
the float mat-vec kernels instead and are not affected.
"""

from __future__ import annotations

from rigcheck.core.catalog import GpuSpec, SpeedFactor
from rigcheck.core.said import Num, Text, say

#: the first NVIDIA compute capability with __dp4a (ggml-cuda common.cuh GGML_CUDA_CC_DP4A = 610)
DP4A_MIN_CC = (6, 1)


def lacks_dp4a(spec: GpuSpec | None) -> bool:
    """An NVIDIA GPU whose compute capability is below 6.1 (known from the catalog)."""
    if spec is None or spec.vendor != "nvidia" or not spec.compute_capability:
        return False
    major, _, minor = spec.compute_capability.partition(".")
    try:
        return (int(major), int(minor or 0)) < DP4A_MIN_CC
    except ValueError:
        return False


def emulated_dot_seconds(
    spec: GpuSpec | None, factor: SpeedFactor, flops: float, *, quantized: bool
) -> tuple[float, Text] | None:
    """Seconds for ``flops`` (2 per weight) of quantized mat-vec on a GPU without __dp4a, with its reason;
    None where the GPU has __dp4a, the weights are not quantized, the backend is not CUDA, or no efficiency
    has been fitted."""
    eff = factor.decode_nodp4a_efficiency
    if not quantized or factor.backend != "cuda" or eff is None or not lacks_dp4a(spec):
        return None
    assert spec is not None
    if not spec.fp32_tflops:
        return None
    seconds = flops / (spec.fp32_tflops * 1e12 * eff)
    why = say(
        "compute capability {cc} has no __dp4a (added in 6.1): llama.cpp's quantized dot products run as "
        "byte multiplies, at {tflops} FP32 TFLOPS × {eff}",
        cc=spec.compute_capability,
        tflops=Num(spec.fp32_tflops, 2),
        eff=Num(eff, 2),
    )
    return seconds, why
