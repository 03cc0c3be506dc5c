"""BF16 prompt weights on llama.cpp's ROCm backend on AMD GPUs without BF16 arithmetic: FP32 maths.

``ggml_cuda_mul_mat_cublas`` (ggml-org/ggml@d99724f src/ggml-cuda/ggml-cuda.cu, built for HIP too) keeps
BF16 weights as BF16 (``compute_type = src0->type``) and hands them to hipblasGemmEx; F16 weights go to the
FP16 GEMM where ``fast_fp16_hardware_available``. A GPU's BLAS can only multiply BF16 as fast as its ISA
lets it: BF16 arithmetic on AMD GPUs is the ``v_dot2_f32_bf16`` dot product (LLVM target feature
``dot9-insts``: RDNA 3 and later) or the matrix cores (``mai-insts``: CDNA). GCN 5.1 (gfx906: MI50/MI60,
Radeon VII) and RDNA 1/2 (gfx10xx) have neither; they do have the FP16 dot products (``dot2-insts``
``v_dot2_f32_f16``, ``dot7-insts``) that run F16 at twice the FP32 rate (llvm/llvm-project
clang/test/CodeGenOpenCL/amdgpu-features.cl@4ab2246d486ba30c4b2d654323a0c0b97565c0f1, the target features
clang sets per processor). So their BF16 GEMMs convert to FP32 and run at the FP32 peak (the catalog's
``fp32_tflops``, half the packed-FP16 figure), like BF16 on Vulkan's scalar shaders (speed/vulkan_bf16.py).
"""

from __future__ import annotations

import re

from rigcheck.core.catalog import Backend, GpuSpec

ROCM_BF16_SOURCE = (
    "llvm/llvm-project clang/test/CodeGenOpenCL/amdgpu-features.cl@4ab2246: no dot9-insts (v_dot2_f32_bf16) "
    "nor mai-insts on gfx906 and gfx10xx"
)
#: gfx9 targets with matrix cores (mai-insts: BF16 MFMA): CDNA 1-4
_CDNA_TARGETS = ("gfx908", "gfx90a", "gfx94", "gfx95")
#: architectures the catalog names without a gfx target that lack BF16 arithmetic
_NO_BF16_ARCHS = ("gcn", "rdna1", "rdna2", "vega", "polaris")


def amd_lacks_bf16(spec: GpuSpec) -> bool:
    """Whether this AMD GPU's ISA has no BF16 arithmetic (no BF16 dot product, no matrix cores): gfx8/gfx9
    before CDNA, and gfx10 (RDNA 1/2). Where the catalog has no gfx target, its architecture decides."""
    if spec.vendor != "amd":
        return False
    gfx = (spec.gfx_target or "").lower()
    found = re.match(r"gfx(\d+)", gfx)
    if found:
        if gfx.startswith(_CDNA_TARGETS):
            return False
        major = found.group(1)
        # gfx8xx/gfx9xx (three digits): GCN; gfx10xx: RDNA 1/2; gfx11xx and later have v_dot2_f32_bf16
        return len(major) == 3 or major.startswith("10")
    arch = (spec.architecture or "").lower().replace(" ", "")
    return arch.startswith(_NO_BF16_ARCHS)


def rocm_bf16_on_fp32(backend: Backend | None, quant_id: str | None, spec: GpuSpec | None) -> bool:
    """Whether llama.cpp's ROCm backend multiplies these prompt weights in FP32: BF16 weights on an AMD GPU
    without BF16 arithmetic (amd_lacks_bf16)."""
    if backend != "rocm" or quant_id != "bf16" or spec is None:
        return False
    return amd_lacks_bf16(spec)
