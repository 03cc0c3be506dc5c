"""The share of the FP32 peak that llama.cpp's quantized decode reaches on an NVIDIA GPU without ``__dp4a``.

Mechanism (core/estimate/speed/dp4a.py): below compute capability 6.1, ``ggml_cuda_dp4a`` is four byte
multiplies and adds instead of one instruction (ggml-org/llama.cpp ggml/src/ggml-cuda/common.cuh), so a
decoded token is bound by 2 FLOPs per active weight at the FP32 issue rate, not by its bytes.

Fit: for every fit-split CUDA decode row with quantized weights on such a GPU (no offload), the measured
seconds per token minus the class's fixed costs (per-layer and per-GPU-boundary, fitted on the other rows)
is the dot products' time; ``2 × active parameters / (FP32 peak × that time)`` is the row's share. The
median over the vendor × backend's rows; these rows are kept out of the bandwidth fit (they say nothing of
the memory). Rows of GPUs with ``__dp4a`` never enter.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from measurements import Measurement
from rigcheck.core.catalog import Catalog
from rigcheck.core.estimate.speed.dp4a import lacks_dp4a
from rigcheck.core.models.resolve import from_catalog

UNQUANTISED = frozenset({"F16", "BF16", "F32"})


@dataclass(frozen=True)
class Dp4aFit:
    efficiency: float
    rows: int
    urls: tuple[str, ...]

    @property
    def said(self) -> str:
        return (
            f"quantized decode without __dp4a: {self.efficiency:.2f} of the FP32 peak, median of "
            f"{self.rows} rows of compute capability < 6.1"
        )


def nodp4a_row(row: Measurement, catalog: Catalog) -> bool:
    """A decode row whose time is set by emulated dot products (so not a bandwidth point)."""
    if row.metric != "decode_tokens_per_s" or row.backend != "cuda" or row.format.upper() in UNQUANTISED:
        return False
    return lacks_dp4a(catalog.gpu(row.gpu_id) if row.gpu_id else None)


def fit_nodp4a(
    rows: list[Measurement], catalog: Catalog, fixed_us: dict[str, tuple[float, float]]
) -> Dp4aFit | None:
    """``fixed_us``: per hardware class, (per-layer µs, per-boundary µs) of its CUDA row."""
    from rigcheck.core.estimate import speed

    shares: list[float] = []
    urls: set[str] = set()
    for row in rows:
        if row.split != "fit" or row.offloaded or not nodp4a_row(row, catalog):
            continue
        gpu = catalog.gpu(row.gpu_id)
        model = catalog.model(row.model_id) if row.model_id else None
        if gpu is None or model is None or not gpu.fp32_tflops:
            continue
        arch = from_catalog(model).arch
        cls = speed.hardware_class(gpu.vendor, gpu.name, gpu, gpu.unified_memory)
        per_layer, per_hop = fixed_us.get(cls, (0.0, 0.0))
        fixed_s = (arch.num_layers * per_layer + max(row.gpu_count - 1, 0) * per_hop) * 1e-6
        dot_s = 1 / row.value - fixed_s
        if dot_s <= 0:
            continue
        shares.append(2 * arch.params_active / (gpu.fp32_tflops * 1e12 * dot_s))
        urls.add(row.source_url)
    if not shares:
        return None
    return Dp4aFit(round(min(statistics.median(shares), 1.0), 2), len(shares), tuple(sorted(urls)))
