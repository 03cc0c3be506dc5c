"""A CPU's peak FP32 throughput for prompt processing: cores × clock × FLOPs per cycle by its widest vector
extension, AMX only for the types llama.cpp has AMX kernels for."""

from __future__ import annotations

from dataclasses import dataclass

from rigcheck.core.machine import CPU

#: FP32 FLOPs per core per clock by the widest vector extension the CPU reports (two FMA pipes × lanes × 2):
#: AMX-capable Xeons (Sapphire Rapids and later) have two 512-bit FMA units (2 × 16 × 2); other AVX-512 CPUs
#: are counted as two 256-bit pipes (Zen 4 runs 512-bit ops on 256-bit units; Ice/Tiger Lake clients have one
#: 512-bit FMA port), as are AVX2+FMA CPUs (Haswell and later, Zen 2 and later: 2 × 8 × 2); AVX without FMA
#: has separate 256-bit multiply and add ports (8 + 8); Arm NEON cores are counted as two 128-bit FMA pipes
#: (2 × 4 × 2); anything else as SSE2 (4 + 4). Intel and AMD optimisation manuals, per microarchitecture.
_FLOPS_PER_CYCLE: tuple[tuple[tuple[str, ...], int, str], ...] = (
    (("amx_tile",), 64, "AMX/AVX-512, two 512-bit FMA units"),
    (("avx512f",), 32, "AVX-512 on 256-bit-wide FMA pipes"),
    (("avx2", "fma"), 32, "AVX2, two 256-bit FMA pipes"),
    (("avx",), 16, "AVX"),
    (("asimd",), 16, "NEON, two 128-bit FMA pipes"),
    (("neon",), 16, "NEON, two 128-bit FMA pipes"),  # the probe's spelling of Linux's "asimd"
)
_FALLBACK_FLOPS_PER_CYCLE = (8, "SSE2")
#: GGUF types llama.cpp multiplies with Intel AMX tiles (qtype_has_amx_kernels: Q4_0, Q4_1, Q8_0, Q4_K, Q5_K,
#: Q6_K, IQ4_XS), as catalog format ids; every other type (Q2_K, Q3_K, Q5_0, F16, BF16, MXFP4, ...) takes the
#: AVX-512 path on the same CPU
AMX_QUANTS = frozenset(
    {
        "q4_0",
        "q4_1",
        "q8_0",
        "q4_k",
        "q5_k",
        "q6_k",
        "iq4_xs",
        "q4_k_s",
        "q4_k_m",
        "q5_k_s",
        "q5_k_m",
        "q6_k-mix",
    }
)
AMX_SOURCE = "ggml-org/llama.cpp ggml/src/ggml-cpu/amx/common.h@5c5f166 (qtype_has_amx_kernels)"


@dataclass(frozen=True)
class CpuCompute:
    """A CPU's peak FP32 throughput for prompt processing: cores × clock × FLOPs per cycle."""

    flops_per_s: float
    cores: int
    ghz: float
    flops_per_cycle: int
    isa: str

    @property
    def why(self) -> str:
        return (
            f"{self.cores} cores × {self.ghz:.2f} GHz × {self.flops_per_cycle} FLOPs/cycle ({self.isa}) = "
            f"{self.flops_per_s / 1e12:.2f} TFLOPS FP32"
        )


def cpu_compute(cpu: CPU, *, quant_id: str | None = None, threads: int | None = None) -> CpuCompute | None:
    """Peak FP32 FLOP/s from the probe's core count, maximum clock and ISA flags; None when the clock is not
    known. Physical cores are the ones llama.cpp's default thread count uses; without them, logical cores.

    ``threads`` (llama.cpp ``-t``) computes on that many cores, never more than the physical ones (a second
    hardware thread shares its core's FMA units). With a ``quant_id``, AMX counts only for the types llama.cpp
    has AMX kernels for (``AMX_QUANTS``); the others run at the CPU's AVX-512 rate."""
    if not cpu.max_mhz or cpu.max_mhz <= 0:
        return None
    cores = cpu.physical_cores or cpu.logical_cores
    if threads is not None and threads > 0:
        cores = min(cores, threads)
    if cores <= 0:
        return None
    flags = {f.lower() for f in cpu.flags}
    per_cycle, isa = _FALLBACK_FLOPS_PER_CYCLE
    for needed, value, name in _FLOPS_PER_CYCLE:
        if "amx_tile" in needed and quant_id is not None and quant_id not in AMX_QUANTS:
            continue  # no AMX kernel for this type: llama.cpp's AVX-512 path
        if all(f in flags for f in needed):
            per_cycle, isa = value, name
            break
    if "amx_tile" in flags and quant_id is not None and quant_id not in AMX_QUANTS:
        isa += f"; llama.cpp has no AMX kernel for {quant_id} ({AMX_SOURCE})"
    ghz = cpu.max_mhz / 1000
    return CpuCompute(cores * ghz * 1e9 * per_cycle, cores, ghz, per_cycle, isa)
