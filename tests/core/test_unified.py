"""Unified memory: budgets and speeds from snapshots whose GPU memory is null (DGX Spark, Strix Halo, Apple)."""

from __future__ import annotations

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import budgets, fit, gpu_margin
from rigcheck.core.estimate.memory import Request
from rigcheck.core.machine import CPU, GPU, Machine, Memory
from rigcheck.core.unified import apple_default_gpu_limit

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def usable(total: int) -> int:
    return total - gpu_margin(total)


def box(gpu: GPU, ram_gib: int) -> Machine:
    return Machine(cpu=CPU(logical_cores=20), memory=Memory(total_bytes=ram_gib * GIB), gpus=(gpu,))


# What the probes write on these machines: NVML "Not Supported" on GB10, the Apple GPU without a
# readable wired limit, a Strix Halo whose snapshot has no sizes.
GB10 = GPU(vendor="nvidia", name="NVIDIA GB10", memory_total_bytes=None, index=0, unified_memory=True)
M4_MAX = GPU(vendor="apple", name="Apple M4 Max", memory_total_bytes=None, index=0, unified_memory=True)
M4 = GPU(vendor="apple", name="Apple M4", memory_total_bytes=None, index=0, unified_memory=True)
STRIX = GPU(
    vendor="amd", name="AMD Radeon 8060S Graphics", memory_total_bytes=None, index=0, unified_memory=True
)


def test_gb10_gets_system_memory_and_the_ram_budget_excludes_it() -> None:
    budget = budgets(box(GB10, 128), live=False)
    assert budget.gpu_bytes[0] == usable(128 * GIB - 128 * GIB // 10)  # less what the OS keeps
    assert any("system memory" in r and "GB10" in r for r in budget.reasons)
    # The GPU's share is not counted again as RAM for offload.
    assert budget.cpu_bytes == 128 * GIB - 128 * GIB // 10 - budget.gpu_bytes[0] < GIB


def test_apple_share_follows_the_wired_limit_rule_by_ram_size() -> None:
    big = budgets(box(M4_MAX, 64), live=False)
    assert big.gpu_bytes[0] == usable(48 * GIB)
    assert any("recommendedMaxWorkingSetSize" in r for r in big.reasons)
    small = budgets(box(M4, 16), live=False)
    assert small.gpu_bytes[0] == usable(16 * GIB * 2 // 3)
    assert apple_default_gpu_limit(16 * GIB)[1] == "two thirds"
    # 64 GiB less the 6.4 GiB host reserve less what the GPU may use
    assert big.cpu_bytes == 64 * GIB - 64 * GIB // 10 - usable(48 * GIB)


def test_amd_apu_counts_carve_out_plus_gtt() -> None:
    default = budgets(box(STRIX, 128), live=False)
    assert default.gpu_bytes[0] == usable(64 * GIB)  # GTT = half of RAM by default
    assert any("GTT" in r and "amdgpu_ttm.c" in r for r in default.reasons)
    probed = GPU(
        vendor="amd", name="AMD Radeon 8060S Graphics", memory_total_bytes=512 * 1024**2, index=0,
        unified_memory=True, memory_shared_bytes=100 * GIB,
    )  # fmt: skip
    budget = budgets(box(probed, 128), live=False)
    assert budget.gpu_bytes[0] == usable(100 * GIB + 512 * 1024**2)
    # The carve-out is not in the OS's RAM figure; only the GTT part comes out of it.
    assert budget.cpu_bytes == 128 * GIB - 128 * GIB // 10 - (
        usable(100 * GIB + 512 * 1024**2) - 512 * 1024**2
    )


@pytest.mark.parametrize(("gpu", "ram", "floor"), [(GB10, 128, 20.0), (M4_MAX, 64, 40.0), (STRIX, 128, 20.0)])
def test_unified_machines_run_on_the_gpu(catalog: Catalog, gpu: GPU, ram: int, floor: float) -> None:
    """An 8B Q4_K_M fits on the GPU and decodes at GPU speed, not at ~50 GB/s RAM speed."""
    result = fit(model(LLAMA_31_8B), box(gpu, ram), Request(quant="q4_k_m"), catalog, live=False)
    assert result.verdict == "fits"
    assert result.placement.cpu_bytes == 0
    assert result.speed.decode_tokens_per_s is not None
    assert result.speed.decode_tokens_per_s > floor


def test_audit_text_reports_and_fleet_show_the_rule_the_estimates_use() -> None:
    """A unified GPU whose size the probe could not read shows its platform's rule on every headless
    surface (audit text, Markdown report, fleet table), not "unknown"; a discrete GPU stays unknown."""
    from rigcheck.core.report.fleet import vram_summary
    from rigcheck.core.report.summary import summarise

    strix = box(GPU("amd", "AMD Radeon 8060S Graphics", None, index=0, unified_memory=True), 128)
    text = summarise(strix)
    assert "64.0 GiB of 128.0 GiB unified memory for the GPU (by rule)" in text
    assert "how: APU: 0.0 GiB BIOS carve-out + 64.0 GiB GTT, half of 128 GiB RAM by default" in text
    assert vram_summary(strix) == "~64 GiB unified"
    spark = box(GPU("nvidia", "NVIDIA GB10", None, index=0, unified_memory=True), 128)
    assert "115.2 GiB of 128.0 GiB unified memory for the GPU (by rule)" in summarise(spark)
    assert vram_summary(spark) == "~115 GiB unified"
    # the driver's own figures (a carve-out and its GTT pool) are shown as read, not as a rule
    probed = box(GPU("amd", "AMD Radeon 8060S Graphics", 512 * 1024**2, index=0, unified_memory=True,
                     memory_shared_bytes=96 * GIB), 128)  # fmt: skip
    text = summarise(probed)
    assert "96.5 GiB of 128.0 GiB unified memory for the GPU\n" in text and "by rule" not in text
    assert "as the driver reports it" in text and vram_summary(probed) == "96 GiB unified"
    discrete = box(GPU("nvidia", "NVIDIA GeForce RTX 4090", None, index=0), 64)
    assert "VRAM unknown" in summarise(discrete) and vram_summary(discrete) == "—"
