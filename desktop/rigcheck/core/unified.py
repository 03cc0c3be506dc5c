"""How much of a unified-memory machine's RAM its GPU may use, by each platform's own rule.

A GPU that shares system memory has no VRAM size of its own: NVML answers "Not Supported" on a
DGX Spark (GB10), Apple exposes a policy limit, AMD APUs have a small BIOS carve-out plus a pool of
system RAM the driver may map (GTT). The probe records what it can read; where a snapshot leaves the
GPU's memory null (or gives only the system's size, as a what-if built from the catalog does), these
rules say what the GPU may use, and the estimator shows the rule in the budget's reasons.
"""

from __future__ import annotations

from dataclasses import dataclass

from rigcheck.core.i18n import num, tr
from rigcheck.core.machine import GPU

GIB = 1024**3

# Apple: Metal's recommendedMaxWorkingSetSize when iogpu.wired_limit_mb is 0 (the macOS default), as
# llama.cpp prints it at start-up:
#   16 GiB -> 10922.67 MiB = 2/3   https://github.com/abetlen/llama-cpp-python/issues/687
#   32 GiB -> 21845.34 MiB = 2/3   https://github.com/ollama/ollama/issues/434 (M2 Max 32 GB)
#   64 GiB -> 51539.61 MB  = 3/4   https://github.com/ggml-org/llama.cpp/issues/1870 (M2 Max 64 GB)
#   96 GiB -> 73728.00 MiB = 3/4   https://github.com/ggml-org/llama.cpp/issues/3213 (M2 Max 96 GB)
# So two thirds up to 32 GiB, three quarters above (more logs in core/probe/_apple.py).
APPLE_SOURCE = (
    "Metal recommendedMaxWorkingSetSize as llama.cpp logs it (ggml-org/llama.cpp issues #1870, #3213)"
)
APPLE_SMALL_MACHINE_MAX_BYTES = 32 * GIB

# AMD APUs: amdgpu sizes the GTT pool (system RAM the GPU may map, on top of the BIOS carve-out) from
# TTM's page limit, which defaults to half of system memory (amdgpu_ttm_init: gtt_size =
# ttm_tt_pages_limit() << PAGE_SHIFT; before that change the driver itself used max(3 GiB, RAM / 2)).
AMD_GTT_SOURCE = (
    "Linux drivers/gpu/drm/amd/amdgpu/amdgpu_ttm.c amdgpu_ttm_init: GTT = TTM pages_limit, "
    "half of system RAM by default (ttm.pages_limit / amdgpu.gttsize change it)"
)

# NVIDIA GB10 (DGX Spark): one pool of LPDDR5X shared by the Grace CPU and the GPU; CUDA allocates
# from system memory and NVML reports no framebuffer size.
GB10_SOURCE = (
    "https://blog.kubesimplify.com/blog/day-3-the-dgx-spark-unpacked-gb10-unified-memory-sm-121-and-the-"
    "one-reason-this-hardware-exists (GB10 unified memory: the GPU allocates from system memory)"
)


# Intel integrated GPUs (Core Ultra Series 2 and later: Lunar Lake, Arrow Lake): the driver lets the GPU use
# 57% of system RAM by default (Intel: "Shared GPU Memory Override ... The default value is 57%").
INTEL_SHARE = 0.57
INTEL_SOURCE = "https://www.intel.com/content/www/us/en/support/articles/000101789/graphics.html"


@dataclass(frozen=True)
class Share:
    """What a unified GPU may use, how much of it comes out of the RAM the OS reports, and why."""

    bytes: int
    #: the part of ``bytes`` that the OS counts as RAM (a BIOS carve-out is not in MemTotal)
    from_ram: int
    reason: str
    #: a platform default stands in for a figure the probe did not read (False: the driver's own figures)
    by_rule: bool = True


def apple_default_gpu_limit(memsize: int) -> tuple[int, str]:
    """The estimated default GPU working set for ``memsize`` bytes of RAM, and the share as words."""
    if memsize <= APPLE_SMALL_MACHINE_MAX_BYTES:
        return memsize * 2 // 3, "two thirds"
    return memsize * 3 // 4, "75%"


def amd_default_gtt(memsize: int) -> int:
    return memsize // 2


def _is_system_size(gpu: GPU, ram_total: int) -> bool:
    """True when the recorded size is the whole memory (a catalog what-if), not the GPU's share."""
    total = gpu.memory_total_bytes
    return total is not None and total >= ram_total * 0.99


def unified_share(gpu: GPU, ram_total: int, *, name: str = "GPU") -> Share | None:
    """The platform rule for a unified-memory GPU whose own size is unknown; None when none applies.

    A probed figure (Apple's wired limit, an AMD carve-out plus its GTT pool) is used as it is.
    """
    if not gpu.unified_memory:
        return None
    gib = ram_total / GIB
    if gpu.vendor == "apple":
        if gpu.memory_total_bytes is not None and not _is_system_size(gpu, ram_total):
            return None  # the probe read the wired limit (or the user's iogpu.wired_limit_mb)
        limit, words = apple_default_gpu_limit(ram_total)
        return Share(
            limit,
            limit,
            tr(
                "{name}: macOS lets the GPU wire {share} of {gib} GiB unified memory "
                "(default recommendedMaxWorkingSetSize; {source})",
                name=name,
                share=tr(words),
                gib=num(gib),
                source=APPLE_SOURCE,
            ),
        )
    if gpu.vendor == "amd":
        carve = gpu.memory_total_bytes or 0
        if _is_system_size(gpu, ram_total):
            carve = 0
        gtt = gpu.memory_shared_bytes
        rule = tr("as the driver reports it (mem_info_gtt_total)")
        by_rule = gtt is None
        if gtt is None:
            gtt = amd_default_gtt(ram_total)
            rule = tr("half of {gib} GiB RAM by default ({source})", gib=num(gib), source=AMD_GTT_SOURCE)
        gtt = min(gtt, ram_total)
        return Share(
            carve + gtt,
            gtt,
            tr(
                "{name}: APU: {carve} GiB BIOS carve-out + {gtt} GiB GTT, {rule}",
                name=name,
                carve=num(carve / GIB, 1),
                gtt=num(gtt / GIB, 1),
                rule=rule,
            ),
            by_rule,
        )
    if gpu.vendor == "nvidia":
        if gpu.memory_total_bytes is not None and not _is_system_size(gpu, ram_total):
            return None
        # The CPU side keeps what any host keeps for the OS (the same reserve as the RAM budget's).
        reserve = min(max(ram_total // 10, 2 * GIB), 16 * GIB)
        share = ram_total - reserve
        return Share(
            share,
            share,
            tr(
                "{name}: unified memory: the GPU allocates from the {gib} GiB of system memory, less "
                "{reserve} GiB the system keeps ({source})",
                name=name,
                gib=num(gib),
                reserve=num(reserve / GIB, 1),
                source=GB10_SOURCE,
            ),
        )
    # Intel, the one vendor left
    if gpu.memory_total_bytes is not None and not _is_system_size(gpu, ram_total):
        return None
    share = int(ram_total * INTEL_SHARE)
    return Share(
        share,
        share,
        tr(
            "{name}: integrated GPU: the Intel driver lets it use {percent}% of {gib} GiB RAM by default "
            "({source})",
            name=name,
            percent=num(INTEL_SHARE * 100),
            gib=num(gib),
            source=INTEL_SOURCE,
        ),
    )
