"""Prompt time in a hybrid's recurrent layers: llama.cpp's Gated DeltaNet and Mamba-2 scans, on vector ALUs.

A hybrid (Qwen3-Next, Qwen3.5/3.6, Nemotron-H / Nemotron 3) mixes attention layers with recurrent ones whose
token mixer updates a fixed state per token. llama.cpp runs that update as one op per layer whose kernel walks
the prompt token by token, in FP32 on the CUDA cores / shader ALUs, not the matrix units the GEMMs use:

- Gated DeltaNet: GGML_OP_GATED_DELTA_NET (ggml-org/llama.cpp PR #19504, merged 2026-02, commit c5a778891;
  the graph builds it for prompts when cparams.fused_gdn_ch, else the older chunked graph of small
  products, src/models/delta-net-base.cpp@156ce1c build_delta_net). Its CUDA/HIP kernel
  (ggml/src/ggml-cuda/gated_delta_net.cu@0196e69, gated_delta_net_cuda; "TODO: Add chunked kernel for
  even faster pre-fill") keeps each value head's d_k × d_v state in registers and, per token and state
  element, takes S^T k (a multiply-add), the decayed update g·S + k·delta (a multiply and a multiply-add)
  and S^T q (a multiply-add): 7 FLOPs per state element per token, two warp reductions per token.
- Mamba-2: GGML_OP_SSM_SCAN (ggml/src/ggml-cuda/ssm-scan.cu@02fd6ee, ssm_scan_f32_group): per token and
  element of the head_dim × d_state state, state·dA + B·x·dt (a multiply and a multiply-add) and the sum of
  state·C (a multiply-add): 5 FLOPs; that file's SSD matrix path for prompts of 128+ tokens is newer than
  the builds of the measured rows. The SSM_CONV before it is 2 FLOPs per conv weight, counted in with the
  layer's state elements (ArchConfig.linear_state_elements: the conv window plus the SSM state).

Bytes do not bound these kernels (the state stays in registers; q, k, v, g and beta are a few KiB per token),
and neither do FLOPs at the vector peak: a token's step waits on its reductions. The time is taken as these
FLOPs at ``efficiency`` × the GPU's FP32 peak, one share pooled over every class and backend and fitted on
the fit split's prompt rows of hybrid models (benchmarks/scan_fit.py; SpeedFactor.prefill_scan_efficiency).
"""

from __future__ import annotations

from rigcheck.core.models.spec import ArchConfig

SOURCE = (
    "ggml-org/llama.cpp ggml/src/ggml-cuda/gated_delta_net.cu@0196e69 (GATED_DELTA_NET, token-sequential), "
    "ggml/src/ggml-cuda/ssm-scan.cu@02fd6ee (SSM_SCAN)"
)
#: FP32 FLOPs per state element per token of GATED_DELTA_NET (S^T k, g·S + k·delta, S^T q)
GDN_FLOPS_PER_STATE = 7
#: FP32 FLOPs per state element per token of Mamba-2's SSM_SCAN (state·dA + B·x·dt, state·C)
MAMBA2_FLOPS_PER_STATE = 5
#: FLOPs per weight of the short causal conv1d before either (SSM_CONV: a multiply-add per tap)
CONV_FLOPS_PER_TAP = 2


def layer_scan_flops(arch: ArchConfig) -> float:
    """FP32 FLOPs per prompt token of one recurrent layer's scan (and its short conv), 0 when unknown."""
    m = arch.linear_mixer
    if m is not None:
        state = m.value_heads * m.key_head_dim * m.value_head_dim
        return GDN_FLOPS_PER_STATE * state + CONV_FLOPS_PER_TAP * m.conv_dim * m.conv_kernel
    # Mamba-2 (Nemotron-H) and other recurrent mixers: the per-layer state the config gives
    return float(MAMBA2_FLOPS_PER_STATE * (arch.linear_state_elements or 0))


def recurrent_layers(arch: ArchConfig) -> int:
    return sum(1 for kind in arch.layer_kinds if kind == "linear")


def scan_flops_per_token(arch: ArchConfig) -> float:
    """FP32 FLOPs per prompt token in every recurrent layer of ``arch`` (0 for a model without any)."""
    layers = recurrent_layers(arch)
    return layers * layer_scan_flops(arch) if layers else 0.0


def scan_seconds_per_token(arch: ArchConfig, fp32_tflops: float | None, efficiency: float | None) -> float:
    """Seconds per prompt token the recurrent scans of ``arch`` take on a GPU of ``fp32_tflops`` at
    ``efficiency`` of it (0 when the model has none, or the peak or the efficiency is unknown)."""
    if not fp32_tflops or not efficiency:
        return 0.0
    return scan_flops_per_token(arch) / (fp32_tflops * 1e12 * efficiency)
