"""The estimator against published measurements: one row per measurement, its error, and the median.

Run: ``.venv/bin/python benchmarks/estimate_accuracy.py``. Every row names where the measurement was
published. Rows whose constant was calibrated on the same measurement are marked "(calibration)":
they check the arithmetic, not the model, and are left out of the median.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import Request, estimate_memory
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate

GIB = 1024**3
MIB = 1024**2


@dataclass(frozen=True)
class Row:
    what: str
    published: float
    unit: str
    source: str
    estimate: Callable[[Catalog], float]
    calibration: bool = False


def _model(catalog: Catalog, model_id: str):  # type: ignore[no-untyped-def]
    spec = catalog.model(model_id)
    assert spec is not None, model_id
    return from_catalog(spec)


def _box(catalog: Catalog, gpu: str, ram_gib: float = 64) -> Machine:
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=int(ram_gib * GIB)), gpus=())
    spec = catalog.gpu(gpu)
    assert spec is not None, gpu
    return simulate(bare, [spec], ram_gib)


def _mem(model_id: str, category: str | None, unit: int, **request: object) -> Callable[[Catalog], float]:
    def run(catalog: Catalog) -> float:
        est = estimate_memory(_model(catalog, model_id), Request(**request), catalog)  # type: ignore[arg-type]
        return est.total(category) / unit  # type: ignore[arg-type]

    return run


def _decode(model_id: str, gpu: str, quant: str) -> Callable[[Catalog], float]:
    def run(catalog: Catalog) -> float:
        result = fit(
            _model(catalog, model_id),
            _box(catalog, gpu),
            Request(quant=quant, context=512),
            catalog,
            live=False,
            advise=False,
        )
        return result.speed.decode_tokens_per_s or float("nan")

    return run


def _megatrain(model_id: str, what: str) -> Callable[[Catalog], float]:
    def run(catalog: Catalog) -> float:
        box = _box(catalog, "nvidia-h100-sxm5", ram_gib=2048)
        result = fit(_model(catalog, model_id), box, Request(workload="full", context=1024, batch=96), catalog,
                     offload="full", live=False, advise=False)  # fmt: skip
        placement = result.placement
        return (placement.cpu_bytes if what == "cpu" else sum(placement.gpu_bytes)) / 1e9

    return run


ROWS = (
    Row("Llama-3.1-8B Q4_K_M GGUF file", 4.58, "GiB", "llama.cpp tools/quantize/README.md",
        _mem("llama-3.1-8b", "weights", GIB, quant="q4_k_m"), calibration=True),
    Row("Llama-3.1-8B Q8_0 GGUF file", 7.95, "GiB", "llama.cpp tools/quantize/README.md",
        _mem("llama-3.1-8b", "weights", GIB, quant="q8_0"), calibration=True),
    Row("Llama-3-8B bf16 weights in vLLM", 14.96, "GiB", "vllm-project/vllm PR #10511 start-up log",
        _mem("llama-3.1-8b", "weights", GIB, quant="bf16")),
    Row("Llama-3-8B-shape KV cache, n_ctx 2048 (llama.cpp)", 256, "MiB", "fedora-copr/logdetective PR #106 log",
        _mem("llama-3.1-8b", "kv_cache", MIB, quant="q4_k_m", context=2048)),
    Row("Llama-3-8B-shape KV cache, n_ctx 32768 (llama.cpp)", 4096, "MiB", "fedora-copr/logdetective PR #106 log",
        _mem("llama-3.1-8b", "kv_cache", MIB, quant="q4_k_m", context=32768)),
    Row("Llama-3-8B-shape compute buffer, n_ctx 32768", 2144, "MiB", "fedora-copr/logdetective PR #106 log",
        _mem("llama-3.1-8b", "activations", MIB, quant="q4_k_m", context=32768)),
    Row("gpt-oss-20b checkpoint (MXFP4 experts, bf16 rest)", 12.82, "GiB", "openai/gpt-oss config + checkpoint (memory-formulas §6.2)",
        _mem("gpt-oss-20b", "weights", GIB, quant="mxfp4")),
    Row("M1 Max decode, Llama-3.1-8B Q4_K_M", 46.2, "tok/s", "brand-o/normiebench issue #40",
        _decode("llama-3.1-8b", "apple-m1-max", "q4_k_m")),
    Row("Mac mini M4 decode, Llama-3.1-8B Q4_K_M", 20.87, "tok/s", "brand-o/normiebench issue #3",
        _decode("llama-3.1-8b", "apple-m4", "q4_k_m")),
    Row("MegaTrain Qwen2.5-32B host RAM", 327, "GB", "DLYuanGod/MegaTrain README@2a9f977 performance table",
        _megatrain("qwen2.5-32b", "cpu")),
    Row("MegaTrain Qwen2.5-32B GPU memory, batch 96 × 1024", 40, "GB", "DLYuanGod/MegaTrain README@2a9f977 performance table",
        _megatrain("qwen2.5-32b", "gpu")),
)  # fmt: skip


def main() -> None:
    catalog = load_catalog(use_overlay=False)
    errors = []
    print(f"{'measurement':<52}{'published':>12}{'estimate':>12}  {'error':>7}  source")
    for row in ROWS:
        try:
            value = row.estimate(catalog)
        except Exception as exc:  # noqa: BLE001 - a benchmark row that cannot run is reported, not fatal
            print(f"{row.what:<52}{row.published:>12g}{'n/a':>12}  {'':>7}  {row.source} ({exc})")
            continue
        error = (value - row.published) / row.published
        mark = " (calibration)" if row.calibration else ""
        if not row.calibration:
            errors.append(abs(error))
        print(
            f"{row.what:<52}{row.published:>9g} {row.unit:<3}{value:>9.2f}    {error:>+7.1%}  {row.source}{mark}"
        )
    if errors:
        print(f"\nmedian absolute error over {len(errors)} independent rows: {statistics.median(errors):.1%}")


if __name__ == "__main__":
    main()
