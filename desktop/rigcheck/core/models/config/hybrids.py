"""The 2026 hybrids, each its own body: Gemma 4, Nemotron-H, DeepSeek-V4, Kimi Linear, LFM2."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from rigcheck.core.models.config import kernels
from rigcheck.core.models.config.families import _dsa_indexer, _mla_dims, _own_indexers
from rigcheck.core.models.config.layer_kinds import _uniform
from rigcheck.core.models.config.shared import (
    MAX_LAYERS,
    MAX_PARAMS,
    Kinds,
    _Body,
    _Dims,
    _gated_mlp,
    _gqa,
    _Keys,
    _Moe,
    _per_token,
    _show,
)
from rigcheck.core.models.spec import LayerKind


def _gemma4_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/gemma4/modeling_gemma4.py (Gemma4TextDecoderLayer), as the module tree and tensor table of
    google/gemma-4-31B-it show it: sliding layers have num_key_value_heads of head_dim, full layers
    num_global_key_value_heads of global_head_dim and, with attention_k_eq_v, no v_proj (keys are the
    values); q_norm and k_norm of the layer's head width (v_norm has no weight); four norms and a
    1-element layer_scalar per layer; a gated MLP of intermediate_size (doubled on KV-sharing layers
    with use_double_wide_mlp). The last num_kv_shared_layers layers reuse earlier layers' KV and cache
    nothing. With enable_moe_block, routed experts (fused gate_up of moe_intermediate_size) and a router
    beside the dense MLP. hidden_size_per_layer_input > 0 adds Gemma 3n's per-layer embeddings."""
    k_eq_v = k.flag("attention_k_eq_v")
    global_kv = (
        k.size("num_global_key_value_heads") if k.present("num_global_key_value_heads") else d.kv_heads
    )
    global_dim = k.size("global_head_dim") if k.present("global_head_dim") else d.head_dim
    shared_kv = k.size("num_kv_shared_layers", zero_ok=True, limit=MAX_LAYERS)
    if shared_kv >= d.layers:
        k.fail("num_kv_shared_layers", f"{shared_kv} is not below num_hidden_layers {d.layers}")
    first_shared = d.layers - shared_kv
    inner = k.size("intermediate_size")
    double = k.flag("use_double_wide_mlp")
    moe: _Moe | None = None
    if k.config.get("enable_moe_block") is True:
        experts = k.size("num_experts")
        expert = _gated_mlp(d.hidden, k.size("moe_intermediate_size"))
        moe = _Moe(experts, _per_token(k, experts), expert, d.hidden * experts)
        k.assume("Gemma 4 MoE block: router of experts × hidden and the extra norms not counted exactly")
    mixers: list[int] = []
    mlps: list[int | _Moe] = []
    cached: list[int] = []
    for i, kind in enumerate(kinds):
        full = kind == "full"
        heads_kv, width = (global_kv, global_dim) if full else (d.kv_heads, d.head_dim)
        values = not (full and k_eq_v)
        q = d.heads * width
        mixers.append(d.hidden * (q + heads_kv * width * (2 if values else 1)) + q * d.hidden + 2 * width + 1)
        cached.append(0 if i >= first_shared else 2 * heads_kv * width)
        dense = _gated_mlp(d.hidden, inner * (2 if double and i >= first_shared else 1))
        mlps.append(_Moe(moe.experts, moe.per_token, moe.expert, moe.shared + dense) if moe else dense)
    extra = 0
    per_layer = k.size("hidden_size_per_layer_input", zero_ok=True)
    if per_layer:
        vocab = k.size("vocab_size_per_layer_input") if k.present("vocab_size_per_layer_input") else d.vocab
        extra = vocab * d.layers * per_layer + d.hidden * d.layers * per_layer + per_layer
        mixers = [m + 2 * d.hidden * per_layer + d.hidden for m in mixers]
        k.assume("per-layer embeddings counted as Gemma 3n lays them out (table, projection, gate per layer)")
    if shared_kv:
        k.assume(f"the last {shared_kv} layers reuse earlier layers' KV (num_kv_shared_layers): no own cache")
    layer_kernels = kernels.gemma4(
        moe=[moe is not None] * d.layers,
        shared_kv=[i >= first_shared for i in range(d.layers)],
        k_eq_v=[kind == "full" and k_eq_v for kind in kinds],
        per_layer_input=per_layer > 0,
    )
    return _Body(
        mixers=tuple(mixers),
        mlps=tuple(mlps),
        kv_elements=tuple(cached),
        extra_embed=extra,
        layer_kernels=layer_kernels,
    )


#: hybrid_override_pattern letters (NemotronHConfig): Mamba-2, attention, MLP, mixture of experts
_NEMOTRON_BLOCKS: Final[Mapping[str, LayerKind]] = {"M": "linear", "*": "full", "-": "none", "E": "none"}


#: layers_block_type names (newer NemotronHConfig) for the same blocks
_NEMOTRON_NAMES: Final = {"mamba": "M", "attention": "*", "mlp": "-", "moe": "E"}


def _nemotron_pattern(k: _Keys, layers: int) -> str:
    pattern = k.config.get("hybrid_override_pattern")
    names = k.config.get("layers_block_type")
    if pattern is None and isinstance(names, list):
        if len(names) != layers or any(name not in _NEMOTRON_NAMES for name in names):
            k.fail("layers_block_type", f"must name {layers} blocks of {', '.join(_NEMOTRON_NAMES)}")
        return "".join(_NEMOTRON_NAMES[name] for name in names)
    if (
        not isinstance(pattern, str)
        or len(pattern) != layers
        or any(c not in _NEMOTRON_BLOCKS for c in pattern)
    ):
        k.fail("hybrid_override_pattern", f"must be {layers} letters of M, *, - and E, got {_show(pattern)}")
    return pattern


def _nemotron_kinds(k: _Keys, layers: int) -> Kinds:
    return tuple(_NEMOTRON_BLOCKS[c] for c in _nemotron_pattern(k, layers))


def _nemotron_h_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/nemotron_h/modeling_nemotron_h.py: one block per letter of hybrid_override_pattern, each
    a norm and one mixer. M: Mamba-2 (in_proj hidden → 2·d_inner + 2·n_groups·ssm_state_size +
    heads, conv1d over d_inner + 2·n_groups·ssm_state_size channels of conv_kernel with a bias when
    use_conv_bias, dt_bias/A_log/D per head, a gated RMSNorm of d_inner, out_proj); *: attention
    (q/k/v/o, attention_bias); -: a squared-ReLU MLP (up, down) of intermediate_size; E: routed squared-
    ReLU experts of moe_intermediate_size, a router with e_score_correction_bias and a shared expert of
    moe_shared_expert_intermediate_size (experts in a moe_latent_size space, with its two projections,
    when the config has one). The Mamba cache per sequence: conv_dim × conv_kernel and heads ×
    mamba_head_dim × ssm_state_size."""
    pattern = _nemotron_pattern(k, d.layers)
    bias = k.flag("use_bias")
    heads, head_dim = k.size("mamba_num_heads"), k.size("mamba_head_dim")
    groups, state_size = k.size("n_groups"), k.size("ssm_state_size")
    kernel = k.size("conv_kernel", limit=4096)
    inner = heads * head_dim
    conv_dim = inner + 2 * groups * state_size
    mamba = d.hidden * (inner + conv_dim + heads) + (inner + conv_dim + heads if bias else 0)
    mamba += conv_dim * kernel + (conv_dim if k.flag("use_conv_bias") else 0) + 3 * heads + inner
    mamba += inner * d.hidden + (d.hidden if bias else 0)
    attn_bias = k.flag("attention_bias")
    attn = _gqa(d, qkv_bias=attn_bias, o_bias=attn_bias)
    mixers = tuple(mamba if c == "M" else attn if c == "*" else 0 for c in pattern)
    mlp_bias = k.flag("mlp_bias")
    mlps: list[int | _Moe] = []
    for c in pattern:
        if c == "-":
            width = k.size("intermediate_size")
            mlps.append(2 * d.hidden * width + (width + d.hidden if mlp_bias else 0))
        elif c == "E":
            experts = k.size("n_routed_experts")
            width = k.size("moe_intermediate_size")
            latent = k.optional_size("moe_latent_size")
            space = latent or d.hidden
            shared = (
                d.hidden * experts + experts + 2 * d.hidden * k.size("moe_shared_expert_intermediate_size")
            )
            if latent:
                shared += 2 * d.hidden * latent
            mlps.append(_Moe(experts, _per_token(k, experts), 2 * space * width, shared))
        else:
            mlps.append(0)
    state = conv_dim * kernel + heads * head_dim * state_size
    return _Body(mixers=mixers, mlps=tuple(mlps), linear_state=state if "M" in pattern else None)


def _deepseek_v4_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """DeepSeek-V4 (deepseek_v4): the attention of deepseek-ai's reference model as public ports of it
    write it (wq_a hidden → q_lora_rank, q_norm, wq_b → heads·head_dim; one shared key/value head wkv
    hidden → head_dim with kv_norm; a sink per head; grouped low-rank output wo_a heads·head_dim/o_groups
    → o_groups·o_lora_rank and wo_b → hidden), DeepSeek-V3's experts (routed, n_shared_experts shared,
    a router with e_score_correction_bias) in every layer. Not counted: the per-layer KV compressor and
    indexer, and the hyper-connection mixing weights (hc_mult), all small. The cache per token: each
    layer with compress_ratios r > 0 keeps head_dim / r elements, plus index_head_dim / r indexer keys
    where r is 4 (the 128-token sliding window of every layer is a fixed few MB and not counted)."""
    head_dim, q_lora = k.size("head_dim"), k.size("q_lora_rank")
    o_lora, groups = k.size("o_lora_rank"), k.size("o_groups")
    if d.heads % groups:
        k.fail("o_groups", f"{groups} does not divide num_attention_heads {d.heads}")
    attn = d.hidden * q_lora + q_lora + q_lora * d.heads * head_dim + d.hidden * head_dim + head_dim
    attn += d.heads + d.heads * head_dim * o_lora + groups * o_lora * d.hidden
    experts = k.size("n_routed_experts")
    inner = k.size("moe_intermediate_size")
    shared = (
        d.hidden * experts + experts + _gated_mlp(d.hidden, inner * k.size("n_shared_experts", zero_ok=True))
    )
    moe = _Moe(experts, _per_token(k, experts), _gated_mlp(d.hidden, inner), shared)
    ratios = k.config.get("compress_ratios")
    if (
        not isinstance(ratios, list)
        or len(ratios) < d.layers
        or any(isinstance(r, bool) or not isinstance(r, int) or r < 0 for r in ratios[: d.layers])
    ):
        k.fail("compress_ratios", f"must list a whole number of 0 or more for each of the {d.layers} layers")
    index = k.size("index_head_dim") if k.present("index_head_dim") else 0
    ratios = ratios[: d.layers]
    if k.present("kv_source_layer_ids"):
        cached = _shared_compressed_kv(k, d.layers, ratios, head_dim + index)
    else:
        cached = tuple((head_dim // r + (index // r if r == 4 else 0)) if r else 0 for r in ratios)
    k.assume("DeepSeek-V4: compressor, indexer and hyper-connection weights not counted (small)")
    return _Body(
        mixers=(attn,) * d.layers,
        mlps=(moe,) * d.layers,
        kv_elements=cached,
        extra_embed=_engram_tables(k, d),
    )


def _shared_compressed_kv(k: _Keys, layers: int, ratios: list[int], row: int) -> tuple[int, ...]:
    """DeepSeek-V4.1's shared compressed cache: only the ``kv_source_layer_ids`` layers own a
    compressor (and the indexer keys beside it); every other layer reads a source's cache, so caches
    nothing of its own. A source at ratio r keeps its head_dim + index_head_dim row once per r tokens
    (infervisor/plow docs/amd/deepseek-v41-flash-mi300x.md: 4 ``compressor.wkv`` and 4 ``indexer.wk``
    tensors in the released checkpoint's index, for 40 layers)."""
    sources = k.layer_set("kv_source_layer_ids", layers)
    if not sources:
        k.fail("kv_source_layer_ids", "must name at least one layer")
    for layer in sources:
        if not ratios[layer]:
            k.fail("kv_source_layer_ids", f"layer {layer} has compress_ratios 0: it compresses nothing")
    return tuple(row // ratios[layer] if layer in sources else 0 for layer in range(layers))


def _engram_tables(k: _Keys, d: _Dims) -> int:
    """Engram n-gram memory (DeepSeek-V4.1): one lookup table of ``engram_num_embeddings[i]`` rows of
    ``engram_head_dim`` per ``engram_layer_ids`` layer. Tables, like an embedding, are read a few rows a
    token, so they are counted with the embedding; their gating projections are not counted (small)."""
    rows = k.config.get("engram_num_embeddings")
    if rows is None:
        return 0
    layers = k.layer_set("engram_layer_ids", d.layers)
    if (
        not isinstance(rows, list)
        or len(rows) != len(layers)
        or any(isinstance(n, bool) or not isinstance(n, int) or not 0 < n <= MAX_PARAMS for n in rows)
    ):
        k.fail(
            "engram_num_embeddings",
            f"must list a row count above 0 for each of the {len(layers)} engram_layer_ids",
        )
    k.assume("Engram: the lookup tables counted with the embedding, their gating projections not counted")
    return sum(rows) * k.size("engram_head_dim")


def _kda_keys(k: _Keys) -> _Keys:
    """linear_attn_config, the object that describes a Kimi Linear stack's KDA layers."""
    nested = k.config.get("linear_attn_config")
    if not isinstance(nested, Mapping):
        k.fail("linear_attn_config", f"must be an object giving the KDA layers, got {_show(nested)}")
    defaults = {"short_conv_kernel_size": 4, "use_full_rank_gate": False}
    keys = _Keys(nested, k.source, defaults, prefix="linear_attn_config.")
    keys.assumed = k.assumed  # one list of notes for the whole config
    return keys


def _kimi_kinds(k: _Keys, layers: int) -> Kinds:
    """KimiLinearConfig.is_kda_layer: layer i is KDA when i + 1 is in linear_attn_config.kda_layers
    (the published Kimi lists count from 1), every other layer MLA; full_attn_layers, where given, must
    be the rest. A list holding layer 0 counts from 0 (GLM-5.3-Flash's glm5_next config: kda_layers
    0, 1, 2, 4, … beside full_attn_layers 3, 7, …, 43, the indices its layer_types marks)."""
    kda = _kda_keys(k)
    listed = kda.config.get("kda_layers")
    if not isinstance(listed, list) or len(listed) > layers:
        kda.fail("kda_layers", f"must list at most {layers} layer numbers, counted from 1")
    first = 0 if 0 in listed else 1
    for item in listed:
        if isinstance(item, bool) or not isinstance(item, int) or not first <= item < layers + first:
            kda.fail(
                "kda_layers", f"{_show(item)} is not a layer number from {first} to {layers - 1 + first}"
            )
    if first == 0:
        k.assume("linear_attn_config.kda_layers lists layer 0, so its layer numbers count from 0")
    linear = set(listed)
    full = kda.config.get("full_attn_layers")
    rest = set(range(first, layers + first)) - linear
    if full is not None and (not isinstance(full, list) or set(full) != rest):
        kda.fail("full_attn_layers", f"must list the layers kda_layers leaves out, counted from {first}")
    return tuple("linear" if i + first in linear else "mla" for i in range(layers))


def _kimi_linear_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """Kimi Linear / Kimi K3 (model_type kimi_linear): KDA and MLA layers, DeepSeek-style experts.

    KDA (vllm-project/vllm vllm/model_executor/layers/kda.py, KimiDeltaAttention): q/k/v_proj
    (hidden → heads·head_dim each), f_a_proj (hidden → head_dim) and f_b_proj (→ heads·head_dim),
    dt_bias (heads·head_dim), b_proj (hidden → heads), q/k/v_conv1d (heads·head_dim × kernel each),
    A_log (heads), the output gate g_a_proj + g_b_proj (low rank as f_*), or one hidden → heads·head_dim
    g_proj with use_full_rank_gate (Kimi K3), o_norm (head_dim), o_proj. Its state per sequence
    (MambaStateShapeCalculator.kda_state_shape): three conv windows of heads·head_dim × (kernel - 1)
    and a recurrent state of heads × head_dim × head_dim.
    MLA (vllm/model_executor/models/kimi_linear.py, KimiMLAAttention): DeepSeek-V2's latent attention
    without biases, plus, with mla_use_output_gate (Kimi K3), a g_proj of hidden → heads·v_head_dim.
    MLP (KimiMoE there): layers from first_k_dense_replace on, every moe_layer_freq-th, hold
    num_experts routed experts, a router with e_score_correction_bias and num_shared_experts ×
    moe_intermediate_size shared; the others a dense MLP of intermediate_size. Kimi K3's latent MoE
    (routed_expert_hidden_size): experts work in that narrower space, entered and left through
    routed_expert_down_proj / up_proj (and routed_expert_norm with latent_moe_use_norm); its
    attention residuals (attn_res_block_size) add two norms and two hidden → 1 projections per layer.
    """
    kda = _kda_keys(k)
    heads, head_dim = kda.size("num_heads"), kda.size("head_dim")
    kernel = kda.size("short_conv_kernel_size", limit=4096)
    width = heads * head_dim
    gate = d.hidden * width if kda.flag("use_full_rank_gate") else d.hidden * head_dim + head_dim * width
    linear = 3 * d.hidden * width + d.hidden * head_dim + head_dim * width + width + d.hidden * heads
    linear += 3 * width * kernel + heads + gate + head_dim + width * d.hidden
    mla = _mla_dims(k)
    qk_head = mla.qk_nope + mla.qk_rope
    if mla.q_lora_rank is None:
        q = d.hidden * d.heads * qk_head
    else:
        q = d.hidden * mla.q_lora_rank + mla.q_lora_rank + mla.q_lora_rank * d.heads * qk_head
    full = q + d.hidden * (mla.kv_lora_rank + mla.qk_rope) + mla.kv_lora_rank
    full += mla.kv_lora_rank * d.heads * (mla.qk_nope + mla.v_head_dim) + d.heads * mla.v_head_dim * d.hidden
    if k.flag("mla_use_output_gate"):
        full += d.hidden * d.heads * mla.v_head_dim
        k.assume("mla_use_output_gate: a hidden → heads·v_head_dim gate in each MLA layer (public K3 ports)")
    residuals = 4 * d.hidden if k.present("attn_res_block_size") else 0
    if residuals:
        k.assume(
            "attn_res_block_size: two norms and two hidden → 1 projections per layer (attention residuals)"
        )
    indexer, index_cache = _dsa_indexer(k, d, mla)
    own = _own_indexers(k, d.layers) if index_cache else (False,) * d.layers
    mixers = tuple(
        (linear if kind == "linear" else full + (indexer if has else 0)) + residuals
        for kind, has in zip(kinds, own, strict=True)
    )
    latent_kv = mla.kv_lora_rank + mla.qk_rope
    cached = tuple(
        0 if kind == "linear" else latent_kv + (index_cache if has else 0)
        for kind, has in zip(kinds, own, strict=True)
    )
    # GLM-5.3-Flash (glm5_next) spells the expert keys as DeepSeek does
    experts = k.size(
        next((key for key in ("num_experts", "n_routed_experts") if k.present(key)), "num_experts")
    )
    inner = k.size("moe_intermediate_size")
    latent = k.optional_size("routed_expert_hidden_size")
    space = latent or d.hidden
    shared = d.hidden * experts + experts
    shared_key = next(
        (key for key in ("num_shared_experts", "n_shared_experts") if k.present(key)), "num_shared_experts"
    )
    shared += _gated_mlp(d.hidden, inner * k.size(shared_key, zero_ok=True, limit=MAX_LAYERS))
    if latent:
        shared += 2 * d.hidden * latent + (latent if k.config.get("latent_moe_use_norm") is True else 0)
        k.assume(f"routed experts in a {latent}-wide latent space (routed_expert_hidden_size)")
    moe = _Moe(experts, _per_token(k, experts), _gated_mlp(space, inner), shared)
    dense = _gated_mlp(d.hidden, k.size("intermediate_size"))
    first = k.size("first_k_dense_replace", zero_ok=True, limit=MAX_LAYERS)
    freq = k.size("moe_layer_freq", limit=MAX_LAYERS)
    mlps = tuple(moe if i >= first and i % freq == 0 else dense for i in range(d.layers))
    state = 3 * width * (kernel - 1) + heads * head_dim * head_dim
    return _Body(
        mixers=mixers,
        mlps=mlps,
        linear_state=state if "linear" in kinds else None,
        mla=mla,
        kv_elements=cached if index_cache else (),
    )


def _lfm2_kinds(k: _Keys, layers: int) -> Kinds:
    """Lfm2Config.layer_types: "conv" (a gated short convolution, "short_conv" in some ports) or
    "full_attention" per layer; without it, full_attn_idxs lists the attention layers (all, when absent)."""
    listed = k.config.get("layer_types")
    if listed is not None:
        if not isinstance(listed, list) or len(listed) != layers:
            k.fail("layer_types", f"must list one type for each of the {layers} layers")
        if any(item not in ("conv", "short_conv", "full_attention") for item in listed):
            k.fail("layer_types", "LFM2 layers are 'conv' or 'full_attention'")
        return tuple("full" if item == "full_attention" else "linear" for item in listed)
    if k.present("full_attn_idxs"):
        full = k.layer_set("full_attn_idxs", layers)
        return tuple("full" if i in full else "linear" for i in range(layers))
    k.assume("full_attn_idxs")
    return _uniform("full", layers)


def _lfm2_mixers(k: _Keys, d: _Dims, kinds: Kinds) -> tuple[tuple[int, ...], int | None]:
    """models/lfm2/modular_lfm2.py: Lfm2ShortConv (in_proj hidden → 3·hidden, a depthwise conv1d of
    conv_L_cache taps, out_proj; biases on all three with conv_bias) and Lfm2Attention (q/k/v/out_proj
    without biases, q_layernorm and k_layernorm of head_dim). A conv layer's state per sequence:
    hidden × (conv_L_cache - 1) (vLLM MambaStateShapeCalculator.short_conv_state_shape)."""
    taps = k.size("conv_L_cache", limit=4096)
    bias = k.flag("conv_bias")
    conv = 4 * d.hidden * d.hidden + d.hidden * taps + (5 * d.hidden if bias else 0)
    attn = _gqa(d, qk_norm="head")
    mixers = tuple(conv if kind == "linear" else attn for kind in kinds)
    return mixers, d.hidden * (taps - 1) if "linear" in kinds else None


def _lfm2_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/lfm2/modular_lfm2.py (Lfm2DecoderLayer): the mixers of :func:`_lfm2_mixers` and
    Lfm2MLP (w1, w3, w2) of intermediate_size (block_ff_dim), which block_auto_adjust_ff_dim takes to
    2/3, times block_ffn_dim_multiplier, rounded up to block_multiple_of."""
    mixers, state = _lfm2_mixers(k, d, kinds)
    key = "block_ff_dim" if k.present("block_ff_dim") else "intermediate_size"
    inner = k.size(key)
    if k.flag("block_auto_adjust_ff_dim"):
        inner = int(2 * inner / 3)
        multiplier = k.config.get("block_ffn_dim_multiplier", 1.0)
        if multiplier is not None:
            if (
                isinstance(multiplier, bool)
                or not isinstance(multiplier, int | float)
                or not 0 < multiplier < 1e3
            ):
                k.fail("block_ffn_dim_multiplier", f"must be a number above 0, got {_show(multiplier)}")
            step = k.size("block_multiple_of")
            inner = step * ((int(multiplier * inner) + step - 1) // step)
    mlp = _gated_mlp(d.hidden, inner)
    return _Body(mixers=mixers, mlps=(mlp,) * d.layers, linear_state=state)


def _lfm2_moe_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/lfm2_moe/modular_lfm2_moe.py (Lfm2MoeDecoderLayer): LFM2's mixers, a dense MLP of
    intermediate_size in the first num_dense_layers layers, then a sparse block: a router of
    num_experts × hidden, an expert_bias per expert with use_expert_bias, and experts of
    moe_intermediate_size (no shared expert)."""
    mixers, state = _lfm2_mixers(k, d, kinds)
    experts = k.size("num_experts")
    router = d.hidden * experts + (experts if k.flag("use_expert_bias") else 0)
    moe = _Moe(experts, _per_token(k, experts), _gated_mlp(d.hidden, k.size("moe_intermediate_size")), router)
    dense = _gated_mlp(d.hidden, k.size("intermediate_size"))
    first = k.size("num_dense_layers", zero_ok=True, limit=MAX_LAYERS)
    mlps = tuple(dense if i < first else moe for i in range(d.layers))
    return _Body(mixers=mixers, mlps=mlps, linear_state=state)
