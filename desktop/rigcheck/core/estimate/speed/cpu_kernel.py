"""Which integer matrix kernel llama.cpp's CPU backend runs for a weight type on the host's ISA, and how many
int8 multiply-accumulates one of its vector instructions does against one FP32 FMA of the same width.

The CPU's compute peak (``speed.cpu_compute``) is counted in FP32 FLOPs; llama.cpp multiplies quantised
weights by int8 activations (Q8_0/Q8_K), so what bounds a prompt (and a compute-bound decode) is the int8
rate of the kernel it picks. The CPU class's compute shares are fitted on x86 rows, whose kernels
(``mul_sum_us8_pairs_acc_int32x8`` in ggml/src/ggml-cpu/arch/x86/repack.cpp@bd04407: ``vpmaddubsw`` +
``vpmaddwd``, or ``vpdpbusd`` with VNNI) run on the FMA ports with the nibble unpacking between them, so
x86 keeps a factor of 1 (VNNI included: the fit set's VNNI hosts, a Ryzen 7 8840U and an i5-1135G7, reach
the same share of the FP32 peak as its AVX2 ones). On Arm the kernels are dot-product and matrix
instructions: per 128-bit instruction ``SDOT`` does 16 int8 products and ``SMMLA`` (i8mm) 32, against 4 for
an FP32 ``FMLA``; relative to x86's pair of instructions per 32 products that is 2× with the dot product
and 4× with i8mm. Which types get an i8mm GEMM is ggml_repack_get_optimal_repack_type in
ggml/src/ggml-cpu/repack.cpp@20870d52 (with i8mm: Q4_0 → q4_0_4x8, Q4_K → q4_K_8x8, Q8_0 → q8_0_4x8;
IQ4_NL only with the dot product); the other types run the row kernels (ggml_vec_dot_*), taken at the dot
product's rate where the CPU has it.
"""

from __future__ import annotations

from dataclasses import dataclass

KERNEL_SOURCE = (
    "ggml-org/llama.cpp ggml/src/ggml-cpu/repack.cpp@20870d52 (ggml_repack_get_optimal_repack_type)"
)

#: the weight types (catalog format ids) ggml's repack selector gives an i8mm GEMM on Arm
ARM_I8MM_REPACK = frozenset({"q4_0", "q4_k", "q4_k_s", "q4_k_m", "q8_0"})

#: int8 products per instruction relative to the x86 kernels' (2 per FP32 FMA lane): SDOT 4, SMMLA 8
DOTPROD_FACTOR = 2.0
I8MM_FACTOR = 4.0


@dataclass(frozen=True)
class CpuKernel:
    """The kernel's int8 rate as a multiple of what the CPU class's fitted shares assume (x86: 1)."""

    factor: float
    #: the kernel in words (as ``speed.CpuCompute.isa`` carries the ISA), None where the factor is 1
    why: str | None


def cpu_kernel(flags: tuple[str, ...], quant_id: str | None) -> CpuKernel:
    """The kernel llama.cpp multiplies ``quant_id`` with on a CPU with these ISA flags (Linux names; the
    probe stores ``asimd`` as ``neon``; ``asimddp`` the dot product, ``i8mm`` the matrix instructions): an
    i8mm GEMM for the types the repack selector gives one, the dot product's rate for the others; 1 on x86
    and on Arm without the dot product."""
    have = {f.lower() for f in flags}
    if not have & {"asimd", "neon"}:
        return CpuKernel(1.0, None)
    quant = (quant_id or "").lower()
    if "i8mm" in have and quant in ARM_I8MM_REPACK:
        return CpuKernel(
            I8MM_FACTOR,
            f"{quant_id}: llama.cpp's i8mm GEMM (SMMLA, 32 int8 products per instruction) ({KERNEL_SOURCE})",
        )
    if "asimddp" in have:
        return CpuKernel(
            DOTPROD_FACTOR,
            f"{quant_id}: llama.cpp's dot-product kernels (SDOT, 16 int8 products per instruction) "
            f"({KERNEL_SOURCE})",
        )
    return CpuKernel(1.0, None)
