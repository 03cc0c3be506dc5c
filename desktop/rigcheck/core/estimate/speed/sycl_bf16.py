"""BF16 prompt weights on llama.cpp's SYCL backend: a oneDNN BF16 GEMM on current builds, FP32 before.

``ggml_sycl_op_mul_mat_sycl`` (ggml-org/ggml@d99724f src/ggml-sycl/ggml-sycl.cpp) first tries a BF16 fast
path: where the build has oneDNN (``GGML_SYCL_DNNL``: the ``GGML_SYCL_DNN`` option is ON by default and
oneDNN ships with oneAPI) and the compiler has ``sycl::ext::oneapi::bfloat16`` (``GGML_SYCL_HAS_BF16``,
any Intel oneAPI compiler), it converts only the activations to BF16 and runs a BF16 × BF16 → FP32 oneDNN
matmul on the weights in place: the XMX engines, no copy of the weights. That path came with
ggml-org/llama.cpp PR #22119 ("add BF16 fast path", merged 2026-04-22, release b8888). Before it, BF16
fell to the FP32 branch: the whole weight matrix converted to FP32 (``to_fp32_sycl``) for an FP32
oneDNN/oneMKL GEMM, at most the FP32 peak (speed.prefill_compute, ``fp32``). That oneDNN GEMM may have
down-converted to FP16 in GGML_SYCL_F16 builds (``fpmath_mode::f16`` since PR #14125): not modelled,
older builds are held to FP32.
"""

from __future__ import annotations

from rigcheck.core.catalog import Backend

SYCL_BF16_SOURCE = "ggml-org/llama.cpp ggml-sycl.cpp, ggml_sycl_op_mul_mat_sycl: BF16 converted to FP32"
#: the release that added the oneDNN BF16 GEMM (ggml-org/llama.cpp PR #22119)
SYCL_BF16_DNNL_BUILD = 8888
SYCL_BF16_DNNL_SOURCE = (
    "ggml-org/ggml@d99724f src/ggml-sycl/ggml-sycl.cpp, ggml_sycl_op_mul_mat_sycl's BF16 fast path "
    "(ggml-org/llama.cpp PR #22119, b8888)"
)


def sycl_bf16_on_fp32(backend: Backend | None, quant_id: str | None, build: int | None = None) -> bool:
    """Whether llama.cpp's SYCL backend multiplies these prompt weights on its FP32 path: BF16 weights on a
    build ``build`` before the oneDNN BF16 GEMM (None: a current build, which has it)."""
    if backend != "sycl" or quant_id != "bf16":
        return False
    return build is not None and build < SYCL_BF16_DNNL_BUILD
