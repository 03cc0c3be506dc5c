"""The table: every model_type with the transformers file it follows, its body, its layer kinds and
its config class's defaults."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from rigcheck.core.models.config import kernels
from rigcheck.core.models.config.families import (
    _biased_body,
    _bloom_body,
    _dense_body,
    _falcon_body,
    _gemma3_attn,
    _glm4_moe_body,
    _gpt_oss_body,
    _llama4_body,
    _llama_attn,
    _mixtral_body,
    _mla_body,
    _olmo2_attn,
    _phi_body,
    _phimoe_body,
    _plain_attn,
    _qwen2_attn,
    _qwen2_moe_body,
    _qwen3_5_body,
    _qwen3_attn,
    _qwen3_moe_body,
    _qwen3_next_body,
    _qwen_body,
)
from rigcheck.core.models.config.gemma3n import _gemma3n_body
from rigcheck.core.models.config.generic import _generic_body, _generic_kinds, _qwen3_5_moe_body
from rigcheck.core.models.config.hybrids import (
    _deepseek_v4_body,
    _gemma4_body,
    _kimi_kinds,
    _kimi_linear_body,
    _lfm2_body,
    _lfm2_kinds,
    _lfm2_moe_body,
    _nemotron_h_body,
    _nemotron_kinds,
)
from rigcheck.core.models.config.layer_kinds import (
    _all_full,
    _all_mla,
    _every_nth,
    _llama4_kinds,
    _qwen2_windows,
    _window_everywhere,
)
from rigcheck.core.models.config.shared import BodyFn, Kinds, _Keys


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
    #: the config's intermediate_size is twice each MLP projection's width (Qwen-1's remote code,
    #: QWenMLP: ``ff_dim_in = config.intermediate_size // 2`` for w1, w2 and c_proj)
    halves_intermediate: bool = False
    #: kernels its layer launches in llama.cpp's graph beyond a plain layer's (models/config/kernels.py);
    #: a body that counts its own layers (Gemma 3n, Gemma 4) sets _Body.layer_kernels instead
    extra_kernels: int = 0


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
        extra_kernels=kernels.QKV_BIAS,
    ),
    # Qwen (1), remote code (auto_map modeling_qwen.QWenLMHeadModel, e.g. Qwen/Qwen-1_8B): QWenAttention's
    # c_attn = Linear(hidden, 3 * kv_channels * heads) with a bias, c_proj without (no_bias), so every head
    # has its own keys and values; QWenMLP w1/w2 hidden -> intermediate_size // 2, c_proj back; RMSNorm
    # ln_1, ln_2, ln_f; lm_head apart from wte
    "qwen": _Family(
        "Qwen remote code modeling_qwen.py (QWenLMHeadModel)",
        _qwen_body,
        defaults={"tie_word_embeddings": False},
        aliases={
            "num_key_value_heads": ("num_attention_heads",),
            "head_dim": ("kv_channels",),
            "max_position_embeddings": ("seq_length",),
        },
        halves_intermediate=True,
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
        extra_kernels=kernels.QK_NORM,
    ),
    "qwen3_moe": _Family(
        "models/qwen3_moe/modeling_qwen3_moe.py",
        _qwen3_moe_body,
        _qwen2_windows,
        {"tie_word_embeddings": False, "attention_bias": False, **_QWEN2_WINDOWS, **_QWEN_MOE},
        extra_kernels=kernels.QK_NORM,
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
        extra_kernels=kernels.Q_SCALE + kernels.SOFTCAP + kernels.POST_NORMS,
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
        extra_kernels=kernels.QK_NORM + kernels.Q_SCALE + kernels.POST_NORMS,
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
        extra_kernels=kernels.QKV_BIAS + kernels.O_BIAS,
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
    "gemma3n_text": _Family(
        "models/gemma3n/modeling_gemma3n.py",
        _gemma3n_body,
        _every_nth(None, 5, "sliding"),
        {
            "tie_word_embeddings": True,
            "attention_bias": False,
            "attention_k_eq_v": False,
            "use_double_wide_mlp": False,
            "head_dim": 256,
            "num_kv_shared_layers": 15,
            "hidden_size_per_layer_input": 256,
            "vocab_size_per_layer_input": 262144,
            "altup_num_inputs": 4,
            "laurel_rank": 64,
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
