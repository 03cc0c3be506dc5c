"""Where the parameter count came from, in the JSON: the tensor table (DeepSeek-V4's FP4 experts
included, two to an I8 byte), config.json arithmetic, or a catalog entry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakes.safetensors_files import write_checkpoint
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.memory import Request, estimate_memory
from rigcheck.core.models.config import parse_config
from rigcheck.core.models.files import read_config_json, read_model_folder
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.report.estimate import estimate_json

H, HEAD, Q_LORA, O_LORA, INNER, EXPERTS, V = 64, 32, 16, 16, 32, 4, 128


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


#: a two-layer DeepSeek-V4 shaped as deepseek-ai/DeepSeek-V4-Flash's config is (FP8 linears with
#: expert_dtype fp4), its tensors named and typed as the released checkpoint's header has them
V4: dict[str, Any] = {
    "model_type": "deepseek_v4",
    "hidden_size": H,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 1,
    "head_dim": HEAD,
    "q_lora_rank": Q_LORA,
    "o_lora_rank": O_LORA,
    "o_groups": 2,
    "qk_rope_head_dim": 8,
    "moe_intermediate_size": INNER,
    "n_routed_experts": EXPERTS,
    "n_shared_experts": 1,
    "num_experts_per_tok": 2,
    "vocab_size": V,
    "tie_word_embeddings": False,
    "compress_ratios": [0, 4, 0],
    "expert_dtype": "fp4",
    "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]},
}


def v4_tensors() -> dict[str, tuple[str, list[int]]]:
    """Experts: w1/w3 [inner, hidden / 2] and w2 [hidden, inner / 2] in I8 (two FP4 values a byte)
    with an F8_E8M0 scale per 32; linears F8_E4M3 with a '.scale' per 128 × 128 block; norms BF16."""
    t: dict[str, tuple[str, list[int]]] = {"embed.weight": ("BF16", [V, H])}
    for i in range(2):
        p = f"layers.{i}."
        t[p + "attn_norm.weight"] = ("BF16", [H])
        t[p + "ffn_norm.weight"] = ("BF16", [H])
        t[p + "attn.wq_a.weight"] = ("F8_E4M3", [Q_LORA, H])
        t[p + "attn.wq_a.scale"] = ("F8_E8M0", [1, 1])
        t[p + "attn.wq_b.weight"] = ("F8_E4M3", [4 * HEAD, Q_LORA])
        t[p + "attn.wq_b.scale"] = ("F8_E8M0", [1, 1])
        for e in range(EXPERTS):
            for w, shape in (("w1", [INNER, H // 2]), ("w3", [INNER, H // 2]), ("w2", [H, INNER // 2])):
                t[f"{p}ffn.experts.{e}.{w}.weight"] = ("I8", shape)
                t[f"{p}ffn.experts.{e}.{w}.scale"] = ("F8_E8M0", [shape[0], shape[1] * 2 // 32])
    t["norm.weight"] = ("BF16", [H])
    t["head.weight"] = ("BF16", [V, H])
    return t


def test_deepseek_v4_fp4_experts_count_from_the_tensor_table(tmp_path: Path, catalog: Catalog) -> None:
    """Before: the I8 experts had 'no bit width' and the count fell back to config.json. Now each byte
    holds two FP4 values (expert_dtype fp4), '.scale' and E8M0 tensors are not parameters, and
    'head.weight' is the output head."""
    write_checkpoint(tmp_path, V4, v4_tensors())
    model = read_model_folder(tmp_path, catalog=catalog)
    layer = 2 * H + Q_LORA * H + 4 * HEAD * Q_LORA + EXPERTS * 3 * INNER * H
    assert model.arch.params_total == V * H + 2 * layer + H + V * H
    assert model.arch.head_params == H + V * H
    assert model.params_source == "tensor_table"
    assert (
        estimate_json(estimate_memory(model, Request(quant="bf16", context=1024), catalog))["model"][
            "params_source"
        ]
        == "tensor_table"
    )


def test_deepseek_v41_expert_dtype_inside_quantization_config(tmp_path: Path, catalog: Catalog) -> None:
    """V4.1 moves expert_dtype into quantization_config (infervisor/plow
    docs/amd/deepseek-v41-flash-mi300x.md@00a8d31, section 1 item 6): the I8 experts are still FP4,
    and the folder's released format is fp8-fp4-experts, sized from the files."""
    config = {k: v for k, v in V4.items() if k != "expert_dtype"}
    config["quantization_config"] = {
        "quant_method": "fp8",
        "weight_block_size": [32, 32],
        "expert_dtype": "fp4",
    }
    write_checkpoint(tmp_path, config, v4_tensors())
    model = read_model_folder(tmp_path, catalog=catalog)
    layer = 2 * H + Q_LORA * H + 4 * HEAD * Q_LORA + EXPERTS * 3 * INNER * H
    assert model.arch.params_total == V * H + 2 * layer + H + V * H
    assert model.params_source == "tensor_table"
    assert model.weights is not None and model.weights.quant_id == "fp8-fp4-experts"
    weights = next(
        t for t in estimate_memory(model, Request(context=1024), catalog).terms if t.category == "weights"
    )
    assert weights.bytes == model.weights.total_bytes


def test_config_and_catalog_counts_say_so(tmp_path: Path, catalog: Catalog) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(V4))
    from_config = read_config_json(path)
    assert from_config.params_source == "config"
    assert from_config.arch.params_total == parse_config(V4, "x").params_total
    entry = next(m for m in catalog.models if m.id == "qwen3-8b")
    est = estimate_memory(from_catalog(entry), Request(quant="bf16", context=1024), catalog)
    assert estimate_json(est)["model"]["params_source"] == "catalog"
