"""Unsloth Dynamic mixes sized per tensor role (core/estimate/ud_mix.py) against published files.

Nothing in the rule is fitted: every role takes a ggml block type. Each role test swaps that one role
back to the base block and shows a published file it then misses, so removing the role fails a test.
Sizes are llama-bench's size column (GiB) from the logs named.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from rigcheck.core.catalog import load_catalog
from rigcheck.core.estimate.memory import Request, estimate_memory, expert_params_per_layer
from rigcheck.core.estimate.ud_mix import (
    Q4_K,
    Q8_0,
    RULES,
    UdRule,
    layer_roles,
    use_more_bits,
    weights_by_rule,
)
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import WeightsInfo

CATALOG = load_catalog(use_overlay=False)
BY_ID = {m.id: m for m in CATALOG.models}
GIB = 2**30

KYUZ0_MI50 = "kyuz0/mi50-gfx906-toolboxes README.md@8a29e30"
KYUZ0_STRIX = "kyuz0/amd-strix-halo-toolboxes benchmark/results@d1a34be"
KYUZ0_STRIX_OLD = "kyuz0/amd-strix-halo-toolboxes benchmark/results@006aaa64"
KYUZ0_STRIX_KIMI = "kyuz0/amd-strix-halo-toolboxes benchmark/results@a9618d88"

#: (format, catalog model, published GiB, where)
PUBLISHED = [
    ("UD-Q8_K_XL", "qwen3.6-27b", 33.31, f"{KYUZ0_STRIX} Qwen3.6-27B-UD-Q8_K_XL"),
    ("UD-Q8_K_XL", "qwen3.5-9b", 12.07, f"{KYUZ0_MI50} Qwen3.5-9B-UD-Q8_K_XL"),
    ("UD-Q8_K_XL", "qwen3.6-35b-a3b", 35.80, f"{KYUZ0_STRIX} Qwen3.6-35B-A3B-UD-Q8_K_XL"),
    ("UD-Q8_K_XL", "gemma-4-26b-a4b", 25.94, f"{KYUZ0_STRIX} gemma-4-26B-A4B-it-UD-Q8_K_XL"),
    ("UD-Q8_K_XL", "gemma-3-12b", 13.40, f"{KYUZ0_STRIX_OLD} gemma-3-12b-it-UD-Q8_K_XL__vulkan_radv.log"),
    (
        "UD-Q8_K_XL",
        "llama-3.3-70b",
        75.65,
        f"{KYUZ0_STRIX_OLD} Llama-3.3-70B-Instruct-UD-Q8_K_XL-00001-of-00002__vulkan_radv.log",
    ),
    # moonshotai/Kimi-Dev-72B: a Qwen2.5-72B fine-tune, llama-bench's qwen2 70B, 72.71 B parameters
    (
        "UD-Q8_K_XL",
        "qwen2.5-72b",
        78.21,
        f"{KYUZ0_STRIX_KIMI} Kimi-Dev-72B-UD-Q8_K_XL-00001-of-00002__vulkan_radv.log",
    ),
    ("UD-Q4_K_XL", "qwen3.6-27b", 16.39, f"{KYUZ0_MI50} Qwen3.6-27B-UD-Q4_K_XL"),
    ("UD-Q4_K_XL", "qwen3.6-35b-a3b", 20.81, f"{KYUZ0_MI50} Qwen3.6-35B-A3B-UD-Q4_K_XL"),
    ("UD-Q4_K_XL", "gemma-4-26b-a4b", 15.90, f"{KYUZ0_STRIX} gemma-4-26B-A4B-it-UD-Q4_K_XL"),
    ("UD-Q4_K_XL", "gemma-4-31b", 17.46, f"{KYUZ0_STRIX} gemma-4-31B-it-UD-Q4_K_XL"),
    ("UD-Q4_K_XL", "nemotron-3-super-120b-a12b", 78.02, f"{KYUZ0_STRIX} NVIDIA-Nemotron-3-Super-120B-A12B"),
]


def arch_of(model_id: str):
    return from_catalog(BY_ID[model_id]).arch


def gib_by_rule(model_id: str, rule: UdRule) -> float:
    arch = arch_of(model_id)
    per_layer, other, _, _ = weights_by_rule(arch, rule, arch.layer_params, expert_params_per_layer(arch))
    return (sum(per_layer) + other) / GIB


def off(model_id: str, rule: UdRule, gib: float) -> float:
    return gib_by_rule(model_id, rule) / gib - 1


@pytest.mark.parametrize(("quant", "model_id", "gib", "where"), PUBLISHED)
def test_ud_mix_lands_within_3_percent_of_published_files(
    quant: str, model_id: str, gib: float, where: str
) -> None:
    model = from_catalog(BY_ID[model_id])
    est = estimate_memory(model, Request(quant=quant, context=4096, engine="llama.cpp"), CATALOG)
    ours = next(t.bytes for t in est.terms if t.category == "weights") / GIB
    assert abs(ours / gib - 1) <= 0.03, f"{quant} {model_id}: {ours:.2f} GiB against {gib} ({where})"


Q8 = RULES["ud-q8_k_xl"]
Q4 = RULES["ud-q4_k_xl"]


def test_q8_linear_attention_mixers_are_bf16() -> None:
    """Qwen3.5-9B's 24 Gated DeltaNet mixers: at Q8_0 the file would be 12% smaller than published."""
    assert abs(off("qwen3.5-9b", Q8, 12.07)) <= 0.03
    assert off("qwen3.5-9b", replace(Q8, linear_mixer=Q8_0), 12.07) < -0.03


def test_q8_embedding_and_head_are_bf16() -> None:
    """Both at Q8_0, Qwen3.5-9B (2.0B of its 9.0B parameters in them) lands 15% under."""
    assert off("qwen3.5-9b", replace(Q8, embed=Q8_0, head=Q8_0), 12.07) < -0.03


def test_q4_routed_experts_keep_ffn_down_at_q6_k() -> None:
    """Nemotron-3-Super's experts hold 93% of it: with ffn_down_exps at Q4_K it lands 17% under."""
    assert abs(off("nemotron-3-super-120b-a12b", Q4, 78.02)) <= 0.03
    assert off("nemotron-3-super-120b-a12b", replace(Q4, expert_down=Q4_K), 78.02) < -0.03


def test_q4_nemotron_experts_are_two_matrices() -> None:
    """Counted as gated (down a third of each expert, not half), Nemotron-3-Super lands 5.5% under."""
    arch = arch_of("nemotron-3-super-120b-a12b")
    gated = replace(arch, model_type="not_nemotron_h")
    per_layer, other, _, _ = weights_by_rule(gated, Q4, arch.layer_params, expert_params_per_layer(arch))
    assert (sum(per_layer) + other) / GIB / 78.02 - 1 < -0.03


def test_q4_hybrid_and_moe_attention_is_q6_k_while_dense_attention_stays_q4_k() -> None:
    """Qwen3.6-27B's hybrid mixers at the base would put it 8% under; gemma-4-26B-A4B's attention and
    shared MLP (an MoE model) at the base, 4% under; gemma-4-31B (dense, no linear layers) keeps its
    attention at the base, so the MoE/hybrid role does not touch it."""
    assert off("qwen3.6-27b", replace(Q4, linear_mixer=Q4_K, mixer_hybrid_or_moe=Q4_K), 16.39) < -0.03
    assert abs(off("gemma-4-26b-a4b", Q4, 15.90)) <= 0.03
    assert off("gemma-4-26b-a4b", replace(Q4, mixer_hybrid_or_moe=Q4_K), 15.90) < -0.03
    assert gib_by_rule("gemma-4-31b", replace(Q4, mixer_hybrid_or_moe=Q8_0)) == gib_by_rule("gemma-4-31b", Q4)


def test_q4_dense_ffn_down_follows_use_more_bits() -> None:
    """llama.cpp's use_more_bits: 8 + 8 + 16 of Qwen3.6-27B's 64 layers; without it gemma-4-31B and
    Qwen3.6-27B both drop, gemma-4-31B 6% under."""
    assert sum(use_more_bits(i, 64) for i in range(64)) == 32
    assert [i for i in range(12) if use_more_bits(i, 64)] == [0, 1, 2, 3, 4, 5, 6, 7, 10]
    assert off("gemma-4-31b", replace(Q4, dense_down_more_bits=Q4_K), 17.46) < -0.03


def test_q8_plain_dense_models_keep_the_edge_ffn_down_at_bf16() -> None:
    """Llama-3.3-70B: ffn_down of its first and last 10 layers (6.9% of the weights) at Q8_0, 5% under;
    a hybrid (Qwen3.6-27B) is not touched by the role."""
    assert abs(off("llama-3.3-70b", Q8, 75.65)) <= 0.03
    assert off("llama-3.3-70b", replace(Q8, dense_down_edges=Q8_0), 75.65) < -0.03
    assert gib_by_rule("qwen3.6-27b", replace(Q8, dense_down_edges=Q8_0)) == gib_by_rule("qwen3.6-27b", Q8)


def test_roles_add_up_to_the_layer() -> None:
    for model_id in ("qwen3.6-27b", "qwen3.6-35b-a3b", "nemotron-3-nano-30b-a3b", "gemma-4-31b"):
        arch = arch_of(model_id)
        roles = layer_roles(arch, arch.layer_params, expert_params_per_layer(arch))
        assert all(r.mixer > 0 or r.experts > 0 for r in roles)
        assert [r.mixer + r.dense_ffn + r.experts for r in roles] == list(arch.layer_params)


def test_formats_without_a_rule_keep_their_published_rate() -> None:
    """UD-Q5_K_XL has one published file: it stays at that file's layer rate."""
    assert "ud-q5_k_xl" not in RULES
    assert CATALOG.quant("ud-q5_k_xl").layer_bpw == pytest.approx(6.0214)


def test_a_ud_file_read_from_its_header_is_exact_not_sized_by_role() -> None:
    """A GGUF the user has or one on the hub carries its tensor bytes: the role rule never replaces them."""
    model = from_catalog(BY_ID["qwen3.6-27b"])
    header = WeightsInfo(
        total_bytes=17_598_000_000, quant_id="ud-q4_k_xl", files=("Qwen3.6-27B-UD-Q4_K_XL.gguf",)
    )
    est = estimate_memory(replace(model, weights=header), Request(quant="UD-Q4_K_XL", context=4096), CATALOG)
    weights = next(t for t in est.terms if t.category == "weights")
    assert weights.bytes == 17_598_000_000 and weights.provenance == "file"
    by_role = estimate_memory(model, Request(quant="UD-Q4_K_XL", context=4096), CATALOG)
    assert next(t.bytes for t in by_role.terms if t.category == "weights") != weights.bytes
