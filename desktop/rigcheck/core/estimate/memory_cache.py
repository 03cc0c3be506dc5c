"""The KV cache and recurrent-state terms of a memory estimate: bytes per layer and per token, by layer
kind (full, sliding window, MLA, linear attention)."""

from __future__ import annotations

from rigcheck.core.estimate.memory_types import LLAMA_CPP_ENGINES, LLAMA_CPP_UBATCH, Engine, Term
from rigcheck.core.models.spec import ArchConfig
from rigcheck.core.said import Joined, Num, Sig, Text, say


def _kv_elements_per_token(arch: ArchConfig, kind: str) -> int:
    """Cached elements per token in one layer of this kind."""
    if kind in ("full", "sliding"):
        return arch.num_kv_heads * (arch.head_dim + (arch.v_head_dim or arch.head_dim))
    if kind == "mla":
        # Only the compressed latent and the shared RoPE key are cached (DeepSeek-V3 inference/model.py).
        return (arch.kv_lora_rank or 0) + (arch.qk_rope_head_dim or 0)
    return 0


def _kv_listed(
    arch: ArchConfig,
    context: int,
    *,
    batch: int,
    elem: float,
    engine: Engine,
    by_kind: dict[str, tuple[int, int]],
) -> tuple[list[int], int]:
    """The cache per layer from ``ArchConfig.layer_kv_elements`` (Gemma 4 global layers, DSA indexer keys)."""
    extra = LLAMA_CPP_UBATCH if engine == "llama.cpp" else 0
    per_layer: list[int] = []
    per_token = 0
    for kind, elements in zip(arch.layer_kinds, arch.layer_kv_elements, strict=True):
        if kind == "linear":
            per_layer.append(by_kind[kind][1])
            continue
        window = arch.sliding_window
        tokens = min(context, window + extra) if kind == "sliding" and window else context
        per_layer.append(int(tokens * elements * elem * batch))
        per_token += int(elements * elem)
    return per_layer, per_token


def _kv_cache(
    arch: ArchConfig, context: int, batch: int, kv: tuple[str, float], engine: Engine
) -> tuple[list[Term], tuple[int, ...], int]:
    kv_type, elem = kv
    # Each kind of layer caches the same per token: work each out once, then lay them out per layer.
    by_kind: dict[str, tuple[int, int]] = {}  # kind -> (bytes per token, bytes in the cache)
    for kind in set(arch.layer_kinds):
        elements = _kv_elements_per_token(arch, kind)
        if kind == "sliding" and arch.sliding_window:
            # llama.cpp keeps min(n_ctx, n_swa + n_ubatch) cells for SWA layers (llama-kv-cache-iswa.cpp).
            extra = LLAMA_CPP_UBATCH if engine in LLAMA_CPP_ENGINES else 0
            cached = int(min(context, arch.sliding_window + extra) * elements * elem * batch)
        elif kind == "linear":
            cached = int((arch.linear_state_elements or 0) * 4 * batch)  # fp32 recurrent state
        else:
            cached = int(context * elements * elem * batch)
        by_kind[kind] = (int(elements * elem), cached)
    per_layer = [by_kind[kind][1] for kind in arch.layer_kinds]
    per_token = sum(by_kind[kind][0] for kind in arch.layer_kinds)
    if arch.layer_kv_elements:  # layers of different widths: each layer its own elements per token
        per_layer, per_token = _kv_listed(
            arch, context, batch=batch, elem=elem, engine=engine, by_kind=by_kind
        )
    capped = arch.layer_kinds.count("sliding") if arch.sliding_window else 0
    terms = []
    attention = sum(b for b, k in zip(per_layer, arch.layer_kinds, strict=True) if k != "linear")
    kinds = sorted({k for k in arch.layer_kinds if k not in ("linear", "none")})
    clauses: list[Text] = [
        say(
            "{context} tokens × {batch} sequence(s) × {kv_type} ({elem} B/element) over {kinds} layers",
            context=Num(context),
            batch=batch,
            kv_type=kv_type,
            elem=Sig(elem, 6),
            kinds=", ".join(kinds),
        )
    ]
    if capped:
        clauses.append(
            say(
                "{capped} sliding-window layers capped at {window} tokens",
                capped=capped,
                window=Num(arch.sliding_window or 0),
            )
        )
    if "mla" in kinds:
        clauses.append(
            f"MLA caches kv_lora_rank + qk_rope_head_dim = {_kv_elements_per_token(arch, 'mla')} per layer"
        )
    formula = Joined("; ", tuple(clauses))
    source = "2·n_kv_heads·head_dim per token per layer (memory-formulas §4.1); MLA §4.2; sliding §4.3"
    terms.append(Term("kv_cache", say("KV cache"), attention, "estimate", formula, source))
    linear = sum(b for b, k in zip(per_layer, arch.layer_kinds, strict=True) if k == "linear")
    if linear:
        n_linear = sum(1 for k in arch.layer_kinds if k == "linear")
        terms.append(
            Term(
                "kv_cache",
                say("recurrent state"),
                linear,
                "estimate",
                say(
                    "{layers} linear-attention layers × {elements} fp32 elements per sequence",
                    layers=n_linear,
                    elements=Num(arch.linear_state_elements or 0),
                ),
                "Gated DeltaNet state, memory-formulas §4.3 (engine layout not verified)",
            )
        )
    return terms, tuple(per_layer), per_token
