"""The kernels a decode token's pass launches per layer in llama.cpp's graph, as a plain transformer layer's
multiple (ArchConfig.layer_kernels): the fixed per-layer cost (estimate/speed/fixed.py) scales with it.

Counted as the Gemma 3n count was (models/config/gemma3n.py): graph ops that compute, without flash
attention; views, reshapes and permutes without a cont are free; a build_norm is two (rms_norm, mul). A
family's count is the plain layer's (llm_build_llama, ggml-org/llama.cpp
src/models/llama.cpp@069be0ae22f391c64e26e8da4c7da0143ede8cf3) plus the ops its own builder adds. In a
mixture-of-experts layer only the ops outside build_moe_ffn are counted here: the router, top-k, expert
products and their sum are the per-MoE-layer cost's (``moe_layer_us``), which replaces the dense MLP's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

#: llm_build_llama without flash attention: 2 norms (rms_norm, mul), q/k/v, 2 ropes, K and V copied into
#: the cache, kq, softmax, kqv and its cont, o, a residual add, the gated MLP, a residual add.
PLAIN_LAYER_KERNELS: Final = 23

#: q and k each normed by build_norm over the head (rms_norm, mul): Gemma 3 (src/models/gemma3.cpp@569a009),
#: Gemma 4, Qwen3 and Qwen3-MoE (src/models/qwen3.cpp@069be0a, qwen3moe.cpp).
QK_NORM: Final = 4
#: an add per biased projection: Qwen2's q/k/v; gpt-oss's q/k/v and, in build_attn, o
#: (src/models/openai-moe-iswa.cpp@5c880d9)
QKV_BIAS: Final = 3
O_BIAS: Final = 1
#: Gemma 2/3/4's attn_post_norm and ffn_post_norm (build_norm each) around the residual adds
POST_NORMS: Final = 4
#: Gemma 2/3 scale q by query_pre_attn_scalar in the graph (ggml_scale before build_attn)
Q_SCALE: Final = 1
#: Gemma 2's attention logit softcapping without flash attention: scale, tanh, scale on kq
#: (llama-graph.cpp build_attn_mha, f_attn_logit_softcapping; flash attention takes it as a parameter)
SOFTCAP: Final = 3

#: A Gemma 4 layer (src/models/gemma4-iswa.cpp@0a40e49deb4933f17efcdff2e900159b2daf58b9) over a plain one:
#: q/k norms, v's rms_norm, the two post-norms, the layer_scalar mul.
GEMMA4_EXTRA: Final = QK_NORM + 1 + POST_NORMS + 1
#: A Gemma 4 MoE layer runs its dense MLP beside the experts: the MLP (4) and its post-norm (2), the
#: experts' pre-norm (2), the router input's rms_norm, scale and mul (3), the experts' post-norm (2) and the
#: add of the two branches (1).
GEMMA4_MOE_EXTRA: Final = 4 + 2 + 2 + 3 + 2 + 1
#: the per-layer input: gate matmul, gelu, mul, projection, its norm (2), the residual add
GEMMA4_PER_LAYER_INPUT: Final = 7
#: a layer reusing earlier layers' KV skips k and v, k's norm, v's rms_norm, k's rope and the two cache copies
SHARED_KV_SAVED: Final = 8
#: a full-attention layer with attention_k_eq_v has no v projection (v is k)
K_EQ_V_SAVED: Final = 1


def multiple(extra: int) -> float:
    """A layer with ``extra`` kernels beyond a plain layer's, as a plain layer's multiple."""
    return round((PLAIN_LAYER_KERNELS + extra) / PLAIN_LAYER_KERNELS, 3)


def gemma4(
    *, moe: Sequence[bool], shared_kv: Sequence[bool], k_eq_v: Sequence[bool], per_layer_input: bool
) -> float:
    """The mean Gemma 4 layer's kernels as a plain layer's multiple, layer by layer (the constants above)."""
    layers = len(moe)
    if not layers:
        return 1.0
    total = 0
    for i in range(layers):
        total += PLAIN_LAYER_KERNELS + GEMMA4_EXTRA
        total += GEMMA4_MOE_EXTRA if moe[i] else 0
        total -= SHARED_KV_SAVED if shared_kv[i] else 0
        total -= K_EQ_V_SAVED if k_eq_v[i] and not shared_kv[i] else 0
        total += GEMMA4_PER_LAYER_INPUT if per_layer_input else 0
    return round(total / layers / PLAIN_LAYER_KERNELS, 3)
