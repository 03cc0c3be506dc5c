"""An AMD APU whose GPU maps only the driver's default share of RAM: what raising that limit would do.

amdgpu sizes the GTT pool (the system RAM the integrated GPU may map) from TTM's page limit, half of RAM
by default (core/unified.py). Strix Halo owners raise it with a kernel parameter so that a 100 GiB model
runs on the GPU of a 128 GiB machine (visorcraft/strix-halo-llm-perf ran Qwen3-235B Q3_K_M, 104.72 GiB,
with -ngl 99 on both Vulkan and ROCm). The advice is worked out by fitting the model again with the GPU
allowed all the RAM but what the system keeps, never guessed.
"""

from __future__ import annotations

from dataclasses import replace

from rigcheck.core.catalog import Catalog
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.placement.budget import host_reserve
from rigcheck.core.machine import Machine
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.said import Bytes, Shown, Text, say
from rigcheck.core.unified import unified_share

#: TTM counts its limit in pages of 4 KiB (ttm.pages_limit; the kernel's PAGE_SIZE on x86-64)
PAGE_BYTES = 4096
SOURCE = "Linux drivers/gpu/drm/amd/amdgpu/amdgpu_ttm.c: GTT = ttm.pages_limit"


def raised_gtt_machine(machine: Machine) -> tuple[Machine, int] | None:
    """The machine with its one AMD APU allowed all RAM but the system's reserve, and that GTT size;
    None when the machine has no such GPU or the driver's own limit was read (the user set it)."""
    if len(machine.gpus) != 1:
        return None
    gpu = machine.gpus[0]
    ram = machine.memory.total_bytes
    share = unified_share(gpu, ram) if gpu.vendor == "amd" else None
    if share is None or not share.by_rule:
        return None
    gtt = ram - host_reserve(ram)
    if gtt <= share.from_ram:
        return None
    wider = replace(gpu, memory_shared_bytes=gtt)
    return replace(machine, gpus=(wider,)), gtt


def gtt_advice(model: ModelInfo, machine: Machine, req: Request, catalog: Catalog) -> Text | None:
    """ "With ttm.pages_limit=N the GPU could map X: it would run entirely on the GPU: <verdict>", when
    it would, else None."""
    from rigcheck.core.estimate.fit import fit
    from rigcheck.core.verdict_words import result_words

    raised = raised_gtt_machine(machine)
    if raised is None:
        return None
    wider, gtt = raised
    trial = fit(model, wider, req, catalog, live=False, advise=False)
    if trial.verdict != "fits":
        return None
    return say(
        "raise the GPU's GTT limit to {gtt} (kernel parameter ttm.pages_limit={pages}; amdgpu maps half "
        "of RAM by default) and it runs entirely on the GPU: {words} ({source})",
        gtt=Bytes(gtt),
        pages=gtt // PAGE_BYTES,
        words=Shown(result_words, trial),
        source=SOURCE,
    )
