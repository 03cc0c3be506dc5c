"""Parameters from the tensor table (core/models/tensors.py): synthetic safetensors folders whose
headers are the real layout of a dense model, an MoE and a compressed-tensors INT4 checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakes.safetensors_files import write_checkpoint
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.models.config import parse_config
from rigcheck.core.models.files import read_model_folder

H, FF, V, KV = 64, 128, 256, 32
Tensors = dict[str, tuple[str, list[int]]]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


DENSE: dict[str, Any] = {
    "model_type": "llama",
    "hidden_size": H,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": FF,
    "vocab_size": V,
    "tie_word_embeddings": False,
}


def linear(name: str, out: int, inp: int, packed: bool) -> Tensors:
    """A linear layer as safetensors hold it: BF16, or compressed-tensors pack-quantized INT4 g32."""
    if not packed:
        return {name + ".weight": ("BF16", [out, inp])}
    return {
        name + ".weight_packed": ("I32", [out, inp // 8]),
        name + ".weight_scale": ("BF16", [out, inp // 32]),
        name + ".weight_shape": ("I64", [2]),
    }


def dense_tensors(packed: bool = False) -> Tensors:
    t: Tensors = {"model.embed_tokens.weight": ("BF16", [V, H])}
    for i in range(2):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = ("BF16", [H])
        t[p + "post_attention_layernorm.weight"] = ("BF16", [H])
        for proj, out, inp in (("q", H, H), ("k", KV, H), ("v", KV, H), ("o", H, H)):
            t |= linear(f"{p}self_attn.{proj}_proj", out, inp, packed)
        for proj, out, inp in (("gate", FF, H), ("up", FF, H), ("down", H, FF)):
            t |= linear(f"{p}mlp.{proj}_proj", out, inp, packed)
    t["model.norm.weight"] = ("BF16", [H])
    t["lm_head.weight"] = ("BF16", [V, H])
    return t


def hand_count() -> int:
    """The dense model's parameters worked by hand: embedding, 2 × (norms, attention, MLP), norm, head."""
    attention = H * H + KV * H + KV * H + H * H
    mlp = 3 * FF * H
    return V * H + 2 * (2 * H + attention + mlp) + H + V * H


def test_dense_counts_from_the_tensor_table(tmp_path: Path, catalog: Catalog) -> None:
    tensors = dense_tensors()
    tensors["model.vision_tower.patch_embed.weight"] = ("BF16", [H, 48])  # loaded, not decoded
    write_checkpoint(tmp_path, DENSE, tensors)
    info = read_model_folder(tmp_path, catalog=catalog)
    assert info.arch.params_total == hand_count() == parse_config(DENSE, "c").params_total
    [note] = [n for n in info.notes if n.startswith("parameters:")]
    assert note.startswith("parameters: from the tensor table")
    assert f"{H * 48:,} in multimodal towers" in note
    assert (info.arch.tower_params, info.arch.mtp_params) == (H * 48, 0)


def test_packed_int4_counts_eight_weights_per_word_and_no_scales(tmp_path: Path, catalog: Catalog) -> None:
    config = DENSE | {
        "quantization_config": {
            "quant_method": "compressed-tensors",
            "format": "pack-quantized",
            "config_groups": {
                "group_0": {
                    "targets": ["Linear"],
                    "weights": {"num_bits": 4, "group_size": 32, "type": "int"},
                }
            },
            "ignore": ["lm_head"],
        }
    }
    write_checkpoint(tmp_path, config, dense_tensors(packed=True))
    info = read_model_folder(tmp_path, catalog=catalog)
    assert info.arch.params_total == hand_count()
    [note] = [n for n in info.notes if n.startswith("parameters:")]
    assert (
        "from the tensor table" in note and "28 scale/zero tensors not counted" in note
    )  # 2 layers × 7 × (scale, shape)


def test_packed_tensors_without_a_bit_width_fall_back_to_config(tmp_path: Path, catalog: Catalog) -> None:
    config = DENSE | {"quantization_config": {"quant_method": "compressed-tensors", "config_groups": {}}}
    write_checkpoint(tmp_path, config, dense_tensors(packed=True))
    info = read_model_folder(tmp_path, catalog=catalog)
    assert info.arch.params_total == parse_config(config, "c").params_total
    [note] = [n for n in info.notes if n.startswith("parameters:")]
    assert note.startswith(
        "parameters: from config.json (tensor model.layers.0.self_attn.q_proj.weight_packed"
    )


MOE: dict[str, Any] = {
    "model_type": "qwen3_moe",
    "hidden_size": H,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "intermediate_size": FF,
    "moe_intermediate_size": 32,
    "num_experts": 4,
    "num_experts_per_tok": 2,
    "decoder_sparse_step": 1,
    "mlp_only_layers": [],
    "vocab_size": V,
    "tie_word_embeddings": True,
}


def moe_tensors(mtp: bool) -> Tensors:
    t: Tensors = {"model.embed_tokens.weight": ("BF16", [V, H])}
    for i in range(3 if mtp else 2):  # layer 2: a multi-token-prediction layer past the decoder
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = ("BF16", [H])
        t[p + "post_attention_layernorm.weight"] = ("BF16", [H])
        t[p + "self_attn.q_proj.weight"] = ("BF16", [64, H])
        t[p + "self_attn.k_proj.weight"] = ("BF16", [KV, H])
        t[p + "self_attn.v_proj.weight"] = ("BF16", [KV, H])
        t[p + "self_attn.o_proj.weight"] = ("BF16", [H, 64])
        t[p + "self_attn.q_norm.weight"] = ("BF16", [16])
        t[p + "self_attn.k_norm.weight"] = ("BF16", [16])
        t[p + "mlp.gate.weight"] = ("BF16", [4, H])
        for e in range(4):
            for proj, shape in (("gate", [32, H]), ("up", [32, H]), ("down", [H, 32])):
                t[f"{p}mlp.experts.{e}.{proj}_proj.weight"] = ("BF16", shape)
    t["model.norm.weight"] = ("BF16", [H])
    return t


def test_moe_counts_every_expert_and_leaves_the_mtp_layer_off_the_decoder(
    tmp_path: Path, catalog: Catalog
) -> None:
    write_checkpoint(tmp_path, MOE, moe_tensors(mtp=True))
    info = read_model_folder(tmp_path, catalog=catalog)
    shared = 2 * H + (64 * H + 2 * KV * H + H * 64 + 32) + 4 * H
    expert = 3 * 32 * H
    assert info.arch.params_total == V * H + 2 * (shared + 4 * expert) + H
    assert info.arch.params_total == parse_config(MOE, "c").params_total
    # one token uses 2 of the 4 experts in each layer
    assert info.arch.layer_active_params == (shared + 2 * expert,) * 2
    [note] = [n for n in info.notes if n.startswith("parameters:")]
    assert f"{shared + 4 * expert:,} in MTP layers" in note
    assert (info.arch.tower_params, info.arch.mtp_params) == (0, shared + 4 * expert)
