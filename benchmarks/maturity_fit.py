"""The engine × architecture maturity factors (catalog/speed.toml [[maturity]]): measured ÷ estimated
with the class factors, where the rows show one (benchmarks/fit_speed.py --maturity).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import replace

from cpu_hosts import host_cpu
from fit_points import GIB, UNQUANTISED
from measurements import Measurement, row_context, row_quant
from rigcheck.core.catalog import Catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.memory import Request
from rigcheck.core.machine import Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate

#: an engine × architecture gets a maturity factor when at least this many fit rows show it off by more
#: than MATURITY_THRESHOLD (median ratio of measured to estimated, with the class factors above)
MATURITY_MIN_ROWS = 3
MATURITY_THRESHOLD = 0.15
#: ... from at least this many hardware classes: an engine's code for an architecture runs slow or fast on
#: every device, while rows of one class cannot tell the architecture's effect from that class's (the 2× MI50
#: table alone once gave "qwen3" a prefill factor, which is gfx906's K-quant GEMMs, not Qwen3's)
MATURITY_MIN_CLASSES = 2


def estimate(row: Measurement, catalog: Catalog) -> float | None:
    """The estimate for one speed row, run through fit() as a user's machine would be."""
    from rigcheck.core.estimate.fit import fit

    spec = catalog.model(row.model_id) if row.model_id else None
    gpu = catalog.gpu(row.gpu_id) if row.gpu_id else None
    if spec is None or row.offloaded or (row.gpu_count and gpu is None):
        return None
    ram = row.ram_gb or 128
    # the host as published, with the cores and clock benchmarks/data/cpu_hosts.csv lists for it (a CPU-only
    # prefill estimate needs them), as estimate_accuracy.py builds it
    machine = Machine(cpu=host_cpu(row.host or None), memory=Memory(total_bytes=int(ram * GIB)), gpus=())
    machine = simulate(machine, [gpu] * row.gpu_count if gpu else [], ram)
    backend = row.backend if row.backend in ("cuda", "rocm", "metal", "vulkan", "sycl", "cpu") else None
    try:
        # the row's prompt length, as estimate_accuracy.py passes it: it sets the micro-batch and how many of
        # them a layer split overlaps (speed/prefill.py pipelined_ubatches)
        req = Request(
            quant=row_quant(row),
            context=row_context(row),
            backend=backend,  # type: ignore[arg-type]
            engine_build=row.engine_build,  # an older build: the estimate divided by its milestones
            ubatch=row.ubatch,  # the run's -ub (None: llama-bench's default)
        )
        result = fit(
            from_catalog(spec),
            machine,
            req,
            catalog,
            offload="none" if row.gpu_count else "auto",
            live=False,
            advise=False,
        )
    except InputError:
        return None
    s = result.speed
    return s.decode_tokens_per_s if row.metric == "decode_tokens_per_s" else s.prefill_tokens_per_s


FACTOR_NAMES = (("decode_tokens_per_s", "decode_factor"), ("prefill_tokens_per_s", "prefill_factor"))


def toml_string(text: str) -> str:
    """A TOML basic string: backslashes and double quotes escaped (build names carry quotes)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def row_class(row: Measurement, catalog: Catalog) -> str:
    """The hardware class a speed row ran on (speed.hardware_class; the CPU class for CPU-only rows)."""
    gpu = catalog.gpu(row.gpu_id) if row.gpu_id and row.gpu_count else None
    if gpu is None:
        return speed.CPU_CLASS
    return speed.hardware_class(gpu.vendor, gpu.name, gpu, gpu.unified_memory)


#: per (model_type, metric): the rows' source URLs, or their engine builds
Keyed = dict[tuple[str, str], set[str]]


def fit_maturity(
    rows: list[Measurement], catalog: Catalog, engine: str = "llama.cpp"
) -> tuple[dict[str, dict[str, tuple[float, int]]], Keyed, Keyed]:
    """Per model_type, the maturity factors the rows show ({"decode_factor": (value, rows), ...}) against
    ``catalog``'s class factors alone, and each (model_type, metric)'s source URLs and engine builds.

    ``engine`` "llama.cpp": llama.cpp's own GPU rows (Ollama's GPU rows left out, as in points_by_key) and
    CPU rows of both. "ollama": Ollama's GPU rows, against estimates that already carry llama.cpp's maturity
    (the factor is Ollama's lag behind llama.cpp on the architecture: core/estimate/speed engine_maturity
    multiplies the two), under the same MATURITY_MIN_ROWS / MATURITY_MIN_CLASSES / MATURITY_THRESHOLD."""
    if engine == "ollama":
        bare = replace(catalog, maturities=tuple(m for m in catalog.maturities if m.engine == "llama.cpp"))
    else:
        bare = replace(catalog, maturities=())
    ratios: dict[tuple[str, str], list[float]] = defaultdict(list)
    urls: dict[tuple[str, str], set[str]] = defaultdict(set)
    builds: dict[tuple[str, str], set[str]] = defaultdict(set)
    classes: dict[tuple[str, str], set[str]] = defaultdict(set)
    for row in rows:
        if row.metric == "prefill_tokens_per_s" and row.moe and row.format.upper() in UNQUANTISED:
            continue  # a weight-format effect, not the architecture's (UNQUANTISED)
        if not row.llama_cpp:
            continue
        if (engine == "ollama") != (row.ollama and bool(row.gpu_count)):
            continue  # Ollama's GPU rows are Ollama's maturity, never llama.cpp's (points_by_key)
        if (
            row.metric == "decode_tokens_per_s"
            and row.moe
            and speed.tiled_expert_decode(
                row.backend,  # type: ignore[arg-type]
                row.format.lower(),
            )
        ):
            continue  # likewise: the backend's kernel for these experts (speed.TILED_EXPERT_DECODE)
        value = estimate(row, bare)
        if not value:
            continue
        model_type = str(bare.model(row.model_id).config["model_type"])  # type: ignore[union-attr]
        ratios[(model_type, row.metric)].append(row.value / value)
        urls[(model_type, row.metric)].add(row.source_url)
        classes[(model_type, row.metric)].add(row_class(row, bare))
        builds[(model_type, row.metric)].add(row.build)
    fitted: dict[str, dict[str, tuple[float, int]]] = {}
    for model_type in sorted({m for m, _ in ratios}):
        factors = {}
        for metric, name in FACTOR_NAMES:
            found = ratios.get((model_type, metric), [])
            if (
                len(found) >= MATURITY_MIN_ROWS
                and len(classes[(model_type, metric)]) >= MATURITY_MIN_CLASSES
                and abs(statistics.median(found) - 1) > MATURITY_THRESHOLD
            ):
                factors[name] = (min(statistics.median(found), 2.0), len(found))
        if factors:
            fitted[model_type] = factors
    return fitted, urls, builds


def print_maturity(rows: list[Measurement], catalog: Catalog) -> None:
    print("# ---- engine × architecture maturity, where the measurements show one ----\n")
    # llama.cpp's first: Ollama's is fitted against estimates that carry it (fit_maturity)
    fitted, urls, builds = fit_maturity(rows, catalog)
    print_engine_maturity("llama.cpp", fitted, urls, builds)
    # against the catalog's llama.cpp maturities: once catalog/speed.toml reproduces itself (COMMON rule: run
    # twice), those are the ones just fitted
    print("# Ollama's own lag behind llama.cpp on an architecture (its GPU fit rows against estimates that")
    print("# already carry llama.cpp's maturity; core/estimate/speed engine_maturity multiplies the two)\n")
    print_engine_maturity("ollama", *fit_maturity(rows, catalog, "ollama"))


def print_engine_maturity(
    engine: str, fitted: dict[str, dict[str, tuple[float, int]]], urls: Keyed, builds: Keyed
) -> None:
    for model_type, factors in fitted.items():
        print("[[maturity]]")
        print(f'id = "{engine}-{model_type}"')
        print(f'engine = "{engine}"')
        print(f'model_type = "{model_type}"')
        for name, (value, _n) in factors.items():
            print(f"{name} = {value:.2f}")
        print('source = "benchmarks/data/measurements.csv (fit split; benchmarks/fit_speed.py)"')
        said = ", ".join(f"{name}: median of {n} rows" for name, (_v, n) in factors.items())
        against = "the class factors alone" if engine == "llama.cpp" else "llama.cpp's factors and maturity"
        print(f'measured = "measured ÷ estimated with {against}; {said}"')
        # the factor describes the engine as it was at its rows' builds: a new architecture speeds up release
        # by release, so the builds are part of what the figure means
        metrics = [m for m, name in FACTOR_NAMES if name in factors]
        used = sorted({build for m in metrics for build in builds[(model_type, m)]})
        notes = "engine builds of its rows: " + "; ".join(used)
        print(f"notes = {toml_string(notes)}")
        print("sources = [")
        for url in sorted({url for m in metrics for url in urls[(model_type, m)]}):
            print(f'  "{url}",')
        print("]")
        print()
