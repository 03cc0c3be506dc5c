"""The generic rule, for a model_type with no family of its own (docs/architectures.md): a llama-style
decoder read from the keys it has, MoE, MLA and hybrid layers included."""

from __future__ import annotations

from collections.abc import Mapping

from rigcheck.core.models.config.families import _gated_deltanet, _qwen3_next_body
from rigcheck.core.models.config.layer_kinds import _all_full
from rigcheck.core.models.config.shared import (
    _EXPERT_KEYS,
    MAX_LAYERS,
    Kinds,
    _Body,
    _Dims,
    _gated_mlp,
    _Keys,
    _Moe,
    _per_token,
)
from rigcheck.core.models.spec import LayerKind


def _expert_key(k: _Keys) -> str | None:
    """The key that gives this config's routed experts (more than one), if any."""
    return next(
        (key for key in _EXPERT_KEYS if isinstance(k.config.get(key), int) and k.config[key] > 1), None
    )


def _generic_moe(k: _Keys, d: _Dims, key: str) -> tuple[int | _Moe, ...]:
    """Routed experts (gated MLPs of moe_intermediate_size, else intermediate_size), a router of
    experts × hidden, shared experts from n_shared_experts (DeepSeek's keys) or
    shared_expert_intermediate_size (Qwen's), dense layers from first_k_dense_replace, mlp_only_layers
    and decoder_sparse_step / moe_layer_freq."""
    experts = k.size(key)
    if k.present("moe_intermediate_size"):
        inner = k.size("moe_intermediate_size")
    else:
        k.assume("experts of intermediate_size (no moe_intermediate_size)")
        inner = k.size("intermediate_size")
    shared = d.hidden * experts
    shared_key = next((key for key in ("n_shared_experts", "num_shared_experts") if k.present(key)), None)
    n_shared = k.size(shared_key, zero_ok=True, limit=MAX_LAYERS) if shared_key else 0
    shared_width, shared_gate = 0, False
    if k.present("shared_expert_intermediate_size") and k.config["shared_expert_intermediate_size"]:
        shared_width, shared_gate = k.size("shared_expert_intermediate_size"), True
        shared += _gated_mlp(d.hidden, shared_width) + d.hidden
        k.assume("a shared expert of shared_expert_intermediate_size with a 1-wide gate (as Qwen3-Next)")
    elif n_shared and k.present("shared_intermediate_size"):
        shared_width = k.size("shared_intermediate_size") * n_shared
        shared += _gated_mlp(d.hidden, shared_width)
    elif n_shared:
        shared_width = inner * n_shared
        shared += _gated_mlp(d.hidden, shared_width)
    moe = _Moe(
        experts, _per_token(k, experts), _gated_mlp(d.hidden, inner), shared, inner, shared_width, shared_gate
    )
    sparse = _generic_sparse_layers(k, d.layers)
    if all(sparse):
        dense = 0
    else:
        dense_key = "dense_intermediate_size" if k.present("dense_intermediate_size") else "intermediate_size"
        dense = _gated_mlp(d.hidden, k.size(dense_key))
    return tuple(moe if is_sparse else dense for is_sparse in sparse)


def _generic_sparse_layers(k: _Keys, layers: int) -> list[bool]:
    """Which layers hold the experts: moe_layer_freq as a 0/1 list per layer (MiniMax-M3, MiMo-V2), or
    first_k_dense_replace, mlp_only_layers and decoder_sparse_step / moe_layer_freq as a step."""
    listed = k.config.get("moe_layer_freq")
    if isinstance(listed, list):
        if len(listed) != layers or any(item not in (0, 1) or isinstance(item, float) for item in listed):
            k.fail("moe_layer_freq", f"as a list, must hold one 0 or 1 for each of the {layers} layers")
        return [bool(item) for item in listed]
    first = (
        k.size("first_k_dense_replace", zero_ok=True, limit=MAX_LAYERS)
        if k.present("first_k_dense_replace")
        else 0
    )
    only_dense = k.layer_set("mlp_only_layers", layers)
    step_key = next((key for key in ("decoder_sparse_step", "moe_layer_freq") if k.present(key)), None)
    step = k.size(step_key, limit=MAX_LAYERS) if step_key else 1
    offset = 1 if step_key == "decoder_sparse_step" else 0
    return [i >= first and i not in only_dense and (i + offset) % step == 0 for i in range(layers)]


def _generic_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """The generic rule for a model_type RigCheck has no family for: grouped-query attention on full,
    sliding and chunked layers (q/k/v/o, biases when attention_bias, q/k norms of head_dim when
    use_qk_norm), Gated DeltaNet on linear_attention layers (the linear_* keys, as Qwen3-Next), and a
    gated MLP or a mixture of experts (:func:`_generic_moe`) in each layer. Every guess is a note."""
    bias = k.flag("attention_bias")
    qk_norm = k.config.get("use_qk_norm") is True or k.config.get("qk_norm") is True
    widths: dict[LayerKind, tuple[int, int, int, int]] = {
        kind: _attention_widths(k, d, kind) for kind in set(kinds) if kind in ("full", "sliding")
    }
    attn: dict[LayerKind, int] = {
        kind: _attention_params(d.hidden, w, bias=bias, qk_norm=qk_norm) for kind, w in widths.items()
    }
    state = None
    gdn = None
    linear: tuple[int, ...] = ()
    if "linear" in kinds:
        linear, state, gdn = _gated_deltanet(k, d, kinds)
        k.assume("linear_attention layers counted as Gated DeltaNet from the linear_* keys (Qwen3-Next)")
    mixers = tuple(linear[i] if kind == "linear" else attn[kind] for i, kind in enumerate(kinds))
    uniform = all(w == (d.heads, d.kv_heads, d.head_dim, d.head_dim) for w in widths.values())
    cached = (
        ()
        if uniform
        else tuple(
            widths[kind][1] * (widths[kind][2] + widths[kind][3]) if kind in widths else 0 for kind in kinds
        )
    )
    index_params, index_keys = _msa_indexer(k, d)
    if index_params:
        mixers = tuple(m + extra for m, extra in zip(mixers, index_params, strict=True))
        own = cached or tuple(
            widths[kind][1] * (widths[kind][2] + widths[kind][3]) if kind in widths else 0 for kind in kinds
        )
        cached = tuple(c + extra for c, extra in zip(own, index_keys, strict=True))
    key = _expert_key(k)
    if key is not None:
        mlps = _generic_moe(k, d, key)
    else:
        mlps = (_gated_mlp(d.hidden, k.size("intermediate_size")),) * d.layers
    return _Body(mixers=mixers, mlps=mlps, linear_state=state, linear_mixer=gdn, kv_elements=cached)


def _msa_indexer(k: _Keys, d: _Dims) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """MiniMax-M3's block-sparse attention (sparse_attention_config), per layer: the indexer's
    parameters and the elements it caches per token.

    baidu/vLLM-Kunlun vllm/model_executor/models/minimax_m3.py@2d92d40f (MiniMaxM3MSAIndexer,
    MiniMaxM3IndexerCache): on each layer sparse_attention_freq marks, index_q (hidden →
    sparse_num_index_heads × sparse_index_dim) and one shared index_k (hidden → sparse_index_dim)
    projections and two index_dim norms; the main K/V cache stays whole (the sparse kernel reads
    top-k blocks of it) and a key-only side cache adds one index key of sparse_index_dim per token.
    sparse_disable_index_value marks layers without index value/output projections (all of M3's)."""
    config = k.config.get("sparse_attention_config")
    if not isinstance(config, Mapping) or config.get("use_sparse_attention") is not True:
        return (), ()
    s = _Keys(config, k.source, {}, prefix="sparse_attention_config.")
    s.assumed = k.assumed
    dim, heads = s.size("sparse_index_dim"), s.size("sparse_num_index_heads")
    sparse = _layer_flags(s, "sparse_attention_freq", d.layers)
    no_value = _layer_flags(s, "sparse_disable_index_value", d.layers)
    if any(on and not off for on, off in zip(sparse, no_value, strict=True)):
        s.fail(
            "sparse_disable_index_value",
            "layers with index values are not published; RigCheck cannot size them",
        )
    k.assume("sparse attention: the whole K/V cached plus one index key per token on sparse layers")
    per_layer = d.hidden * (heads * dim + dim) + 2 * dim
    return tuple(per_layer if on else 0 for on in sparse), tuple(dim if on else 0 for on in sparse)


def _layer_flags(k: _Keys, key: str, layers: int) -> tuple[bool, ...]:
    """A list of one 0 or 1 per layer."""
    listed = k.config.get(key)
    if (
        not isinstance(listed, list)
        or len(listed) != layers
        or any(isinstance(item, bool) or item not in (0, 1) for item in listed)
    ):
        k.fail(key, f"must hold one 0 or 1 for each of the {layers} layers")
    return tuple(item == 1 for item in listed)


def _attention_widths(k: _Keys, d: _Dims, kind: LayerKind) -> tuple[int, int, int, int]:
    """(heads, KV heads, key width, value width) of one kind of attention layer: v_head_dim where
    values are narrower than keys, and swa_* keys for sliding layers (MiMo-V2-Flash)."""
    v_dim = k.size("v_head_dim") if k.present("v_head_dim") else d.head_dim
    if kind != "sliding" or not k.present("swa_head_dim"):
        return d.heads, d.kv_heads, d.head_dim, v_dim
    k.assume("sliding layers sized by the swa_* keys")
    heads = k.size("swa_num_attention_heads") if k.present("swa_num_attention_heads") else d.heads
    kv = k.size("swa_num_key_value_heads") if k.present("swa_num_key_value_heads") else d.kv_heads
    key = k.size("swa_head_dim")
    return heads, kv, key, k.size("swa_v_head_dim") if k.present("swa_v_head_dim") else key


def _attention_params(hidden: int, widths: tuple[int, int, int, int], *, bias: bool, qk_norm: bool) -> int:
    """q/k/v/o of grouped-query attention with values of their own width (biases on all four)."""
    heads, kv, key, value = widths
    params = hidden * (heads * key + kv * key + kv * value) + heads * value * hidden
    if bias:
        params += heads * key + kv * (key + value) + hidden
    return params + (2 * key if qk_norm else 0)


def _generic_kinds(k: _Keys, layers: int) -> Kinds:
    """The generic rule's layer pattern when there is no layer_types: hybrid_layer_pattern, a 0/1
    per layer with 1 for a sliding-window layer (MiMo-V2-Flash), else every layer full attention."""
    pattern = k.config.get("hybrid_layer_pattern")
    if pattern is None:
        return _all_full(k, layers)
    if not isinstance(pattern, list) or len(pattern) != layers or any(p not in (0, 1) for p in pattern):
        k.fail("hybrid_layer_pattern", f"must hold one 0 or 1 for each of the {layers} layers")
    k.assume("hybrid_layer_pattern: 1 is a sliding-window layer, 0 full attention")
    return tuple("sliding" if p else "full" for p in pattern)


def _qwen3_5_moe_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/qwen3_5_moe/modular_qwen3_5_moe.py: Qwen3.5's hybrid token mixers (:func:`_gated_deltanet`)
    and Qwen3-Next's sparse MoE block (routed experts, a shared expert and its 1-wide gate) in every layer:
    Qwen3-Next's body, layer for layer."""
    return _qwen3_next_body(k, d, kinds)
