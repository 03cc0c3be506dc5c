"""core/estimate/row_fallback.py: routed experts whose rows are not whole 256-weight K-quant blocks are
stored in llama-quantize's fallback type, and the weights and the experts a token reads carry its bits."""

from __future__ import annotations

from rigcheck.core.catalog import load_catalog
from rigcheck.core.estimate.memory import Request, estimate_memory
from rigcheck.core.estimate.row_fallback import (
    BITS,
    down_type,
    expert_down_extra_bytes,
    routed_expert_width,
    stored_type,
    use_more_bits,
)
from rigcheck.core.estimate.speed.reads import active_bytes
from rigcheck.core.models.resolve import from_catalog

CATALOG = load_catalog(use_overlay=False)
GIB = 1024**3


def model(model_id: str):  # type: ignore[no-untyped-def]
    spec = CATALOG.model(model_id)
    assert spec is not None
    return from_catalog(spec)


def test_use_more_bits_takes_the_ends_and_every_third_layer_between() -> None:
    picked = [i for i in range(32) if use_more_bits(i, 32)]
    assert picked[:4] == [0, 1, 2, 3] and picked[-4:] == [28, 29, 30, 31]
    assert 6 in picked and 5 not in picked and 7 not in picked  # (6 - 4) % 3 == 2


def test_a_row_of_whole_blocks_keeps_its_type_and_a_short_one_falls_back() -> None:
    assert stored_type("Q4_K", 768) == "Q4_K"
    assert stored_type("Q4_K", 704) == "Q5_0"
    assert stored_type("Q6_K", 704) == "Q8_0"
    assert stored_type("Q3_K", 704) == "IQ4_NL"
    assert stored_type("Q4_K", 700) == "F16"  # not even whole 32-weight blocks
    assert stored_type("Q8_0", 704) == "Q8_0"
    for kind in ("Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"):
        assert BITS[stored_type(kind, 704)] >= BITS[kind]


def test_q4_k_m_gives_half_the_down_projections_q6_k() -> None:
    kinds = [down_type("q4_k_m", i, 30) for i in range(30)]
    assert set(kinds) == {"Q4_K", "Q6_K"}
    assert kinds.count("Q6_K") == sum(use_more_bits(i, 30) for i in range(30))
    assert down_type("q8_0", 0, 30) is None  # a 32-weight type: rows of 704 divide


def test_the_expert_width_comes_from_the_config_or_a_gated_experts_parameters() -> None:
    gemma = model("gemma-4-26b-a4b").arch
    assert routed_expert_width(gemma) == 704
    qwen = model("qwen3-30b-a3b").arch
    assert routed_expert_width(qwen) == 768
    assert routed_expert_width(model("llama-3.1-8b").arch) is None


def test_only_models_with_short_expert_rows_in_a_covered_mix_change() -> None:
    qwen = model("qwen3-30b-a3b")  # 768 = 3 × 256
    assert not any(expert_down_extra_bytes(qwen, "q4_k_m"))
    gemma = model("gemma-4-26b-a4b")
    assert all(b > 0 for b in expert_down_extra_bytes(gemma, "q4_k_m"))
    assert not any(expert_down_extra_bytes(model("gpt-oss-20b"), "q4_k_m"))  # published with MXFP4 experts
    assert not any(expert_down_extra_bytes(gemma, "q8_0"))
    assert not any(expert_down_extra_bytes(gemma, "ud-q4_k_xl"))  # Unsloth's per-role rule sizes those


def test_gemma_4_26b_q4_k_m_weighs_what_llama_bench_printed() -> None:
    # 'gemma-4-26B-A4B Q4_K_M (15.6 GiB, MoE)', https://github.com/ggml-org/llama.cpp/pull/24386 (comment by
    # Shardss, 2026-09-06)
    est = estimate_memory(model("gemma-4-26b-a4b"), Request(quant="q4_k_m", context=512), CATALOG)
    assert abs(est.total("weights") / GIB / 15.6 - 1) < 0.02


def test_the_extra_bytes_sit_in_the_routed_experts_a_token_reads() -> None:
    gemma = model("gemma-4-26b-a4b")
    est = estimate_memory(gemma, Request(quant="q4_k_m", context=512), CATALOG)
    extra = expert_down_extra_bytes(gemma, "q4_k_m")
    for layer, expert, added in zip(est.layer_weight_bytes, est.layer_expert_bytes, extra, strict=True):
        assert expert >= added and layer >= expert
    _per_layer, expert_read, _head = active_bytes(est)
    share = gemma.arch.experts_per_token / gemma.arch.num_experts
    assert sum(expert_read) >= share * sum(extra) * 0.99
