"""GLM-5.3 from the config ai-dynamo/aiconfigurator vendors for it (tests/fixtures/configs-2026,
README there): DeepSeek-V3.2-style MLA with a sparse-attention indexer that only every fourth layer
owns (``indexer_types`` "full" / "shared"). Every expected number is worked out here by hand from the
reference layout (transformers GlmMoeDsa / DeepSeek-V3.2 modelling), never read back from the reader."""

from __future__ import annotations

import json
from pathlib import Path

from rigcheck.core.models.config import parse_config

CONFIG = Path(__file__).parents[1] / "fixtures" / "configs-2026" / "zai-org--GLM-5.3_config.json"
CTX = 131_072


def _config() -> dict:
    return json.loads(CONFIG.read_text(encoding="utf-8"))


def test_glm53_parameters_by_hand() -> None:
    d, v, heads = 6144, 154_880, 64
    attn = (
        d * 2048
        + 2048  # q_a_proj + q_a_layernorm
        + 2048 * heads * (192 + 64)  # q_b_proj: qk_nope 192 + qk_rope 64 per head
        + d * (512 + 64)
        + 512  # kv_a_proj_with_mqa + kv_a_layernorm
        + 512 * heads * (192 + 256)  # kv_b_proj: k_nope 192 + v 256 per head
        + heads * 256 * d  # o_proj
    )
    indexer = 2048 * 32 * 128 + d * 128 + 2 * 128 + d * 32  # wq_b, wk, k_norm (LayerNorm), weights_proj
    norms = 2 * d
    dense_mlp = 3 * d * 12_288
    moe = 256 * 3 * d * 2048 + 3 * d * 2048 + 256 * d + 256  # routed, shared, router + bias
    full = _config()["indexer_types"].count("full")
    assert full == 21 and _config()["indexer_types"][:3] == ["full"] * 3
    total = (
        3 * (attn + indexer + norms + dense_mlp)
        + 75 * (attn + norms + moe)
        + (full - 3) * indexer
        + 2 * v * d
        + d  # untied embedding and head, final norm
    )  # the one MTP layer is not loaded for plain decoding, so not counted
    arch = parse_config(_config(), "glm-5.3")
    assert arch.params_total == total == 743_377_019_904


def test_glm53_cache_by_hand() -> None:
    """Each MLA layer caches kv_lora_rank + qk_rope_head_dim = 576 elements per token; the 21 layers
    with an indexer of their own add its 128-element key."""
    arch = parse_config(_config(), "glm-5.3")
    assert sum(arch.layer_kv_elements) == 78 * (512 + 64) + 21 * 128
    assert sum(arch.layer_kv_elements) * CTX * 2 == 12_482_248_704  # f16 at 128k: 11.6 GiB
    assert not arch.linear_state_elements  # no recurrent state


# -- GLM-5.3-Flash (glm5_next): Kimi Delta Attention beside sparse MLA ------------------------------

FLASH = CONFIG.with_name("zai-org--GLM-5.3-Flash_config.json")


def _flash() -> dict:
    return json.loads(FLASH.read_text(encoding="utf-8"))


def test_glm53_flash_layers_follow_the_zero_based_kda_list() -> None:
    """glm5_next counts linear_attn_config's layers from 0 (its kda_layers hold layer 0, and
    full_attn_layers 3, 7, …, 43 are the layers its layer_types marks deepseek_sparse_attention)."""
    text = _flash()["text_config"]
    arch = parse_config(_flash(), "glm-5.3-flash")
    sparse = [i for i, t in enumerate(text["layer_types"]) if t == "deepseek_sparse_attention"]
    assert [i for i, kind in enumerate(arch.layer_kinds) if kind == "mla"] == sparse == [*range(3, 45, 4)]
    assert arch.layer_kinds.count("linear") == 34


def test_glm53_flash_cache_and_state_by_hand() -> None:
    """MLA layers cache kv_lora_rank + qk_rope_head_dim = 512 + 0 elements and the indexer's key of
    128 (every layer's indexer_types is "full"); a KDA layer keeps three conv windows of 64 × 128
    channels × (4 - 1) taps and a 64 × 128 × 128 recurrent state (vllm kda_state_shape)."""
    arch = parse_config(_flash(), "glm-5.3-flash")
    assert sum(arch.layer_kv_elements) == 11 * (512 + 0 + 128)
    assert sum(arch.layer_kv_elements) * CTX * 2 == 1_845_493_760  # f16 at 128k: 1.72 GiB
    assert arch.linear_state_elements == 3 * 64 * 128 * 3 + 64 * 128 * 128


def test_glm53_flash_total_against_the_announced_size() -> None:
    """Z.ai announces 320B total, ~18B active (z.ai/blog/glm-5.3-flash, as quoted in public notes).
    Counted without the MTP layer (num_nextn_predict_layers 1, about one MoE layer, 7.4B) and without
    hyper-connection weights (hc_mult 4): 2.1% under, so the announced figure likely includes the MTP
    layer. No tensor count was at hand to settle it; this pins the count, not its accuracy."""
    arch = parse_config(_flash(), "glm-5.3-flash")
    assert 0.97 < arch.params_total / 320e9 < 0.99
    assert 0.95 < arch.params_active / 18e9 < 0.97
    moe_layer = arch.layer_params[-1]
    assert 0.995 < (arch.params_total + moe_layer) / 320e9 < 1.005  # with one more MoE layer: the MTP
