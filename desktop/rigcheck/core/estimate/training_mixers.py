"""What one decoder layer's token mixer saves for the backward, per token, by layer kind.

A hybrid stack (Qwen3-Next, Qwen3.5: three Gated DeltaNet layers to one of full attention) does not save
the same tensors in every layer, so training activations are counted layer kind by layer kind
(training_memory.layer_token_bytes ``kind``), never with one factor for the whole model.

Full, sliding and MLA layers keep the attention rule of training_memory (q, k, v and the attention
output, Korthikanti et al. 2022). A linear-attention layer whose Gated DeltaNet widths the config names
(:class:`~rigcheck.core.models.spec.LinearMixer`: linear_num_key_heads H_k, linear_num_value_heads H_v,
linear_key_head_dim d_k, linear_value_head_dim d_v) saves, on transformers' fast path (causal-conv1d and
flash-linear-attention installed; without them the torch fallback saves more), per token:

- the conv1d's input, in_proj_qkv's output (``causal_conv1d_fn`` saves x): 2·key_dim + value_dim;
- q and k after the L2 norm, repeated to H_v heads before the kernel (``repeat_interleave``), which
  ``ChunkGatedDeltaRuleFunction`` saves: 2·H_v·d_k;
- v, copied contiguous by the kernel's ``input_guard`` (a strided view of the conv output): value_dim;
- z (in_proj_z's output, the gated norm's gate), the kernel output (the norm's input) and the gated
  norm's output (out_proj's input): 3·value_dim;
- per value head: A (the chunk's 64 × 64 lower-triangular solve, 64 bf16 a token), q_rstd, k_rstd, the
  cumulated g (fp32 each), beta (bf16), softplus's fp32 input and the gated norm's fp32 rstd: 150 B.

All 16-bit but the per-head fp32 terms. Its backward (``chunk_gated_delta_rule_bwd``) recomputes w and u,
the chunk states h (H_v·d_k·d_v every 64 tokens, in k's dtype: ``k.new_empty(B, NT, HV, K, V)``) and
v_new, and allocates dh of the same size, dv, dq, dk and dw while the output gradient is alive:
4·H_v·(d_k + d_v) + 2·H_v·d_k·d_v/64 values a token. That runs after the layer's MLP backward has freed
the MLP's saved tensors, so a Gated DeltaNet layer's backward peaks in the larger of the two phases.
"""

from __future__ import annotations

from typing import Literal

from rigcheck.core.estimate import gdn_fallback
from rigcheck.core.models.spec import ArchConfig, LayerKind, LinearMixer

Attention = Literal["flash", "eager"]

GDN_SOURCE = (
    "huggingface/transformers src/transformers/models/qwen3_5/modeling_qwen3_5.py@d8c1e28 "
    "Qwen3_5GatedDeltaNet.forward; fla-org/flash-linear-attention fla/ops/gated_delta_rule/chunk.py@92396f2 "
    "ChunkGatedDeltaRuleFunction (save_for_backward(q, q_rstd, k, k_rstd, v, g, beta, A, ...)), "
    "fla/ops/common/chunk_delta_h.py@0080966 (h, dh: B × NT × HV × K × V)"
)
#: flash-linear-attention's chunk (chunk_local_cumsum(g, chunk_size=64); A is B × T × H × 64)
CHUNK = 64
BF16 = 2
#: bytes per value head per token beside the 16-bit tensors: A (64 × 2 B), q_rstd, k_rstd, g (4 B each),
#: beta (2 B), softplus's fp32 input (4 B), the gated norm's fp32 rstd (4 B)
PER_HEAD = CHUNK * BF16 + 3 * 4 + 2 + 4 + 4


def gdn_token_bytes(mixer: LinearMixer) -> int:
    """Bytes a Gated DeltaNet mixer saves per token (the module docstring's list)."""
    hv, dk = mixer.value_heads, mixer.key_head_dim
    values = mixer.conv_dim + 2 * hv * dk + mixer.value_dim + 3 * mixer.value_dim
    return BF16 * values + PER_HEAD * hv


def gdn_backward_token_bytes(mixer: LinearMixer) -> int:
    """Bytes a Gated DeltaNet mixer's backward holds per token at once: recomputed w, u, v_new, the
    chunk states h and their gradient dh, dv, dq, dk, dw and the incoming output gradient."""
    hv, dk, dv = mixer.value_heads, mixer.key_head_dim, mixer.value_head_dim
    states = 2 * hv * dk * dv // CHUNK
    return BF16 * (4 * hv * (dk + dv) + states)


def is_gdn(arch: ArchConfig, kind: LayerKind) -> bool:
    """Whether layers of ``kind`` are Gated DeltaNet layers whose widths are known."""
    return kind == "linear" and arch.linear_mixer is not None


def kinds_counted(arch: ArchConfig) -> dict[LayerKind, int]:
    """Each layer kind of ``arch`` and how many layers have it (every layer full when kinds are unknown)."""
    full: LayerKind = "full"
    kinds: tuple[LayerKind, ...] = arch.layer_kinds or (full,) * arch.num_layers
    counts: dict[LayerKind, int] = {}
    for kind in kinds:
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def by_kind(arch: ArchConfig) -> str:
    """The formula's words for a hybrid: how many layers of each kind, and the Gated DeltaNet rule with
    this model's widths ("" when every layer takes the attention rule)."""
    m = arch.linear_mixer
    n = kinds_counted(arch).get("linear", 0)
    if m is None or not n:
        return ""
    return (
        f"; by layer kind: {arch.num_layers - n} attention layers, {n} Gated DeltaNet layers saving "
        f"2·(2·{m.key_dim:,} + {m.value_dim:,}) conv input + 2·2·{m.value_heads}·{m.key_head_dim} normed q, k"
        f" + 2·4·{m.value_dim:,} v, z, kernel and norm outputs + {PER_HEAD}·{m.value_heads} per-head"
        f" = {gdn_token_bytes(m):,} B per token for the mixer"
    )


def backward_words(arch: ArchConfig) -> str:
    """The backward formula's words for a hybrid ("" when every layer takes the attention rule)."""
    if arch.linear_mixer is None or "linear" not in arch.layer_kinds:
        return ""
    return (
        ", or a Gated DeltaNet layer's: dL/dx, the residual's and FLA's kernel backward (w, u, v_new, chunk "
        "states h and dh, dv, dq, dk, dw), with its MLP's saved tensors freed, if larger"
    )


def source(arch: ArchConfig, attention_source: str) -> str:
    """The attention rule's source, and the Gated DeltaNet code's where the model has such layers."""
    if arch.linear_mixer is None or "linear" not in arch.layer_kinds:
        return attention_source
    return f"{attention_source}; {GDN_SOURCE}"


def ffn_width(arch: ArchConfig) -> int:
    return arch.intermediate_size or 4 * arch.hidden_size


def gated_mlp(arch: ArchConfig) -> bool:
    # SwiGLU/GeGLU families; GPT-2/Falcon/Phi-1.5-style MLPs are two matrices of 4h
    return arch.intermediate_size is not None and arch.intermediate_size != 4 * arch.hidden_size


def fallback_token_bytes(arch: ArchConfig, kind: LayerKind, kernels: str) -> int:
    """What a Gated DeltaNet layer saves per token beyond fla's kernel when the stack runs transformers'
    pure-torch delta rule (``kernels`` "torch", estimate/gdn_fallback.py); 0 on fla or other layers."""
    m = arch.linear_mixer
    if kernels != "torch" or not is_gdn(arch, kind) or m is None:
        return 0
    return int(m.value_heads * (gdn_fallback.saved_bytes(m) - gdn_fallback.kernel_saved_bytes(m)))


def layer_token_bytes(
    arch: ArchConfig,
    fused: bool,
    attention: Attention,
    context: int,
    kind: LayerKind = "full",
    *,
    kernels: str = "fla",
) -> int:
    """Bytes autograd keeps per token for one decoder layer of ``kind`` in 16-bit training: the norms
    and residuals, the MLP, and the token mixer (attention's q, k, v and output, or a Gated DeltaNet
    layer's tensors, :func:`gdn_token_bytes`, and on transformers' torch fallback its saved tensors,
    :func:`fallback_token_bytes`)."""
    h, ffn = arch.hidden_size, ffn_width(arch)
    qd = arch.num_heads * arch.head_dim
    kvd = arch.num_kv_heads * arch.head_dim
    gdn = arch.linear_mixer if is_gdn(arch, kind) else None
    if fused:  # fused norm, RoPE and SwiGLU kernels save their inputs only
        mixer = 4 * qd + 4 * kvd
        total = 2 * 4 * h + (4 if gated_mlp(arch) else 2) * ffn
    else:  # x, norm1 out, x_mid, norm2 out; fp32 copies in both RMSNorms; q/k before and after RoPE, v, out
        mixer = 6 * qd + 6 * kvd
        total = 2 * 4 * h + 2 * 4 * h + (8 if gated_mlp(arch) else 4) * ffn
    if gdn is not None:
        return total + gdn_token_bytes(gdn) + fallback_token_bytes(arch, kind, kernels)
    if attention == "eager":  # scores, softmax (2 B each) and the dropout mask (1 B) per head and key
        mixer += 5 * arch.num_heads * context
    return total + mixer


def _mlp_saved(arch: ArchConfig, fused: bool) -> int:
    """The MLP's share of :func:`layer_token_bytes` (gate, up, SiLU and product, or their inputs)."""
    if fused:
        return (4 if gated_mlp(arch) else 2) * ffn_width(arch)
    return (8 if gated_mlp(arch) else 4) * ffn_width(arch)


def backward_token_bytes(arch: ArchConfig, kind: LayerKind = "full", fused: bool = False) -> int:
    """What one layer's backward holds per token beyond its saved tensors, at its peak.

    Attention layers: dL/dx and the residual's (2·h each), the gated MLP's dL/d(gate, up) (2·ffn each),
    dL/dq, dL/dk, dL/dv, all counted together. A Gated DeltaNet layer peaks in the larger of two phases:
    its MLP's backward (dL/dx, the residual's and dL/d(gate, up) beside every saved tensor) or, later, its
    mixer's (the MLP's saved tensors freed by then; dL/dx, the residual's and the kernel backward's
    tensors, :func:`gdn_backward_token_bytes`)."""
    h, ffn = arch.hidden_size, ffn_width(arch)
    qd = arch.num_heads * arch.head_dim
    kvd = arch.num_kv_heads * arch.head_dim
    base = 2 * (2 * h + (2 if gated_mlp(arch) else 1) * ffn)
    if arch.linear_mixer is not None and is_gdn(arch, kind):
        mixer_phase = 2 * 2 * h + gdn_backward_token_bytes(arch.linear_mixer) - _mlp_saved(arch, fused)
        return max(base, mixer_phase)
    return base + 2 * (qd + 2 * kvd)


def layers_token_bytes(
    arch: ArchConfig, fused: bool, attention: Attention, context: int, kernels: str = "fla"
) -> int:
    """Σ over every layer of :func:`layer_token_bytes` by its kind."""
    return sum(
        n * layer_token_bytes(arch, fused, attention, context, kind, kernels=kernels)
        for kind, n in kinds_counted(arch).items()
    )


def largest_layer_token_bytes(
    arch: ArchConfig, fused: bool, attention: Attention, context: int, kernels: str = "fla"
) -> int:
    """The largest one layer saves (the layer a full-checkpointing backward recomputes at its peak)."""
    return max(
        layer_token_bytes(arch, fused, attention, context, kind, kernels=kernels)
        for kind in kinds_counted(arch)
    )


def largest_backward_token_bytes(arch: ArchConfig, fused: bool = False) -> int:
    return max(backward_token_bytes(arch, kind, fused) for kind in kinds_counted(arch))
