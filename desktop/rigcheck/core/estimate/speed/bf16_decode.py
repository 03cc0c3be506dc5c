"""BF16 weights on a backend whose mat-vec does not stream them at the quantized rate.

llama.cpp's SYCL backend decodes BF16 weights through its dequantize-mul-mat-vec (DMMV) path, which on Intel
Arc Pro B70 runs at a fraction of the bandwidth its quantized kernels reach: Qwen2.5-1.5B BF16 tg128 29.6 t/s
against 198 t/s for Q4_K_M on one card, Qwen2.5-14B BF16 3.47 t/s on two ("a known DMMV bug", fixed only by
the author's llama.cpp PR #21580; PMZFX/intel-arc-pro-b70-benchmarks engine-comparison.md@1f4a089, build
b8724, 2026-04-09). The estimator reads such weights at the class's bandwidth efficiency ×
``decode_bf16_factor`` (catalog/speed.toml, fitted by benchmarks/fit_speed.py on the backend's BF16 rows);
1 where nothing was fitted.

SYCL's other slow decode path is MUL_MAT_ID (mixture-of-experts layers). ``ggml_sycl_mul_mat_id`` copies the
router's expert ids back to the host and waits on the queue (``stream->memcpy(ids_host...)`` then
``stream->wait()``), and for a one-token batch (``ne12 == 1``) launches one ``ggml_sycl_mul_mat`` per selected
expert, each a separate mat-vec (ggml-sycl.cpp as vendored by ollama/ollama
ml/backend/ggml/ggml/src/ggml-sycl/ggml-sycl.cpp@3daf6da9d8d35cef01511687869e1f5ef210b308). A host round
trip and top-k small launches per expert matrix is a fixed cost per MoE layer, not a bandwidth share: it is
``moe_layer_us`` of intel-sycl (speed/fixed.py), fitted by benchmarks/fit_speed.py on B70 b8840 rows
(PMZFX/intel-arc-pro-b70-benchmarks data/llm/*.json@90f6948: Qwen3.6-35B-A3B 54.65 t/s against the dense
Qwen3.5-9B's 60.22; llm-benchmarks.md@7157020: "Intel SYCL's MoE dispatch is less efficient").
"""

from __future__ import annotations

from rigcheck.core.catalog import SpeedFactor
from rigcheck.core.said import Num, Text, say


def bf16_read_factor(factor: SpeedFactor, quant_id: str | None) -> tuple[float, Text] | None:
    """The share of the usual read rate BF16 weights get on this class × backend, with its reason; None
    where the weights are not BF16 or no factor was fitted."""
    if quant_id != "bf16" or factor.decode_bf16_factor == 1.0:
        return None
    return factor.decode_bf16_factor, say(
        "BF16 weights on {backend}: its BF16 mat-vec streams them at {factor} × the usual rate",
        backend=factor.backend,
        factor=Num(factor.decode_bf16_factor, 2),
    )
