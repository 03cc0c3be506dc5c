"""How fast the engine answers: the whole catalog × formats × a dozen GPUs, and one what-if.

Run: ``.venv/bin/python benchmarks/engine_speed.py``. Targets (from the estimation issue): the whole
matrix under 200 ms, one what-if recomputation under 5 ms, so GUI sliders feel instant.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import replace

from rigcheck.core.catalog import load_catalog
from rigcheck.core.estimate.fit import fit, grid
from rigcheck.core.estimate.memory import Request
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate

GPUS = (
    "nvidia-geforce-rtx-3060", "nvidia-geforce-rtx-3090", "nvidia-geforce-rtx-4060", "nvidia-geforce-rtx-4090",
    "nvidia-geforce-rtx-5090", "nvidia-rtx-6000-ada", "nvidia-a100-sxm4-80gb", "nvidia-h100-sxm5",
    "nvidia-h200", "amd-radeon-rx-7900-xtx", "amd-instinct-mi300x", "apple-m4-max",
)  # fmt: skip
QUANTS = ("bf16", "fp8", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "q3_k_m", "q2_k", "iq4_xs", "nf4")


def main() -> None:
    catalog = load_catalog(use_overlay=False)
    gpus = [catalog.gpu(g) for g in GPUS]
    missing = [g for g, spec in zip(GPUS, gpus, strict=True) if spec is None]
    assert not missing, f"not in the catalog: {missing}"
    start = time.perf_counter()
    models = [from_catalog(m) for m in catalog.models]
    parse_ms = (time.perf_counter() - start) * 1000

    timings = []
    for _ in range(5):
        start = time.perf_counter()
        cells = grid(models, QUANTS, gpus, catalog)  # type: ignore[arg-type]
        timings.append((time.perf_counter() - start) * 1000)
    matrix = statistics.median(timings)
    print(f"catalog models parsed from their configs: {len(models)} in {parse_ms:.1f} ms")
    print(
        f"matrix: {len(models)} models × {len(QUANTS)} formats × {len(gpus)} GPUs = {len(cells)} verdicts "
        f"in {matrix:.0f} ms median of 5 (target < 200 ms: {'ok' if matrix < 200 else 'MISSED'})"
    )

    box = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * 1024**3), gpus=())
    box = simulate(box, [catalog.gpu("nvidia-geforce-rtx-4090")], 64)  # type: ignore[list-item]
    model = next(m for m in models if m.id == "llama-3.1-8b")
    req = Request(quant="q4_k_m")
    whatif = []
    for context in range(1024, 1024 * 65, 1024):  # a slider dragged across 64 positions
        start = time.perf_counter()
        fit(model, box, replace(req, context=context), catalog, live=False, advise=False)
        whatif.append((time.perf_counter() - start) * 1000)
    one = statistics.median(whatif)
    print(
        f"one what-if (fit without advice, 8B on a 4090): {one:.2f} ms median of {len(whatif)} (target < 5 ms: {'ok' if one < 5 else 'MISSED'})"
    )
    advised = []
    for _ in range(5):
        start = time.perf_counter()
        # without flash attention (the default before estimates v2) 128k does not fit, so the solvers run
        fit(model, box, replace(req, context=131072, flash_attention=False), catalog, live=False)
        advised.append((time.perf_counter() - start) * 1000)
    print(
        f"one fit with advice (max context and best format solved): {statistics.median(advised):.1f} ms median of 5"
    )


if __name__ == "__main__":
    main()
