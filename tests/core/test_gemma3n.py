"""Gemma 3n (model_type gemma3n_text): per-layer embeddings, KV sharing, AltUp and LAuReL, counted tensor by
tensor as transformers' converter lays the checkpoint out (models/gemma3n/convert_gemma3n_weights.py)."""

from __future__ import annotations

import pytest

from rigcheck.core.catalog import load_catalog
from rigcheck.core.models.config import parse_config
from rigcheck.core.models.names import find_model
from rigcheck.core.models.resolve import from_catalog

#: Gemma3nTextConfig's defaults (the E4B checkpoint) and the converter's E2B variant
E4B = {"intermediate_size": 16384, "num_hidden_layers": 35, "num_kv_shared_layers": 15}
E2B = {"intermediate_size": 8192, "num_hidden_layers": 30, "num_kv_shared_layers": 10}


def config(variant: dict[str, int]) -> dict[str, object]:
    layers = variant["num_hidden_layers"]
    return {
        "model_type": "gemma3n_text",
        "vocab_size": 262400,
        "vocab_size_per_layer_input": 262144,
        "hidden_size": 2048,
        "hidden_size_per_layer_input": 256,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "altup_num_inputs": 4,
        "laurel_rank": 64,
        "sliding_window": 512,
        "layer_types": ["full_attention" if (i + 1) % 5 == 0 else "sliding_attention" for i in range(layers)],
        **variant,
    }


def by_hand(variant: dict[str, int]) -> int:
    """Every tensor of the converted checkpoint's language model, one term each."""
    h, layers, inner = 2048, variant["num_hidden_layers"], variant["intermediate_size"]
    q, kv, per, n, rank = 8 * 256, 2 * 256, 256, 4, 64
    attn = h * q + 2 * h * kv + q * h + 2 * 256  # q/k/v/o, q_norm and k_norm (v_norm has no weight)
    mlp = 3 * h * inner
    norms = 4 * h  # input, post-attention, pre- and post-feedforward
    altup = h + n * n + n * n * n + h * n + h  # correct_output_scale, coefs, modality_router, router_norm
    laurel = 2 * h * rank + h
    per_layer = 2 * h * per + h  # per_layer_input_gate, per_layer_projection, post_per_layer_input_norm
    layer = attn + mlp + norms + altup + laurel + per_layer
    embed = 262400 * h + 262144 * layers * per + h * layers * per + per  # tables, model projection, its norm
    model = 2 * (n - 1) * h * h + h  # altup_projections, altup_unembed_projections, final norm (head tied)
    return embed + layers * layer + model


@pytest.mark.parametrize("variant", [E4B, E2B], ids=["E4B", "E2B"])
def test_counts_every_tensor(variant: dict[str, int]) -> None:
    arch = parse_config(config(variant), "test")
    assert arch.params_total == by_hand(variant)


@pytest.mark.parametrize("variant", [E4B, E2B], ids=["E4B", "E2B"])
def test_kv_sharing_layers_cache_nothing(variant: dict[str, int]) -> None:
    arch = parse_config(config(variant), "test")
    first_shared = variant["num_hidden_layers"] - variant["num_kv_shared_layers"]
    assert arch.layer_kv_elements[:first_shared] == (2 * 2 * 256,) * first_shared
    assert set(arch.layer_kv_elements[first_shared:]) == {0}


@pytest.mark.parametrize(
    ("name", "model_id"), [("gemma3n:e4b", "gemma-3n-e4b"), ("gemma3n:e2b", "gemma-3n-e2b")]
)
def test_catalog_entries_resolve(name: str, model_id: str) -> None:
    catalog = load_catalog(use_overlay=False)
    spec = find_model(name, catalog)
    assert spec is not None and spec.id == model_id


def test_layers_count_their_extra_kernels_for_the_fixed_cost() -> None:
    e4b = parse_config(config(E4B), "test")
    e2b = parse_config(config(E2B), "test")
    plain = load_catalog(use_overlay=False).model("llama-3.1-8b")
    assert plain is not None
    assert from_catalog(plain).arch.layer_kernels == 1.0
    # 70 kernels a layer, 8 fewer on the 15 (E4B) or 10 (E2B) KV-sharing layers, 10 more on the 10 sparse ones,
    # over a plain layer's 23
    assert e4b.layer_kernels == round((35 * 70 - 15 * 8 + 10 * 10) / 35 / 23, 3)
    assert e2b.layer_kernels == round((30 * 70 - 10 * 8 + 10 * 10) / 30 / 23, 3)


def test_a_per_layer_width_list_of_one_width_counts_as_that_width() -> None:
    # the hub's config.json spells intermediate_size as one entry per layer (Gemma3nTextConfig.__post_init__)
    listed = {**config(E4B), "intermediate_size": [16384] * 35}
    assert parse_config(listed, "test").params_total == by_hand(E4B)


def test_mixed_per_layer_widths_are_refused_not_miscounted() -> None:
    from rigcheck.core.errors import InputError

    mixed = {**config(E4B), "intermediate_size": [16384] * 20 + [8192] * 15}
    with pytest.raises(InputError, match="intermediate_size"):
        parse_config(mixed, "test")
