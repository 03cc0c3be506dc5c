"""What every family's count reads and shares: the bounds, :class:`_Keys` (a config's keys with the
family's defaults, each assumed one recorded), and the dimensions, MoE, MLA and body records."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, NoReturn

from rigcheck.core.errors import InputError
from rigcheck.core.models.spec import LayerKind, LinearMixer

MAX_LAYERS: Final = 10_000
#: no published model comes near 1e13 parameters; a config past it is a typo or an attack
MAX_PARAMS: Final = 10**13
#: any one dimension (hidden size, vocabulary, experts, ...)
MAX_SIZE: Final = 2**31 - 1

QkNorm = Literal["none", "head", "width"]


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
    #: routed experts' intermediate width, the shared experts' total gated width, and whether a 1-wide
    #: shared_expert_gate sits beside them (for LoRA's wrapped modules; 0 / False: not known or none)
    width: int = 0
    shared_width: int = 0
    shared_gate: bool = False

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
    #: the linear layers' Gated DeltaNet widths (ArchConfig.linear_mixer)
    linear_mixer: LinearMixer | None = None
    mla: _Mla | None = None
    #: full-attention q_proj doubled for a per-head output gate (ArchConfig.attn_output_gate)
    q_gate: bool = False
    #: cached elements per token per layer where layers differ (ArchConfig.layer_kv_elements)
    kv_elements: tuple[int, ...] = ()
    #: parameters of embedding tables beside the token embedding (Gemma 4's per-layer embeddings)
    extra_embed: int = 0
    #: a layer's kernels as a plain transformer layer's multiple (ArchConfig.layer_kernels)
    layer_kernels: float = 1.0


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


Kinds = tuple[LayerKind, ...]
#: counts one family's layers, given the config, its dimensions and its layer kinds
BodyFn = Callable[[_Keys, _Dims, Kinds], _Body]


_EXPERT_KEYS: Final = ("num_local_experts", "num_experts", "n_routed_experts")
