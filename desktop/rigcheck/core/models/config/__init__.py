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

:func:`parse_config` is here; ``shared`` holds the bounds, the key reader and the records every count
shares, ``layer_kinds`` which layers attend how, ``families`` one body per transformers modeling file,
``generic`` the rule for an unknown model_type, ``hybrids`` the 2026 hybrid bodies, ``table`` the
:data:`FAMILIES` that tie them together.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from rigcheck.core.errors import InputError
from rigcheck.core.models.config import kernels
from rigcheck.core.models.config.layer_kinds import _LAYER_TYPES
from rigcheck.core.models.config.shared import (
    _EXPERT_KEYS,
    MAX_LAYERS,
    MAX_PARAMS,
    MAX_SIZE,
    Kinds,
    QkNorm,
    _Body,
    _Dims,
    _Keys,
    _Moe,
    _show,
)
from rigcheck.core.models.config.table import FAMILIES, GENERIC, _Family
from rigcheck.core.models.spec import ArchConfig, LayerKind
from rigcheck.core.models.towers import with_outside

__all__ = ["FAMILIES", "GENERIC", "MAX_LAYERS", "MAX_PARAMS", "MAX_SIZE", "QkNorm", "parse_config"]

#: a multimodal wrapper's text model type, when its text_config does not name one
_TEXT_TYPES: Final[Mapping[str, str]] = {
    "gemma3": "gemma3_text",
    "llama4": "llama4_text",
    "mistral3": "mistral",
    "qwen3_5": "qwen3_5_text",
    "qwen3_5_moe": "qwen3_5_moe_text",
    "gemma4": "gemma4_text",
    "gemma3n": "gemma3n_text",
}
#: model types written before transformers named the family (Falcon's remote-code configs)
_OLD_TYPES: Final[Mapping[str, str]] = {"RefinedWeb": "falcon", "RefinedWebModel": "falcon"}
#: what an unknown model_type needs to be counted as a llama-style decoder
_GENERIC_KEYS: Final = ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size")
_MLA_KEYS: Final = ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "n_routed_experts")


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
    widths = config.get("intermediate_size")
    if isinstance(widths, list) and widths and all(w == widths[0] for w in widths):
        # one width per layer, all the same (Gemma 3n's hub configs): the one width; mixed widths stay a list
        # and are refused by the size check
        config = {**config, "intermediate_size": widths[0]}
    k = _Keys(config, source, family.defaults)
    d = _dims(k, family)
    if family.halves_intermediate:  # Qwen-1: each MLP projection is intermediate_size // 2 wide
        config = {**config, "intermediate_size": k.size("intermediate_size") // 2}
        k = _Keys(config, source, family.defaults)
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
        q_lora_rank=mla.q_lora_rank if mla else None,
        attn_output_gate=body.q_gate,
        linear_state_elements=body.linear_state,
        linear_mixer=body.linear_mixer if "linear" in kinds else None,
        layer_kv_elements=body.kv_elements,
        layer_mixers=_layer_mixers(body),
        layer_kernels=body.layer_kernels * kernels.multiple(family.extra_kernels),
        num_experts=first.experts if first else None,
        experts_per_token=first.per_token if first else None,
        moe_layers=tuple(isinstance(mlp, _Moe) for mlp in body.mlps),
        embed_params=embed,
        head_params=head,
        layer_params=layer_params,
        layer_active_params=layer_active,
        expert_params=first.expert if first else 0,
        moe_intermediate_size=(first.width or None) if first else None,
        shared_expert_width=first.shared_width if first else 0,
        shared_expert_gate=first.shared_gate if first else False,
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


def _layer_mixers(body: _Body) -> tuple[int, ...]:
    """Per layer, its sub-blocks with parameters (token mixer, MLP), where some layer lacks one; else ()."""
    counts = tuple(
        int(mixer > 0) + int(_total(mlp) > 0) for mixer, mlp in zip(body.mixers, body.mlps, strict=True)
    )
    return counts if any(c < 2 for c in counts) else ()


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
