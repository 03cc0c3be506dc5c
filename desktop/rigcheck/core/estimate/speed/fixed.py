"""The fixed cost of a token on a GPU, whatever the bytes: kernel launches and synchronisation per layer, and
a hand-off per GPU (``per_layer_us`` and ``per_gpu_us`` per hardware class × backend in catalog/speed.toml,
fitted by benchmarks/fit_speed.py). It is what dominates small models on fast GPUs.

The hand-off is each GPU boundary of llama.cpp's layer split: the hidden state copied to the next device and
the two synchronised (ggml_backend_sched_compute_splits), a latency, not a bandwidth; ``per_gpu_us`` is the
median of one-vs-N-GPU runs of one source (benchmarks/per_hop_fit.py). Tensor parallelism pays all-reduces
instead (``multigpu``), not this.
"""

from __future__ import annotations

from rigcheck.core.catalog import SpeedFactor


def fixed_seconds(layers: int, factor: SpeedFactor, *, hand_off: bool = False) -> float:
    """Seconds per token a GPU spends on ``layers`` layers' fixed costs, plus its per-GPU cost when the
    token is handed to it from another GPU (a further GPU of a layer split, as catalog/speed.toml says)."""
    return (layers * factor.per_layer_us + (factor.per_gpu_us if hand_off else 0.0)) * 1e-6
