"""Architectures built by hand from published configs, with their exact counts worked out here.

They let the estimator be tested on its own, independent of the config.json parser.
"""

from __future__ import annotations

from rigcheck.core.models.spec import ArchConfig, ModelInfo


def dense(
    *,
    hidden: int,
    layers: int,
    heads: int,
    kv_heads: int,
    intermediate: int,
    vocab: int,
    head_dim: int | None = None,
    tied: bool = False,
    max_context: int = 131072,
    kinds: tuple[str, ...] | None = None,
    window: int | None = None,
) -> ArchConfig:
    """A llama-style decoder: q/k/v/o, gated MLP, two RMSNorms per layer, final norm."""
    d = head_dim or hidden // heads
    per_layer = hidden * heads * d * 2 + hidden * kv_heads * d * 2 + 3 * hidden * intermediate + 2 * hidden
    embed = vocab * hidden
    head = (0 if tied else vocab * hidden) + hidden
    return ArchConfig(
        model_type="llama",
        hidden_size=hidden,
        num_layers=layers,
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=d,
        vocab_size=vocab,
        layer_kinds=kinds or ("full",) * layers,  # type: ignore[arg-type]
        tie_word_embeddings=tied,
        intermediate_size=intermediate,
        max_context=max_context,
        sliding_window=window,
        moe_layers=(False,) * layers,
        embed_params=embed,
        head_params=head,
        layer_params=(per_layer,) * layers,
        layer_active_params=(per_layer,) * layers,
    )


#: meta-llama/Llama-3.1-8B config.json: 8,030,261,248 parameters (the hub's safetensors total)
LLAMA_31_8B = dense(hidden=4096, layers=32, heads=32, kv_heads=8, intermediate=14336, vocab=128256)
#: meta-llama/Llama-3.1-70B config.json
LLAMA_31_70B = dense(hidden=8192, layers=80, heads=64, kv_heads=8, intermediate=28672, vocab=128256)
#: a dense ~120B decoder (MegaTrain's headline size class), 96 layers of hidden 10240
DENSE_120B = dense(hidden=10240, layers=96, heads=80, kv_heads=8, intermediate=32768, vocab=128256)


def model(arch: ArchConfig, name: str = "test-model") -> ModelInfo:
    return ModelInfo(id=name, name=name, arch=arch, source_kind="config", source=f"test:{name}")
