"""How fast the engine answers: the whole catalog × formats × a dozen GPUs, and one what-if.

Run: ``.venv/bin/python benchmarks/engine_speed.py``. Targets (from the estimation issue): the whole
matrix under 200 ms, one what-if recomputation under 5 ms, so GUI sliders feel instant. From the
recommendation issue: every catalog model's recommendation on one machine (the Models page's fit
column) and parameter counting from a config.json at least 1000× faster than transformers' meta-device
count, without allocating the 64 MiB read cap per call.

transformers is not a dependency and is not installed here, so its side is a published figure:
huggingface/accelerate PR #699 (merged 2022-09-14) timed ``init_empty_weights()`` +
``AutoModel.from_pretrained("gpt2")`` ten times at 6.47 s with the PR (4.15 s with a torch.load hack
on top): 0.41–0.65 s per meta-device instantiation of a 124M-parameter model, before the import of
torch and transformers (seconds more) is counted. Larger models build more modules, so GPT-2 is
the kindest comparison for transformers.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import replace

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit, grid
from rigcheck.core.estimate.memory import Request
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.whatif import simulate

#: seconds per meta-device GPT-2 instantiation, the fastest published (accelerate PR #699: 4.15 s / 10)
META_DEVICE_GPT2_S = 0.415

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
    fit_column(catalog, models, box)
    config_counting(catalog)


def fit_column(catalog: Catalog, models: list[ModelInfo], box: Machine) -> None:
    """The Models page's fit column: recommend() for every catalog model on one machine."""
    from rigcheck.core.estimate.recommend import recommend

    runs = []
    for _ in range(5):
        start = time.perf_counter()
        for model in models:
            recommend(model, box, "inference", catalog)
        runs.append((time.perf_counter() - start) * 1000)
    total = statistics.median(runs)
    print(
        f"recommend() for all {len(models)} catalog models on an RTX 4090 + 64 GiB (the Models page's "
        f"fit column, on a worker thread): {total:.0f} ms median of 5, {total / len(models):.1f} ms a model"
    )


def config_counting(catalog: Catalog) -> None:
    """Parameters counted from a config.json on disk, in-process: time and memory per call."""
    import json
    import tempfile
    import tracemalloc
    from pathlib import Path

    from rigcheck.core.models.files import read_config_json

    for model_id in ("llama-3.1-8b", "llama-3.1-70b", "deepseek-v3"):
        spec = catalog.model(model_id)
        assert spec is not None
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "config.json"
            path.write_text(json.dumps(spec.config), encoding="utf-8")
            read_config_json(path)  # warm the imports
            times = []
            for _ in range(200):
                start = time.perf_counter()
                info = read_config_json(path)
                times.append(time.perf_counter() - start)
            tracemalloc.start()
            read_config_json(path)
            _now, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        one = statistics.median(times)
        print(
            f"read_config_json + parameter count, {model_id} ({info.arch.params_total / 1e9:.1f}B, "
            f"{path.stat().st_size if path.exists() else len(json.dumps(spec.config))} B config): "
            f"{one * 1e6:.0f} µs median of 200, peak {peak / 1024:.0f} KiB allocated; "
            f"{META_DEVICE_GPT2_S / one:,.0f}× faster than the published meta-device GPT-2 figure "
            f"(target ≥ 1000×: {'ok' if META_DEVICE_GPT2_S / one >= 1000 else 'MISSED'})"
        )


if __name__ == "__main__":
    main()
