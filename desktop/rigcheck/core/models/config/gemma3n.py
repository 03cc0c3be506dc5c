"""Gemma 3n (model_type gemma3n_text): Gemma 4's E-series layout (per-layer embeddings, KV sharing) plus
AltUp and LAuReL, counted as transformers' converter lays the checkpoint out."""

from __future__ import annotations

from typing import Final

from rigcheck.core.models.config.hybrids import _gemma4_body
from rigcheck.core.models.config.kernels import PLAIN_LAYER_KERNELS, SHARED_KV_SAVED
from rigcheck.core.models.config.shared import Kinds, _Body, _Dims, _Keys

#: Kernels a token's pass launches per layer in llama.cpp's graphs (ops that compute; views, reshapes and
#: permutes without a cont are free), counted from ggml-org/llama.cpp
#: src/models/gemma3n-iswa.cpp@0f7288922039b9231e22f3ab85ff78b62778c3a1 over the plain layer's
#: (kernels.PLAIN_LAYER_KERNELS).
#: A Gemma 3n layer with its own KV: AltUp predict (router: norm, scale, matmul, tanh; coefficient matmul;
#: two conts, a matmul, an add) 10, the attention norm 2, LAuReL (2 matmuls, a norm, an add) 5, attention
#: as above with q/k norms and v's rms_norm 17, the post-attention norm and its adds and scale 5, the
#: feed-forward norm and MLP 7, its post-norm and add 3, AltUp correct (router 5, sub, matmul, scale_bias,
#: cont, repeat, mul, add) 12, the per-layer input (mul, matmul, gelu, mul, matmul, norm) 7, the add and
#: concat into the streams 2.
GEMMA3N_LAYER_KERNELS: Final = 70
#: gaussian_topk on the gate of a sparse layer: mean, sub, sqr, sum_rows, scale, sqrt, scale, add, sub, relu.
GEMMA3N_SPARSE_KERNELS: Final = 10


def _gemma3n_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/gemma3n/convert_gemma3n_weights.py (its tensor list) over modeling_gemma3n.py: Gemma 4's
    E-series decoder layer (q/k/v/o, q_norm and k_norm; v_norm has no weight and there is no
    layer_scalar; four norms; the per-layer input gate, projection and norm; the last
    num_kv_shared_layers layers reuse earlier layers' KV) with, per layer, AltUp (correct_output_scale,
    correction_coefs n×n, prediction_coefs n×n², modality_router hidden×n, router_norm) and LAuReL
    (linear_left hidden×laurel_rank, linear_right back, post_laurel_norm); beside the layers,
    altup_num_inputs - 1 altup_projections and as many altup_unembed_projections, hidden×hidden each.
    The checkpoint is the whole MatFormer: a nested smaller model is a slice of it, not extra weights."""
    body = _gemma4_body(k, d, kinds)
    n = k.size("altup_num_inputs", limit=64)
    rank = k.size("laurel_rank")
    altup = 2 * d.hidden + n * n + n**3 + d.hidden * n
    laurel = 2 * d.hidden * rank + d.hidden
    # no layer_scalar (Gemma 4's 1-element per-layer scale) in Gemma 3n
    mixers = [m - 1 + altup + laurel for m in body.mixers]
    # the model-level AltUp projections run on every token: counted with the first layer, read with it
    mixers[0] += 2 * (n - 1) * d.hidden * d.hidden
    k.assume(f"AltUp's {2 * (n - 1)} model-level projections counted with the first layer")
    return _Body(
        mixers=tuple(mixers),
        mlps=body.mlps,
        kv_elements=body.kv_elements,
        extra_embed=body.extra_embed,
        layer_kernels=_kernels(k, d.layers, body.kv_elements),
    )


def _kernels(k: _Keys, layers: int, kv_elements: tuple[int, ...]) -> float:
    """The mean Gemma 3n layer's kernels as a plain layer's multiple (the constants above): shared-KV layers
    run fewer (kernels.SHARED_KV_SAVED, as in Gemma 4), the activation-sparse ones
    (activation_sparsity_pattern > 0; by default the first 10) more."""
    pattern = k.config.get("activation_sparsity_pattern")
    if isinstance(pattern, list) and len(pattern) == layers:
        sparse = sum(1 for v in pattern if isinstance(v, int | float) and v > 0)
    else:
        sparse = 10 if layers > 10 else 0
    shared = sum(1 for e in kv_elements if e == 0)
    total = layers * GEMMA3N_LAYER_KERNELS - shared * SHARED_KV_SAVED + sparse * GEMMA3N_SPARSE_KERNELS
    return round(total / layers / PLAIN_LAYER_KERNELS, 3)
