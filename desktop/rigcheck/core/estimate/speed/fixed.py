"""The fixed cost of a token on a GPU, whatever the bytes: kernel launches and synchronisation per layer, and
a hand-off per GPU (``per_layer_us`` and ``per_gpu_us`` per hardware class × backend in catalog/speed.toml,
fitted by benchmarks/fit_speed.py). It is what dominates small models on fast GPUs.
"""

from __future__ import annotations

from rigcheck.core.catalog import SpeedFactor


def fixed_seconds(layers: int, factor: SpeedFactor, *, hand_off: bool = False) -> float:
    """Seconds per token a GPU spends on ``layers`` layers' fixed costs, plus its per-GPU cost when the
    token is handed to it from another GPU (a further GPU of a layer split, as catalog/speed.toml says)."""
    return (layers * factor.per_layer_us + (factor.per_gpu_us if hand_off else 0.0)) * 1e-6
