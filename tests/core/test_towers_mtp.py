"""Multimodal towers and MTP layers, counted apart from the decoder (core/models/towers.py, tensors.py) and
loaded where the engine loads them (core/estimate/memory_weights.py _outside_decoder).

Every expected number is worked out here by hand from the reference layout and the published totals,
never read back from the reader: GLM-4.7's and DeepSeek-V3's Hugging Face totals are reproduced to the
parameter, DeepSeek-V4.1-Flash's within 0.1%."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from fakes.gguf_files import write_gguf
from rigcheck.core.catalog import load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.memory import Request, estimate_memory
from rigcheck.core.estimate.speed.reads import active_bytes
from rigcheck.core.models.config import parse_config
from rigcheck.core.models.files import read_gguf
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.models.tensors import count_from_tensors

FIXTURES = Path(__file__).parents[1] / "fixtures" / "configs-2026"
CATALOG = load_catalog()


def _config(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}_config.json").read_text(encoding="utf-8"))


def _info(config: dict, name: str) -> ModelInfo:
    return ModelInfo(id=name, name=name, arch=parse_config(config, name), source_kind="config", source=name)


# -- GLM-4.7: one MTP layer, the published total to the parameter -----------------------------------

#: the Hugging Face API's safetensors total for zai-org/GLM-4.7 (midagedev/bloomery
#: docs/research/models-survey.md@51dcedaa, table "GLM, Flash-named")
GLM47_PUBLISHED = 358_337_791_296


def _glm47_mtp() -> tuple[int, int]:
    """The NextN layer by hand: a MoE decoder layer (q/k/v with bias, QK norms, 160 routed + 1 shared
    expert, router with correction bias), eh_proj, enorm, hnorm, shared_head.norm, and its own
    embed_tokens and shared_head.head (the tensors alibaba/rtp-llm's GLM-4.7 NextN loader names)."""
    d, v, heads, kv, hd = 5120, 151_552, 96, 8, 128
    attn = d * heads * hd + heads * hd + 2 * (d * kv * hd + kv * hd) + heads * hd * d + 2 * hd
    moe = 160 * 3 * d * 1536 + 3 * d * 1536 + 160 * d + 160
    copies = 2 * v * d
    return attn + 2 * d + moe + 2 * d * d + 3 * d + copies, copies


def test_glm47_mtp_layer_is_counted_apart_and_completes_the_published_total() -> None:
    arch = parse_config(_config("zai-org--GLM-4.7"), "glm-4.7")
    mtp, copies = _glm47_mtp()
    assert arch.params_total == 352_797_829_024  # the decoder, unchanged
    assert (arch.mtp_params, arch.mtp_shared_params, arch.mtp_source) == (mtp, copies, "config")
    assert arch.params_total + arch.mtp_params == GLM47_PUBLISHED
    assert arch.tower_params == 0
    assert any(note.startswith("num_nextn_predict_layers 1: MTP layers") for note in arch.assumed)


# -- DeepSeek-V3: decoder + MTP module + FP8 block scales = the hub's total --------------------------

#: https://huggingface.co/api/models/deepseek-ai/DeepSeek-V3: "safetensors": {"total": 684531386000,
#: "parameters": {"BF16": 3918786560, "F8_E4M3": 680571043840, "F32": 41555600}}; the README's note:
#: "685B, which includes 671B of the Main Model weights and 14B of the Multi-Token Prediction (MTP)
#: Module weights" (deepseek-ai/DeepSeek-V3 README.md)
V3_TOTAL, V3_BF16, V3_F32 = 684_531_386_000, 3_918_786_560, 41_555_600


def test_deepseek_v3_hub_total_is_decoder_plus_mtp_plus_fp8_scales_to_the_parameter() -> None:
    d, v, heads = 7168, 129_280, 128
    attn = d * 1536 + 1536 + 1536 * heads * 192 + d * 576 + 512 + 512 * heads * 256 + heads * 128 * d
    moe = 256 * 3 * d * 2048 + 3 * d * 2048 + 256 * d + 256
    mtp = attn + 2 * d + moe + 2 * d * d + 3 * d + 2 * v * d
    arch = from_catalog(CATALOG.model("deepseek-v3")).arch
    assert arch.mtp_params == mtp
    assert arch.mtp_shared_params == 2 * v * d

    def scales(rows: int, cols: int) -> int:  # one F32 scale per 128 x 128 block of an FP8 weight
        return math.ceil(rows / 128) * math.ceil(cols / 128)

    attn_s = scales(1536, d) + scales(heads * 192, 1536) + scales(576, d) + scales(heads * 256, 512)
    attn_s += scales(d, heads * 128)
    dense_s = 2 * scales(18_432, d) + scales(d, 18_432)
    expert_s = 2 * scales(2048, d) + scales(d, 2048)
    block_scales = 62 * attn_s + 3 * dense_s + 59 * 257 * expert_s  # 61 layers + the MTP layer
    assert block_scales + 59 * 256 == V3_F32  # the rest of F32: the routers' correction biases
    assert arch.params_total + arch.mtp_params + block_scales == V3_TOTAL
    # BF16: the embedding and head twice (the MTP module keeps copies), every norm, the routers, eh_proj
    norms = 62 * (2 * d + 1536 + 512) + d + 3 * d
    assert 4 * v * d + norms + 59 * 256 * d + 2 * d * d == V3_BF16


# -- DeepSeek-V4.1-Flash: DSpark draft blocks and a vision tower -------------------------------------

V41 = "deepseek-ai--DeepSeek-V4.1-Flash"
#: "763.2B (API; ...)", midagedev/bloomery docs/research/models-survey.md@51dcedaa, table A
V41_PUBLISHED = 763.2e9


def test_v41_draft_blocks_and_vision_tower_complete_the_api_total() -> None:
    """Three DSpark blocks, each the trunk layer with 128 routed experts (dspark_n_routed_experts), and a
    32-block ViT of 1024 (MLP 2,816, biases, LayerNorms, 14 px patches, a 3 x 3 downsample projected to
    5,120): both assumptions the notes state; together within 0.1% of the API's total."""
    d, heads, hd, q_lora, o_lora, groups = 5120, 64, 512, 1280, 1024, 8
    attn = d * q_lora + q_lora + q_lora * heads * hd + d * hd + hd + heads
    attn += heads * hd * o_lora + groups * o_lora * d + 2 * d
    draft = 3 * (attn + 128 * 3 * d * 2304 + 3 * d * 2304 + 128 * d + 128)
    w, i = 1024, 2816
    block = 4 * w * w + 4 * w + 2 * w * i + i + w + 4 * w
    tower = 32 * block + 3 * 14 * 14 * w + 9 * w * 5120 + 5120
    arch = parse_config(_config(V41), "v4.1")
    assert (arch.mtp_params, arch.mtp_shared_params) == (draft, 0)
    assert (arch.tower_params, arch.tower_source) == (tower, "config")
    assert arch.params_total == 748_078_822_400
    assert abs((arch.params_total + draft + tower) / V41_PUBLISHED - 1) < 0.001


def test_kimi_k3_moonvit_by_its_own_keys_and_no_mtp_at_zero() -> None:
    """MoonViT's vt_* keys: 27 blocks of 1024 with 1536-wide q/k/v, a two-matrix MLP of 4096, RMS norms and
    no biases (attn_bias, linear_bias false), a 64 x 64 position table, 2 x 2 merge into 7,168."""
    w, q, i = 1024, 1536, 4096
    tower = 27 * (3 * w * q + q * w + 2 * w * i + 2 * w) + 3 * 14 * 14 * w + 64 * 64 * w + 4 * w * 7168
    arch = parse_config(_config("moonshotai--Kimi-K3"), "k3")
    assert arch.tower_params == tower
    assert arch.mtp_params == 0  # num_nextn_predict_layers 0


def test_gemma4_tower_without_sizes_is_not_guessed() -> None:
    arch = parse_config(_config("google--gemma-4-12B"), "gemma-4-12b")
    assert arch.tower_params == 0 and arch.params_total == 11_907_350_320
    notes = [n for n in arch.assumed if n.startswith(("vision_config", "audio_config"))]
    assert len(notes) == 2 and all("not counted from config (no depth" in n for n in notes)


def test_qwen35_mtp_is_one_full_attention_layer_without_embedding_copies() -> None:
    """Qwen3.5's mtp.* (mtp_num_hidden_layers 1): a full-attention decoder layer, fc (2h -> h) and three
    norms; the checkpoint keeps no embedding or head of its own (vllm qwen3_next_mtp.py)."""
    arch = from_catalog(CATALOG.model("qwen3.5-27b")).arch
    d = arch.hidden_size
    last_full = max(n for n, kind in enumerate(arch.layer_kinds) if kind != "linear")
    assert arch.layer_kinds[-1] != "linear" and last_full == arch.num_layers - 1
    assert arch.mtp_params == arch.layer_params[last_full] + 2 * d * d + 3 * d
    assert arch.mtp_shared_params == 0


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("num_nextn_predict_layers", -1, "num_nextn_predict_layers: must be a whole number"),
        ("num_nextn_predict_layers", 65, "num_nextn_predict_layers: must be at most 64"),
        ("vision_config", [1], "vision_config: must be a JSON object"),
    ],
)
def test_bad_keys_are_one_line_errors(key: str, value: object, says: str) -> None:
    config = {**_config("zai-org--GLM-4.7"), key: value}
    with pytest.raises(InputError, match=says):
        parse_config(config, "glm")


# -- the tensor table: each in its own bucket --------------------------------------------------------


def test_tensor_table_buckets_towers_mtp_and_the_mtp_copies() -> None:
    config = {
        "model_type": "llama", "hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 1,
        "num_attention_heads": 2, "num_key_value_heads": 2, "vocab_size": 32, "tie_word_embeddings": False,
    }  # fmt: skip
    arch = parse_config(config, "tiny")
    t = {"model.embed_tokens.weight": [32, 8], "lm_head.weight": [32, 8], "model.norm.weight": [8]}
    for name, shape in (("q", [8, 8]), ("k", [8, 8]), ("v", [8, 8]), ("o", [8, 8])):
        t[f"model.layers.0.self_attn.{name}_proj.weight"] = shape
    for name, shape in (("gate", [16, 8]), ("up", [16, 8]), ("down", [8, 16])):
        t[f"model.layers.0.mlp.{name}_proj.weight"] = shape
    t["model.layers.0.input_layernorm.weight"] = t["model.layers.0.post_attention_layernorm.weight"] = [8]
    t["model.layers.1.eh_proj.weight"] = [8, 16]  # DeepSeek-style MTP layer past the decoder
    t["model.layers.1.embed_tokens.weight"] = [32, 8]
    t["model.layers.1.shared_head.head.weight"] = [32, 8]
    t["mtp.fc.weight"] = [8, 16]  # Qwen-style
    t["model.visual.blocks.0.attn.qkv.weight"] = [24, 8]
    t["model.multi_modal_projector.linear_1.weight"] = [8, 8]
    header = {name: {"dtype": "BF16", "shape": shape, "data_offsets": [0, 0]} for name, shape in t.items()}
    counted, note = count_from_tensors({"model.safetensors": header}, config, arch)
    assert counted.params_total == arch.params_total  # the decoder alone
    assert (counted.tower_params, counted.tower_source) == (24 * 8 + 8 * 8, "tensor_table")
    assert counted.mtp_params == 8 * 16 + 2 * 32 * 8 + 8 * 16
    assert counted.mtp_shared_params == 2 * 32 * 8
    assert "256 in multimodal towers" in note and "768 in MTP layers" in note


# -- memory: what each engine loads ------------------------------------------------------------------


def _outside(est) -> dict[str, int]:
    return {t.name: t.bytes for t in est.terms if t.name.startswith(("multimodal towers", "MTP layers"))}


def test_mtp_weights_only_when_mtp_drafting_is_asked() -> None:
    info = _info(_config("zai-org--GLM-4.7"), "glm-4.7")
    mtp, copies = _glm47_mtp()
    plain = estimate_memory(info, Request(quant="fp8", engine="vllm"), CATALOG)
    drafted = estimate_memory(info, Request(quant="fp8", engine="vllm", speculative="mtp"), CATALOG)
    assert _outside(plain) == {}
    # FP8: one byte a parameter; the draft shares the target's embedding and head (vLLM test_mtp.py)
    assert _outside(drafted) == {"MTP layers (speculative draft)": mtp - copies}
    assert drafted.total("weights") - plain.total("weights") == mtp - copies
    # placed with the embedding and head, but not read per token
    assert drafted.other_weight_bytes - plain.other_weight_bytes == mtp - copies
    assert drafted.outside_weight_bytes == mtp - copies and plain.outside_weight_bytes == 0


def test_mtp_on_llama_cpp_at_the_layers_bits() -> None:
    info = _info(_config("zai-org--GLM-4.7"), "glm-4.7")
    est = estimate_memory(info, Request(quant="Q4_K_M", engine="llama.cpp", speculative="mtp"), CATALOG)
    mtp, copies = _glm47_mtp()
    per_param = sum(est.layer_weight_bytes) / sum(info.arch.layer_params)
    assert 0.5 < per_param < 0.65  # Q4_K_M's layers: ~4.9 bits
    assert _outside(est) == {"MTP layers (speculative draft)": int((mtp - copies) * per_param)}


@pytest.mark.parametrize(
    ("config", "engine", "says"),
    [
        ("zai-org--GLM-4.7", "ollama", "mtp: RigCheck sizes MTP drafting for vllm, sglang, llama.cpp"),
        ("allenai--Olmo-3.1-32B-Think", "vllm", "mtp: this model's config names no MTP layers"),
    ],
)
def test_mtp_where_it_cannot_run_is_an_error(config: str, engine: str, says: str) -> None:
    info = _info(_config(config), config)
    with pytest.raises(InputError, match=says):
        estimate_memory(info, Request(quant="bf16", engine=engine, speculative="mtp"), CATALOG)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("engine", "loaded"),
    [("vllm", True), ("sglang", True), ("transformers", True), ("llama.cpp", False), ("ollama", False)],
)
def test_the_tower_is_loaded_by_the_engines_that_load_it(engine: str, loaded: bool) -> None:
    info = _info(_config(V41), "v4.1")
    est = estimate_memory(info, Request(quant="bf16", engine=engine), CATALOG)  # type: ignore[arg-type]
    tower = 2 * info.arch.tower_params  # kept 16-bit
    assert _outside(est) == ({"multimodal towers (16-bit)": tower} if loaded else {})


def test_a_gguf_nextn_block_is_an_mtp_layer_not_a_decoder_layer(tmp_path: Path) -> None:
    """llama.cpp skips the last nextn_predict_layers blocks (TENSOR_SKIP) unless MTP drafting is on: the
    decoder, its KV cache and its layer offload are the first block_count - 1 blocks; the file's bytes
    are unchanged."""
    path = tmp_path / "m.gguf"
    write_gguf(path, layers=3, meta=lambda w: w.add_uint32("llama.nextn_predict_layers", 1))
    plain = tmp_path / "p.gguf"
    write_gguf(plain, layers=3)
    info, three = read_gguf(path), read_gguf(plain)
    assert (info.arch.num_layers, three.arch.num_layers) == (2, 3)
    assert info.arch.layer_params == three.arch.layer_params[:2]
    assert (info.arch.mtp_params, info.arch.mtp_source) == (three.arch.layer_params[2], "tensor_table")
    assert info.weights is not None and three.weights is not None
    assert info.weights.total_bytes == three.weights.total_bytes
    assert sum(info.weights.layer_bytes) + info.weights.other_bytes == info.weights.total_bytes
    assert any("nextn_predict_layers 1" in note for note in info.notes)


def test_qwen25_vl_tower_by_the_vit_rule_against_its_module_print() -> None:
    """Qwen2.5-VL-7B-Instruct's vision_config as the hub publishes it. By hand, from the module print
    (acproject/duorou docs/qwen2.5vl_graph.md: Conv3d(3, 1280, (2, 14, 14)) without bias, 32 blocks of
    qkv 1280 -> 3840 and proj with biases, a gated MLP of 3,420 with biases, two RMSNorms; PatchMerger
    ln_q, 5,120 -> 5,120 -> 3,584 with biases): 676,550,144, which with Qwen2.5-7B's 7,615,616,512 is the
    hub's numParameters, 8,292,166,656 (https://huggingface.co/api/models/Qwen/Qwen2.5-VL-7B-Instruct).
    The rule reads no norm type there and counts LayerNorms (weight and bias): +83,200."""
    vision = {
        "depth": 32, "hidden_act": "silu", "hidden_size": 1280, "in_chans": 3, "intermediate_size": 3420,
        "model_type": "qwen2_5_vl", "num_heads": 16, "out_hidden_size": 3584, "patch_size": 14,
        "spatial_merge_size": 2, "spatial_patch_size": 14, "temporal_patch_size": 2, "window_size": 112,
    }  # fmt: skip
    w, i, m = 1280, 3420, 5120
    block = (w * 3 * w + 3 * w) + (w * w + w) + 3 * w * i + 2 * i + w + 2 * w
    by_hand = 32 * block + 3 * 2 * 14 * 14 * w + w + (m * m + m) + (m * 3584 + 3584)
    assert by_hand == 676_550_144 and by_hand + 7_615_616_512 == 8_292_166_656
    config = {**_config("zai-org--GLM-4.7"), "vision_config": vision}  # any text model: the tower is apart
    arch = parse_config(config, "qwen2.5-vl")
    assert arch.tower_params - by_hand == 32 * 2 * w + w  # LayerNorm biases: 64 in blocks, ln_q
    assert abs(arch.tower_params / by_hand - 1) < 0.0002


def test_towers_and_mtp_layers_are_not_read_per_generated_token() -> None:
    """Placed, but decode reads the same bytes with or without them (MTP's own speed effect is out of scope)."""
    glm = _info(_config("zai-org--GLM-4.7"), "glm-4.7")
    plain = estimate_memory(glm, Request(quant="fp8", engine="vllm"), CATALOG)
    drafted = estimate_memory(glm, Request(quant="fp8", engine="vllm", speculative="mtp"), CATALOG)
    assert drafted.other_weight_bytes > plain.other_weight_bytes
    assert active_bytes(drafted) == active_bytes(plain)
    v41 = _info(_config(V41), "v4.1")
    with_tower = estimate_memory(v41, Request(quant="bf16", engine="vllm"), CATALOG)
    without = estimate_memory(v41, Request(quant="bf16", engine="mlx"), CATALOG)
    assert with_tower.outside_weight_bytes == 2 * v41.arch.tower_params and without.outside_weight_bytes == 0
    assert active_bytes(with_tower)[2] == active_bytes(without)[2]  # the head read, tower left out
