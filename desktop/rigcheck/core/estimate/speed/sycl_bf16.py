"""BF16 prompt weights on llama.cpp's SYCL backend run on the FP32 path, not the XMX engines.

``ggml_sycl_op_mul_mat_sycl`` takes its FP16 GEMM (oneDNN or oneMKL, on the XMX engines) only for F16 and
quantised weights (``src0->type == GGML_TYPE_F16 || ggml_is_quantized(src0->type)``) and converts anything
else to FP32 (``to_fp32_sycl``) for an FP32 oneDNN or oneMKL GEMM on the vector ALUs (ggml-org/llama.cpp
ggml/src/ggml-sycl/ggml-sycl.cpp). A GEMM on the vector ALUs cannot pass the FP32 peak, so the class's
prefill share, fitted on quantised rows that do run on XMX (above 1 × the FP32 peak the catalog lists for
Intel), is held to at most 1 there (speed.prefill_compute, ``fp32``). Release b8888 (PR #22119, 2026-04-22)
adds a BF16 oneDNN path for builds with oneDNN (GGML_SYCL_DNNL); how many users' builds have it is not
known, so the FP32 path is assumed: uncertain for those builds.
"""

from __future__ import annotations

from rigcheck.core.catalog import Backend

SYCL_BF16_SOURCE = "ggml-org/llama.cpp ggml-sycl.cpp, ggml_sycl_op_mul_mat_sycl: BF16 converted to FP32"


def sycl_bf16_on_fp32(backend: Backend | None, quant_id: str | None) -> bool:
    """Whether llama.cpp's SYCL backend multiplies these prompt weights on its FP32 path (BF16 weights)."""
    return backend == "sycl" and quant_id == "bf16"
