"""The open-world reader on 2026 configs the first reader refused or miscounted: Kimi Delta Attention
(Kimi K3), LFM2's short convolutions, MiniMax-M3's sparse attention.

Configs are verbatim published files in tests/fixtures/configs-2026 (README there names each
source). Every expected number is worked out by hand from the reference implementation named in the
test, never read back from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.memory import Request, estimate_memory
from rigcheck.core.models.config import parse_config
from rigcheck.core.models.files import read_config_json
from rigcheck.core.models.spec import ModelInfo

CONFIGS = Path(__file__).parents[1] / "fixtures" / "configs-2026"
CTX = 131_072


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def published(name: str) -> dict[str, Any]:
    return json.loads((CONFIGS / f"{name}_config.json").read_text(encoding="utf-8"))


def cache(model: ModelInfo, catalog: Catalog) -> tuple[int, int]:
    """(attention KV bytes, recurrent state bytes) at 128k tokens, f16 cache, one sequence, vLLM."""
    est = estimate_memory(model, Request(quant="bf16", context=CTX, engine="vllm"), catalog)
    kv = [t.bytes for t in est.terms if t.category == "kv_cache"]
    return kv[0], sum(kv[1:])


# -- Kimi K3: Kimi Delta Attention and MLA ---------------------------------------------------------


def test_kimi_k3_layers_follow_the_one_based_kda_list() -> None:
    """linear_attn_config.kda_layers counts from 1 (vLLM KimiLinearConfig.is_kda_layer: layer_idx + 1):
    69 KDA layers, 24 MLA layers (numbers 4, 8, ..., 92 and 93)."""
    arch = parse_config(published("moonshotai--Kimi-K3"), "k3")
    assert arch.layer_kinds.count("linear") == 69 and arch.layer_kinds.count("mla") == 24
    assert [i + 1 for i, kind in enumerate(arch.layer_kinds) if kind == "mla"] == [*range(4, 93, 4), 93]


def test_kimi_k3_cache_and_state_by_hand(tmp_path: Path, catalog: Catalog) -> None:
    """KDA state per layer (vllm mamba_utils kda_state_shape): q, k and v conv windows of 96 × 128
    channels × (4 - 1) taps, and a 96 × 128 × 128 recurrent state; counted in fp32. MLA layers cache
    kv_lora_rank + qk_rope_head_dim = 512 + 64 elements per token."""
    path = tmp_path / "Kimi-K3" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(published("moonshotai--Kimi-K3")), encoding="utf-8")
    model = read_config_json(path)
    assert model.native_quant == "mxfp4"  # its quantization_config: compressed-tensors mxfp4-pack-quantized
    kv, state = cache(model, catalog)
    assert state == 69 * (3 * 96 * 128 * 3 + 96 * 128 * 128) * 4
    assert kv == 24 * (512 + 64) * CTX * 2
    # read as 93 layers of full attention with 96 KV heads of 192, the cache would be 88× this
    assert 93 * 2 * 96 * 192 * CTX * 2 / (kv + state) > 80


def test_kimi_k3_kda_and_mla_mixers_by_hand() -> None:
    """A KDA layer and an MLA layer of Kimi K3 differ only in their mixer (both hold the latent MoE).
    KDA (vllm layers/kda.py, full-rank gate): q/k/v 3 × 7168 × 12288, f_a 7168 × 128, f_b 128 × 12288,
    dt_bias 12288, b_proj 7168 × 96, three conv1d 12288 × 4, A_log 96, g_proj 7168 × 12288, o_norm
    128, o_proj 12288 × 7168. MLA: q_a 7168 × 1536 + its norm, q_b 1536 × 96 × 192, kv_a 7168 × 576 +
    norm 512, kv_b 512 × 96 × 256, o_proj 96 × 128 × 7168, output gate 7168 × 96 × 128."""
    arch = parse_config(published("moonshotai--Kimi-K3"), "k3")
    h, p = 7168, 96 * 128
    kda = 3 * h * p + h * 128 + 128 * p + p + h * 96 + 3 * p * 4 + 96 + h * p + 128 + p * h
    mla = h * 1536 + 1536 + 1536 * 96 * 192 + h * 576 + 512 + 512 * 96 * 256 + 96 * 128 * h + h * 96 * 128
    assert arch.layer_kinds[1] == "linear" and arch.layer_kinds[3] == "mla"
    assert arch.layer_params[1] - arch.layer_params[3] == kda - mla


def test_kimi_k3_total_matches_the_published_size() -> None:
    """ai-dynamo/aiconfigurator aic-core/src/aiconfigurator_core/sdk/models/kimi_k3.py@095f58a5 calls
    Kimi K3 '2.8T': 896 routed experts of 3 × 3584 × 3072 in 92 MoE layers dominate."""
    arch = parse_config(published("moonshotai--Kimi-K3"), "k3")
    assert 2.75e12 < arch.params_total < 2.85e12
    assert arch.num_experts == 896 and arch.experts_per_token == 16
    assert arch.expert_params == 3 * 3584 * 3072  # experts live in the 3584-wide latent space


def test_an_unknown_type_with_kda_layers_is_counted_as_kimi_linear() -> None:
    text = published("moonshotai--Kimi-K3")["text_config"]
    known = parse_config(text, "x")
    relabelled = parse_config({**text, "model_type": "kimi_next"}, "x")
    assert relabelled.params_total == known.params_total
    assert any("counted as kimi_linear" in note for note in relabelled.assumed)


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"kda_layers": [1, 2, 94]}, "linear_attn_config.kda_layers"),  # K3 has 93 layers
        ({"kda_layers": [0, 1, 2]}, "linear_attn_config.full_attn_layers"),  # from 0: the rest disagree
        ({"kda_layers": "all"}, "linear_attn_config.kda_layers"),
        ({"full_attn_layers": [4]}, "linear_attn_config.full_attn_layers"),
        ({"num_heads": None}, "linear_attn_config.num_heads"),
    ],
)
def test_bad_kda_keys_name_the_nested_key(change: dict[str, Any], key: str) -> None:
    text = published("moonshotai--Kimi-K3")["text_config"]
    bad = {**text, "linear_attn_config": {**text["linear_attn_config"], **change}}
    with pytest.raises(InputError, match=key.replace(".", r"\.")):
        parse_config(bad, "x")


# -- LFM2 / LFM2.5: gated short convolutions ---------------------------------------------------------

#: LiquidAI/LFM2.5-8B-A1B config.json (https://huggingface.co/LiquidAI/LFM2.5-8B-A1B/blob/main/config.json),
#: the keys the count reads; the vocabulary grew from LFM2-8B-A1B's 65,536 to 128,000
LFM2_5_8B: dict[str, Any] = {
    "model_type": "lfm2_moe",
    "hidden_size": 2048,
    "num_hidden_layers": 24,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "intermediate_size": 7168,
    "moe_intermediate_size": 1792,
    "num_experts": 32,
    "num_experts_per_tok": 4,
    "num_dense_layers": 2,
    "vocab_size": 128000,
    "tie_word_embeddings": True,
    "use_expert_bias": True,
    "conv_L_cache": 3,
    "conv_bias": False,
    "max_position_embeddings": 128000,
    "layer_types": ["full_attention" if i in (2, 6, 10, 14, 18, 21) else "conv" for i in range(24)],
}


def test_lfm2_5_counts_its_tensor_table() -> None:
    """The checkpoint's tensors, shape by shape (models/lfm2_moe/modular_lfm2_moe.py): embed_tokens
    128,000 × 2,048 (tied), embedding_norm; per layer operator_norm and ffn_norm; 18 conv layers of
    in_proj 6,144 × 2,048, out_proj 2,048 × 2,048 and conv 2,048 × 3; 6 attention layers of q and out
    2,048 × 2,048, k and v 512 × 2,048 and two 64-wide layernorms; layers 0-1 a dense w1/w3/w2 of
    7,168; 22 MoE layers of a 32 × 2,048 router, a 32-element expert_bias and 32 experts of
    3 × 1,792 × 2,048: 2,302 tensors."""
    h = 2048
    conv = 3 * h * h + h * h + h * 3
    attn = 2 * h * h + 2 * 512 * h + 2 * 64
    dense = 3 * 7168 * h
    moe = 32 * h + 32 + 32 * 3 * 1792 * h
    expected = 128000 * h + h + 24 * 2 * h + 18 * conv + 6 * attn + 2 * dense + 22 * moe
    arch = parse_config(LFM2_5_8B, "x")
    assert arch.params_total == expected == 8_467_856_832
    assert arch.layer_kinds.count("linear") == 18 and arch.experts_per_token == 4


def test_lfm2_5_against_the_published_8_3b_is_the_vocabulary() -> None:
    """The 8.3B figure is LFM2-8B-A1B's (huggingface/transformers docs/source/en/model_doc/lfm2_moe.md:
    'LFM2-8B-A1B, with 8.3B total parameters'), whose vocabulary is 65,536; LFM2.5's 128,000-token
    table adds 62,464 × 2,048 parameters, once, being tied."""
    lfm2 = parse_config({**LFM2_5_8B, "vocab_size": 65536}, "x")
    assert abs(lfm2.params_total - 8.3e9) <= 0.005 * 8.3e9
    lfm2_5 = parse_config(LFM2_5_8B, "x")
    assert lfm2_5.params_total - lfm2.params_total == (128000 - 65536) * 2048


def test_lfm2_cache_and_conv_state_by_hand(tmp_path: Path, catalog: Catalog) -> None:
    """6 attention layers cache 2 × 8 KV heads × 64 per token; each of the 18 conv layers keeps
    hidden × (conv_L_cache - 1) = 2,048 × 2 inputs (vLLM short_conv_state_shape), counted in fp32."""
    path = tmp_path / "LFM2.5-8B-A1B" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(LFM2_5_8B), encoding="utf-8")
    kv, state = cache(read_config_json(path), catalog)
    assert kv == 6 * 2 * 8 * 64 * CTX * 2
    assert state == 18 * 2048 * 2 * 4


def test_lfm2_dense_mlp_width_follows_block_auto_adjust() -> None:
    """Lfm2MLP: block_ff_dim 6,656 → int(2 × 6,656 / 3) = 4,437 → rounded up to 256: 4,608
    (LiquidAI/LFM2-350M's keys); full_attn_idxs stands in for layer_types."""
    config = {
        "model_type": "lfm2",
        "vocab_size": 65536,
        "hidden_size": 1024,
        "num_hidden_layers": 16,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "conv_L_cache": 3,
        "full_attn_idxs": [2, 5, 8, 10, 12, 14],
        "block_ff_dim": 6656,
    }
    arch = parse_config(config, "x")
    h = 1024
    conv = 4 * h * h + 3 * h
    attn = 2 * h * h + 2 * 512 * h + 2 * 64
    assert arch.layer_kinds.count("full") == 6
    assert sum(arch.layer_params) == 10 * conv + 6 * attn + 16 * (3 * h * 4608 + 2 * h)
    with pytest.raises(InputError, match="layer_types"):
        parse_config({**config, "layer_types": ["conv"] * 15 + ["mamba"]}, "x")


# -- MiniMax-M3: block-sparse attention with a key-only index cache ----------------------------------


def test_minimax_m3_caches_kv_and_one_index_key_on_sparse_layers(catalog: Catalog) -> None:
    """baidu/vLLM-Kunlun vllm/model_executor/models/minimax_m3.py@2d92d40f: the main K/V cache stays
    whole (4 KV heads × 128, keys and values) on all 60 layers, and the 57 layers that
    sparse_attention_freq marks add a key-only side cache of one 128-wide index key per token."""
    config = published("MiniMaxAI--MiniMax-M3")
    arch = parse_config(config, "m3")
    assert sum(config["sparse_attention_config"]["sparse_attention_freq"]) == 57
    assert arch.layer_kv_elements[:4] == (1024, 1024, 1024, 1152)
    path_model = ModelInfo("m3", "MiniMax-M3", arch, "config", "m3")
    kv, state = cache(path_model, catalog)
    assert kv == (60 * 2 * 4 * 128 + 57 * 128) * CTX * 2 and state == 0


def test_minimax_m3_indexer_weights_by_hand() -> None:
    """Per sparse layer: index_q 6,144 → 4 × 128, index_k 6,144 → 128, index_q_norm and index_k_norm
    of 128; no index value/output projections (sparse_disable_index_value is 1 on every sparse layer)."""
    config = published("MiniMaxAI--MiniMax-M3")
    dense = {k: v for k, v in config.items() if k != "sparse_attention_config"}
    indexer = 6144 * (4 * 128 + 128) + 2 * 128
    assert parse_config(config, "m3").params_total - parse_config(dense, "m3").params_total == 57 * indexer
    bad = dict(config["sparse_attention_config"], sparse_disable_index_value=[0] * 60)
    with pytest.raises(InputError, match=r"sparse_attention_config\.sparse_disable_index_value"):
        parse_config({**config, "sparse_attention_config": bad}, "m3")
