"""GLM-4.7, DeepSeek-V4.1-Flash and Gemma 4 12B from the configs tests/fixtures/configs-2026 transcribes (README
there cites each). Every expected number is worked out here by hand from the reference layout, never
read back from the reader, and checked against the published parameter count where one is public."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rigcheck.core.catalog import load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.models.config import parse_config
from rigcheck.core.models.files import load_model_path

FIXTURES = Path(__file__).parents[1] / "fixtures" / "configs-2026"
CTX = 131_072
GIB = 2**30


def _config(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}_config.json").read_text(encoding="utf-8"))


# -- GLM-4.7 (glm4_moe): grouped-query attention with q/k/v biases and QK norms, 160 experts ----------

#: the Hugging Face API's safetensors total for zai-org/GLM-4.7, as midagedev/bloomery
#: docs/research/models-survey.md@51dcedaa quotes it (table "GLM, Flash-named", "GLM-4.7 (358,337,791,296 …)")
GLM47_PUBLISHED = 358_337_791_296


def _glm47_layers() -> tuple[int, int, int, int]:
    """One attention block, two norms, the dense MLP and the MoE MLP of GLM-4.7, by hand
    (transformers models/glm4_moe: q/k/v with bias, o without, q_norm/k_norm of head_dim)."""
    d, heads, kv, hd = 5120, 96, 8, 128
    attn = d * heads * hd + heads * hd + 2 * (d * kv * hd + kv * hd) + heads * hd * d + 2 * hd
    dense = 3 * d * 12_288
    moe = 160 * 3 * d * 1536 + 3 * d * 1536 + 160 * d + 160  # routed, shared, router + correction bias
    return attn, 2 * d, dense, moe


def test_glm47_parameters_by_hand() -> None:
    d, v = 5120, 151_552
    attn, norms, dense, moe = _glm47_layers()
    total = 3 * (attn + norms + dense) + 89 * (attn + norms + moe) + 2 * v * d + d  # untied, final norm
    arch = parse_config(_config("zai-org--GLM-4.7"), "glm-4.7")
    assert arch.params_total == total == 352_797_829_024


def test_glm47_published_total_is_the_count_plus_its_mtp_layer() -> None:
    """The published total holds the one next-token-prediction layer, which plain decoding does not
    load: a MoE decoder layer plus eh_proj (2·hidden → hidden), enorm, hnorm, shared_head.norm and its
    own embed_tokens and shared_head.head (the tensor names alibaba/rtp-llm's GLM-4.7 NextN loader
    reads). Added by hand, the sum is the published total to the parameter."""
    d, v = 5120, 151_552
    attn, norms, _, moe = _glm47_layers()
    mtp = attn + norms + moe + 2 * d * d + 3 * d + 2 * v * d
    arch = parse_config(_config("zai-org--GLM-4.7"), "glm-4.7")
    assert arch.params_total + mtp == GLM47_PUBLISHED
    assert abs(arch.params_total / GLM47_PUBLISHED - 1) < 0.016  # without the MTP layer: -1.5%


def test_glm47_cache_by_hand() -> None:
    """Every layer is full attention: K and V of 8 heads × 128 per token."""
    arch = parse_config(_config("zai-org--GLM-4.7"), "glm-4.7")
    assert set(arch.layer_kinds) == {"full"} and not arch.layer_kv_elements
    per_token = 92 * 2 * 8 * 128
    assert arch.num_layers * 2 * arch.num_kv_heads * arch.head_dim == per_token
    assert per_token * 2 * CTX == 46 * GIB  # f16 at 128k


# -- DeepSeek-V4.1-Flash (deepseek_v41): a shared compressed cache and Engram tables ----------------

V41 = "deepseek-ai--DeepSeek-V4.1-Flash"
#: the Hugging Face API's total for deepseek-ai/DeepSeek-V4.1-Flash, "763.2B (API; includes the two
#: engram tables …)" in midagedev/bloomery docs/research/models-survey.md@51dcedaa, table A
V41_PUBLISHED = 763.2e9


def _v41_trunk_layer() -> tuple[int, int]:
    """One trunk layer's attention + norms and its MoE, by hand (the deepseek_v4 layout: wq_a, q_norm,
    wq_b, one wkv head with kv_norm, sinks, grouped wo_a / wo_b; 384 routed + 1 shared expert)."""
    d, heads, hd, q_lora, o_lora, groups = 5120, 64, 512, 1280, 1024, 8
    attn = d * q_lora + q_lora + q_lora * heads * hd + d * hd + hd + heads
    attn += heads * hd * o_lora + groups * o_lora * d
    moe = 384 * 3 * d * 2304 + 3 * d * 2304 + 384 * d + 384
    return attn + 2 * d, moe


def test_v41_parameters_by_hand() -> None:
    d, v = 5120, 129_280
    attn, moe = _v41_trunk_layer()
    engram = (384_006_168 + 384_016_682) * 256  # two lookup tables of engram_head_dim rows
    total = 40 * (attn + moe) + 2 * v * d + d + engram
    arch = parse_config(_config(V41), "v4.1")
    assert arch.params_total == total == 748_078_822_400
    assert arch.embed_params == v * d + engram
    assert any("Engram" in note for note in arch.assumed)


def test_v41_published_total_within_half_a_percent_once_the_draft_and_vision_are_added() -> None:
    """What the count leaves out, worked by hand: the three DSpark draft blocks (the plow document
    counts 3 × 128 experts for them, "DSpark has its OWN narrower MoE"; attention taken as the trunk's)
    and the 32-layer, 1024-wide vision tower (four projections and a two-matrix MLP of 2,816 per layer,
    an assumption). Not settled without the tensor table."""
    d = 5120
    attn, _ = _v41_trunk_layer()
    draft = 3 * (attn + 128 * 3 * d * 2304 + 3 * d * 2304 + 128 * d + 128)
    vision = 32 * (4 * 1024 * 1024 + 2 * 1024 * 2816)
    arch = parse_config(_config(V41), "v4.1")
    assert abs(arch.params_total / V41_PUBLISHED - 1) < 0.021  # trunk + tables alone: -2.0%
    assert abs((arch.params_total + draft + vision) / V41_PUBLISHED - 1) < 0.005


def test_v41_cache_is_owned_by_the_four_source_layers() -> None:
    """Only kv_source_layer_ids [2, 8, 14, 20] compress; each keeps its 512-wide latent and 128-wide
    index key once per compress_ratios tokens (2, 2, 2 and 1), so (3/2 + 1) × 640 = 1,600 elements a
    token, the page an ATOM-based V4.1 port's V41PoolGeometry test (repository not identified) sizes as 16 · (3/2 + 1) · (512 + 128) · 2 bytes."""
    arch = parse_config(_config(V41), "v4.1")
    owners = {layer: n for layer, n in enumerate(arch.layer_kv_elements) if n}
    assert owners == {2: 320, 8: 320, 14: 320, 20: 640}
    assert sum(arch.layer_kv_elements) == 1600
    assert sum(arch.layer_kv_elements) * 2 * CTX == 400 * 2**20  # f16 at 128k: 400 MiB


def test_v41_without_sources_reads_as_v4() -> None:
    """The same config without kv_source_layer_ids is DeepSeek-V4's rule: every compressed layer keeps
    its own cache (head_dim / r; no r == 4 layer, so no index keys)."""
    config = _config(V41)
    del config["text_config"]["kv_source_layer_ids"]
    arch = parse_config(config, "v4.1")
    assert sum(arch.layer_kv_elements) == 18 * 512 // 2 + 20 * 512


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("kv_source_layer_ids", [0, 8], "layer 0 has compress_ratios 0"),
        ("kv_source_layer_ids", [], "at least one layer"),
        ("engram_num_embeddings", [384_006_168], "each of the 2 engram_layer_ids"),
    ],
)
def test_v41_bad_sharing_keys_name_the_key(key: str, value: object, says: str) -> None:
    config = _config(V41)
    config["text_config"][key] = value
    with pytest.raises(InputError, match=f"{key}: .*{says}"):
        parse_config(config, "v4.1")


def test_v41_is_sized_in_its_released_format() -> None:
    """quantization_config (top level): FP8 block scales with FP4 routed experts (its byte rule and the
    published checkpoint: tests/core/test_fp8_fp4_experts.py)."""
    assert load_model_path(FIXTURES / f"{V41}_config.json").native_quant == "fp8-fp4-experts"


def test_v4_flash_cache_matches_the_reference_implementations_bf16_cache() -> None:
    """DeepSeek-V4-Flash (catalog config): layers 2, 4, … 42 compress at ratio 4 with a 128-wide
    indexer key, 3, 5, … 41 at ratio 128, layers 0 and 1 keep only the 128-token window. By hand:
    21 × (512 + 128) / 4 + 20 × 512 / 128 = 3,440 elements, 6,880 bytes a token in bf16: the figure
    infervisor/plow docs/amd/deepseek-v4-mi300x.md@3e7c8c1 reads off the reference model.py ("KV
    bytes / token, whole tower, reference bf16 cache: 6 880 B"); the fixed window rings are apart."""
    spec = next(m for m in load_catalog(use_overlay=False).models if m.id == "deepseek-v4-flash")
    arch = parse_config(dict(spec.config), "deepseek-v4-flash")
    assert sum(arch.layer_kv_elements) == 21 * (512 + 128) // 4 + 20 * 512 // 128 == 3440
    assert sum(arch.layer_kv_elements) * 2 == 6880


# -- Gemma 4 12B (gemma4_unified): Gemma 4's text layers under a new model_type ---------------------

G12 = "google--gemma-4-12B"


def _gemma4_12b_layers() -> tuple[int, int]:
    """A sliding and a global layer of Gemma 4 12B, by hand from the GGUF tensor inventory's shapes
    (knowlet/Gemma-4-12B-Unified-System-One docs/validation/2026-10-04/gguf/tensor-inventory.json@6d8d079):
    attn_q/k/v/output, q/k norms of the head width, four hidden norms, layer_output_scale (1), and
    the gated FFN; global layers have 16 × 512 queries, one 512-wide key head and no attn_v."""
    d, ffn = 3840, 15_360
    common = 4 * d + 1 + 3 * d * ffn
    sliding = common + 2 * 256 + d * (16 * 256 + 2 * 8 * 256) + 16 * 256 * d
    full = common + 2 * 512 + d * (16 * 512 + 512) + 16 * 512 * d
    return sliding, full


def test_gemma4_12b_parameters_equal_the_gguf_tensor_table() -> None:
    """40 sliding and 8 global layers, the tied 262,144 × 3,840 embedding and the final norm: the 667
    tensors of the inventory (40 × 14 + 8 × 13 layer tensors, token_embd, output_norm and rope_freqs,
    a computed table that is no weight)."""
    sliding, full = _gemma4_12b_layers()
    arch = parse_config(_config(G12), "gemma-4-12b")
    assert arch.params_total == 40 * sliding + 8 * full + 262_144 * 3840 + 3840 == 11_907_350_320
    assert any("counted as gemma4_text" in note for note in arch.assumed)


def test_gemma4_12b_cache_by_hand() -> None:
    """Sliding layers keep K and V of 8 heads × 256 for the 1,024-token window; the 8 global layers
    one 512-wide head each for K and for V at every token. infervisor/plow's serving notes for this
    model measure the same (docs/bringup/results/gemma12b-fp8-20260930/comparison.md: "16 KiB per
    full-attention row" in BF16 = 8 × 1,024 × 2 bytes; a 640 MiB sliding ring of 2,048 rows =
    40 × 4,096 × 2 bytes a row)."""
    arch = parse_config(_config(G12), "gemma-4-12b")
    sliding = [
        n for n, kind in zip(arch.layer_kv_elements, arch.layer_kinds, strict=True) if kind == "sliding"
    ]
    full = [n for n, kind in zip(arch.layer_kv_elements, arch.layer_kinds, strict=True) if kind == "full"]
    assert sliding == [2 * 8 * 256] * 40 and full == [2 * 512] * 8 and arch.sliding_window == 1024
    assert sum(full) * 2 == 16 * 1024
    assert sum(sliding) * 2 * 2048 == 640 * 2**20
    assert sum(full) * 2 * CTX + sum(sliding) * 2 * 1024 == 2 * GIB + 320 * 2**20  # f16 at 128k


def test_an_unknown_type_with_global_head_dim_is_read_as_gemma4() -> None:
    """The key, not the name: the same text config under any model_type is Gemma 4's layout."""
    config = _config(G12)["text_config"] | {"model_type": "gemma4_next_text"}
    assert parse_config(config, "x").params_total == parse_config(_config(G12), "y").params_total


# -- OLMo 3 (olmo3): OLMo 2's layers with a sliding window on three of every four ------------------

#: OLMo 3 32B's shape as third-party pages tabulate it (e.g. https://apxml.com/models/olmo-31-32b-think:
#: 64 layers of 5,120, 40 Q / 8 KV heads of 128, FFN 27,648, vocabulary 100,278, window 4,096). Not a
#: published config.json (none was found, docs/architectures.md): it exercises the family only.
OLMO3_SHAPE = {
    "model_type": "olmo3",
    "hidden_size": 5120,
    "num_hidden_layers": 64,
    "num_attention_heads": 40,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 27_648,
    "vocab_size": 100_278,
    "max_position_embeddings": 65_536,
}


def test_olmo3_counts_olmo2_layers_and_the_default_window_pattern() -> None:
    """transformers models/olmo3/modular_olmo3.py: q/k/v/o without bias, q_norm over 40 × 128 and
    k_norm over 8 × 128, two post-norms, a gated MLP; Olmo3Config's layer_types default makes every
    fourth layer full attention and the rest a 4,096-token window."""
    d, v = 5120, 100_278
    attn = d * 40 * 128 + 2 * d * 8 * 128 + 40 * 128 * d + 40 * 128 + 8 * 128
    layer = attn + 3 * d * 27_648 + 2 * d
    arch = parse_config(OLMO3_SHAPE, "olmo3")
    assert arch.params_total == 64 * layer + 2 * v * d + d == 32_233_522_176
    assert arch.layer_kinds == ("sliding", "sliding", "sliding", "full") * 16 and arch.sliding_window == 4096
    listed = (
        OLMO3_SHAPE
        | {"layer_types": ["sliding_attention"] * 3 + ["full_attention"]}
        | {"num_hidden_layers": 4}
    )
    assert parse_config(listed, "olmo3").layer_kinds == ("sliding", "sliding", "sliding", "full")
