"""Which layers are full attention, sliding-window, linear or MLA, per family's config keys."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from rigcheck.core.models.config.shared import MAX_LAYERS, Kinds, _Keys
from rigcheck.core.models.spec import LayerKind

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
