"""benchmarks/moe_tiles.py: the MUL_MAT_ID tile llama.cpp's MMQ kernel picks in a prompt, and the share of
it the routed tokens fill, as ggml's code gives them (ggml-org/ggml src/ggml-cuda/mmq.cuh@d99724f)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import moe_tiles  # noqa: E402


def test_the_tile_width_is_picked_for_the_whole_micro_batch_not_an_experts_share() -> None:
    # mul_mat_q_switch_J tiles ncols_max (the micro-batch's tokens) with the fewest tiles: 128 columns on
    # Ampere-class configs, whatever the expert count
    ampere = moe_tiles.tile_widths("cuda", "ampere")
    assert moe_tiles.ids_tile_width(512, ampere) == 128
    assert moe_tiles.ids_tile_width(512, moe_tiles.tile_widths("rocm", "cdna2")) == 64
    # a 40-token prompt fits one tile of 40 columns on Ampere (the narrowest width that leaves one tile),
    # 48 on RDNA 4, whose Q4_K table steps by 16
    assert moe_tiles.ids_tile_width(40, ampere) == 40
    assert moe_tiles.ids_tile_width(40, moe_tiles.tile_widths("rocm", "rdna4")) == 48


def test_the_widest_tile_follows_the_config_table_of_the_architecture() -> None:
    def widest(backend: str, arch: str) -> int | None:
        widths = moe_tiles.tile_widths(backend, arch)
        return max(widths) if widths else None

    assert widest("cuda", "ampere") == 128
    assert widest("cuda", "blackwell") == 128
    assert widest("rocm", "rdna4") == 128
    assert widest("rocm", "rdna3.5") == 128
    # GCN 5.1 (gfx906) takes the RDNA2 table, CDNA its own, Pascal the dp4a one: 64 columns at most
    assert widest("rocm", "gcn5.1") == 64
    assert widest("rocm", "cdna2") == 64
    assert widest("cuda", "pascal") == 64
    # Vulkan's large mul_mm_id tile (non-coopmat2 and coopmat2 alike) is 128 columns
    assert widest("vulkan", "rdna3.5") == 128
    # Metal and SYCL run other kernels: no MMQ tile to speak of
    assert widest("metal", "apple") is None


def test_tile_fill_is_the_mean_tokens_per_expert_over_the_tile_when_each_expert_fits_one() -> None:
    # 128 experts, top-8, 512 tokens: ~32 tokens each, one 128-column tile each: a quarter used
    assert moe_tiles.tile_fill(512, 8, 128, 128) == pytest.approx(0.25, abs=0.005)
    # 512 experts, top-10: ~10 tokens; some experts get none (no tile), so slightly above 10/128
    fill = moe_tiles.tile_fill(512, 10, 512, 128)
    assert 10 / 128 < fill < 11 / 128


def test_tile_fill_counts_the_second_tile_an_expert_over_the_width_needs() -> None:
    # gpt-oss-20b on a 64-column tile: 64 tokens per expert on average, about half the experts need two
    fill = moe_tiles.tile_fill(512, 4, 32, 64)
    assert 0.55 < fill < 0.8
    # a dense GEMM is one expert with every token: a 512-token batch fills 128-column tiles exactly
    assert moe_tiles.tile_fill(512, 1, 1, 128) == pytest.approx(1.0)


def test_share_of_the_dense_rate_with_the_experts_at_their_tile_fill() -> None:
    # routed experts 80% of the FLOPs at a quarter of the tile: 1 / (0.8 / 0.25 + 0.2)
    assert moe_tiles.fill_share(0.8, 0.25, 1.0) == pytest.approx(1 / 3.4)
    # a class whose expert tiles run at the dense tile's rate when full (tile_rate 1) and a full tile
    assert moe_tiles.fill_share(0.8, 1.0, 1.0) == pytest.approx(1.0)
