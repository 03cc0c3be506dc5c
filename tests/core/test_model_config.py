"""config.json → ArchConfig: every catalog model counted exactly, layer patterns, refusals, properties.

The exact counts are checked against published integers (``params_exact`` in the catalog, mostly the
hub's safetensors totals). A hub total sometimes holds tensors the text model does not have: a vision
tower, a multi-token-prediction module, FP8 block scales, a stored copy of a tied head. Each such
part is computed here from the published architecture, named, and added explicitly; a model whose
count misses is fixed in the parser, never by loosening a tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rigcheck.core.catalog import ModelSpec, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.models.config import FAMILIES, MAX_LAYERS, parse_config
from rigcheck.core.models.spec import ArchConfig

MODELS: tuple[ModelSpec, ...] = load_catalog(use_overlay=False).models
BY_ID = {m.id: m for m in MODELS}


def arch_of(model_id: str, **override: Any) -> ArchConfig:
    model = BY_ID[model_id]
    return parse_config({**model.config, **override}, f"catalog:{model_id}")


def half_unit(published: float) -> float:
    """Half a unit in the last digit a figure was published with: 8.03 → 0.005, 671 → 0.5."""
    text = repr(float(published)).rstrip("0").rstrip(".")
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10.0**-decimals + 1e-9


# -- what hub totals hold beyond the text model ----------------------------------------------------


def siglip_tower(text_hidden: int) -> int:
    """The vision_config of google/gemma-3-{4b,12b,27b}-it: SigLIP so400m/14 at 896 px (hidden 1152,
    intermediate 4304, 27 layers, no head; transformers models/siglip/modeling_siglip.py) and the
    Gemma3MultiModalProjector (models/gemma3/modeling_gemma3.py: mm_input_projection_weight
    1152 × text hidden, mm_soft_emb_norm 1152)."""
    h, inner, layers, patch, image = 1152, 4304, 27, 14, 896
    embeddings = 3 * patch * patch * h + h + (image // patch) ** 2 * h  # patch conv + bias, positions
    layer = 2 * 2 * h + 4 * (h * h + h) + (h * inner + inner) + (inner * h + h)  # 2 LayerNorms, attn, MLP
    return embeddings + layers * layer + 2 * h + h * text_hidden + h


def pixtral_tower(text_hidden: int) -> int:
    """The vision_config of Mistral Small 3.1/3.2: Pixtral (hidden 1024, intermediate 4096, 24 layers,
    patch 14, RMSNorms, no biases; models/pixtral/modeling_pixtral.py) and the
    Mistral3MultiModalProjector (models/mistral3/modeling_mistral3.py: RMSNorm, a patch merger of
    spatial_merge_size 2, linear_1 and linear_2 without bias)."""
    h, inner, layers, patch = 1024, 4096, 24, 14
    tower = 3 * patch * patch * h + h + layers * (2 * h + 4 * h * h + 3 * h * inner)
    projector = h + (4 * h) * h + h * text_hidden + text_hidden * text_hidden
    return tower + projector


def llama4_tower(text_hidden: int) -> int:
    """Llama4VisionModel and Llama4MultiModalProjector (models/llama4/modeling_llama4.py) with the
    Llama 4 vision_config: hidden 1408, intermediate 5632, 34 layers, image 336, patch 14,
    projector_input_dim = projector_output_dim = vision_output_dim = 4096."""
    h, inner, layers, patch, image, proj = 1408, 5632, 34, 14, 336, 4096
    embeddings = 3 * patch * patch * h + h + ((image // patch) ** 2 + 1) * h  # unfold conv, class, positions
    layer = 4 * (h * h + h) + (h * inner + inner) + (inner * h + h) + 2 * 2 * h
    adapter = inner * proj + proj * proj  # pixel-shuffle MLP fc1, fc2 (no bias)
    return embeddings + 2 * 2 * h + layers * layer + adapter + proj * text_hidden


def deepseek_style_mtp(arch: ArchConfig) -> int:
    """One next-token-prediction module as DeepSeek-V3 and GLM-4.5 store it (model.layers.<N>): a full
    MoE decoder layer, enorm, hnorm, shared_head.norm, eh_proj (2·hidden → hidden) and its own copies
    of embed_tokens and shared_head.head (DeepSeek-V3 README_WEIGHTS.md)."""
    h = arch.hidden_size
    return arch.layer_params[-1] + 3 * h + 2 * h * h + 2 * arch.vocab_size * h


def qwen3_next_mtp(arch: ArchConfig) -> int:
    """Qwen3-Next's mtp.* (ignored on load by Qwen3NextPreTrainedModel): one full-attention MoE layer,
    fc (2·hidden → hidden), pre_fc_norm_embedding, pre_fc_norm_hidden and norm."""
    h = arch.hidden_size
    return arch.layer_params[arch.layer_kinds.index("full")] + 2 * h * h + 3 * h


def fp8_block_scales(config: Mapping[str, Any], layers: int) -> int:
    """F32 weight_scale_inv, one per 128×128 block, of every FP8 linear weight of ``layers`` MoE/dense
    decoder layers (all projections except the router); weight_block_size [128, 128] in the config."""
    h, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    q_rank, kv_rank = int(config["q_lora_rank"]), int(config["kv_lora_rank"])
    nope, rope, v = (int(config[key]) for key in ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"))

    def blocks(rows: int, cols: int) -> int:
        return math.ceil(rows / 128) * math.ceil(cols / 128)

    attention = (
        blocks(q_rank, h)
        + blocks(heads * (nope + rope), q_rank)
        + blocks(kv_rank + rope, h)
        + blocks(heads * (nope + v), kv_rank)
        + blocks(h, heads * v)
    )

    def mlp(inner: int) -> int:
        return 2 * blocks(inner, h) + blocks(h, inner)

    moe = (int(config["n_routed_experts"]) + int(config["n_shared_experts"])) * mlp(
        int(config["moe_intermediate_size"])
    )
    dense_layers = int(config["first_k_dense_replace"])
    dense = mlp(int(config["intermediate_size"]))
    return layers * attention + dense_layers * dense + (layers - dense_layers) * moe


def tied_head_stored(arch: ArchConfig) -> int:
    """lm_head.weight, which these checkpoints store although tie_word_embeddings is true."""
    return arch.vocab_size * arch.hidden_size


#: model id → (what the published total holds beyond the text model, its size)
EXTRA_IN_PUBLISHED_TOTAL: dict[str, tuple[str, Callable[[ArchConfig, Mapping[str, Any]], int]]] = {
    "gemma-3-4b": ("SigLIP vision tower and projector", lambda a, c: siglip_tower(a.hidden_size)),
    "gemma-3-12b": ("SigLIP vision tower and projector", lambda a, c: siglip_tower(a.hidden_size)),
    "gemma-3-27b": ("SigLIP vision tower and projector", lambda a, c: siglip_tower(a.hidden_size)),
    "mistral-small-3.1-24b": (
        "Pixtral vision tower and projector",
        lambda a, c: pixtral_tower(a.hidden_size),
    ),
    "llama-4-scout-17b-16e": ("Llama 4 vision tower and projector", lambda a, c: llama4_tower(a.hidden_size)),
    "llama-4-maverick-17b-128e": (
        "Llama 4 vision tower and projector",
        lambda a, c: llama4_tower(a.hidden_size),
    ),
    "deepseek-v3": (
        "MTP module and FP8 block scales",
        lambda a, c: deepseek_style_mtp(a) + fp8_block_scales(c, a.num_layers + 1),
    ),
    "glm-4.5-air": ("MTP layer", lambda a, c: deepseek_style_mtp(a)),
    "qwen3-next-80b-a3b": ("MTP module", lambda a, c: qwen3_next_mtp(a)),
    "qwen3-0.6b": ("stored copy of the tied lm_head", lambda a, c: tied_head_stored(a)),
    "qwen3-1.7b": ("stored copy of the tied lm_head", lambda a, c: tied_head_stored(a)),
}

#: published config keys that the catalog's trimmed copy of a config lacks, and the exact total
#: reproduces only with them (GLM-4.5-Air's config.json sets attention_bias; the catalog notes say
#: the copy it was read from dropped it)
KEYS_THE_COPY_LACKS: dict[str, dict[str, Any]] = {"glm-4.5-air": {"attention_bias": True}}


# -- (1) every catalog model ----------------------------------------------------------------------


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.id)
def test_every_catalog_model_parses_consistently(model: ModelSpec) -> None:
    arch = parse_config(model.config, f"catalog:{model.id}")
    n = arch.num_layers
    assert len(arch.layer_kinds) == len(arch.layer_params) == len(arch.layer_active_params) == n
    assert len(arch.moe_layers) == n
    assert all(
        0 < active <= total for active, total in zip(arch.layer_active_params, arch.layer_params, strict=True)
    )
    assert arch.is_moe == model.is_moe == any(arch.moe_layers)
    if not arch.is_moe:
        assert arch.layer_active_params == arch.layer_params and arch.expert_params == 0
    assert arch.head_params >= arch.hidden_size  # the final norm, at least
    assert (arch.head_params < arch.embed_params) == arch.tie_word_embeddings


@pytest.mark.parametrize("model", [m for m in MODELS if m.params_exact is not None], ids=lambda m: m.id)
def test_exact_counts_match_the_published_integers(model: ModelSpec) -> None:
    config = {**model.config, **KEYS_THE_COPY_LACKS.get(model.id, {})}
    arch = parse_config(config, f"catalog:{model.id}")
    _name, extra = EXTRA_IN_PUBLISHED_TOTAL.get(model.id, ("nothing", lambda a, c: 0))
    assert model.params_exact is not None
    assert arch.params_total + extra(arch, config) == model.params_exact


def gemma4_vision_tower(text_hidden: int) -> int:
    """The vision_config of the Gemma 4 checkpoints (gemma4_vision: 27 layers of 1,152, intermediate
    4,304, q/k norms of 72, four norms per layer), its patch embedder (768 → 1,152, a 2 × 10,240
    position table, std bias and scale) and the embed_vision projection (1,152 → text hidden): the
    tensor table of google/gemma-4-31B-it in a public model report lists exactly these."""
    hidden, inner = 1152, 4304
    layer = 4 * hidden * hidden + 3 * hidden * inner + 4 * hidden + 2 * 72
    return 27 * layer + hidden * 768 + 2 * 10240 * hidden + 2 * hidden + text_hidden * hidden


#: published totals that hold parts this count leaves out (no exact figure to pin them on)
BEYOND_THE_TEXT_MODEL: dict[str, Callable[[ArchConfig], int]] = {
    "gemma-4-26b-a4b": lambda a: gemma4_vision_tower(a.hidden_size),
}
#: published totals within 0.5% of the text model, their rest (vision tower, MTP) not pinned here
WITHIN_HALF_A_PERCENT = {
    "qwen3.5-397b-a17b": "the published 397B includes the vision tower and the MTP module",
    "minimax-m3": "the published 428B includes the vision tower; 426.17B counted for the text model (MSA indexer included)",
    "glm-5.2": "the published 744B for 743.38B counted (MTP layer not counted)",
}
#: published totals given to two significant figures
TWO_SIGNIFICANT_FIGURES = {
    "nemotron-3-ultra-550b-a55b": "NVIDIA's 550B for 549.3B",
    "deepseek-v4-pro": "DeepSeek's 1.6T for 1,571.7B",
    "kimi-k2.5": "Moonshot's 1T for 1,026.4B",
    "kimi-k2.6": "Moonshot's 1T for 1,026.4B",
    "kimi-k2.7-code": "Moonshot's 1T for 1,026.4B (K2.6's text model key for key)",
    "qwen3.8-2.4t-a95b": "the repository name's 2.4T for 2,419.8B (branch catalog3)",
}

#: published totals cut rather than rounded to their last digit
TRUNCATED_TOTALS = {
    "nemotron-3-super-120b-a12b": "NVIDIA's README prints 120.67B as 120.6B (and 12.77B active as 12.7B)",
    "qwen2.5-coder-7b": "the Qwen2.5 7B cards print 7,615,616,512 as 7.61B",
    "ministral-3-8b": "Mistral's card prints the 8,489,553,920-parameter language model as 8.4B",
}


@pytest.mark.parametrize("model", [m for m in MODELS if m.params_exact is None], ids=lambda m: m.id)
def test_counts_without_an_exact_figure_match_the_published_rounding(model: ModelSpec) -> None:
    assert model.params_b is not None
    arch = parse_config(model.config, f"catalog:{model.id}")
    total_b = (arch.params_total + BEYOND_THE_TEXT_MODEL.get(model.id, lambda a: 0)(arch)) / 1e9
    if model.id in TWO_SIGNIFICANT_FIGURES:
        assert float(f"{total_b:.2g}") == model.params_b
    elif model.id in WITHIN_HALF_A_PERCENT:
        assert abs(total_b - model.params_b) <= 0.005 * model.params_b
    elif model.id in TRUNCATED_TOTALS:
        assert model.params_b <= total_b < model.params_b + 2 * half_unit(model.params_b)
    else:
        assert abs(total_b - model.params_b) <= half_unit(model.params_b)


def test_the_named_extras_are_what_the_architecture_says() -> None:
    """The parts added above, each pinned: the same tower formula reproduces three Gemma 3 totals."""
    assert siglip_tower(2560) == 419_816_304
    assert pixtral_tower(5120) == 438_958_080
    assert llama4_tower(5120) == 871_932_416
    assert arch_of("deepseek-v3").params_total == 671_026_419_200  # the card's 671B main model
    assert deepseek_style_mtp(arch_of("deepseek-v3")) - 2 * 129280 * 7168 == 11_610_068_224  # "11.5B unique"
    assert qwen3_next_mtp(arch_of("qwen3-next-80b-a3b")) == 1_650_471_424
    # without the key the trimmed copy lacks, GLM-4.5-Air misses exactly its q/k/v biases
    glm, glm_published = arch_of("glm-4.5-air"), arch_of("glm-4.5-air", attention_bias=True)
    assert glm_published.params_total - glm.params_total == 46 * (96 + 2 * 8) * 128


def test_kimi_k2_count_and_its_unexplained_gap() -> None:
    """The hub total 1,026,408,235,864 is 3,416 above this count; see the catalog entry."""
    assert arch_of("kimi-k2").params_total == 1_026_408_232_448


def test_phi_3_5_moe_biases_the_catalog_copy_omits() -> None:
    plain = arch_of("phi-3.5-moe")
    published = arch_of("phi-3.5-moe", attention_bias=True, lm_head_bias=True)
    assert plain.params_total == 41_872_793_600
    assert published.params_total - plain.params_total == 32 * (4096 + 2 * 1024 + 4096) + 32064
    assert round(published.params_total / 1e9, 3) == BY_ID["phi-3.5-moe"].params_b


# -- active parameters, in each vendor's convention ------------------------------------------------


def everything(a: ArchConfig) -> int:
    return a.params_active


def without_input_embedding(a: ArchConfig) -> int:
    """The embedding row is a lookup: gpt-oss model card table 'Active' column, DeepSeek-V3
    README_WEIGHTS (36.6B activated including the 0.9B output head)."""
    return a.params_active - a.embed_params


def without_embedding_or_head(a: ArchConfig) -> int:
    return a.params_active - a.embed_params - a.head_params


#: model id → (the convention of its announced active figure, whether the vendor truncated it)
ACTIVE_CONVENTION: dict[str, tuple[Callable[[ArchConfig], int], bool]] = {
    "mixtral-8x7b": (everything, False),  # "12.9B used per token"
    "mixtral-8x22b": (everything, False),
    "phi-3.5-moe": (everything, False),
    "llama-4-scout-17b-16e": (everything, False),
    "llama-4-maverick-17b-128e": (everything, False),
    "qwen3-235b-a22b": (everything, False),
    "qwen3-30b-a3b": (everything, True),  # 3.353B announced as "3.3B"
    "gpt-oss-20b": (without_input_embedding, False),  # model card: 3.61B active = 3.6B
    "gpt-oss-120b": (without_input_embedding, False),  # 5.13B = 5.1B
    "deepseek-v3": (without_input_embedding, False),  # 36.6B, the card's 37B
    "deepseek-r1": (without_input_embedding, False),
    "deepseek-v2": (without_input_embedding, False),
    "deepseek-v2-lite": (without_input_embedding, True),  # 2.451B announced as "2.4B"
    "kimi-k2": (without_input_embedding, False),
    "glm-4.5-air": (without_embedding_or_head, False),  # 12.2B non-embedding, "12B active"
    "qwen3-next-80b-a3b": (without_embedding_or_head, False),  # 3.25B non-embedding, "3B activated"
    # 2026 (branch reader): names and READMEs publish whole billions
    "qwen3.5-35b-a3b": (everything, False),  # 3.46B read per token, "A3B"
    "qwen3.5-122b-a10b": (everything, False),  # 9.77B, "A10B"
    "qwen3.5-397b-a17b": (everything, False),  # 17.35B, "17B activated"
    "qwen3.6-35b-a3b": (everything, False),
    "gemma-4-26b-a4b": (everything, False),  # 3.82B, "4B active"
    "nemotron-3-nano-30b-a3b": (everything, False),  # 3.58B, "3.6B active"
    "nemotron-3-super-120b-a12b": (everything, True),  # 12.77B printed as "12.7B active"
    "nemotron-3-ultra-550b-a55b": (without_input_embedding, False),  # 54.99B, "55B active"
    "glm-5": (without_embedding_or_head, False),  # 39.88B non-embedding, "40B active"
    "glm-5.1": (without_embedding_or_head, False),
    "mimo-v2-flash": (without_input_embedding, False),  # 14.82B, "15B activated"
    "deepseek-v4-flash": (everything, False),  # 13.28B, "13B active"
    "deepseek-v4-pro": (everything, False),  # 48.52B, "49B active"
    "kimi-k2.5": (without_input_embedding, False),  # as Kimi K2: 31.69B, "32B activated"
    "kimi-k2.6": (without_input_embedding, False),
    "minimax-m2.5": (without_input_embedding, False),  # 10.42B, "10B active"
    "minimax-m2.7": (without_input_embedding, False),
    # 2026 (branch reader2): figures of the predecessor whose shapes they repeat
    "nemotron-3.5-lightning-30b-a3b": (everything, False),  # 3.58B, Nano's "3.6B active"
    "kimi-k2.7-code": (without_input_embedding, False),  # K2.6's text model
    "step-3.7-flash": (everything, False),  # 10.86B, Step-3.5-Flash's "11B active"
    "glm-4.7-flash": (without_embedding_or_head, False),  # 3.26B non-embedding, "3B active"
    # 23.50B non-embedding with the MSA indexer (23.28B without it): "23 billion activated" read as cut
    "minimax-m3": (without_embedding_or_head, True),
    "glm-5.2": (without_input_embedding, False),  # 40.30B with the head, "40B active"
    # 2026 (branch catalog3)
    "qwen3.8-2.4t-a95b": (everything, False),  # 95.29B, "A95B"
    "mistral-small-4-119b": (everything, False),  # 6.63B, "6.5B active": see ACTIVE_WITHIN_THREE_PERCENT
}
#: announced active figures within 3% of the count in no stated convention (the card does not say)
ACTIVE_WITHIN_THREE_PERCENT = {
    "mistral-small-4-119b": "Mistral's 6.5B for 6.63B read per token (6.10B without the input embedding)",
}


def test_every_moe_model_has_an_active_convention() -> None:
    assert {m.id for m in MODELS if m.is_moe} == set(ACTIVE_CONVENTION)


@pytest.mark.parametrize("model_id", sorted(ACTIVE_CONVENTION))
def test_active_counts_match_the_announced_figures(model_id: str) -> None:
    model = BY_ID[model_id]
    convention, truncated = ACTIVE_CONVENTION[model_id]
    assert model.active_params_b is not None
    active_b = convention(arch_of(model_id)) / 1e9
    unit = 2 * half_unit(model.active_params_b)
    if model_id in ACTIVE_WITHIN_THREE_PERCENT:
        assert abs(active_b - model.active_params_b) <= 0.03 * model.active_params_b
    elif truncated:
        assert model.active_params_b <= active_b < model.active_params_b + unit
    else:
        assert abs(active_b - model.active_params_b) <= unit / 2


def test_qwen2_moe_counts_shared_expert_and_gate() -> None:
    """Qwen/Qwen1.5-MoE-A2.7B (model_type qwen2_moe; no catalog entry): 14,315,784,192 is keras-hub's
    preset qwen1.5_moe_2.7b_en (keras_hub/src/models/qwen_moe/qwen_moe_presets.py, search-index
    file id 583820047)."""
    config = {
        "model_type": "qwen2_moe",
        "hidden_size": 2048,
        "intermediate_size": 5632,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
        "vocab_size": 151936,
        "tie_word_embeddings": False,
        "num_experts": 60,
        "num_experts_per_tok": 4,
        "moe_intermediate_size": 1408,
        "shared_expert_intermediate_size": 5632,
        "decoder_sparse_step": 1,
        "mlp_only_layers": [],
        "use_sliding_window": False,
        "max_window_layers": 21,
        "sliding_window": 32768,
        "max_position_embeddings": 8192,
    }
    arch = parse_config(config, "hf:Qwen/Qwen1.5-MoE-A2.7B")
    assert arch.params_total == 14_315_784_192
    assert arch.assumed == ("head_dim", "qkv_bias") and set(arch.layer_kinds) == {"full"}
    shared = 3 * 2048 * 5632 + 2048 + 2048 * 60  # shared expert, its 1-wide gate, the router
    assert arch.layer_active_params[0] == arch.layer_params[0] - 56 * arch.expert_params
    assert arch.layer_params[0] - 60 * arch.expert_params - shared == 4 * 2048 * 2048 + 3 * 2048 + 2 * 2048


def test_moe_per_layer_accounting() -> None:
    v3 = arch_of("deepseek-v3")
    assert v3.moe_layers == (False,) * 3 + (True,) * 58
    assert (v3.num_experts, v3.experts_per_token, v3.expert_params) == (256, 8, 3 * 7168 * 2048)
    moe_layer = v3.layer_params[-1]
    assert moe_layer - v3.layer_active_params[-1] == (256 - 8) * v3.expert_params
    mixtral = arch_of("mixtral-8x7b")
    assert mixtral.layer_params[0] - mixtral.layer_active_params[0] == 6 * mixtral.expert_params
    scout, maverick = arch_of("llama-4-scout-17b-16e"), arch_of("llama-4-maverick-17b-128e")
    assert all(scout.moe_layers)
    assert maverick.moe_layers == (False, True) * 24
    oss = arch_of("gpt-oss-20b")  # experts carry biases: gate_up (2·2880) and down (2880)
    assert oss.expert_params == 2880 * 2 * 2880 + 2 * 2880 + 2880 * 2880 + 2880


# -- (2) layer kinds -------------------------------------------------------------------------------


def test_gemma2_alternates_sliding_and_global() -> None:
    arch = arch_of("gemma-2-9b")
    assert arch.layer_kinds == ("sliding", "full") * 21
    assert arch.sliding_window == 4096


def test_gemma3_has_five_local_layers_per_global_one() -> None:
    arch = arch_of("gemma-3-27b")
    assert arch.layer_kinds == tuple("full" if (i + 1) % 6 == 0 else "sliding" for i in range(62))
    assert arch.layer_kinds.count("full") == 10 and arch.sliding_window == 1024


def test_gpt_oss_alternates_from_its_layer_types() -> None:
    arch = arch_of("gpt-oss-120b")
    assert arch.layer_kinds == ("sliding", "full") * 18 and arch.sliding_window == 128


def test_qwen3_next_is_three_linear_layers_per_full_one() -> None:
    arch = arch_of("qwen3-next-80b-a3b")
    assert arch.layer_kinds == ("linear", "linear", "linear", "full") * 12
    assert (arch.num_kv_heads, arch.head_dim) == (2, 256)
    # conv state: (2·16·128 + 32·128) channels × kernel 4; recurrent state: 32 × 128 × 128
    assert arch.linear_state_elements == 8192 * 4 + 32 * 128 * 128


def test_qwen3_5_is_a_dense_hybrid_of_three_linear_layers_per_full_one() -> None:
    """Qwen3.5-9B: Qwen3-Next's token mixers over a dense gated MLP in every layer (modular_qwen3_5.py)."""
    arch = arch_of("qwen3.5-9b")
    assert arch.layer_kinds == ("linear", "linear", "linear", "full") * 8
    assert not arch.is_moe and arch.layer_active_params == arch.layer_params
    assert (arch.num_kv_heads, arch.head_dim) == (4, 256)
    assert arch.linear_state_elements == 8192 * 4 + 32 * 128 * 128
    h, mlp, norms = 4096, 3 * 4096 * 12288, 2 * 4096
    # full: q_proj doubled for the output gate (16·256·2), k/v (4·256 each), o_proj, q/k norms of 256
    full = h * (2 * 16 * 256 + 2 * 4 * 256) + 16 * 256 * h + 2 * 256
    # linear: in_proj_qkv + in_proj_z (2·2048 + 2·4096), in_proj_b + in_proj_a (2·32), conv1d over
    # 8192 channels × 4, dt_bias and A_log (32 each), gated norm of 128, out_proj (4096 → 4096)
    linear = h * (2 * 2048 + 2 * 4096) + h * 64 + 8192 * 4 + 64 + 128 + 4096 * h
    assert arch.layer_params[3] == full + mlp + norms and arch.layer_params[0] == linear + mlp + norms
    assert arch.params_total == 2 * 248320 * h + h + 8 * (full + mlp + norms) + 24 * (linear + mlp + norms)
    assert arch.params_total == 8_953_803_264


def test_a_multimodal_qwen3_5_config_is_read_through_its_text_config() -> None:
    text = {k: v for k, v in BY_ID["qwen3.5-9b"].config.items() if k != "model_type"}
    arch = parse_config({"model_type": "qwen3_5", "text_config": text}, "test")
    assert arch.model_type == "qwen3_5_text" and arch.params_total == arch_of("qwen3.5-9b").params_total


def test_qwen3_5_layer_types_default_to_every_fourth_layer_full() -> None:
    config = {k: v for k, v in BY_ID["qwen3.5-9b"].config.items() if k != "full_attention_interval"}
    arch = parse_config(config, "test")
    assert arch.layer_kinds == ("linear", "linear", "linear", "full") * 8
    assert "full_attention_interval" in arch.assumed


def test_ministral3_counts_as_mistral() -> None:
    """Ministral3Attention rescales queries by position and adds no weights (modular_ministral3.py)."""
    for model_id in ("ministral-3-8b", "ministral-3-14b"):
        arch = arch_of(model_id)
        as_mistral = arch_of(model_id, model_type="mistral")
        assert arch.model_type == "ministral3" and set(arch.layer_kinds) == {"full"}
        assert arch.layer_params == as_mistral.layer_params and arch.params_total == as_mistral.params_total
    assert arch_of("ministral-3-8b").params_total == 8_489_553_920
    assert arch_of("ministral-3-14b").params_total == 13_506_073_600


def test_deepseek_is_mla_throughout() -> None:
    arch = arch_of("deepseek-v3")
    assert set(arch.layer_kinds) == {"mla"}
    assert (arch.kv_lora_rank, arch.qk_rope_head_dim, arch.head_dim, arch.v_head_dim) == (512, 64, 192, 128)
    lite = arch_of("deepseek-v2-lite")
    assert set(lite.layer_kinds) == {"mla"} and "q_lora_rank" in lite.assumed


def test_qwen2_5_without_use_sliding_window_is_all_full() -> None:
    arch = arch_of("qwen2.5-7b")
    assert set(arch.layer_kinds) == {"full"} and arch.sliding_window is None


def test_qwen2_windows_start_at_max_window_layers() -> None:
    arch = arch_of("qwen2.5-7b", use_sliding_window=True, sliding_window=4096, max_window_layers=20)
    assert arch.layer_kinds == ("full",) * 20 + ("sliding",) * 8 and arch.sliding_window == 4096


def test_mistral_windows() -> None:
    v01 = arch_of("mistral-7b-v0.3", sliding_window=4096)  # Mistral-7B-v0.1's config
    assert set(v01.layer_kinds) == {"sliding"} and v01.sliding_window == 4096
    v03 = arch_of("mistral-7b-v0.3")  # sliding_window null
    assert set(v03.layer_kinds) == {"full"} and v03.sliding_window is None


def test_a_window_as_long_as_the_context_is_no_window() -> None:
    for model_id in ("phi-3.5-mini", "ministral-8b"):
        arch = arch_of(model_id)
        assert set(arch.layer_kinds) == {"full"} and arch.sliding_window is None


def test_llama4_chunked_layers_and_global_nope_layers() -> None:
    arch = arch_of("llama-4-scout-17b-16e")
    assert arch.layer_kinds == ("sliding", "sliding", "sliding", "full") * 12
    assert arch.sliding_window == 8192  # attention_chunk_size


def test_layer_types_override_the_family_pattern() -> None:
    types = ["full_attention"] * 25 + ["sliding_attention"]
    arch = arch_of("gemma-3-1b", layer_types=types)
    assert arch.layer_kinds == ("full",) * 25 + ("sliding",)


# -- defaults and multimodal nesting ---------------------------------------------------------------


def test_defaults_are_listed_by_key() -> None:
    arch = arch_of("mistral-7b-v0.3")
    assert arch.assumed == ("head_dim",)
    assert arch.head_dim == 128
    gemma = arch_of("gemma-2-2b")
    assert (
        gemma.assumed == ("tie_word_embeddings",) and gemma.tie_word_embeddings and gemma.head_params == 2304
    )


def test_gemma3_multimodal_config_uses_its_text_config_and_class_defaults() -> None:
    """google/gemma-3-4b-it writes only what differs from Gemma3TextConfig in its text_config."""
    config = {
        "model_type": "gemma3",
        "architectures": ["Gemma3ForConditionalGeneration"],
        "text_config": {
            "hidden_size": 2560,
            "intermediate_size": 10240,
            "model_type": "gemma3_text",
            "num_hidden_layers": 34,
            "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
            "sliding_window": 1024,
        },
        "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152},
    }
    arch = parse_config(config, "hf:google/gemma-3-4b-it")
    assert arch.model_type == "gemma3_text"
    assert arch.params_total == arch_of("gemma-3-4b").params_total
    assert any(note.startswith("text_config:") for note in arch.assumed)
    for key in (
        "vocab_size",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "tie_word_embeddings",
    ):
        assert key in arch.assumed


def test_text_config_without_model_type_and_outer_keys() -> None:
    mistral = dict(BY_ID["mistral-small-3.1-24b"].config)
    del mistral["model_type"]
    arch = parse_config({"model_type": "mistral3", "text_config": mistral}, "x")
    assert arch.model_type == "mistral" and arch.params_total == 23_572_403_200
    llama4 = {**BY_ID["llama-4-scout-17b-16e"].config, "tie_word_embeddings": None}
    tied = parse_config({"model_type": "llama4", "tie_word_embeddings": True, "text_config": llama4}, "x")
    assert tied.tie_word_embeddings


def test_unknown_model_type_with_the_generic_keys_counts_as_llama() -> None:
    config = {**BY_ID["llama-3.1-8b"].config, "model_type": "my_llama_finetune"}
    arch = parse_config(config, "x")
    assert arch.params_total == 8_030_261_248
    assert "model_type 'my_llama_finetune': counted as a llama-style decoder" in arch.assumed


def test_unknown_model_type_with_mla_keys_counts_as_deepseek_v3() -> None:
    arch = arch_of("kimi-k2")
    assert arch.assumed[0].startswith("model_type 'kimi_k2': counted as deepseek_v3")


# -- (3) refusals ---------------------------------------------------------------------------------

LLAMA = BY_ID["llama-3.1-8b"].config


def refused(config: Any, key: str) -> InputError:
    with pytest.raises(InputError) as caught:
        parse_config(config, "config.json")
    error = caught.value
    assert error.source == "config.json"
    assert "\n" not in str(error) and len(str(error)) < 200
    assert key in error.problem, error.problem
    return error


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"hidden_size": None}, "hidden_size"),
        ({"hidden_size": "4096"}, "hidden_size"),
        ({"hidden_size": 4096.0}, "hidden_size"),
        ({"hidden_size": True}, "hidden_size"),
        ({"hidden_size": -4096}, "hidden_size"),
        ({"num_attention_heads": 0}, "num_attention_heads"),
        ({"num_key_value_heads": 7}, "num_key_value_heads"),
        ({"num_hidden_layers": MAX_LAYERS + 1}, "num_hidden_layers"),
        ({"vocab_size": 10**400}, "vocab_size"),
        ({"hidden_size": 2**30, "num_attention_heads": 2**20}, "hidden_size"),  # over 1e13 parameters
        ({"intermediate_size": []}, "intermediate_size"),
        ({"tie_word_embeddings": "yes"}, "tie_word_embeddings"),
        ({"hidden_size": 4097}, "head_dim"),  # not a multiple of the heads, and no head_dim
        ({"max_position_embeddings": -1}, "max_position_embeddings"),
    ],
)
def test_bad_llama_values_are_refused_naming_the_key(change: dict[str, Any], key: str) -> None:
    refused({**LLAMA, **change}, key)


@pytest.mark.parametrize(
    ("model_id", "change", "key"),
    [
        ("gemma-3-1b", {"layer_types": ["full_attention"] * 3}, "layer_types"),
        ("gemma-3-1b", {"layer_types": ["global"] * 26}, "layer_types"),
        ("mixtral-8x7b", {"num_experts_per_tok": 9}, "num_experts_per_tok"),
        ("qwen3-30b-a3b", {"mlp_only_layers": [48]}, "mlp_only_layers"),
        ("qwen3-30b-a3b", {"mlp_only_layers": "all"}, "mlp_only_layers"),
        ("qwen3-30b-a3b", {"moe_intermediate_size": None}, "moe_intermediate_size"),
        ("deepseek-v3", {"kv_lora_rank": None}, "kv_lora_rank"),
        ("qwen3-next-80b-a3b", {"linear_num_value_heads": 33}, "linear_num_value_heads"),
        ("qwen2.5-7b", {"use_sliding_window": True, "max_window_layers": 1.5}, "max_window_layers"),
    ],
)
def test_bad_family_values_are_refused_naming_the_key(
    model_id: str, change: dict[str, Any], key: str
) -> None:
    refused({**BY_ID[model_id].config, **change}, key)


def test_bad_shapes_and_types_are_refused() -> None:
    refused(["not", "a", "dict"], "config")
    refused({**LLAMA, "model_type": None}, "model_type")
    refused({**LLAMA, "model_type": 7}, "model_type")
    refused({"model_type": "gemma3", "text_config": [1, 2]}, "text_config")


def test_unknown_model_types_without_generic_keys_are_refused() -> None:
    config = {k: v for k, v in LLAMA.items() if k != "intermediate_size"}
    error = refused({**config, "model_type": "mystery"}, "model_type")
    assert "intermediate_size" in error.problem
    # an unknown mixture of experts is counted by the generic rule; refused only for the key it lacks
    refused({**LLAMA, "model_type": "mystery_moe", "num_local_experts": 8}, "num_experts_per_tok")


def test_every_family_refuses_an_empty_config_cleanly() -> None:
    for model_type in FAMILIES:
        refused({"model_type": model_type}, "hidden_size")


# -- (4) properties ---------------------------------------------------------------------------------


@st.composite
def llama_configs(draw: st.DrawFn) -> dict[str, Any]:
    kv_heads = draw(st.integers(1, 8))
    heads = kv_heads * draw(st.integers(1, 4))
    return {
        "model_type": "llama",
        "num_key_value_heads": kv_heads,
        "num_attention_heads": heads,
        "hidden_size": heads * draw(st.integers(1, 64)),
        "num_hidden_layers": draw(st.integers(1, 64)),
        "intermediate_size": draw(st.integers(1, 20_000)),
        "vocab_size": draw(st.integers(1, 200_000)),
        "tie_word_embeddings": draw(st.booleans()),
        "attention_bias": draw(st.booleans()),
    }


@settings(max_examples=150, deadline=None)
@given(llama_configs())
def test_params_grow_with_layers_and_width(config: dict[str, Any]) -> None:
    arch = parse_config(config, "gen")
    deeper = parse_config({**config, "num_hidden_layers": config["num_hidden_layers"] + 1}, "gen")
    wider = parse_config(
        {**config, "hidden_size": config["hidden_size"] + config["num_attention_heads"]}, "gen"
    )
    assert deeper.params_total > arch.params_total
    assert wider.params_total > arch.params_total
    assert arch.params_active == arch.params_total
    assert deeper.params_total - arch.params_total == arch.layer_params[0]


_KEYS = sorted(
    {key for model in MODELS for key in model.config}
    | {"layer_types", "text_config", "moe_layers", "mlp_only_layers", "num_experts", "qkv_bias"}
)
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.sampled_from([0, 1, 2, 4, 8, 64, 128, 4096])
    | st.floats(allow_nan=True)
    | st.text(max_size=12)
    | st.sampled_from([*sorted(FAMILIES), "full_attention", "sliding_attention", "kimi_k2"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([m.config for m in MODELS]),
    st.dictionaries(st.sampled_from(_KEYS) | st.text(max_size=8), _JSON, max_size=6),
)
def test_parse_raises_nothing_but_input_error(base: dict[str, Any], noise: dict[str, Any]) -> None:
    for config in ({**base, **noise}, noise):
        try:
            arch = parse_config(config, "fuzz")
        except InputError as error:
            assert "\n" not in str(error)
        else:
            assert 0 < arch.params_total <= 10**13
            assert len(arch.layer_kinds) == arch.num_layers
