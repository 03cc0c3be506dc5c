"""benchmarks/moe_decode_checks.py: the share of a CUDA/HIP mat-vec block a short row fills (mmvq.cu's
blocks_per_iter), the routed experts' width, the pooled per-MoE-layer cost, and that the checks read fit rows
only."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from measurements import load  # noqa: E402
from moe_decode_checks import (  # noqa: E402
    MMVQ_BLOCK,
    MMVQ_LAYOUT,
    expert_width,
    filled_share,
    moe_rows,
    pooled_moe_costs,
    type_errors,
    with_pooled_costs,
)
from rigcheck.core.catalog import load_catalog  # noqa: E402
from rigcheck.core.models.resolve import from_catalog  # noqa: E402

CATALOG = load_catalog(use_overlay=False)


def step(kind: str, family: str) -> int:
    """Weights one step of a block covers: vdr × nwarps × warp / qi quant blocks of qk weights."""
    qk, qi, vdr = MMVQ_LAYOUT[kind]
    nwarps, warp = MMVQ_BLOCK[family]
    return vdr * nwarps * warp // qi * qk


def test_a_row_of_one_full_step_or_more_fills_the_block() -> None:
    for family in MMVQ_BLOCK:
        assert filled_share(step("Q4_K", family), "Q4_K", family) == 1.0
        assert filled_share(4 * step("Q4_K", family), "Q4_K", family) == 1.0


def test_a_short_row_leaves_the_rest_of_the_block_idle() -> None:
    # Qwen3-30B-A3B's expert down projection: 768 weights a row, three Q4_K blocks of 256
    nvidia = filled_share(768, "Q4_K", "nvidia")
    rdna = filled_share(768, "Q4_K", "rdna")
    assert nvidia is not None and rdna is not None
    assert nvidia == 768 / step("Q4_K", "nvidia") < 0.5  # four warps step eight blocks at a time
    assert rdna == 768 / (2 * step("Q4_K", "rdna"))  # one warp steps two: the second step half full
    assert filled_share(512, "Q4_K", "nvidia") < nvidia  # Qwen3.5/3.6-35B-A3B's 512 fills less


def test_a_row_not_made_of_whole_blocks_has_no_share() -> None:
    assert filled_share(704, "Q4_K", "nvidia") is None  # Gemma 4's experts: not whole 256-weight blocks
    assert filled_share(704, "Q8_0", "nvidia") is not None
    assert filled_share(768, "IQ4_XS", "nvidia") is None  # a layout the table does not hold
    assert filled_share(768, "Q4_K", "intel") is None


def test_the_expert_width_is_the_configs_or_follows_from_the_expert_parameters() -> None:
    model = CATALOG.model("qwen3-30b-a3b")
    assert model is not None
    arch = from_catalog(model).arch
    given = expert_width(arch, model.config)
    assert given == model.config["moe_intermediate_size"]
    derived = expert_width(arch, {})
    assert derived is not None and abs(derived - given) <= 1
    dense = CATALOG.model("llama-3.1-8b")
    assert dense is not None and expert_width(from_catalog(dense).arch, {}) is None


def test_pooled_costs_are_each_backends_median_and_go_only_where_none_was_fitted() -> None:
    pooled = pooled_moe_costs(CATALOG)
    fitted = {f.backend for f in CATALOG.speed_factors if f.moe_layer_us}
    assert set(pooled) == fitted
    changed_catalog, changed = with_pooled_costs(CATALOG, pooled)
    for before, after in zip(CATALOG.speed_factors, changed_catalog.speed_factors, strict=True):
        key = f"{before.hw_class}-{before.backend}"
        if before.moe_layer_us or before.backend not in pooled:
            assert after == before and key not in changed
        else:
            assert after.moe_layer_us == pooled[before.backend] and key in changed


def test_the_checks_read_fit_rows_only() -> None:
    rows = load()
    found = moe_rows(CATALOG, rows)
    assert found and all(m.row.split == "fit" and m.row.moe and not m.row.offloaded for m in found)
    held = [r for r in rows if r.split != "fit"]
    assert moe_rows(CATALOG, held) == []


def test_rows_are_grouped_by_their_bulk_weight_type() -> None:
    rows = load()
    by_type = type_errors(CATALOG, rows)
    assert {"Q4_K", "Q3_K", "MXFP4", "BF16"} <= set(by_type)
    fit_decode = [
        r
        for r in rows
        if r.split == "fit" and r.metric == "decode_tokens_per_s" and r.gpu_count and not r.offloaded
    ]
    assert sum(len(v) for v in by_type.values()) <= len(fit_decode)
    assert type_errors(CATALOG, [r for r in rows if r.split != "fit"]) == {}
