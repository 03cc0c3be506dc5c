"""The open-world reader: 2026 architectures counted from their keys, caches worked out by hand,
unknown model types counted by the generic rule, quantization_config as the released format, the
formats 2026 checkpoints ship in, and a ladder of formats that exist.

Configs come from the catalog (their sources are in the entries) or are trimmed copies named where
they are used. Every expected number below is worked out by hand from the reference layout named in
the test, never read back from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.test_model_config import gemma4_vision_tower
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.memory import Request, estimate_memory, resolve_quant
from rigcheck.core.estimate.recommend import candidates
from rigcheck.core.models.config import parse_config
from rigcheck.core.models.files import read_config_json
from rigcheck.core.models.resolve import from_catalog, released_format
from rigcheck.core.models.spec import ModelInfo

CATALOG = load_catalog(use_overlay=False)
BY_ID = {m.id: m for m in CATALOG.models}
CTX = 131_072


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return CATALOG


def cache(model: ModelInfo, catalog: Catalog, engine: Any = "vllm") -> tuple[int, int]:
    """(attention KV bytes, recurrent state bytes) at 128k tokens, f16, one sequence."""
    est = estimate_memory(model, Request(quant="bf16", context=CTX, engine=engine), catalog)
    kv = [t.bytes for t in est.terms if t.category == "kv_cache"]
    return kv[0], sum(kv[1:])


# -- Gemma 4: global layers, keys as values --------------------------------------------------------


def test_gemma_4_31b_counts_the_tensor_table_exactly() -> None:
    """A public report of google/gemma-4-31B-it lists 31,273,088,876 tensor elements; its vision tower
    (tests/core/test_model_config.py gemma4_vision_tower) is 575,743,536 of them."""
    arch = parse_config(BY_ID["gemma-4-31b"].config, "x")
    assert arch.params_total == 30_697_345_340
    assert arch.params_total + gemma4_vision_tower(arch.hidden_size) == 31_273_088_876


def test_gemma_4_cache_by_layer_width(catalog: Catalog) -> None:
    """50 sliding layers of 16 KV heads × 256 capped at the 1,024-token window, 10 global layers of
    4 KV heads × 512 (keys and values both cached) over the whole context, 2 bytes each."""
    kv, state = cache(from_catalog(BY_ID["gemma-4-31b"]), catalog)
    sliding = 50 * 2 * 16 * 256 * 1024 * 2
    full = 10 * 2 * 4 * 512 * CTX * 2
    assert kv == sliding + full and state == 0
    # the llama-style reading of these keys (every layer 16 × 256 over the context) is 4.7× this
    assert 60 * 2 * 16 * 256 * CTX * 2 / kv > 4.5


# -- Mamba-2 hybrids -------------------------------------------------------------------------------


def test_nemotron_3_nano_state_and_cache(catalog: Catalog) -> None:
    """models/nemotron_h: conv state (d_inner + 2·n_groups·d_state) × conv_kernel = (4,096 + 2,048) × 4
    and SSM state heads × head_dim × d_state = 64 × 64 × 128, in fp32, for each of the 23 M blocks;
    KV for the 6 attention blocks only (2 KV heads × 128)."""
    model = from_catalog(BY_ID["nemotron-3-nano-30b-a3b"])
    assert model.arch.layer_kinds.count("linear") == 23 and model.arch.layer_kinds.count("full") == 6
    kv, state = cache(model, catalog)
    assert state == 23 * ((4096 + 2048) * 4 + 64 * 64 * 128) * 4
    assert kv == 6 * 2 * 2 * 128 * CTX * 2


def test_an_unknown_type_with_a_hybrid_pattern_is_read_as_nemotron_h() -> None:
    config = {**BY_ID["nemotron-3-nano-30b-a3b"].config, "model_type": "nemotron_h_next"}
    arch = parse_config(config, "x")
    assert arch.params_total == parse_config(BY_ID["nemotron-3-nano-30b-a3b"].config, "x").params_total
    assert any("counted as nemotron_h" in note for note in arch.assumed)
    with pytest.raises(InputError, match="hybrid_override_pattern"):
        parse_config({**config, "hybrid_override_pattern": "M*E"}, "x")


# -- MLA with a sparse-attention indexer, DeepSeek-V4's compressed cache ----------------------------


def test_glm_5_caches_the_indexer_keys(catalog: Catalog) -> None:
    """DeepSeek-V3.2 inference/model.py: kv_lora_rank 512 + qk_rope_head_dim 64 per MLA layer, and the
    indexer's index_head_dim 128 keys beside them, for each of GLM-5's 78 layers."""
    model = from_catalog(BY_ID["glm-5"])
    kv, _ = cache(model, catalog)
    assert kv == 78 * (512 + 64 + 128) * CTX * 2


def test_layers_that_share_an_indexer_cache_only_the_latent() -> None:
    """zai-org/GLM-5.2's config marks layers whose indexer is "shared" (indexer_types): those keep
    512 + 64 elements per token and no indexer weights of their own."""
    types = ["full"] * 3 + ["shared", "shared", "shared", "full"] * 18 + ["shared", "shared", "shared"]
    base = parse_config(BY_ID["glm-5"].config, "x")
    shared = parse_config({**BY_ID["glm-5"].config, "indexer_types": types}, "x")
    assert shared.layer_kv_elements[:4] == (704, 704, 704, 576)
    assert sum(shared.layer_kv_elements) == types.count("full") * 704 + types.count("shared") * 576
    indexer = 2048 * 32 * 128 + 6144 * 128 + 2 * 128 + 6144 * 32  # wq_b, wk, k_norm, weights_proj
    assert base.params_total - shared.params_total == types.count("shared") * indexer


#: deepseek-ai/DeepSeek-V4-Flash config.json, the keys the count reads (copy in
#: ai-dynamo/aiconfigurator model_configs/deepseek-ai--DeepSeek-V4-Flash_config.json@095f58a5)
V4_FLASH: dict[str, Any] = {
    "model_type": "deepseek_v4",
    "hidden_size": 4096,
    "num_hidden_layers": 43,
    "num_attention_heads": 64,
    "num_key_value_heads": 1,
    "head_dim": 512,
    "q_lora_rank": 1024,
    "o_lora_rank": 1024,
    "o_groups": 8,
    "qk_rope_head_dim": 64,
    "index_head_dim": 128,
    "index_n_heads": 64,
    "moe_intermediate_size": 2048,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "num_experts_per_tok": 6,
    "vocab_size": 129280,
    "max_position_embeddings": 1048576,
    "tie_word_embeddings": False,
    "compress_ratios": [0, 0] + [4, 128] * 20 + [4] + [0],  # the 44th entry is the MTP layer's
}


def test_deepseek_v4_compressed_cache_per_token() -> None:
    """A layer with compress ratio r keeps head_dim / r elements per token, plus index_head_dim / r
    indexer keys where r is 4: 21 × (128 + 32) + 20 × 4 = 3,440 elements, 6.9 kB at 2 bytes."""
    arch = parse_config(V4_FLASH, "x")
    assert sum(arch.layer_kv_elements) == 21 * (512 // 4 + 128 // 4) + 20 * (512 // 128)
    assert 283e9 < arch.params_total < 285e9  # the reference layout's routed experts dominate
    relabelled = parse_config({**V4_FLASH, "model_type": "deepseek_ref"}, "x")
    assert relabelled.params_total == arch.params_total
    with pytest.raises(InputError, match="compress_ratios"):
        parse_config({**V4_FLASH, "compress_ratios": [4, 128]}, "x")


# -- the generic rule ------------------------------------------------------------------------------


def test_qwen3_5_moe_counts_as_qwen3_next_does() -> None:
    """The issue's finding: relabelled qwen3_next, a Qwen3.5 MoE config counted exactly; the family
    is the same body, so both labels give one count."""
    next_config = dict(BY_ID["qwen3-next-80b-a3b"].config)
    as_qwen3_5 = {**next_config, "model_type": "qwen3_5_moe_text"}
    assert parse_config(as_qwen3_5, "x").params_total == parse_config(next_config, "x").params_total


def test_an_unknown_moe_is_counted_by_the_generic_rule_within_half_a_percent() -> None:
    config = dict(BY_ID["qwen3-30b-a3b"].config)
    known = parse_config(config, "x")
    unknown = parse_config({**config, "model_type": "mystery_moe"}, "x")
    assert abs(unknown.params_total - known.params_total) <= 0.005 * known.params_total
    assert unknown.is_moe and unknown.experts_per_token == known.experts_per_token
    assert any("counted by the generic rule" in note for note in unknown.assumed)


def test_mimo_v2_flash_sliding_and_global_widths(catalog: Catalog) -> None:
    """The generic rule on XiaomiMiMo/MiMo-V2-Flash: 9 global layers cache 4 KV heads × (192 + 128)
    over the context, 39 sliding layers 8 × (192 + 128) for the 128-token window."""
    kv, _ = cache(from_catalog(BY_ID["mimo-v2-flash"]), catalog)
    assert kv == 9 * 4 * 320 * CTX * 2 + 39 * 8 * 320 * 128 * 2


def test_moe_layer_freq_as_a_list_places_the_experts() -> None:
    config = {**BY_ID["qwen3-30b-a3b"].config, "model_type": "mystery_moe", "num_hidden_layers": 4}
    config = {**config, "moe_layer_freq": [0, 1, 1, 0], "intermediate_size": 6144}
    arch = parse_config(config, "x")
    assert arch.moe_layers == (False, True, True, False)
    with pytest.raises(InputError, match="moe_layer_freq"):
        parse_config({**config, "moe_layer_freq": [0, 1]}, "x")


def test_kimi_delta_attention_without_its_layer_list_is_refused_naming_it() -> None:
    """moonshotai/Kimi-K3's text_config (model_type kimi_linear) keeps its KDA layers in linear_attn_config
    (counted in tests/core/test_open_world_2026.py); without kda_layers nothing says which layers they are."""
    config = {**BY_ID["kimi-k2"].config, "model_type": "kimi_linear", "linear_attn_config": {"num_heads": 96}}
    with pytest.raises(InputError, match=r"linear_attn_config\.kda_layers"):
        parse_config(config, "x")


def test_a_text_config_without_a_model_type_is_still_read() -> None:
    """nvidia/MiniMax-M3-NVFP4: the outer model_type minimax_m3_vl, its text_config names none."""
    text = {k: v for k, v in BY_ID["qwen3-30b-a3b"].config.items() if k != "model_type"}
    arch = parse_config({"model_type": "minimax_m3_vl", "text_config": text}, "x")
    assert arch.model_type == "minimax_m3_vl_text" and arch.is_moe


# -- quantization_config: the released format ------------------------------------------------------


@pytest.mark.parametrize(
    ("quant", "expected"),
    [
        ({"quant_method": "mxfp4"}, "mxfp4"),
        ({"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}, "fp8-e4m3"),
        ({"quant_method": "modelopt", "quant_algo": "NVFP4"}, "nvfp4"),
        (
            {
                "quant_method": "modelopt",
                "quant_algo": "MIXED_PRECISION",
                "quantized_layers": {
                    "model.layers.0.self_attn.q_proj": {"quant_algo": "FP8"},
                    "model.layers.0.self_attn.k_proj": {"quant_algo": "FP8"},
                    "model.layers.0.mlp.experts.0.up_proj": {"quant_algo": "W4A16_NVFP4"},
                },
            },
            "nvfp4",
        ),
        (
            {
                "quant_method": "compressed-tensors",
                "format": "pack-quantized",
                "config_groups": {
                    "group_0": {
                        "targets": ["Linear"],
                        "weights": {"num_bits": 4, "type": "int", "group_size": 32, "symmetric": True},
                    }
                },
            },
            "w4a16-g32",
        ),
        ({"quant_method": "compressed-tensors", "format": "mxfp4-pack-quantized"}, "mxfp4"),
        ({"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized"}, "nvfp4"),
        ({"quant_method": "gptq", "bits": 4, "group_size": 128}, "gptq-4bit-g128"),
        ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}, "nf4"),
        ({"quant_method": "something_new"}, None),
    ],
)
def test_quantization_config_names_the_released_format(quant: dict[str, Any], expected: str | None) -> None:
    assert released_format({"quantization_config": quant}) == expected
    assert released_format({"text_config": {"quantization_config": quant}}) == expected


def test_deepseek_v4_fp8_with_fp4_experts_is_its_own_format() -> None:
    config = {"quantization_config": {"quant_method": "fp8"}, "expert_dtype": "fp4"}
    assert released_format(config) == "fp8-fp4-experts"
    inside = {"quantization_config": {"quant_method": "fp8", "expert_dtype": "fp4"}}  # V4.1 moves it in
    assert released_format(inside) == "fp8-fp4-experts"
    assert released_format({"quantization_config": {"quant_method": "fp8"}}) == "fp8-e4m3"


def test_gpt_oss_from_its_own_config_json_is_mxfp4(tmp_path: Path, catalog: Catalog) -> None:
    """The issue's case: 217.6 GiB as BF16 before; MXFP4 experts and Q8_0 elsewhere is 58.9 GiB."""
    path = tmp_path / "gpt-oss-120b" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(BY_ID["gpt-oss-120b"].config), encoding="utf-8")
    model = read_config_json(path)
    assert model.native_quant == "mxfp4"
    est = estimate_memory(model, Request(context=8192), catalog)
    weights = next(t for t in est.terms if t.category == "weights")
    assert round(weights.bytes / 2**30, 1) == 58.9


# -- formats ---------------------------------------------------------------------------------------

#: (format, bits per weight of the layers, embedding and head 16-bit?)
FORMATS = [
    ("nvfp4", 4.5, True),  # 4 bits + one FP8 scale per 16
    ("mxfp8", 8.25, True),  # 8 bits + one E8M0 scale per 32
    ("w4a16-g32", 4.5, True),  # 4 bits + a 16-bit scale per 32
    ("w4a16-g128", 4.125, True),
    ("mlx-4bit", 4.5, False),  # a 16-bit scale and bias per 64, embedding and head quantized too
    ("mlx-6bit", 6.5, False),
    ("mlx-8bit", 8.5, False),
    ("exl3-4.0bpw", 4.0, True),
]


@pytest.mark.parametrize(("name", "bpw", "head_16bit"), FORMATS)
def test_each_new_format_is_sized_by_its_byte_rule(
    name: str, bpw: float, head_16bit: bool, catalog: Catalog
) -> None:
    model = from_catalog(BY_ID["qwen3-8b"])
    arch = model.arch
    est = estimate_memory(model, Request(quant=name, context=4096, engine="vllm"), catalog)
    weights = next(t for t in est.terms if t.category == "weights").bytes
    outside = arch.embed_params + arch.head_params
    layers = sum(arch.layer_params)
    expected = layers * bpw / 8 + (outside * 2 if head_16bit else outside * bpw / 8)
    assert abs(weights - expected) <= len(arch.layer_params) + 2  # per-layer rounding to whole bytes
    assert resolve_quant(catalog, name.upper()).id == name


def test_a_model_released_quantized_gets_no_narrower_rungs(catalog: Catalog) -> None:
    """Published K-quants of gpt-oss keep the MXFP4 experts (~63 GB each), so none is offered."""
    assert candidates(from_catalog(BY_ID["gpt-oss-120b"]), "llama.cpp", catalog) == [("mxfp4", True)]
    bf16 = candidates(from_catalog(BY_ID["qwen3-8b"]), "llama.cpp", catalog)
    assert len(bf16) > 3  # a BF16 release still gets the ladder below it
