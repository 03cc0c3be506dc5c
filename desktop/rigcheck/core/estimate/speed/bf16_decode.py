"""BF16 weights on a backend whose mat-vec does not stream them at the quantized rate.

llama.cpp's SYCL backend decodes BF16 weights through its dequantize-mul-mat-vec (DMMV) path, which on Intel
Arc Pro B70 runs at a fraction of the bandwidth its quantized kernels reach: Qwen2.5-1.5B BF16 tg128 29.6 t/s
against 198 t/s for Q4_K_M on one card, Qwen2.5-14B BF16 3.47 t/s on two ("a known DMMV bug", fixed only by
the author's llama.cpp PR #21580; PMZFX/intel-arc-pro-b70-benchmarks engine-comparison.md@1f4a089, build
b8724, 2026-04-09). The estimator reads such weights at the class's bandwidth efficiency ×
``decode_bf16_factor`` (catalog/speed.toml, fitted by benchmarks/fit_speed.py on the backend's BF16 rows);
1 where nothing was fitted.
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
