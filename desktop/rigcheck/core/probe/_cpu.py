"""CPU model, cores and the instruction-set flags that matter for LLM inference; RAM and swap.

On Linux the flags come from ``/proc/cpuinfo``: they are what the kernel enabled (AMX, for one,
needs kernel support as well as silicon), and reading the file takes microseconds where py-cpuinfo's
CPUID subprocess takes over a second. On macOS ``sysctl`` answers directly. Elsewhere, and when
``/proc/cpuinfo`` says nothing useful, py-cpuinfo does the work.
"""

from __future__ import annotations

import platform

import psutil

from rigcheck.core.machine import CPU, Memory, Note
from rigcheck.core.probe._common import Notes, ProbeContext, read_text

#: flags worth keeping in a snapshot (inference kernels dispatch on these), in Linux's spelling
NOTABLE_FLAGS = (
    "sse4_2", "avx", "avx2", "fma", "f16c", "avx_vnni",
    "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16",
    "amx_tile", "amx_bf16", "amx_int8",
    "neon", "asimddp", "sve", "sve2", "i8mm", "bf16",
)  # fmt: skip

#: py-cpuinfo (CPUID) and macOS spellings of the same flags
_ALIASES = {
    "avx512vnni": "avx512_vnni",
    "avx512bf16": "avx512_bf16",
    "avx512fp16": "avx512_fp16",
    "avxvnni": "avx_vnni",
    "asimd": "neon",
    "asimddp": "asimddp",
    "dotprod": "asimddp",  # macOS: hw.optional.arm.FEAT_DotProd
    "sse4.2": "sse4_2",
}


def normalise_flags(raw: list[str] | tuple[str, ...] | set[str]) -> tuple[str, ...]:
    """Notable flags in Linux's spelling, in :data:`NOTABLE_FLAGS` order."""
    have = {_ALIASES.get(f.lower(), f.lower()) for f in raw}
    return tuple(f for f in NOTABLE_FLAGS if f in have)


#: Arm server cores by (CPU implementer, CPU part) as /proc/cpuinfo gives them, named as lscpu names them
#: (util-linux sys-utils/lscpu-arm.c arm_part and ampere_part): Arm Linux has no "model name", and these names
#: are what the CPU platform catalog matches (Grace and Graviton4 are Neoverse-V2, Graviton3 Neoverse-V1, ...)
_ARM_PARTS = {
    ("0x41", "0xd0c"): "Neoverse-N1",
    ("0x41", "0xd40"): "Neoverse-V1",
    ("0x41", "0xd49"): "Neoverse-N2",
    ("0x41", "0xd4f"): "Neoverse-V2",
    ("0x41", "0xd84"): "Neoverse-V3",
    ("0x41", "0xd8e"): "Neoverse-N3",
    ("0xc0", "0xac3"): "Ampere-1",
    ("0xc0", "0xac4"): "Ampere-1a",
}


def _parse_proc_cpuinfo(text: str) -> tuple[str | None, str | None, list[str]]:
    """(model, vendor, flags) from the first processor block of /proc/cpuinfo (x86 or Arm)."""
    model = vendor = None
    implementer = part = None
    flags: list[str] = []
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            if model and flags:
                break  # end of the first processor block
            continue
        key, value = key.strip().lower(), value.strip()
        if key == "model name" and model is None:
            model = value
        elif key == "vendor_id" and vendor is None:
            vendor = value
        elif key in ("flags", "features") and not flags:
            flags = value.split()
        elif key == "hardware" and model is None:  # some Arm boards
            model = value
        elif key == "cpu implementer" and implementer is None:
            implementer = value.lower()
        elif key == "cpu part" and part is None:
            part = value.lower()
    if model is None and implementer and part:
        model = _ARM_PARTS.get((implementer, part))
    return model, vendor, flags


def _linux_cpu(ctx: ProbeContext, notes: Notes) -> tuple[str | None, str | None, tuple[str, ...]] | None:
    text = read_text(ctx.path("/proc/cpuinfo"), notes)
    if text is None:
        return None
    model, vendor, flags = _parse_proc_cpuinfo(text)
    if model is None:
        return None
    return model, vendor, normalise_flags(flags)


def _macos_cpu(ctx: ProbeContext) -> tuple[str | None, str | None, tuple[str, ...]]:
    model = (ctx.run(["sysctl", "-n", "machdep.cpu.brand_string"], 2.0) or "").strip() or None
    features = (
        ctx.run(["sysctl", "-n", "machdep.cpu.features", "machdep.cpu.leaf7_features"], 2.0) or ""
    ).split()
    flags = set(features)
    if platform.machine() == "arm64" or (model or "").startswith("Apple"):
        flags.add("neon")  # Advanced SIMD is mandatory on AArch64
        optional = (
            ctx.run(
                [
                    "sysctl",
                    "hw.optional.arm.FEAT_BF16",
                    "hw.optional.arm.FEAT_I8MM",
                    "hw.optional.arm.FEAT_DotProd",
                ],
                2.0,
            )
            or ""
        )
        for line in optional.splitlines():
            key, _, value = line.partition(":")
            if value.strip() == "1":
                flags.add(key.rsplit("_", 1)[-1].lower())
    vendor = "Apple" if (model or "").startswith("Apple") else None
    return model, vendor, normalise_flags(flags)


def _cpuinfo_library(notes: Notes) -> tuple[str | None, str | None, tuple[str, ...]]:
    try:
        import cpuinfo

        info = cpuinfo.get_cpu_info()
    except Exception as exc:  # noqa: BLE001 - py-cpuinfo can fail in many platform-specific ways
        notes.warning(f"py-cpuinfo failed: {exc}")
        return None, None, ()
    flags = normalise_flags(info.get("flags", []))
    if platform.system() == "Windows":
        notes.info(
            "AMX and AVX512-BF16 are not detected on Windows (py-cpuinfo does not read those CPUID bits)"
        )
    return info.get("brand_raw") or None, info.get("vendor_id_raw") or None, flags


def _max_mhz(notes: Notes) -> float | None:
    try:
        freq = psutil.cpu_freq()
    except (OSError, NotImplementedError, RuntimeError) as exc:
        notes.info(f"CPU frequency not readable: {exc}")
        return None
    if freq is None or not freq.max:
        # Virtual machines often expose no cpufreq driver: psutil then has only the clock the kernel
        # measured at boot (/proc/cpuinfo "cpu MHz"), which is at most the boost clock, so estimates that
        # use it are lower bounds for compute and the audit says so.
        current = float(getattr(freq, "current", 0.0) or 0.0)
        if not current:
            return None
        notes.info(
            "CPU maximum clock not readable (no cpufreq driver, as in many virtual machines): the current "
            f"{current:.0f} MHz is used, so CPU compute estimates may be low"
        )
        return current
    return float(freq.max)


def probe_cpu(ctx: ProbeContext) -> tuple[CPU, Memory, tuple[Note, ...]]:
    notes = Notes("cpu")
    found = None
    if ctx.platform.startswith("linux"):
        found = _linux_cpu(ctx, notes)
    elif ctx.platform == "darwin":
        found = _macos_cpu(ctx)
    model, vendor, flags = found if found is not None else _cpuinfo_library(notes)
    if model is None:
        notes.warning("CPU model not readable")

    logical = psutil.cpu_count(logical=True) or 1
    physical = psutil.cpu_count(logical=False)
    cpu = CPU(
        model=model,
        vendor=vendor,
        arch=platform.machine() or None,
        physical_cores=physical,
        logical_cores=logical,
        max_mhz=_max_mhz(notes),
        flags=flags,
    )
    vm = psutil.virtual_memory()
    try:
        swap_total: int | None = psutil.swap_memory().total
    except (OSError, RuntimeError) as exc:
        notes.info(f"swap size not readable: {exc}")
        swap_total = None
    memory = Memory(total_bytes=vm.total, available_bytes=vm.available, swap_total_bytes=swap_total)
    return cpu, memory, notes.collected()
