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
