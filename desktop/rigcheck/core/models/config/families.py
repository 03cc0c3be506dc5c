"""The families' bodies: one per transformers modeling file (``models/<family>/``), from LLaMA to
DeepSeek's MLA and GLM-4.5, and the pre-LLaMA decoders (Phi, BLOOM, Falcon)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from rigcheck.core.models.config.shared import (
    MAX_LAYERS,
    BodyFn,
    Kinds,
    _Body,
    _Dims,
    _gated_mlp,
    _gqa,
    _Keys,
    _Mla,
    _Moe,
    _per_token,
)
from rigcheck.core.models.spec import LinearMixer


def _dense_body(attn: Callable[[_Keys, _Dims], int], *, mlp_bias_key: str | None = None) -> BodyFn:
    """Attention from ``attn`` and a gated MLP of intermediate_size (bias when ``mlp_bias_key``)."""

    def body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
        mixer = attn(k, d)
        mlp = _gated_mlp(
            d.hidden, k.size("intermediate_size"), bias=bool(mlp_bias_key and k.flag(mlp_bias_key))
        )
        return _Body(mixers=(mixer,) * d.layers, mlps=(mlp,) * d.layers)

    return body


def _llama_attn(k: _Keys, d: _Dims) -> int:
    """models/llama/modeling_llama.py: q/k/v/o all carry a bias when attention_bias is true."""
    bias = k.flag("attention_bias")
    return _gqa(d, qkv_bias=bias, o_bias=bias)


def _plain_attn(k: _Keys, d: _Dims) -> int:
    """models/mistral/modeling_mistral.py, models/phi3/modeling_phi3.py: no biases at all."""
    return _gqa(d)


def _qwen2_attn(k: _Keys, d: _Dims) -> int:
    """models/qwen2/modeling_qwen2.py: q/k/v biases always, none on o_proj."""
    return _gqa(d, qkv_bias=True)


def _qwen_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """Qwen (1) remote code: c_attn (q, k, v of every head) with a bias, c_proj without; a gated MLP
    whose width parse_config has already halved (``_Family.halves_intermediate``)."""
    mlp = _gated_mlp(d.hidden, k.size("intermediate_size"))
    return _Body(mixers=(_gqa(d, qkv_bias=True),) * d.layers, mlps=(mlp,) * d.layers)


def _qwen3_attn(k: _Keys, d: _Dims) -> int:
    """models/qwen3/modeling_qwen3.py: attention_bias on q/k/v/o, RMSNorm(head_dim) on q and k."""
    bias = k.flag("attention_bias")
    return _gqa(d, qkv_bias=bias, o_bias=bias, qk_norm="head")


def _gemma3_attn(k: _Keys, d: _Dims) -> int:
    """models/gemma3/modeling_gemma3.py: as Gemma 2, plus q_norm/k_norm of head_dim."""
    bias = k.flag("attention_bias")
    return _gqa(d, qkv_bias=bias, o_bias=bias, qk_norm="head")


def _olmo2_attn(k: _Keys, d: _Dims) -> int:
    """models/olmo2/modeling_olmo2.py: q_norm over heads*head_dim, k_norm over kv_heads*head_dim."""
    bias = k.flag("attention_bias")
    return _gqa(d, qkv_bias=bias, o_bias=bias, qk_norm="width")


def _moe_layers_qwen(k: _Keys, d: _Dims) -> tuple[bool, ...]:
    """Qwen2-MoE/Qwen3-MoE/Qwen3-Next decoder layers: sparse unless in mlp_only_layers, every
    decoder_sparse_step-th layer (``(i + 1) % step == 0``)."""
    only_dense = k.layer_set("mlp_only_layers", d.layers)
    step = k.size("decoder_sparse_step", limit=MAX_LAYERS)
    return tuple(i not in only_dense and (i + 1) % step == 0 for i in range(d.layers))


def _mixtral_moe(k: _Keys, d: _Dims) -> _Moe:
    """models/mixtral/modeling_mixtral.py: gate (hidden → experts, no bias), experts w1/w2/w3 of
    intermediate_size."""
    experts = k.size("num_local_experts")
    expert = _gated_mlp(d.hidden, k.size("intermediate_size"))
    return _Moe(experts, _per_token(k, experts), expert, d.hidden * experts)


def _mixtral_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/mixtral/modeling_mixtral.py: Mistral's attention, a mixture of experts in every layer."""
    return _Body(mixers=(_gqa(d),) * d.layers, mlps=(_mixtral_moe(k, d),) * d.layers)


def _phimoe_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/phimoe/modeling_phimoe.py: Mixtral's experts, attention_bias on q/k/v/o, LayerNorms
    with bias (counted by the family's norm settings), lm_head bias when lm_head_bias is true."""
    bias = k.flag("attention_bias")
    attn = _gqa(d, qkv_bias=bias, o_bias=bias)
    head_bias = d.vocab if k.flag("lm_head_bias") else 0
    return _Body(mixers=(attn,) * d.layers, mlps=(_mixtral_moe(k, d),) * d.layers, head_bias=head_bias)


def _qwen_moe_mlps(k: _Keys, d: _Dims, *, shared_expert: bool) -> tuple[int | _Moe, ...]:
    """Qwen2MoeSparseMoeBlock (shared_expert + 1-wide shared_expert_gate) or Qwen3MoeSparseMoeBlock."""
    experts = k.size("num_experts")
    shared = d.hidden * experts
    width = k.size("moe_intermediate_size")
    shared_width = k.size("shared_expert_intermediate_size") if shared_expert else 0
    if shared_expert:
        shared += _gated_mlp(d.hidden, shared_width) + d.hidden
    moe = _Moe(
        experts,
        _per_token(k, experts),
        _gated_mlp(d.hidden, width),
        shared,
        width,
        shared_width,
        shared_expert,
    )
    layers = _moe_layers_qwen(k, d)
    dense = 0 if all(layers) else _gated_mlp(d.hidden, k.size("intermediate_size"))  # Qwen3.5 MoE: none
    return tuple(moe if sparse else dense for sparse in layers)


def _qwen2_moe_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/qwen2_moe/modeling_qwen2_moe.py: q/k/v biases (qkv_bias), shared expert and its gate."""
    attn = _gqa(d, qkv_bias=k.flag("qkv_bias"))
    return _Body(mixers=(attn,) * d.layers, mlps=_qwen_moe_mlps(k, d, shared_expert=True))


def _qwen3_moe_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/qwen3_moe/modeling_qwen3_moe.py: Qwen3 attention, routed experts only."""
    return _Body(mixers=(_qwen3_attn(k, d),) * d.layers, mlps=_qwen_moe_mlps(k, d, shared_expert=False))


def _gated_deltanet(k: _Keys, d: _Dims, kinds: Kinds) -> tuple[tuple[int, ...], int | None, LinearMixer]:
    """The token mixers of a Qwen3-Next / Qwen3.5 hybrid stack, and the linear layers' cache.

    Full-attention layers (Qwen3NextAttention): q_proj doubled for the output gate, q/k norms.
    Linear layers (Qwen3NextGatedDeltaNet): in_proj_qkvz (hidden → 2·key_dim + 2·value_dim),
    in_proj_ba (hidden → 2·v_heads), depthwise conv1d over key_dim·2 + value_dim channels (no bias),
    dt_bias and A_log (v_heads each), a gated RMSNorm of head_v_dim, out_proj (value_dim → hidden).
    Qwen3.5 (models/qwen3_5/modular_qwen3_5.py, Qwen3_5GatedDeltaNet) splits the two input
    projections into in_proj_qkv + in_proj_z and in_proj_b + in_proj_a: the same shapes, the same count.
    The cache per sequence (``update_conv_state`` / ``recurrent_states`` in the same file): a conv
    state of conv_dim × linear_conv_kernel_dim (transformers pads it to the whole kernel; llama.cpp
    keeps kernel - 1 columns) and a recurrent state of v_heads × head_k_dim × head_v_dim (keys are
    repeated to v_heads before the delta rule). The widths themselves (:class:`LinearMixer`) go with the
    architecture, for the activations training saves per layer kind.
    """
    bias = k.flag("attention_bias")
    full = _gqa(d, qkv_bias=bias, o_bias=bias, qk_norm="head", q_gate=True)
    k_heads, v_heads = k.size("linear_num_key_heads"), k.size("linear_num_value_heads")
    if v_heads % k_heads:
        k.fail("linear_num_value_heads", f"{v_heads} is not a multiple of linear_num_key_heads {k_heads}")
    head_k, head_v = k.size("linear_key_head_dim"), k.size("linear_value_head_dim")
    kernel = k.size("linear_conv_kernel_dim", limit=4096)
    key_dim, value_dim = k_heads * head_k, v_heads * head_v
    conv_dim = 2 * key_dim + value_dim
    linear = (
        d.hidden * (2 * key_dim + 2 * value_dim)
        + d.hidden * 2 * v_heads
        + conv_dim * kernel
        + 2 * v_heads
        + head_v
        + value_dim * d.hidden
    )
    mixers = tuple(linear if kind == "linear" else full for kind in kinds)
    state = conv_dim * kernel + v_heads * head_k * head_v
    widths = LinearMixer(k_heads, v_heads, head_k, head_v, kernel)
    return mixers, state if "linear" in kinds else None, widths


def _qwen3_next_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/qwen3_next/modular_qwen3_next.py: the hybrid token mixers (:func:`_gated_deltanet`) and
    Qwen2-MoE's experts with a shared expert and its gate."""
    mixers, state, widths = _gated_deltanet(k, d, kinds)
    return _Body(
        mixers=mixers,
        mlps=_qwen_moe_mlps(k, d, shared_expert=True),
        linear_state=state,
        linear_mixer=widths,
        q_gate=True,
    )


def _qwen3_5_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/qwen3_5/modular_qwen3_5.py (Qwen3_5DecoderLayer): Qwen3-Next's hybrid token mixers
    (:func:`_gated_deltanet`) and a dense gated MLP of intermediate_size in every layer."""
    mixers, state, widths = _gated_deltanet(k, d, kinds)
    mlp = _gated_mlp(d.hidden, k.size("intermediate_size"))
    return _Body(mixers=mixers, mlps=(mlp,) * d.layers, linear_state=state, linear_mixer=widths, q_gate=True)


def _gpt_oss_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/gpt_oss/modular_gpt_oss.py: attention_bias on q/k/v/o, one sink per head; the router
    has a weight and a bias; each expert a gate_up (hidden → 2·inner) and down projection, both
    with biases."""
    bias = k.flag("attention_bias")
    experts = k.size("num_local_experts")
    inner = k.size("intermediate_size")
    expert = d.hidden * 2 * inner + 2 * inner + inner * d.hidden + d.hidden
    moe = _Moe(experts, _per_token(k, experts), expert, d.hidden * experts + experts)
    attn = _gqa(d, qkv_bias=bias, o_bias=bias, sinks=True)
    return _Body(mixers=(attn,) * d.layers, mlps=(moe,) * d.layers)


def _llama4_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/llama4/modeling_llama4.py (Llama4TextModel): layers in moe_layers (default every
    interleave_moe_layer_step-th) hold a router (no bias), experts (gate_up hidden → 2·inner, down)
    and a shared expert; the others a dense MLP of intermediate_size_mlp. The q/k L2 norm has no
    weights."""
    bias = k.flag("attention_bias")
    experts = k.size("num_local_experts")
    inner = k.size("intermediate_size")
    expert = _gated_mlp(d.hidden, inner)
    moe = _Moe(experts, _per_token(k, experts), expert, d.hidden * experts + expert)
    if k.present("moe_layers"):
        sparse = k.layer_set("moe_layers", d.layers)
    else:
        step = k.size("interleave_moe_layer_step", limit=MAX_LAYERS)
        sparse = frozenset(range(step - 1, d.layers, step))
    dense = _gated_mlp(d.hidden, k.size("intermediate_size_mlp"))
    mlps = tuple(moe if i in sparse else dense for i in range(d.layers))
    return _Body(mixers=(_gqa(d, qkv_bias=bias, o_bias=bias),) * d.layers, mlps=mlps)


def _deepseek_mlps(k: _Keys, d: _Dims, *, router_bias: bool, freq_key: str | None) -> tuple[int | _Moe, ...]:
    """DeepSeek-style MoE: the first first_k_dense_replace layers dense (intermediate_size), then
    routed experts of moe_intermediate_size, one shared MLP of n_shared_experts × that width and a
    router (n_routed_experts × hidden, plus e_score_correction_bias where the router has one)."""
    experts = k.size("n_routed_experts")
    moe_inner = k.size("moe_intermediate_size")
    shared = d.hidden * experts + (experts if router_bias else 0)
    n_shared = k.size("n_shared_experts", zero_ok=True, limit=MAX_LAYERS)
    if n_shared:
        shared += _gated_mlp(d.hidden, moe_inner * n_shared)
    moe = _Moe(
        experts,
        _per_token(k, experts),
        _gated_mlp(d.hidden, moe_inner),
        shared,
        moe_inner,
        moe_inner * n_shared,
    )
    dense = _gated_mlp(d.hidden, k.size("intermediate_size"))
    first_dense = k.size("first_k_dense_replace", zero_ok=True, limit=MAX_LAYERS)
    freq = k.size(freq_key, limit=MAX_LAYERS) if freq_key else 1
    return tuple(moe if i >= first_dense and i % freq == 0 else dense for i in range(d.layers))


def _mla_body(router_bias: bool) -> BodyFn:
    """models/deepseek_v2/modeling_deepseek_v2.py and models/deepseek_v3/modular_deepseek_v3.py.

    Attention: q_proj (hidden → heads·qk_head_dim) when q_lora_rank is null, else q_a_proj
    (hidden → q_lora_rank, bias = attention_bias), q_a_layernorm and q_b_proj; kv_a_proj_with_mqa
    (hidden → kv_lora_rank + qk_rope_head_dim, bias = attention_bias), kv_a_layernorm, kv_b_proj
    (kv_lora_rank → heads·(qk_nope_head_dim + v_head_dim)), o_proj (heads·v_head_dim → hidden, bias =
    attention_bias). MoE layers follow first_k_dense_replace and moe_layer_freq (DeepseekV2 rule); the
    V3 router adds e_score_correction_bias.
    """

    def body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
        mla = _mla_dims(k)
        bias = k.flag("attention_bias")
        qk_head = mla.qk_nope + mla.qk_rope
        if mla.q_lora_rank is None:
            q = d.hidden * d.heads * qk_head
        else:
            q = d.hidden * mla.q_lora_rank + (mla.q_lora_rank if bias else 0)
            q += mla.q_lora_rank + mla.q_lora_rank * d.heads * qk_head
        kv = d.hidden * (mla.kv_lora_rank + mla.qk_rope) + ((mla.kv_lora_rank + mla.qk_rope) if bias else 0)
        kv += mla.kv_lora_rank + mla.kv_lora_rank * d.heads * (mla.qk_nope + mla.v_head_dim)
        o = d.heads * mla.v_head_dim * d.hidden + (d.hidden if bias else 0)
        mlps = _deepseek_mlps(k, d, router_bias=router_bias, freq_key="moe_layer_freq")
        indexer, index_cache = _dsa_indexer(k, d, mla)
        own = _own_indexers(k, d.layers) if index_cache else (False,) * d.layers
        mixers = tuple(q + kv + o + (indexer if has else 0) for has in own)
        latent = mla.kv_lora_rank + mla.qk_rope
        cached = tuple(latent + (index_cache if has else 0) for has in own) if index_cache else ()
        return _Body(mixers=mixers, mlps=mlps, mla=mla, kv_elements=cached)

    return body


def _dsa_indexer(k: _Keys, d: _Dims, mla: _Mla) -> tuple[int, int]:
    """DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2, GLM-5), when the config has
    ``index_head_dim``: its parameters per layer and the elements it caches per token.

    deepseek-ai/DeepSeek-V3.2-Exp inference/model.py (class Indexer): wq_b (q_lora_rank →
    index_n_heads·index_head_dim), wk (hidden → index_head_dim), k_norm (a LayerNorm of index_head_dim,
    weight and bias), weights_proj (hidden → index_n_heads); its cache keeps one key of index_head_dim
    per token per layer beside the MLA latent.
    """
    if not k.present("index_head_dim"):
        return 0, 0
    head = k.size("index_head_dim")
    heads = k.size("index_n_heads")
    q_in = mla.q_lora_rank if mla.q_lora_rank is not None else d.hidden
    k.assume(f"index_head_dim {head}: a DeepSeek Sparse Attention indexer in each MLA layer, keys cached")
    if k.present("index_kpool"):
        k.assume(
            "index_kpool: pooled index keys not modelled; one index key per token counted (an upper bound)"
        )
    return q_in * heads * head + d.hidden * head + 2 * head + d.hidden * heads, head


def _own_indexers(k: _Keys, layers: int) -> tuple[bool, ...]:
    """Which layers have an indexer of their own: all, unless ``indexer_types`` marks some "shared"
    (GLM-5.2: those reuse an earlier layer's indexer, its weights and its cached keys)."""
    listed = k.config.get("indexer_types")
    if listed is None:
        return (True,) * layers
    if (
        not isinstance(listed, list)
        or len(listed) != layers
        or any(t not in ("full", "shared") for t in listed)
    ):
        k.fail("indexer_types", f"must list 'full' or 'shared' for each of the {layers} layers")
    k.assume(
        "indexer_types: 'shared' layers reuse an earlier layer's indexer (no weights, no keys of their own)"
    )
    return tuple(t == "full" for t in listed)


def _mla_dims(k: _Keys) -> _Mla:
    q_lora = k.optional_size("q_lora_rank")
    if q_lora is None:
        k.assume("q_lora_rank")
    return _Mla(
        q_lora_rank=q_lora,
        kv_lora_rank=k.size("kv_lora_rank"),
        qk_nope=k.size("qk_nope_head_dim"),
        qk_rope=k.size("qk_rope_head_dim", zero_ok=True),
        v_head_dim=k.size("v_head_dim"),
    )


def _glm4_moe_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/glm4_moe/modeling_glm4_moe.py: q/k/v bias = attention_bias, o_proj without; q/k
    RMSNorm(head_dim) when use_qk_norm; DeepSeek-V3's router (with e_score_correction_bias) and
    shared experts; layers below first_k_dense_replace dense."""
    attn = _gqa(d, qkv_bias=k.flag("attention_bias"), qk_norm="head" if k.flag("use_qk_norm") else "none")
    mlps = _deepseek_mlps(k, d, router_bias=True, freq_key=None)
    return _Body(mixers=(attn,) * d.layers, mlps=mlps)


# -- pre-LLaMA decoders: LayerNorm with a bias, a two-matrix MLP, biases on the projections ----------


def _plain_mlp(hidden: int, inner: int, bias: bool) -> int:
    """fc1/dense_h_to_4h (hidden→inner) and fc2/dense_4h_to_h (inner→hidden), no gate."""
    return 2 * hidden * inner + (inner + hidden if bias else 0)


def _inner(k: _Keys, d: _Dims, key: str = "intermediate_size") -> int:
    """The MLP width: the config's key, else 4 × hidden as the family's modeling file builds it."""
    if k.present(key):
        return k.size(key)
    k.assume(f"{key}: 4 × hidden_size")
    return 4 * d.hidden


def _biased_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/phi/modeling_phi.py, models/gpt_neox/modeling_gpt_neox.py, models/bloom/modeling_bloom.py:
    q/k/v (fused or not) and the output projection with biases, a biased two-matrix MLP."""
    mixer = _gqa(d, qkv_bias=True, o_bias=True)
    mlp = _plain_mlp(d.hidden, _inner(k, d), bias=True)
    return _Body(mixers=(mixer,) * d.layers, mlps=(mlp,) * d.layers)


def _phi_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/phi/modeling_phi.py: one LayerNorm feeds attention and MLP in parallel; lm_head has a bias."""
    return replace(_biased_body(k, d, kinds), head_bias=d.vocab)


def _bloom_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/bloom/modeling_bloom.py: ALiBi (no rotary weights), word_embeddings_layernorm (weight, bias)."""
    return replace(_biased_body(k, d, kinds), extra_embed=2 * d.hidden)


def _falcon_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/falcon/modeling_falcon.py: query_key_value of heads + 2 × kv heads (the new decoder
    architecture's grouped KV; one KV head with multi_query), dense, dense_h_to_4h/dense_4h_to_h, biases as
    ``bias`` says; the new architecture's second LayerNorm (ln_attn and ln_mlp) beside the one counted."""
    bias = k.flag("bias")
    new = k.flag("new_decoder_architecture")
    kv = d.kv_heads if new else (1 if k.flag("multi_query") else d.heads)
    mixer = _gqa(replace(d, kv_heads=kv), qkv_bias=bias, o_bias=bias)
    if new and k.size("num_ln_in_parallel_attn") == 2:
        mixer += 2 * d.hidden
    mlp = _plain_mlp(d.hidden, _inner(k, d, "ffn_hidden_size"), bias=bias)
    return _Body(mixers=(mixer,) * d.layers, mlps=(mlp,) * d.layers)
