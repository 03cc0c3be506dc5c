"""Time a training step spends in Gated DeltaNet kernels, from cited kernel timings.

A hybrid's linear-attention layers cost little in FLOPs (the chunked delta rule is under 1% of 6·N at a
few thousand tokens), but their kernels run far below the tensor peak, so a matmul-FLOPs model at one
efficiency does not see their time. It is taken from measurements instead: QwenLM/FlashQLA
benchmark/benchmark_results_H200.txt@6e5d2ea (H200, flash-linear-attention 0.5.1's Triton kernels, the
"FLA" columns, CUDA graphs, d = 128), at 8 sequences of 1,024 tokens:

- forward, Qwen3.5-27B's heads (h_qk 16, h_v 48): 0.650 ms for 8,192 tokens, 1.65 ns a token per value head;
- backward, h_qk 16, h_v 32 (no 48-head row): 1.500 ms for 8,192 tokens, 5.72 ns a token per value head.

The 32,768-token rows give the same per-token cost within 2% (2.550 ms forward, 5.781 ms backward), as a
chunked kernel's linear cost in T should. Scaled to a model by its value heads and by d_k·d_v ÷ 128² (the
per-head state each token updates), and to a GPU by its dense bf16 tensor peak against the H200's (the
H100 SXM has the same SM count, clock and peak; the kernels reach about a tenth of either peak, so they
are bound by neither compute nor bandwidth, and the peak stands for the SMs' work rate).
"""

from __future__ import annotations

from rigcheck.core.estimate import gdn_fallback
from rigcheck.core.models.spec import ArchConfig

SOURCE = (
    "QwenLM/FlashQLA benchmark/benchmark_results_H200.txt@6e5d2ea: FLA [fwd] 27B TP1 1024x8 0.650 ms, "
    "FLA [bwd] hk16_hv32 8k_8seq 1.500 ms (H200, fla 0.5.1)"
)
#: seconds per token per value head of d_k = d_v = 128, on an H200 (the rows above)
FORWARD_S = 0.650e-3 / (8 * 1024 * 48)
BACKWARD_S = 1.500e-3 / (8 * 1024 * 32)
#: the H200's dense bf16 tensor peak (catalog nvidia-h200 bf16_tflops, the same as nvidia-h100-sxm5's)
MEASURED_PEAK_TFLOPS = 989.0
HEAD_DIM = 128


def per_token_seconds(arch: ArchConfig, peak_tflops: float, forwards: int, backwards: int = 1) -> float:
    """Seconds per trained token in every Gated DeltaNet layer of ``arch``, with ``forwards`` forward
    passes and ``backwards`` backward passes a step (0 when the model has none or their widths are
    unknown)."""
    m = arch.linear_mixer
    layers = sum(1 for kind in arch.layer_kinds if kind == "linear")
    if m is None or not layers or peak_tflops <= 0:
        return 0.0
    size = m.key_head_dim * m.value_head_dim / (HEAD_DIM * HEAD_DIM)
    per_head = forwards * FORWARD_S + backwards * BACKWARD_S
    return layers * m.value_heads * size * per_head * MEASURED_PEAK_TFLOPS / peak_tflops


def fallback_per_token_seconds(
    arch: ArchConfig, bandwidth_gbs: float, fp32_tflops: float, forwards: int, backwards: int = 1
) -> float:
    """Seconds per trained token in every Gated DeltaNet layer when the stack runs transformers' pure-torch
    delta rule instead of fla's kernels: its op-by-op traffic at the GPU's memory bandwidth plus its fp32
    matmuls at the GPU's fp32 peak, one after the other (eager ops), the backward twice a forward
    (estimate/gdn_fallback.py). 0 when the model has no such layers or the GPU's figures are unknown."""
    m = arch.linear_mixer
    layers = sum(1 for kind in arch.layer_kinds if kind == "linear")
    if m is None or not layers or bandwidth_gbs <= 0 or fp32_tflops <= 0:
        return 0.0
    one = gdn_fallback.forward_bytes(m) / (bandwidth_gbs * 1e9) + gdn_fallback.forward_flops(m) / (
        fp32_tflops * 1e12
    )
    passes = forwards + gdn_fallback.BACKWARD_OVER_FORWARD * backwards
    return layers * m.value_heads * passes * one
