"""The cost of each further GPU in llama.cpp's layer split, from runs on one GPU and on N of the same kind.

Mechanism: with ``--split-mode layer`` a decoded token runs the GPUs one after another, each reading its own
layers, so the bytes and FLOPs per token are the same on N GPUs as on one. What N adds is N - 1 boundaries:
at each, ggml's scheduler ends one device's graph split, copies the hidden state to the next device and
synchronises the two (ggml-org/llama.cpp ggml/src/ggml-backend.cpp, ``ggml_backend_sched_compute_splits``).
The hidden state is a few kilobytes, so a boundary costs latency (a PCIe or NVLink round trip and a stream
synchronisation), not bandwidth: a fixed number of µs per token per boundary.

Fit: for each pair of fit-split decode rows from one source page that differ only in the GPU count (same
GPU, model, format, test and backend; no offload), ``(1 / tokens_N - 1 / tokens_1) / (N - 1)`` is the
measured cost of one boundary (the roofline's time is the same on both, so it cancels). The median over a
hardware class's pairs when it has ``MIN_PAIRS``, else over its vendor × backend's pairs, else over every
pair measured (the boundary is the same scheduler code on every backend; marked as that pool), else none.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass

from measurements import Measurement
from rigcheck.core.catalog import Catalog
from rigcheck.core.estimate import speed

#: pairs a class needs for a per-boundary cost of its own
MIN_PAIRS = 4


@dataclass(frozen=True)
class HopFit:
    #: µs per token for each GPU boundary (GPUs - 1 of them)
    us: float
    pairs: int
    #: "its own" or the pool it came from
    pooled: str

    @property
    def said(self) -> str:
        where = "its" if self.pooled == "its own" else f"{self.pooled}'s"
        return f"{self.us:g} µs per token per GPU boundary, median of {where} {self.pairs} one-vs-N-GPU row pairs"


def _key(row: Measurement) -> tuple[str, ...]:
    return (row.source_url.split("#")[0], row.gpu_id, row.model_id, row.format, row.test, row.backend)


def hop_samples(rows: list[Measurement]) -> list[tuple[Measurement, float]]:
    """(N-GPU row, µs per boundary) for every fit-split one-vs-N pair of decode rows."""
    decode = [
        r
        for r in rows
        if r.metric == "decode_tokens_per_s"
        and r.split == "fit"
        and not r.offloaded
        and r.gpu_id
        and r.value > 0
    ]
    single = {_key(r): r for r in decode if r.gpu_count == 1}
    found = []
    for row in decode:
        one = single.get(_key(row)) if row.gpu_count > 1 else None
        if one is not None:
            found.append((row, (1 / row.value - 1 / one.value) / (row.gpu_count - 1) * 1e6))
    return found


def fit_per_hop(rows: list[Measurement], catalog: Catalog) -> dict[tuple[str, str], HopFit]:
    """Per hardware class × backend: the fitted µs per GPU boundary (classes with pairs, and every class of a
    vendor × backend pool that has pairs)."""
    by_class: dict[tuple[str, str], list[float]] = defaultdict(list)
    for row, us in hop_samples(rows):
        gpu = catalog.gpu(row.gpu_id)
        if gpu is None:
            continue
        cls = speed.hardware_class(gpu.vendor, gpu.name, gpu, gpu.unified_memory)
        by_class[(cls, row.backend)].append(us)
    pools: dict[tuple[str, str], list[float]] = defaultdict(list)
    for (cls, backend), values in by_class.items():
        pools[(cls.split("-")[0], backend)].extend(values)
    every = [us for values in by_class.values() for us in values]
    fits: dict[tuple[str, str], HopFit] = {}
    classes = {(f.hw_class, f.backend) for f in catalog.speed_factors} | set(by_class)
    for cls, backend in classes:
        own = by_class.get((cls, backend), [])
        pool = pools.get((cls.split("-")[0], backend), [])
        if len(own) >= MIN_PAIRS:
            fits[(cls, backend)] = HopFit(round(max(statistics.median(own), 0.0)), len(own), "its own")
        elif len(pool) >= MIN_PAIRS:
            fits[(cls, backend)] = HopFit(
                round(max(statistics.median(pool), 0.0)), len(pool), f"{cls.split('-')[0]} {backend}"
            )
        elif len(every) >= MIN_PAIRS and cls != "cpu" and not cls.startswith("apple"):
            # no pair of this vendor × backend: the boundary is the same ggml scheduler code on every backend
            # (end a split, copy the hidden state, synchronise), so the median of every measured pair, said so
            fits[(cls, backend)] = HopFit(
                round(max(statistics.median(every), 0.0)), len(every), "every backend"
            )
    return fits
