"""Pre-LLaMA decoders from their own config.json: Phi (1/1.5/2), GPT-NeoX, Falcon and BLOOM, counted
as their transformers modeling files build them (LayerNorms with a bias, a two-matrix MLP, biased
projections), so training rows on them are estimable without a catalog entry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rigcheck.core.errors import InputError
from rigcheck.core.models.config import parse_config

CONFIGS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "configs"


def _stored(name: str) -> dict[str, object]:
    return json.loads((CONFIGS / name).read_text(encoding="utf-8"))


def test_bloom_7b1_counts_its_model_cards_parameters() -> None:
    """BLOOM-7b1's model card: 7,069,016,064 parameters, 1,027,604,480 of them the embedding; the config
    names its sizes n_layer and n_head (BloomConfig's attribute_map)."""
    arch = parse_config(_stored("bigscience--bloomz-7b1.json"), "bloomz-7b1")
    assert arch.params_total == 7_069_016_064
    assert arch.vocab_size * arch.hidden_size == 1_027_604_480
    assert arch.num_layers == 30 and arch.num_heads == 32 and arch.tie_word_embeddings
    assert arch.intermediate_size is None  # 4 × hidden, no gate: training_memory counts a plain MLP


def test_phi_1_5_has_one_layernorm_per_layer_and_a_biased_head() -> None:
    """modeling_phi.py: q/k/v/dense and fc1/fc2 with biases, one input_layernorm feeding both branches,
    final_layernorm, and lm_head with a bias of the vocabulary's size."""
    arch = parse_config(_stored("microsoft--phi-1_5.json"), "phi-1_5")
    h, inner, vocab = 2048, 8192, 51200
    layer = 4 * (h * h + h) + 2 * h * inner + inner + h + 2 * h
    assert arch.layer_params == (layer,) * 24
    assert arch.head_params == 2 * h + vocab * h + vocab
    assert arch.params_total == 1_418_270_720


def test_gpt_neox_counts_two_biased_layernorms_and_an_untied_head() -> None:
    arch = parse_config(_stored("stabilityai--stablelm-base-alpha-3b.json"), "stablelm")
    h = 4096
    layer = 4 * (h * h + h) + 2 * h * 4 * h + 4 * h + h + 2 * 2 * h
    assert arch.layer_params == (layer,) * 16
    assert arch.embed_params == arch.head_params - 2 * h == 50688 * h


def test_falcon_groups_its_kv_heads_and_reads_its_older_config_names() -> None:
    """Falcon-40B (new decoder architecture): query_key_value of 128 + 2 × 8 heads of 64, ln_attn and
    ln_mlp, no biases, head tied to the embedding; its remote-code config (model_type RefinedWeb, n_head,
    n_head_kv, n_layer) counts the same."""
    arch = parse_config(_stored("tiiuae--falcon-40b.json"), "falcon-40b")
    h = 8192
    layer = h * (128 + 2 * 8) * 64 + h * h + 2 * h * 4 * h + 2 * 2 * h
    assert arch.layer_params == (layer,) * 60 and arch.num_kv_heads == 8
    old = {
        "model_type": "RefinedWeb",
        "hidden_size": h,
        "n_head": 128,
        "n_head_kv": 8,
        "n_layer": 60,
        "new_decoder_architecture": True,
        "parallel_attn": True,
        "bias": False,
        "vocab_size": 65024,
    }
    assert parse_config(old, "falcon-40b-instruct").params_total == arch.params_total
    seven = {"model_type": "falcon", "hidden_size": 4544, "num_attention_heads": 71, "num_hidden_layers": 32,
             "vocab_size": 65024, "multi_query": True, "new_decoder_architecture": False}  # fmt: skip
    small = parse_config(seven, "falcon-7b")
    assert small.layer_params[0] == 4544 * (71 + 2) * 64 + 4544 * 4544 + 2 * 4544 * 4 * 4544 + 2 * 4544


def test_a_bloom_config_without_its_layer_count_names_the_key() -> None:
    config = _stored("bigscience--bloomz-7b1.json")
    del config["n_layer"]
    with pytest.raises(InputError, match="num_hidden_layers"):
        parse_config(config, "bloom.json")
