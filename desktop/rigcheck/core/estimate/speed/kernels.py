"""Which matrix kernel llama.cpp's CUDA/HIP backend runs a prompt's quantised weights through.

``ggml_cuda_should_use_mmq`` (ggml-org/llama.cpp ggml/src/ggml-cuda/mmq.cu@027ef87, built for HIP too)
picks, per weight type, GPU and micro-batch, between MMQ (the quantised kernel: each weight tile unpacked to
int8 and multiplied on the int8 tensor/matrix cores or with dp4a) and dequantisation to FP16 followed by a
cuBLAS/hipBLAS GEMM. The BLAS path runs at the share of the peak the class reaches on FP16 weights
(``prefill_float_factor``, fitted on F16/BF16 rows) and first writes an FP16 copy of each matrix that the
GEMM then reads back: a memory cost per micro-batch the quantised kernel does not pay.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rigcheck.core.catalog import GpuSpec
from rigcheck.core.estimate.speed.dp4a import lacks_dp4a
from rigcheck.core.said import Text, say

MMQ_SOURCE = "ggml-org/llama.cpp ggml/src/ggml-cuda/mmq.cu@027ef87, ggml_cuda_should_use_mmq"
#: MMQ_DP4A_MAX_BATCH_SIZE: below it, GPUs that otherwise take the BLAS path keep MMQ
DP4A_MAX_BATCH = 64
#: the ggml weight types MMQ implements (mmq_supported in ggml_cuda_should_use_mmq)
MMQ_TYPES = frozenset(
    {"Q1_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "MXFP4", "NVFP4", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K",
     "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S", "IQ4_XS", "IQ4_NL"}
)  # fmt: skip
#: NVIDIA architectures with int8 tensor-core MMA (turing_mma_available: Turing and later)
_NVIDIA_INT8_MMA = ("turing", "ampere", "ada", "hopper", "blackwell")


@dataclass(frozen=True)
class PromptKernel:
    #: "MMQ" or "dequantise + cuBLAS" / "dequantise + hipBLAS"
    name: str
    #: the dequantise + BLAS path: the class's unquantized share and an FP16 copy of the weights
    blas: bool
    #: the weight type the choice was made for
    ggml_type: str
    why_said: Text


def ggml_type(quant_id: str | None) -> str | None:
    """The ggml type of a GGUF format's bulk weights (q4_k_m → Q4_K, ud-q3_k_xl → Q3_K, ud-q8_k_xl → Q8_0)."""
    if not quant_id:
        return None
    found = re.search(r"(iq\d_(?:xxs|xs|s|m|nl)|q\d_k|q\d_\d|mxfp4|nvfp4)", quant_id.lower())
    if found and found.group(1) == "q8_k":
        # Q8_K is ggml's activation-side type, not a storage type for weights: Q8_K_XL files store Q8_0
        # (general.file_type 7; catalog/quant.toml ud-q8_k_xl)
        return "Q8_0"
    return found.group(1).upper() if found else None


def cuda_prompt_kernel(
    spec: GpuSpec | None, quant_id: str | None, *, ubatch: int, experts: int = 0
) -> PromptKernel | None:
    """The kernel llama.cpp's CUDA/HIP backend picks for a prompt micro-batch of ``ubatch`` tokens through
    weights of ``quant_id`` on this GPU (``experts``: the model's routed experts, 0 for a dense model); None
    for a weight type MMQ does not implement (F16/BF16 take cuBLAS anyway) or a GPU not known."""
    kind = ggml_type(quant_id)
    if spec is None or kind is None or kind not in MMQ_TYPES:
        return None
    arch = (spec.architecture or "").lower().replace(" ", "")
    blas_name = "dequantise + hipBLAS" if spec.vendor == "amd" else "dequantise + cuBLAS"
    mmq = True
    if spec.vendor == "nvidia":
        if not any(a in arch for a in _NVIDIA_INT8_MMA):
            # below compute capability 6.1 (Tesla P100, Maxwell) MMQ's int8 dot products have no __dp4a:
            # every quantised type goes dequantise + cuBLAS (FP16 on shader cores), dense or experts;
            # Volta has FP16 tensor cores without int8 MMA: cuBLAS from 64 tokens; other Pascal, dp4a MMQ
            mmq = not lacks_dp4a(spec) and (arch != "volta" or ubatch < DP4A_MAX_BATCH)
    elif spec.vendor == "amd":
        mmq = _amd_uses_mmq(arch, (spec.gfx_target or "").lower(), kind, ubatch, experts)
    else:
        return None
    name = "MMQ" if mmq else blas_name
    return PromptKernel(
        name,
        not mmq,
        kind,
        say(
            "{kind} weights over {ubatch}-token micro-batches run {name} on this GPU ({source})",
            kind=kind,
            ubatch=ubatch,
            name=name,
            source=MMQ_SOURCE,
        ),
    )


def _amd_uses_mmq(arch: str, gfx: str, kind: str, ubatch: int, experts: int) -> bool:
    if arch == "cdna3":
        # rocBLAS/Tensile performs poorly on CDNA3: MMQ always, on the MFMA matrix cores with stream-K since
        # ggml-org/llama.cpp PR #14624 ("HIP: Enable Matrix cores for MMQ Kernels, Enable stream-K for CDNA3")
        return True
    # CDNA1/2, and CDNA4 (gfx950: not GGML_CUDA_CC_IS_CDNA3, whose range ends below GGML_CUDA_CC_CDNA4,
    # ggml/src/ggml-cuda/common.cuh@0010882): MFMA MMQ for the types and shapes PR #14949 measured faster
    if arch.startswith("cdna"):
        if experts > 64 or ubatch <= 128 or kind in ("Q4_0", "Q4_1", "Q5_0", "Q5_1"):
            return True
        return ubatch <= 256 and kind in ("Q4_K", "Q5_K")
    if arch in ("rdna3", "rdna3.5"):
        if experts >= 64:
            return True  # high expert counts: the BLAS path's per-expert synchronisation costs more
        rdna35 = arch == "rdna3.5"
        if kind == "Q2_K":
            return ubatch <= 128
        if kind == "Q6_K":
            return ubatch <= (256 if rdna35 else 128)
        if kind in ("IQ2_XS", "IQ2_S"):
            return rdna35 or ubatch <= 128
        return True
    if arch == "rdna4":
        return True  # MMQ is consistently faster than dequantisation + hipBLAS on RDNA 4
    if gfx == "gfx900":
        return experts > 0  # Vega 10 lacks dp4a: BLAS for dense matrices
    return True  # GCN 5.1 (gfx906), RDNA 1/2: dp4a MMQ


def dequantise_bytes(weight_bytes: float, bits_per_weight: float) -> float:
    """Bytes the BLAS path moves per micro-batch beyond the GEMM's own reads: the quantised weights read and
    an FP16 copy written and read back (2 + 2 bytes per weight)."""
    weights = weight_bytes * 8 / max(bits_per_weight, 1.0)
    return weight_bytes + 4 * weights
