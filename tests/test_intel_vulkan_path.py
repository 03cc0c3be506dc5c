"""benchmarks/intel_vulkan_path.py: which Intel × Vulkan decode rows measured the mat-vec kernel a current
llama.cpp build runs on their driver (ggml_vk_should_use_mmvq; K-quant MMVQ from PR #16900, after b7189;
Intel's Windows driver back on the float shader after b8051) on a Mesa from 24.3 on, and that the fit leaves
the others out."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import fit_speed  # noqa: E402
from intel_vulkan_path import (  # noqa: E402
    intel_vulkan_driver,
    old_intel_matvec,
    old_intel_vulkan_path,
    old_mesa,
    old_xe2_tiles,
)
from measurements import load  # noqa: E402
from rigcheck.core.catalog import load_catalog  # noqa: E402

ROWS = {r.id: r for r in load()}
MESA_B5589 = ROWS["llamacpp14001-b580-linux-gemma-2-2b-q4km-tg128"]
WINDOWS_B5589 = ROWS["llamacpp14001-b580-win-gemma-2-2b-q4km-tg128"]
WINDOWS_B7548 = ROWS["llamacpp20893-2xa770-b7548-qwen3-30b-a3b-q4km-tg128"]


def build(row: fit_speed.Measurement) -> int | None:
    return fit_speed.llama_cpp_build(row.build)


def test_the_driver_is_read_from_the_rows_own_columns() -> None:
    assert intel_vulkan_driver(MESA_B5589) == "mesa"  # "Ubuntu 24.04.2, Mesa 24.2.8"
    assert intel_vulkan_driver(WINDOWS_B5589) == "windows"
    assert intel_vulkan_driver(WINDOWS_B7548) == "windows"
    anonymous = dataclasses.replace(MESA_B5589, host="not stated", build="b9000", notes="", locator="table")
    assert intel_vulkan_driver(anonymous) is None


def test_mesa_rows_before_k_quant_mmvq_and_windows_rows_on_it_are_old_paths() -> None:
    # Mesa at b5589: K-quants on the float shader, MMVQ since PR #16900 (after b7189)
    assert old_intel_matvec(MESA_B5589, build(MESA_B5589))
    assert not old_intel_matvec(dataclasses.replace(MESA_B5589, build="b8064"), 8064)
    # Windows at b5589 ran the float shader current builds run there again; b7548 ran MMVQ (b7190-b8051)
    assert not old_intel_matvec(WINDOWS_B5589, build(WINDOWS_B5589))
    assert old_intel_matvec(WINDOWS_B7548, build(WINDOWS_B7548))
    assert not old_intel_matvec(dataclasses.replace(WINDOWS_B7548, build="b9093"), 9093)
    # no build, no ruling; prompt rows and other vendors are never touched
    assert not old_intel_matvec(MESA_B5589, None)
    assert not old_intel_matvec(dataclasses.replace(MESA_B5589, metric="prefill_tokens_per_s"), 5589)
    assert not old_intel_matvec(dataclasses.replace(MESA_B5589, device_class="amd-discrete"), 5589)


def test_rows_on_a_mesa_before_24_3_are_old_for_decode_and_prefill() -> None:
    prompt = ROWS["llamacpp14001-a770-linux-gemma-2-2b-q4km-pp512"]  # "Ubuntu 24.04.2, Mesa 24.2.8"
    assert old_mesa(prompt) and old_intel_vulkan_path(prompt, build(prompt))
    assert not old_mesa(dataclasses.replace(prompt, host="Fedora 43, Mesa 25.3.1"))
    assert not old_mesa(dataclasses.replace(prompt, host="Linux"))  # no release named: taken as current
    assert not old_mesa(dataclasses.replace(prompt, backend="sycl"))


def test_xe2_prompt_rows_before_the_pr_18178_tiles_are_old() -> None:
    b580 = ROWS["llamacpp14001-b580-win-gemma-2-2b-q4km-pp512"]  # b5589, cooperative matrices on
    assert old_xe2_tiles(b580, 5589, coopmat=True) and old_intel_vulkan_path(b580, 5589, coopmat=True)
    assert not old_xe2_tiles(b580, 5589, coopmat=False)  # an Alchemist's shader cores: no such tiles
    assert not old_xe2_tiles(b580, 8064, coopmat=True)
    assert not old_xe2_tiles(b580, None, coopmat=True)


def test_the_fits_of_intel_on_vulkan_leave_old_paths_out() -> None:
    rows = [r for r in load() if r.split == "fit" and r.speed]
    decode, prefill = fit_speed.points_by_key(rows, load_catalog(use_overlay=False))
    ids = {p.row.id for p in decode[("intel", "vulkan")]}
    assert "llamacpp14001-a770-linux-gemma-2-2b-q4km-pp512" not in {
        p.row.id for p in prefill[("intel", "vulkan")]
    }
    assert MESA_B5589.id not in ids and WINDOWS_B7548.id not in ids
    # a current-build row of each driver stays in
    assert "llamacpp17628-a770-win-b7189-llama31-8b-q4km-tg128" in ids
    assert "pmzfx-b70-vulkan-qwen25-1.5b-q4km-tg128" in ids
