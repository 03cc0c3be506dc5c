"""A ``config.json`` (as the Hugging Face hub publishes it) turned into an :class:`ArchConfig`.

Parameter counts are exact integers, layer by layer, and reproduce what the transformers modeling
code instantiates: every ``nn.Linear`` weight and bias, every norm weight (and LayerNorm bias), the
attention sinks, router weights and biases, and the persistent router buffers that checkpoints carry
(``e_score_correction_bias``). Each family below names the transformers file it follows
(``huggingface/transformers``, ``src/transformers/models/<family>/``); ``modular_*.py`` where the
family is written as one, which generates ``modeling_*.py``.

Keys a published config leaves out take the value of that family's config class
(``configuration_*.py``), and every such key is listed in :attr:`ArchConfig.assumed`. Two keys differ:
a missing ``sliding_window`` means no window (the catalog leaves ``null`` values out, and the hub
configs that use a window all write it), and a missing ``q_lora_rank`` in an MLA config means no query
compression, as in DeepSeek-V2-Lite (``null`` there).

Not counted, though a checkpoint's safetensors total includes them: multi-token-prediction modules
the transformers model does not load (DeepSeek-V3 ``model.layers.61``, GLM-4.5 ``model.layers.46``,
Qwen3-Next ``mtp.*``: ``_keys_to_ignore_on_load_unexpected``), the F32 block scales of FP8 weights
(quantization metadata), and the vision tower of a multimodal checkpoint (this module reads its
``text_config``).

Bad input raises :class:`InputError` with a one-line problem that names the key. Work is bounded:
at most :data:`MAX_LAYERS` layers, no size above :data:`MAX_SIZE`, no total above :data:`MAX_PARAMS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal, NoReturn

from rigcheck.core.errors import InputError
from rigcheck.core.models.spec import ArchConfig, LayerKind
from rigcheck.core.models.towers import with_outside

MAX_LAYERS: Final = 10_000
#: no published model comes near 1e13 parameters; a config past it is a typo or an attack
MAX_PARAMS: Final = 10**13
#: any one dimension (hidden size, vocabulary, experts, ...)
MAX_SIZE: Final = 2**31 - 1

QkNorm = Literal["none", "head", "width"]

# -- reading keys ----------------------------------------------------------------------------------


class _Keys:
    """Typed, bounded look-ups in one config; defaults come from the family's config class."""

    def __init__(
        self, config: Mapping[str, Any], source: str, defaults: Mapping[str, Any], prefix: str = ""
    ) -> None:
        self.config = config
        self.source = source
        self.defaults = defaults
        #: names a nested object's keys in errors and notes ("linear_attn_config.num_heads")
        self.prefix = prefix
        self.assumed: list[str] = []

    def fail(self, key: str, problem: str) -> NoReturn:
        raise InputError(self.source, f"{self.prefix}{key}: {problem}")

    def assume(self, note: str) -> None:
        note = f"{self.prefix}{note}" if self.prefix and note in self.defaults else note
        if note not in self.assumed:
            self.assumed.append(note)

    def present(self, key: str) -> bool:
        return self.config.get(key) is not None

    def size(self, key: str, *, zero_ok: bool = False, limit: int = MAX_SIZE) -> int:
        """A whole number above 0 (or at least 0); the family default when absent or null."""
        value = self.config.get(key)
        if value is None:
            if key not in self.defaults:
                self.fail(key, "required for this model type, a whole number above 0")
            self.assume(key)
            value = self.defaults[key]
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, f"must be a whole number, got {_show(value)}")
        if value < (0 if zero_ok else 1):
            self.fail(key, f"must be {'0 or more' if zero_ok else 'above 0'}, got {_show(value)}")
        if value > limit:
            self.fail(key, f"{_show(value)} is absurdly large (over {limit:,})")
        return value

    def optional_size(self, key: str) -> int | None:
        """A whole number above 0, or None when absent or null (no default applies)."""
        return None if self.config.get(key) is None else self.size(key)

    def flag(self, key: str) -> bool:
        value = self.config.get(key)
        if value is None:
            if key not in self.defaults:
                self.fail(key, "required for this model type, true or false")
            self.assume(key)
            value = self.defaults[key]
        if not isinstance(value, bool):
            self.fail(key, f"must be true or false, got {_show(value)}")
        return value

    def layer_set(self, key: str, layers: int) -> frozenset[int]:
        """A list of layer indices (``mlp_only_layers``, ``moe_layers``); absent or null: empty."""
        value = self.config.get(key)
        if value is None:
            return frozenset()
        if not isinstance(value, list) or len(value) > layers:
            self.fail(key, f"must be a list of at most {layers} layer indices")
        for item in value:
            if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item < layers:
                self.fail(key, f"{_show(item)} is not a layer index below {layers}")
        return frozenset(value)


def _show(value: object) -> str:
    """A short, safe rendering of a bad value: never a huge repr, never a 5,000-digit number."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)}"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"a {value.bit_length()}-bit number"
    text = repr(value[:50] if isinstance(value, str) else value)
    return text if len(text) <= 40 else text[:37] + "..."


# -- what every family shares ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Dims:
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int


@dataclass(frozen=True)
class _Moe:
    """A layer's mixture of experts: ``shared`` is what every token touches (router, shared experts)."""

    experts: int
    per_token: int
    expert: int
    shared: int

    @property
    def total(self) -> int:
        return self.shared + self.experts * self.expert

    @property
    def active(self) -> int:
        return self.shared + self.per_token * self.expert


@dataclass(frozen=True)
class _Mla:
    """Multi-head latent attention dimensions (DeepSeek-V2/V3)."""

    q_lora_rank: int | None
    kv_lora_rank: int
    qk_nope: int
    qk_rope: int
    v_head_dim: int


@dataclass(frozen=True)
class _Body:
    """Per layer: the token mixer's parameters and the MLP (a dense count or a mixture of experts)."""

    mixers: tuple[int, ...]
    mlps: tuple[int | _Moe, ...]
    head_bias: int = 0
    linear_state: int | None = None
    mla: _Mla | None = None
    #: cached elements per token per layer where layers differ (ArchConfig.layer_kv_elements)
    kv_elements: tuple[int, ...] = ()
    #: parameters of embedding tables beside the token embedding (Gemma 4's per-layer embeddings)
    extra_embed: int = 0


def _gated_mlp(hidden: int, inner: int, bias: bool = False) -> int:
    """gate_proj, up_proj (hidden→inner) and down_proj (inner→hidden); fused gate_up is the same count."""
    return 3 * hidden * inner + (2 * inner + hidden if bias else 0)


def _gqa(
    d: _Dims,
    *,
    qkv_bias: bool = False,
    o_bias: bool = False,
    qk_norm: QkNorm = "none",
    q_gate: bool = False,
    sinks: bool = False,
) -> int:
    """q/k/v/o projections of grouped-query attention (Phi-3's fused qkv_proj counts the same).

    ``qk_norm``: "head" is an RMSNorm of head_dim on q and on k (Qwen3, Gemma 3), "width" one over the
    whole q and k projections (OLMo 2). ``q_gate`` doubles q_proj for an output gate (Qwen3-Next);
    ``sinks`` adds one learned logit per head (gpt-oss).
    """
    q_out = d.heads * d.head_dim * (2 if q_gate else 1)
    kv_out = d.kv_heads * d.head_dim
    params = d.hidden * (q_out + 2 * kv_out) + d.heads * d.head_dim * d.hidden
    if qkv_bias:
        params += q_out + 2 * kv_out
    if o_bias:
        params += d.hidden
    if qk_norm == "head":
        params += 2 * d.head_dim
    elif qk_norm == "width":
        params += (d.heads + d.kv_heads) * d.head_dim
    if sinks:
        params += d.heads
    return params


#: the keys configs use for the experts each token is routed to, in the order they are tried
_PER_TOKEN_KEYS: Final = (
    "num_experts_per_tok",
    "num_experts_per_token",
    "experts_per_token",
    "top_k_experts",
    "moe_top_k",
)


def _per_token(k: _Keys, experts: int) -> int:
    key = next((key for key in _PER_TOKEN_KEYS if k.present(key)), "num_experts_per_tok")
    per_token = k.size(key)
    if per_token > experts:
        k.fail(key, f"{per_token} experts per token, but only {experts} experts")
    return per_token


# -- families: one body per transformers modeling file ---------------------------------------------

Kinds = tuple[LayerKind, ...]
#: counts one family's layers, given the config, its dimensions and its layer kinds
BodyFn = Callable[[_Keys, _Dims, Kinds], _Body]


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
    if shared_expert:
        shared += _gated_mlp(d.hidden, k.size("shared_expert_intermediate_size")) + d.hidden
    moe = _Moe(experts, _per_token(k, experts), _gated_mlp(d.hidden, k.size("moe_intermediate_size")), shared)
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


def _gated_deltanet(k: _Keys, d: _Dims, kinds: Kinds) -> tuple[tuple[int, ...], int | None]:
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
    repeated to v_heads before the delta rule).
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
    return mixers, state if "linear" in kinds else None


def _qwen3_next_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/qwen3_next/modular_qwen3_next.py: the hybrid token mixers (:func:`_gated_deltanet`) and
    Qwen2-MoE's experts with a shared expert and its gate."""
    mixers, state = _gated_deltanet(k, d, kinds)
    return _Body(mixers=mixers, mlps=_qwen_moe_mlps(k, d, shared_expert=True), linear_state=state)


def _qwen3_5_body(k: _Keys, d: _Dims, kinds: Kinds) -> _Body:
    """models/qwen3_5/modular_qwen3_5.py (Qwen3_5DecoderLayer): Qwen3-Next's hybrid token mixers
    (:func:`_gated_deltanet`) and a dense gated MLP of intermediate_size in every layer."""
    mixers, state = _gated_deltanet(k, d, kinds)
    mlp = _gated_mlp(d.hidden, k.size("intermediate_size"))
    return _Body(mixers=mixers, mlps=(mlp,) * d.layers, linear_state=state)


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
    moe = _Moe(experts, _per_token(k, experts), _gated_mlp(d.hidden, moe_inner), shared)
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


# -- the generic rule and the 2026 hybrids -----------------------------------------------------------


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
    if k.present("shared_expert_intermediate_size") and k.config["shared_expert_intermediate_size"]:
        shared += _gated_mlp(d.hidden, k.size("shared_expert_intermediate_size")) + d.hidden
        k.assume("a shared expert of shared_expert_intermediate_size with a 1-wide gate (as Qwen3-Next)")
    elif n_shared and k.present("shared_intermediate_size"):
        shared += _gated_mlp(d.hidden, k.size("shared_intermediate_size") * n_shared)
    elif n_shared:
        shared += _gated_mlp(d.hidden, inner * n_shared)
    moe = _Moe(experts, _per_token(k, experts), _gated_mlp(d.hidden, inner), shared)
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
    linear: tuple[int, ...] = ()
    if "linear" in kinds:
        linear, state = _gated_deltanet(k, d, kinds)
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
    return _Body(mixers=mixers, mlps=mlps, linear_state=state, kv_elements=cached)


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
    and Qwen3-Next's sparse MoE block (routed experts, a shared expert and its 1-wide gate) in every layer."""
    mixers, state = _gated_deltanet(k, d, kinds)
    return _Body(mixers=mixers, mlps=_qwen_moe_mlps(k, d, shared_expert=True), linear_state=state)


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
    return _Body(mixers=tuple(mixers), mlps=tuple(mlps), kv_elements=tuple(cached), extra_embed=extra)


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


# -- layer kinds -----------------------------------------------------------------------------------

_LAYER_TYPES: Final[Mapping[str, LayerKind]] = {
    "full_attention": "full",
    "sliding_attention": "sliding",
    "chunked_attention": "sliding",  # Llama 4: attention within fixed chunks, a bounded cache
    "linear_attention": "linear",
}


def _pattern(layers: int, is_full: Callable[[int], bool], other: LayerKind) -> Kinds:
    full: LayerKind = "full"
    return tuple(full if is_full(i) else other for i in range(layers))


def _uniform(kind: LayerKind, layers: int) -> Kinds:
    return (kind,) * layers


def _all_full(k: _Keys, layers: int) -> Kinds:
    return _uniform("full", layers)


def _all_mla(k: _Keys, layers: int) -> Kinds:
    return _uniform("mla", layers)


def _window_everywhere(k: _Keys, layers: int) -> Kinds:
    """Mistral, Mixtral, Phi-3: a non-null sliding_window applies to every layer."""
    return _uniform("sliding" if k.present("sliding_window") else "full", layers)


def _qwen2_windows(k: _Keys, layers: int) -> Kinds:
    """Qwen2Config.layer_types: sliding from max_window_layers on, and only when use_sliding_window."""
    if not k.flag("use_sliding_window"):
        return _uniform("full", layers)
    first = k.size("max_window_layers", zero_ok=True, limit=MAX_LAYERS)
    return _pattern(layers, lambda i: i < first, "sliding")


def _every_nth(key: str | None, nth: int, other: LayerKind) -> Callable[[_Keys, int], Kinds]:
    """Layer i is full attention when (i + 1) % n == 0, ``other`` otherwise (Gemma 2/3, gpt-oss,
    Qwen3-Next, Llama 4 defaults for layer_types)."""

    def kinds(k: _Keys, layers: int) -> Kinds:
        n = k.size(key, limit=MAX_LAYERS) if key else nth
        return _pattern(layers, lambda i: (i + 1) % n == 0, other)

    return kinds


def _llama4_kinds(k: _Keys, layers: int) -> Kinds:
    """Llama4TextConfig: chunked attention on the RoPE layers, a global NoPE layer every
    no_rope_layer_interval-th; all full when attention_chunk_size is null."""
    if not k.present("attention_chunk_size"):
        return _uniform("full", layers)
    return _every_nth("no_rope_layer_interval", 0, "sliding")(k, layers)


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


# -- the table -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Family:
    """How to count one ``model_type``: its body, its layer pattern and its config-class defaults."""

    modeling: str
    body: BodyFn
    kinds: Callable[[_Keys, int], Kinds] = _all_full
    defaults: Mapping[str, Any] = field(default_factory=dict)
    #: hidden-sized norms per layer, and whether they are LayerNorms with a bias
    layer_norms: int = 2
    norm_bias: bool = False
    mla: bool = False
    #: False where the kinds function reads layer_types itself (LFM2's "conv" layers)
    reads_layer_types: bool = True
    #: the standard key -> the family's own names for it (its config class's attribute_map)
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


_LLAMA_LIKE = {"tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False}
_QWEN2_WINDOWS = {"use_sliding_window": False, "max_window_layers": 28, "sliding_window": 4096}
_QWEN_MOE = {"decoder_sparse_step": 1}

FAMILIES: Final[Mapping[str, _Family]] = {
    "llama": _Family(
        "models/llama/modeling_llama.py",
        _dense_body(_llama_attn, mlp_bias_key="mlp_bias"),
        defaults=_LLAMA_LIKE,
    ),
    "mistral": _Family(
        "models/mistral/modeling_mistral.py",
        _dense_body(_plain_attn),
        _window_everywhere,
        {"tie_word_embeddings": False},
    ),
    # Ministral 3 (2512) text models: Mistral's layers (Ministral3Attention only rescales queries
    # by position, llama_4_scaling_beta; no extra weights), sliding_window null in the published configs
    "ministral3": _Family(
        "models/ministral3/modular_ministral3.py",
        _dense_body(_plain_attn),
        _window_everywhere,
        {"tie_word_embeddings": False, "head_dim": 128},
    ),
    "mixtral": _Family(
        "models/mixtral/modeling_mixtral.py",
        _mixtral_body,
        _window_everywhere,
        {"tie_word_embeddings": False},
    ),
    "qwen2": _Family(
        "models/qwen2/modeling_qwen2.py",
        _dense_body(_qwen2_attn),
        _qwen2_windows,
        {"tie_word_embeddings": False, **_QWEN2_WINDOWS},
    ),
    "qwen2_moe": _Family(
        "models/qwen2_moe/modeling_qwen2_moe.py",
        _qwen2_moe_body,
        _qwen2_windows,
        {"tie_word_embeddings": False, "qkv_bias": True, **_QWEN2_WINDOWS, **_QWEN_MOE},
    ),
    "qwen3": _Family(
        "models/qwen3/modeling_qwen3.py",
        _dense_body(_qwen3_attn),
        _qwen2_windows,
        {"tie_word_embeddings": False, "attention_bias": False, "head_dim": 128, **_QWEN2_WINDOWS},
    ),
    "qwen3_moe": _Family(
        "models/qwen3_moe/modeling_qwen3_moe.py",
        _qwen3_moe_body,
        _qwen2_windows,
        {"tie_word_embeddings": False, "attention_bias": False, **_QWEN2_WINDOWS, **_QWEN_MOE},
    ),
    "qwen3_next": _Family(
        "models/qwen3_next/modular_qwen3_next.py",
        _qwen3_next_body,
        _every_nth("full_attention_interval", 0, "linear"),
        {
            "tie_word_embeddings": False,
            "attention_bias": False,
            "head_dim": 256,
            "full_attention_interval": 4,
            **_QWEN_MOE,
        },
    ),
    # Qwen3_5TextConfig (models/qwen3_5/configuration_qwen3_5.py): layer_types from
    # full_attention_interval (default 4) when absent; its linear-attention defaults are the 9B's
    "qwen3_5_text": _Family(
        "models/qwen3_5/modular_qwen3_5.py",
        _qwen3_5_body,
        _every_nth("full_attention_interval", 0, "linear"),
        {
            "tie_word_embeddings": False,
            "attention_bias": False,
            "head_dim": 256,
            "full_attention_interval": 4,
            "linear_conv_kernel_dim": 4,
            "linear_key_head_dim": 128,
            "linear_value_head_dim": 128,
            "linear_num_key_heads": 16,
            "linear_num_value_heads": 32,
        },
    ),
    "gemma2": _Family(
        "models/gemma2/modeling_gemma2.py",
        _dense_body(_llama_attn),
        _every_nth(None, 2, "sliding"),
        {"tie_word_embeddings": True, "attention_bias": False, "head_dim": 256, "sliding_window": 4096},
        layer_norms=4,
    ),
    # multimodal Gemma 3 checkpoints write only what differs from Gemma3TextConfig in text_config
    "gemma3_text": _Family(
        "models/gemma3/modeling_gemma3.py",
        _dense_body(_gemma3_attn),
        _every_nth("sliding_window_pattern", 0, "sliding"),
        {
            "tie_word_embeddings": True,
            "attention_bias": False,
            "head_dim": 256,
            "vocab_size": 262208,
            "num_attention_heads": 8,
            "num_key_value_heads": 4,
            "sliding_window": 4096,
            "sliding_window_pattern": 6,
        },
        layer_norms=4,
    ),
    "phi3": _Family(
        "models/phi3/modeling_phi3.py",
        _dense_body(_plain_attn),
        _window_everywhere,
        {"tie_word_embeddings": False},
    ),
    "phimoe": _Family(
        "models/phimoe/modeling_phimoe.py",
        _phimoe_body,
        _window_everywhere,
        {"tie_word_embeddings": False, "attention_bias": False, "lm_head_bias": False},
        norm_bias=True,
    ),
    "deepseek_v2": _Family(
        "models/deepseek_v2/modeling_deepseek_v2.py",
        _mla_body(router_bias=False),
        _all_mla,
        {
            "tie_word_embeddings": False,
            "attention_bias": False,
            "moe_layer_freq": 1,
            "first_k_dense_replace": 0,
        },
        mla=True,
    ),
    "deepseek_v3": _Family(
        "models/deepseek_v3/modular_deepseek_v3.py",
        _mla_body(router_bias=True),
        _all_mla,
        {
            "tie_word_embeddings": False,
            "attention_bias": False,
            "moe_layer_freq": 1,
            "first_k_dense_replace": 3,
        },
        mla=True,
    ),
    "gpt_oss": _Family(
        "models/gpt_oss/modular_gpt_oss.py",
        _gpt_oss_body,
        _every_nth(None, 2, "sliding"),
        {"tie_word_embeddings": False, "attention_bias": True, "head_dim": 64, "sliding_window": 128},
    ),
    "llama4_text": _Family(
        "models/llama4/modeling_llama4.py",
        _llama4_body,
        _llama4_kinds,
        {
            "tie_word_embeddings": False,
            "attention_bias": False,
            "interleave_moe_layer_step": 1,
            "no_rope_layer_interval": 4,
        },
    ),
    "glm4_moe": _Family(
        "models/glm4_moe/modeling_glm4_moe.py",
        _glm4_moe_body,
        defaults={
            "tie_word_embeddings": False,
            "attention_bias": False,
            "use_qk_norm": False,
            "first_k_dense_replace": 1,
            "n_shared_experts": 1,
        },
    ),
    "olmo2": _Family(
        "models/olmo2/modeling_olmo2.py",
        _dense_body(_olmo2_attn),
        defaults={"tie_word_embeddings": False, "attention_bias": False},
    ),
    # OLMo 3 / 3.1: OLMo 2's layers (post-norms, q_norm/k_norm over the whole projection) with a
    # sliding window on three of every four layers (Olmo3Config: layer_types default, window 4096)
    "olmo3": _Family(
        "models/olmo3/modular_olmo3.py",
        _dense_body(_olmo2_attn),
        _every_nth(None, 4, "sliding"),
        {"tie_word_embeddings": False, "attention_bias": False, "sliding_window": 4096},
    ),
    # Qwen3.5 / Qwen3.6 MoE text models (text_config of qwen3_5_moe checkpoints)
    "qwen3_5_moe_text": _Family(
        "models/qwen3_5_moe/modular_qwen3_5_moe.py",
        _qwen3_5_moe_body,
        _every_nth("full_attention_interval", 0, "linear"),
        {
            "tie_word_embeddings": False,
            "attention_bias": False,
            "head_dim": 256,
            "full_attention_interval": 4,
            **_QWEN_MOE,
        },
    ),
    "gemma4_text": _Family(
        "models/gemma4/modeling_gemma4.py",
        _gemma4_body,
        _every_nth("sliding_window_pattern", 0, "sliding"),
        {
            "tie_word_embeddings": True,
            "attention_bias": False,
            "attention_k_eq_v": False,
            "use_double_wide_mlp": False,
            "num_kv_shared_layers": 0,
            "hidden_size_per_layer_input": 0,
        },
        layer_norms=4,
    ),
    "deepseek_v4": _Family(
        "deepseek-ai/DeepSeek-V4 reference model (public ports of its inference/model.py)",
        _deepseek_v4_body,
        defaults={"tie_word_embeddings": False, "n_shared_experts": 1},
    ),
    "kimi_linear": _Family(
        "vllm-project/vllm vllm/model_executor/models/kimi_linear.py and layers/kda.py",
        _kimi_linear_body,
        _kimi_kinds,
        {
            "tie_word_embeddings": False,
            "first_k_dense_replace": 0,
            "moe_layer_freq": 1,
            "num_shared_experts": 0,
            "mla_use_output_gate": False,
        },
        mla=True,
    ),
    "lfm2": _Family(
        "models/lfm2/modular_lfm2.py",
        _lfm2_body,
        _lfm2_kinds,
        {
            "tie_word_embeddings": True,
            "conv_bias": False,
            "conv_L_cache": 3,
            "block_multiple_of": 256,
            "block_auto_adjust_ff_dim": True,
        },
        reads_layer_types=False,
    ),
    "lfm2_moe": _Family(
        "models/lfm2_moe/modular_lfm2_moe.py",
        _lfm2_moe_body,
        _lfm2_kinds,
        {
            "tie_word_embeddings": True,
            "conv_bias": False,
            "conv_L_cache": 3,
            "use_expert_bias": True,
            "num_dense_layers": 2,
        },
        reads_layer_types=False,
    ),
    "phi": _Family(
        "models/phi/modeling_phi.py",
        _phi_body,
        defaults={"tie_word_embeddings": False},
        layer_norms=1,
        norm_bias=True,
    ),
    "gpt_neox": _Family(
        "models/gpt_neox/modeling_gpt_neox.py",
        _biased_body,
        defaults={"tie_word_embeddings": False},
        norm_bias=True,
    ),
    "bloom": _Family(
        "models/bloom/modeling_bloom.py",
        _bloom_body,
        defaults={"tie_word_embeddings": True},
        norm_bias=True,
        aliases={
            "hidden_size": ("n_embed",),
            "num_hidden_layers": ("n_layer",),
            "num_attention_heads": ("n_head",),
        },
    ),
    "falcon": _Family(
        "models/falcon/modeling_falcon.py",
        _falcon_body,
        defaults={
            "tie_word_embeddings": True,
            "bias": False,
            "new_decoder_architecture": False,
            "multi_query": True,
            "num_ln_in_parallel_attn": 2,
        },
        layer_norms=1,
        norm_bias=True,
        aliases={
            "num_hidden_layers": ("n_layer",),
            "num_attention_heads": ("n_head",),
            "num_key_value_heads": ("num_kv_heads", "n_head_kv"),
        },
    ),
    "nemotron_h": _Family(
        "models/nemotron_h/modeling_nemotron_h.py",
        _nemotron_h_body,
        _nemotron_kinds,
        {
            "tie_word_embeddings": False,
            "attention_bias": False,
            "use_bias": False,
            "use_conv_bias": True,
            "mlp_bias": False,
        },
        layer_norms=1,
    ),
}

#: the generic rule, for a model_type with no family above (:func:`_generic_body`)
GENERIC: Final = _Family(
    "the generic rule (docs/architectures.md)",
    _generic_body,
    _generic_kinds,
    defaults={"tie_word_embeddings": False, "attention_bias": False},
)

#: a multimodal wrapper's text model type, when its text_config does not name one
_TEXT_TYPES: Final[Mapping[str, str]] = {
    "gemma3": "gemma3_text",
    "llama4": "llama4_text",
    "mistral3": "mistral",
    "qwen3_5": "qwen3_5_text",
    "qwen3_5_moe": "qwen3_5_moe_text",
    "gemma4": "gemma4_text",
}
#: model types written before transformers named the family (Falcon's remote-code configs)
_OLD_TYPES: Final[Mapping[str, str]] = {"RefinedWeb": "falcon", "RefinedWebModel": "falcon"}
#: what an unknown model_type needs to be counted as a llama-style decoder
_GENERIC_KEYS: Final = ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size")
_MLA_KEYS: Final = ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "n_routed_experts")
_EXPERT_KEYS: Final = ("num_local_experts", "num_experts", "n_routed_experts")


# -- the entry point -------------------------------------------------------------------------------


def parse_config(config: Mapping[str, Any], source: str) -> ArchConfig:
    """The architecture and exact parameter counts a ``config.json`` describes.

    ``source`` names where the config came from (a path, ``hf:org/name``, ``catalog:<id>``); it
    starts every :class:`InputError` message.
    """
    if not isinstance(config, Mapping):
        raise InputError(source, f"config: must be a JSON object, got {type(config).__name__}")
    outer = config
    config, notes = _text_model(config, source)
    model_type, family, note = _family(config, source)
    notes += note
    config = _aliased(config, family.aliases)
    k = _Keys(config, source, family.defaults)
    d = _dims(k, family)
    kinds = _layer_kinds(k, family, d.layers)
    max_ctx = k.optional_size("max_position_embeddings")
    window = _window(k, kinds)
    if window is not None and max_ctx is not None and window >= max_ctx:
        kinds = tuple("full" if kind == "sliding" else kind for kind in kinds)  # a window that never binds
        window = None
    body = family.body(k, d, kinds)
    tied = k.flag("tie_word_embeddings")
    norm = d.hidden * (2 if family.norm_bias else 1)
    layer_norms = family.layer_norms * norm
    layer_params = tuple(
        mixer + layer_norms + _total(mlp) for mixer, mlp in zip(body.mixers, body.mlps, strict=True)
    )
    layer_active = tuple(
        mixer + layer_norms + _active(mlp) for mixer, mlp in zip(body.mixers, body.mlps, strict=True)
    )
    embed = d.vocab * d.hidden + body.extra_embed
    head = norm + (0 if tied else d.vocab * d.hidden) + body.head_bias
    total = embed + sum(layer_params) + head
    if total > MAX_PARAMS:
        k.fail(
            "hidden_size", f"these sizes give {total:.3g} parameters, over {MAX_PARAMS:.0e}: not a real model"
        )
    moes = [mlp for mlp in body.mlps if isinstance(mlp, _Moe)]
    first = moes[0] if moes else None
    mla = body.mla
    arch = ArchConfig(
        model_type=model_type,
        hidden_size=d.hidden,
        num_layers=d.layers,
        num_heads=d.heads,
        num_kv_heads=d.kv_heads,
        head_dim=(mla.qk_nope + mla.qk_rope) if mla else d.head_dim,
        vocab_size=d.vocab,
        layer_kinds=kinds,
        tie_word_embeddings=tied,
        intermediate_size=k.optional_size("intermediate_size"),
        max_context=max_ctx,
        sliding_window=window,
        v_head_dim=mla.v_head_dim if mla else None,
        kv_lora_rank=mla.kv_lora_rank if mla else None,
        qk_rope_head_dim=mla.qk_rope if mla else None,
        linear_state_elements=body.linear_state,
        layer_kv_elements=body.kv_elements,
        num_experts=first.experts if first else None,
        experts_per_token=first.per_token if first else None,
        moe_layers=tuple(isinstance(mlp, _Moe) for mlp in body.mlps),
        embed_params=embed,
        head_params=head,
        layer_params=layer_params,
        layer_active_params=layer_active,
        expert_params=first.expert if first else 0,
        assumed=(*notes, *k.assumed),
    )
    return with_outside(arch, outer, config, source)  # towers and MTP layers, counted apart


def _aliased(config: Mapping[str, Any], aliases: Mapping[str, tuple[str, ...]]) -> Mapping[str, Any]:
    """The config with each standard key filled from the family's own name for it, where only that is set."""
    if not aliases:
        return config
    merged = dict(config)
    for key, names in aliases.items():
        if merged.get(key) is None:
            found = next((name for name in names if merged.get(name) is not None), None)
            if found is not None:
                merged[key] = merged[found]
    return merged


def _total(mlp: int | _Moe) -> int:
    return mlp.total if isinstance(mlp, _Moe) else mlp


def _active(mlp: int | _Moe) -> int:
    return mlp.active if isinstance(mlp, _Moe) else mlp


def _text_model(config: Mapping[str, Any], source: str) -> tuple[Mapping[str, Any], tuple[str, ...]]:
    """A multimodal checkpoint's text model: its text_config, with the wrapper's vocabulary and
    embedding tying where the text_config leaves them out."""
    text = config.get("text_config")
    if text is None:
        return config, ()
    if not isinstance(text, Mapping):
        raise InputError(source, f"text_config: must be a JSON object, got {_show(text)}")
    outer = config.get("model_type")
    merged = dict(text)
    for key in ("tie_word_embeddings", "vocab_size"):
        if merged.get(key) is None and config.get(key) is not None:
            merged[key] = config[key]
    if merged.get("model_type") is None and isinstance(outer, str) and outer in _TEXT_TYPES:
        merged["model_type"] = _TEXT_TYPES[outer]
    elif merged.get("model_type") is None and isinstance(outer, str) and outer:
        merged["model_type"] = f"{outer[:60]}_text"  # named for the notes; the generic rule counts it
    inner = merged.get("model_type")
    note = (
        f"text_config: the text model ({inner}) of a multimodal {outer} checkpoint; "
        "towers, if any, counted apart"
    )
    return merged, (note,)


def _family(config: Mapping[str, Any], source: str) -> tuple[str, _Family, tuple[str, ...]]:
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise InputError(source, f"model_type: required, a string such as 'llama', got {_show(model_type)}")
    if model_type in FAMILIES:
        return model_type, FAMILIES[model_type], ()
    if model_type in _OLD_TYPES:
        named = _OLD_TYPES[model_type]
        return named, FAMILIES[named], (f"model_type {model_type}: the {named} family's older name",)
    shown = _show(model_type)
    if config.get("linear_attn_config") is not None:  # Kimi Delta Attention layers
        note = f"model_type {shown}: counted as kimi_linear (it has linear_attn_config)"
        return model_type, FAMILIES["kimi_linear"], (note,)
    if all(config.get(key) is not None for key in _MLA_KEYS):
        return (
            model_type,
            FAMILIES["deepseek_v3"],
            (f"model_type {shown}: counted as deepseek_v3 (it has MLA keys)",),
        )
    if config.get("o_lora_rank") is not None and config.get("compress_ratios") is not None:
        note = f"model_type {shown}: counted as deepseek_v4 (it has o_lora_rank and compress_ratios)"
        return model_type, FAMILIES["deepseek_v4"], (note,)
    if config.get("global_head_dim") is not None:  # Gemma 4's global layers (gemma4_unified_text)
        note = f"model_type {shown}: counted as gemma4_text (it has global_head_dim)"
        return model_type, FAMILIES["gemma4_text"], (note,)
    if config.get("hybrid_override_pattern") is not None or config.get("layers_block_type") is not None:
        note = f"model_type {shown}: counted as nemotron_h (it has a hybrid_override_pattern)"
        return model_type, FAMILIES["nemotron_h"], (note,)
    moe = any(isinstance(config.get(key), int) and config[key] > 1 for key in _EXPERT_KEYS)
    linear = isinstance(config.get("layer_types"), list) and "linear_attention" in config["layer_types"]
    experts_sized = moe and config.get("moe_intermediate_size") is not None
    needed = _GENERIC_KEYS if experts_sized else (*_GENERIC_KEYS, "intermediate_size")
    missing = [key for key in needed if config.get(key) is None]
    if missing:
        raise InputError(
            source,
            f"model_type: {shown} is not a known architecture, and without {missing[0]} it cannot be "
            "counted by the generic rule",
        )
    if moe or linear:
        parts = ("a mixture of experts" if moe else "", "Gated DeltaNet linear layers" if linear else "")
        what = " with ".join(p for p in ("attention", *parts) if p)
        return model_type, GENERIC, (f"model_type {shown}: counted by the generic rule ({what})",)
    return model_type, FAMILIES["llama"], (f"model_type {shown}: counted as a llama-style decoder",)


def _dims(k: _Keys, family: _Family) -> _Dims:
    hidden = k.size("hidden_size")
    blocks = k.config.get("layers_block_type", k.config.get("hybrid_override_pattern"))
    if (
        not k.present("num_hidden_layers")
        and isinstance(blocks, list | str)
        and 0 < len(blocks) <= MAX_LAYERS
    ):
        k.assume("num_hidden_layers: the length of the config's block list")
        layers = len(blocks)
    else:
        layers = k.size("num_hidden_layers", limit=MAX_LAYERS)
    heads = k.size("num_attention_heads")
    vocab = k.size("vocab_size")
    if k.present("num_key_value_heads") or "num_key_value_heads" in k.defaults:
        kv_heads = k.size("num_key_value_heads")
    else:
        k.assume("num_key_value_heads")
        kv_heads = heads
    if heads % kv_heads:
        k.fail("num_key_value_heads", f"{kv_heads} does not divide num_attention_heads {heads}")
    if family.mla:
        head_dim = 0  # MLA layers use the qk/v head dims of their own keys
    elif k.present("head_dim") or "head_dim" in k.defaults:
        head_dim = k.size("head_dim")
    else:
        if hidden % heads:
            k.fail(
                "head_dim",
                f"absent, and hidden_size {hidden} is not a multiple of num_attention_heads {heads}",
            )
        k.assume("head_dim")
        head_dim = hidden // heads
    return _Dims(hidden=hidden, layers=layers, heads=heads, kv_heads=kv_heads, head_dim=head_dim, vocab=vocab)


def _layer_kinds(k: _Keys, family: _Family, layers: int) -> Kinds:
    """``layer_types`` when the config lists them, else the family's pattern."""
    listed = k.config.get("layer_types")
    if listed is None or family.mla or not family.reads_layer_types:
        return family.kinds(k, layers)
    if not isinstance(listed, list) or len(listed) != layers:
        k.fail("layer_types", f"must list one type for each of the {layers} layers")
    kinds: list[LayerKind] = []
    for item in listed:
        if not isinstance(item, str) or item not in _LAYER_TYPES:
            k.fail("layer_types", f"{_show(item)} is not one of {', '.join(_LAYER_TYPES)}")
        kinds.append(_LAYER_TYPES[item])
    return tuple(kinds)


def _window(k: _Keys, kinds: Kinds) -> int | None:
    if "sliding" not in kinds:
        return None
    if k.present("sliding_window") or "sliding_window" in k.defaults:
        return k.size("sliding_window")
    if k.present("attention_chunk_size"):
        return k.size("attention_chunk_size")
    return k.fail("sliding_window", "required: the config has sliding-window layers but no window size")
