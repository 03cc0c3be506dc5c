"""GPUs on macOS through ``sysctl`` and ``system_profiler SPDisplaysDataType -json``.

Apple Silicon has one GPU that shares RAM with the CPU. How much of that RAM the GPU may use is a
macOS policy (Metal's ``recommendedMaxWorkingSetSize``), not a hardware figure: the
``iogpu.wired_limit_mb`` sysctl sets it when it is above 0; otherwise macOS applies a default that
we can only estimate from outside Metal (see :func:`default_gpu_limit`).

Intel Macs report each discrete or integrated GPU with its VRAM in ``spdisplays_vram`` ("8 GB"),
``_spdisplays_vram`` (macOS 10.13) or ``spdisplays_vram_shared`` (integrated Intel graphics).
"""

from __future__ import annotations

import json
import re
from typing import Any

from rigcheck.core.machine import GPU, Vendor
from rigcheck.core.probe._common import COMMAND_TIMEOUT_S, Notes, ProbeContext, VendorResult
from rigcheck.core.unified import apple_default_gpu_limit

SOURCE = "sysctl/system_profiler"

#: system_profiler can take a few seconds on a cold start; sysctl answers at once
PROFILER_TIMEOUT_S = 15.0

GIB = 1024**3
MIB = 1024**2

# Default GPU working set when iogpu.wired_limit_mb is 0, as Metal reports it in
# recommendedMaxWorkingSetSize (which llama.cpp prints at start-up and MLX/PyTorch read):
#   16 GiB  -> 10922.67 MiB = 2/3   https://github.com/abetlen/llama-cpp-python/issues/687
#   32 GiB  -> 21845.34 MiB = 2/3   https://github.com/ollama/ollama/issues/434 (M2 Max 32 GB)
#   36 GiB  -> 28991.03 MB  = 3/4   llama.cpp log of an M4 Max 36 GB (code index, no repository named);
#                                   https://www.thinkdifferent.blog/blog/the-macbook-pro-setting-that-doubles-your-ai-performance/
#                                   also says "On a 36GB machine, about 27GB"
#   48 GiB  -> 38654.71 MB  = 3/4   llama.cpp log of an M3 Max 48 GB (code index)
#   64 GiB  -> 51539.61 MB  = 3/4   https://github.com/ggml-org/llama.cpp/issues/1870 (M2 Max 64 GB)
#   96 GiB  -> 73728.00 MiB = 3/4   https://github.com/ggml-org/llama.cpp/issues/3213 (M2 Max 96 GB)
# So: two thirds up to 32 GiB, three quarters above. Recent macOS releases have been measured
# allowing more (11.84 GiB of 16 GiB on an M3: https://github.com/AlexsJones/llmfit/pull/754;
# 107.52 GiB of 128 GiB on macOS 26: https://github.com/antirez/ds4/pull/893), so this estimate is
# the conservative, long-standing default, and the note says it is an estimate.
# The rule itself lives in core/unified.py, where the estimator applies it to snapshots too.

_VENDORS: tuple[tuple[str, Vendor], ...] = (
    ("apple", "apple"),
    ("nvidia", "nvidia"),
    ("amd", "amd"),
    ("ati", "amd"),
    ("intel", "intel"),
)
_VENDOR_PCI_IDS: dict[Vendor, str] = {"apple": "106b", "nvidia": "10de", "amd": "1002", "intel": "8086"}
_NAME_HINTS: tuple[tuple[str, Vendor], ...] = (
    ("apple m", "apple"),
    ("radeon", "amd"),
    ("amd", "amd"),
    ("nvidia", "nvidia"),
    ("geforce", "nvidia"),
    ("quadro", "nvidia"),
    ("intel", "intel"),
)
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMGT])B\b", re.IGNORECASE)
_HEX_ID = re.compile(r"0x([0-9a-f]{1,4})\b", re.IGNORECASE)


def probe_gpus(ctx: ProbeContext) -> VendorResult:
    """The Mac's GPUs; Apple Silicon as one unified-memory GPU with its usable share of RAM."""
    notes = Notes("apple")
    memsize = _sysctl_int(ctx, "hw.memsize", notes)
    brand = _sysctl(ctx, "machdep.cpu.brand_string")
    listed = _displays(ctx, notes)
    entries = listed or []

    apple_entries = [e for e in entries if _vendor_of(e) == "apple"]
    if apple_entries or (brand or "").startswith("Apple"):
        apple = _apple_silicon_gpu(ctx, apple_entries[0] if apple_entries else {}, brand, memsize, notes)
        return VendorResult(gpus=(apple,), notes=notes.collected())

    gpus = tuple(gpu for entry in entries if (gpu := _discrete_gpu(entry, notes)) is not None)
    if not gpus and listed is not None:
        notes.info("system_profiler listed no GPU")
    return VendorResult(gpus=gpus, notes=notes.collected())


# -- Apple Silicon ------------------------------------------------------------------------------


def _apple_silicon_gpu(
    ctx: ProbeContext, entry: dict[str, Any], brand: str | None, memsize: int | None, notes: Notes
) -> GPU:
    name = _text(entry.get("sppci_model")) or brand or _text(entry.get("_name")) or "Apple GPU"
    cores = _int_or_none(entry.get("sppci_cores"))
    if entry and cores is None:
        notes.info("system_profiler did not report the GPU core count")
    limit = _gpu_limit(ctx, memsize, notes)
    notes.info(
        "free GPU memory is not reported on Apple Silicon: the GPU shares RAM with the CPU, "
        "so what is free is the system's available memory"
    )
    return GPU(
        vendor="apple",
        name=name,
        memory_total_bytes=limit,
        memory_free_bytes=None,
        unified_memory=True,
        cores=cores,
        source=SOURCE,
    )


def _gpu_limit(ctx: ProbeContext, memsize: int | None, notes: Notes) -> int | None:
    """How much of the unified memory the GPU may use: the wired limit when set, else the default."""
    raw = _sysctl(ctx, "iogpu.wired_limit_mb")
    limit_mb: int | None = None
    if raw is None:
        notes.info("iogpu.wired_limit_mb is not readable (macOS before 14 has no such setting)")
    else:
        limit_mb = _int_or_none(raw)
        if limit_mb is None:
            notes.warning(f"unexpected iogpu.wired_limit_mb value {raw[:40]!r}; using the default")

    if limit_mb is not None and limit_mb > 0:
        limit = limit_mb * MIB
        if memsize is not None and limit > memsize:
            notes.warning(
                f"iogpu.wired_limit_mb = {limit_mb} is more than the {_gib(memsize)} GiB of RAM; "
                "counting all of RAM instead"
            )
            return memsize
        notes.info(f"GPU memory limit {limit_mb} MiB set by iogpu.wired_limit_mb")
        return limit

    if memsize is None:
        notes.warning("total RAM is unknown, so the GPU memory limit is unknown too")
        return None
    estimate, share = default_gpu_limit(memsize)
    notes.info(
        f"GPU memory limit estimated as {share} of {_gib(memsize)} GiB unified memory "
        "(macOS default wired limit; set iogpu.wired_limit_mb to change it)"
    )
    return estimate


def default_gpu_limit(memsize: int) -> tuple[int, str]:
    """The estimated default GPU working set for ``memsize`` bytes of RAM, and the share as words."""
    return apple_default_gpu_limit(memsize)


# -- Intel Macs ---------------------------------------------------------------------------------


def _discrete_gpu(entry: dict[str, Any], notes: Notes) -> GPU | None:
    """A GPU on an Intel Mac: AMD/NVIDIA with its own VRAM, or Intel graphics sharing RAM."""
    name = _text(entry.get("sppci_model")) or _text(entry.get("_name"))
    if name is None:
        return None
    vendor = _vendor_of(entry)
    if vendor is None:
        notes.info(f"skipped {name}: unknown GPU vendor")
        return None
    dedicated = _size_bytes(entry.get("spdisplays_vram")) or _size_bytes(entry.get("_spdisplays_vram"))
    shared = _size_bytes(entry.get("spdisplays_vram_shared"))
    unified = dedicated is None and (shared is not None or vendor == "intel")
    total = dedicated if dedicated is not None else shared
    if unified:
        notes.info(f"{name} shares system RAM; its memory figure is the dynamic maximum macOS reports")
    elif total is None:
        notes.warning(f"system_profiler gave no VRAM size for {name}")
    device = _hex_id(entry.get("spdisplays_device-id"))
    return GPU(
        vendor=vendor,
        name=name,
        memory_total_bytes=total,
        pci_id=f"{_VENDOR_PCI_IDS[vendor]}:{device}" if device else None,
        unified_memory=unified,
        source=SOURCE,
    )


# -- reading the commands -----------------------------------------------------------------------


def _sysctl(ctx: ProbeContext, key: str) -> str | None:
    out = ctx.run(["sysctl", "-n", key], COMMAND_TIMEOUT_S)
    if out is None:
        return None
    return out.strip() or None


def _sysctl_int(ctx: ProbeContext, key: str, notes: Notes) -> int | None:
    raw = _sysctl(ctx, key)
    if raw is None:
        notes.warning(f"sysctl {key} is not readable")
        return None
    value = _int_or_none(raw)
    if value is None:
        notes.warning(f"unexpected sysctl {key} value {raw[:40]!r}")
    return value


def _displays(ctx: ProbeContext, notes: Notes) -> list[dict[str, Any]] | None:
    """The GPU entries of ``system_profiler SPDisplaysDataType -json``; ``None`` and a note on failure."""
    out = ctx.run(["system_profiler", "SPDisplaysDataType", "-json"], PROFILER_TIMEOUT_S)
    if out is None:
        notes.warning("system_profiler SPDisplaysDataType failed or is missing; GPU details unknown")
        return None
    try:
        data = json.loads(out)
    except json.JSONDecodeError:
        notes.warning("system_profiler SPDisplaysDataType gave output that is not JSON; GPU details unknown")
        return None
    items = data.get("SPDisplaysDataType") if isinstance(data, dict) else None
    if not isinstance(items, list):
        notes.warning("system_profiler SPDisplaysDataType gave JSON of an unexpected shape")
        return None
    # Display-only entries (e.g. DisplayLink adapters) carry another sppci_device_type.
    return [
        item
        for item in items
        if isinstance(item, dict) and item.get("sppci_device_type", "spdisplays_gpu") == "spdisplays_gpu"
    ]


# -- small parsers ------------------------------------------------------------------------------


def _vendor_of(entry: dict[str, Any]) -> Vendor | None:
    """The vendor from ``spdisplays_vendor`` ("sppci_vendor_Apple", "AMD (0x1002)"), else the name."""
    raw = (_text(entry.get("spdisplays_vendor")) or "").lower().removeprefix("sppci_vendor_")
    for key, vendor in _VENDORS:
        if raw.startswith(key):
            return vendor
    name = (_text(entry.get("sppci_model")) or _text(entry.get("_name")) or "").lower()
    for hint, vendor in _NAME_HINTS:
        if hint in name:
            return vendor
    return None


def _size_bytes(value: object) -> int | None:
    """ "8 GB" or "1536 MB" (binary units, as system_profiler means them) in bytes."""
    if not isinstance(value, str):
        return None
    match = _SIZE.search(value)
    if match is None:
        return None
    power = "KMGT".index(match.group(2).upper()) + 1
    return int(float(match.group(1)) * 1024**power)


def _hex_id(value: object) -> str | None:
    match = _HEX_ID.search(value) if isinstance(value, str) else None
    return match.group(1).lower().zfill(4) if match else None


def _int_or_none(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _gib(size: int) -> str:
    value = size / GIB
    return f"{value:.0f}" if value.is_integer() else f"{value:.1f}"
