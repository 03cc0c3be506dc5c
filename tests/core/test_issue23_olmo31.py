"""OLMo 3.1 32B from a config reconstructed field by field from Ai2's own code (tests/fixtures/configs-2026
README, "Reconstructed", cites every field: allenai/OLMo-core@fa6c5014c9f6e9ee789da2d9c20d5126fee8df0d).
OLMo 3.1 Think 32B is OLMo 3 Think 32B trained further with RL (the Olmo 3 report, arXiv:2512.13961),
so its network is TransformerConfig.olmo3_32B. Expected numbers are worked by hand from that builder."""

from __future__ import annotations

import json
from pathlib import Path

from rigcheck.core.catalog import load_catalog
from rigcheck.core.estimate.memory import Request, estimate_memory
from rigcheck.core.models.config import parse_config
from rigcheck.core.models.files import load_model_path

FIXTURE = Path(__file__).parents[1] / "fixtures" / "configs-2026" / "allenai--Olmo-3.1-32B-Think_config.json"


def _config() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def _olmo_core_window(layer: int, n_layers: int = 64) -> int:
    """SlidingWindowAttentionConfig._get_window_size (src/olmo_core/nn/attention/__init__.py) for
    olmo3_32B's pattern [4096, 4096, 4096, -1], first layer not forced full, last layer forced full."""
    if layer == n_layers - 1:
        return -1
    return [4096, 4096, 4096, -1][layer % 4]


def test_olmo31_parameters_by_hand_from_the_builder() -> None:
    """olmo2_32B: d 5,120, 64 reordered-norm blocks, 40 query / 8 KV heads of 128 without bias, QK norm
    over the whole q (5,120) and k (1,024) projections, SwiGLU of 27,648, two norms a block; untied
    100,278-row embedding and head, final norm."""
    d, v, ffn = 5120, 100_278, 27_648
    attn = d * 5120 + 2 * d * 1024 + 5120 * d + 5120 + 1024
    block = attn + 3 * d * ffn + 2 * d
    arch = parse_config(_config(), "olmo-3.1-32b")
    assert arch.params_total == 64 * block + 2 * v * d + d == 32_233_522_176
    assert not arch.tie_word_embeddings
    # the published figure is "32B" (two significant figures: the Olmo 3 report's title size)
    assert round(arch.params_total / 1e9) == 32


def test_olmo31_layer_pattern_is_olmo_cores() -> None:
    arch = parse_config(_config(), "olmo-3.1-32b")
    expected = tuple("full" if _olmo_core_window(i) == -1 else "sliding" for i in range(64))
    assert arch.layer_kinds == expected and expected.count("full") == 16
    assert arch.sliding_window == 4096 and arch.max_context == 65_536


def test_olmo31_cache_by_hand_at_its_trained_context() -> None:
    """16 full layers keep K and V of 8 heads x 128 for every token; 48 sliding layers for 4,096 tokens;
    BF16 (vLLM, 65,536 tokens)."""
    model = load_model_path(FIXTURE)
    est = estimate_memory(model, Request(context=65_536, engine="vllm"), load_catalog(use_overlay=False))
    kv = next(t.bytes for t in est.terms if t.category == "kv_cache")
    assert kv == 16 * 2 * 8 * 128 * 2 * 65_536 + 48 * 2 * 8 * 128 * 2 * 4096
    assert model.native_quant == "bf16"
