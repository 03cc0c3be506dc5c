"""Expert GEMMs on a GPU without matrix units: their share of the peak from the batch shape.

A mixture of experts multiplies each routed expert's weights by the prompt tokens routed to it: micro-batch ×
top-k / experts per micro-batch (speed.moe_tokens_per_expert). On tensor/matrix cores llama.cpp's MUL_MAT_ID
MMQ tiles are wider than that (mmq_x up to 128 columns), so they run part empty and the class's fitted MoE
factor (speed.prefill_path) holds the loss. A GPU below compute capability 6.1 (Tesla P100, Maxwell) has no
matrix units and no __dp4a: ggml_cuda_should_use_mmq sends its experts, like its dense matrices, through
dequantisation to FP16 and cuBLAS (ggml-org/llama.cpp ggml/src/ggml-cuda/mmq.cu@027ef87). There the GEMM is
an FP16 product on the shader cores, which is bound by compute once each weight byte read takes part in at
least peak FLOPs / bandwidth FLOPs (the roofline's ridge). An FP16 expert matrix over ``t`` tokens does 2t
FLOPs per 2-byte weight: ``t`` FLOPs per byte. Its share of the dense BLAS rate is min(1, t / ridge): no
fitted constant, and on a P100 (19 TFLOPS FP16, 732 GB/s: a ridge of 26) 16+ tokens per expert run at the
dense rate.
"""

from __future__ import annotations

from rigcheck.core.said import Num, Text, say


def shader_expert_share(tokens_per_expert: float, peak_tflops: float, bandwidth_gbs: float) -> float:
    """The share of the dense FP16 GEMM rate an expert GEMM over ``tokens_per_expert`` tokens reaches on
    shader cores: its FLOPs per weight byte over the GPU's ridge (peak FLOPs per byte of bandwidth), at
    most 1."""
    if peak_tflops <= 0 or bandwidth_gbs <= 0:
        return 1.0
    ridge = peak_tflops * 1e12 / (bandwidth_gbs * 1e9)
    return min(max(tokens_per_expert, 0.0) / ridge, 1.0)


def shader_expert_said(tokens_per_expert: float, peak_tflops: float, bandwidth_gbs: float) -> Text:
    """Why the experts run at the share shader_expert_share gives, in words."""
    ridge = peak_tflops * 1e12 / (bandwidth_gbs * 1e9) if bandwidth_gbs > 0 else 0.0
    return say(
        "experts on shader cores (no matrix units): {tokens} tokens per expert do {tokens} FLOPs per FP16 "
        "weight byte against a ridge of {ridge} ({peak} TFLOPS over {bw} GB/s), × {share} of the dense rate",
        tokens=Num(tokens_per_expert),
        ridge=Num(ridge),
        peak=Num(peak_tflops, 1),
        bw=Num(bandwidth_gbs),
        share=Num(shader_expert_share(tokens_per_expert, peak_tflops, bandwidth_gbs), 2),
    )
