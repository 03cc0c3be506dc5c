"""The estimator against the cited measurement set, per subset, split and metric.

Run: ``.venv/bin/python benchmarks/estimate_accuracy.py`` (add ``--rows`` for every row's estimate,
``--markdown`` for the BENCHMARKS.md table alone).

Every row of ``benchmarks/data/measurements.csv`` is rebuilt as RigCheck would see it: the catalog GPU
(``rigcheck.core.whatif.simulate``, as many as the run used) with the host RAM as recorded, or a
GPU-less machine for CPU-only rows; the catalog model in the row's format; the offload as run
(``none``, llama.cpp ``layers`` with the run's ``-ngl`` when ``fit`` accepts a ``gpu_layers`` count, or
``experts`` where the estimator has an expert placement). Then
``fit`` gives the decode and prefill speeds and ``estimate_memory`` the weight bytes for file sizes.

Rows the estimator cannot express (model, GPU or format not in the catalog, expert offload without an
expert placement) are counted and listed as *not estimable* with the reason, never dropped. A row the
estimator can express but answers without a number (for example "does not fit" for a run that was
measured) counts as a miss: it is in the ±35% denominator and listed, but has no error to put in the
median.

The held-out quarter (``Measurement.split``) is reported separately: fit constants on ``fit`` rows only.
The target from issue 14: every subset with at least 10 held-out rows at a median absolute error of at
most 20% and at least 75% of rows within ±35%.

The blind set (``benchmarks/data/blind.csv``, issue 28) is scored in a table of its own: rows from sources
no fitted number came from. Issue 28's target: every decode subset with ten blind rows or more at a median
of at most 20% and at least 75% within ±35%; prefill over all blind rows at most 25% and at least 70%.
"""

from __future__ import annotations

import argparse
import inspect
import re
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cpu_hosts import host_cpu, host_memory
from measurements import BACKENDS, Measurement, load, load_blind, row_context, row_quant, source_of
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.gtt_advice import raised_gtt_machine
from rigcheck.core.estimate.memory import Request, estimate_memory, resolve_quant
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate

GIB = 1024**3
WITHIN = 0.35
#: issue 14: weight bytes within ±3% of published GGUF sizes for the common quants
FILE_WITHIN = 0.03
TARGET_MEDIAN = 0.20
TARGET_SHARE = 0.75
TARGET_MIN_ROWS = 10
#: issue 28: blind prefill over all rows
TARGET_PREFILL_MEDIAN = 0.25
TARGET_PREFILL_SHARE = 0.70
DEFAULT_RAM_GIB = 64

#: published format name → catalog quant id, where the names differ beyond case
FORMAT_IDS = {"F16": "fp16", "BF16": "bf16", "F32": "fp32"}

SUBSETS = (
    "all speed",
    "MoE",
    "dense",
    "unified memory",
    "offload",
    "CPU-only",
    "AMD discrete",
    "NVIDIA discrete",
    "NVIDIA consumer",
    "NVIDIA datacenter",
    "Intel discrete",
    "multi-GPU",
    "file sizes",
)
METRIC_NAMES = {
    "decode_tokens_per_s": "decode",
    "prefill_tokens_per_s": "prefill",
    "file_bytes": "file size",
    "gpu_memory_bytes": "GPU memory",
}


class NotEstimableError(Exception):
    """The estimator cannot express this row yet; the message says why."""


@dataclass(frozen=True)
class Outcome:
    row: Measurement
    estimate: float | None = None
    #: why there is no estimate: a NotEstimableError reason, or the estimator's own answer
    reason: str = ""
    expressible: bool = True

    @property
    def subsets(self) -> tuple[str, ...]:
        """The row's subsets, with dense speed rows and the NVIDIA GPUs' hardware class (speed.hardware_class:
        GeForce and workstation cards are consumer, the catalog's datacenter segment datacenter)."""
        found = list(self.row.subsets())
        if self.row.speed and not self.row.moe:
            found.append("dense")
        if self.row.device_class == "nvidia-discrete":
            found.append(NVIDIA_SUBSETS.get(_nvidia_class(self.row.gpu_id), "NVIDIA consumer"))
        return tuple(found)

    @property
    def error(self) -> float | None:
        return None if self.estimate is None else (self.estimate - self.row.value) / self.row.value


NVIDIA_SUBSETS = {"nvidia-datacenter": "NVIDIA datacenter", "nvidia-consumer": "NVIDIA consumer"}


@cache
def _nvidia_class(gpu_id: str) -> str:
    spec = load_catalog(use_overlay=False).gpu(gpu_id) if gpu_id else None
    return speed.hardware_class(spec.vendor, spec.name, spec, spec.unified_memory) if spec else ""


def _quant_id(row: Measurement, catalog: Catalog) -> str:
    """The row's format as the estimator resolves a --quant name (UD- names over their base type), a QAT
    release's own layout where the model's name says QAT (measurements.row_quant)."""
    name = row_quant(row)
    try:
        return resolve_quant(catalog, FORMAT_IDS.get(name, name)).id
    except InputError:
        raise NotEstimableError(f"format {row.format} not in the catalog") from None


def _model(row: Measurement, catalog: Catalog):  # type: ignore[no-untyped-def]
    if not row.model_id:
        raise NotEstimableError(f"model '{row.model}' not in the catalog")
    spec = catalog.model(row.model_id)
    if spec is None:
        raise NotEstimableError(f"catalog has no model {row.model_id}")
    return from_catalog(spec)


def _gpu_layers(row: Measurement) -> int | None:
    """The layer count of a llama.cpp layer split (``-ngl N``), when the run set one below 'all'."""
    found = re.search(r"-ngl (\d+)", row.offload)
    return int(found.group(1)) if found and row.offload_kind == "layers" else None


def _threads(row: Measurement) -> int | None:
    """llama.cpp ``-t``: the thread count a CPU run states in its flags ("none (CPU only, 8 threads)")."""
    found = re.search(r"(\d+) threads", row.offload)
    return int(found.group(1)) if found and row.device_class == "cpu" else None


def _cpu_expert_layers(row: Measurement) -> int | None:
    """llama.cpp ``--n-cpu-moe N``: the first N layers' routed experts stay in host memory; ``-cmoe`` /
    ``--cpu-moe``: every layer's (the estimator caps N at the model's MoE layers)."""
    if row.offload_kind != "experts":
        return None
    if re.search(r"(^|\s)(-cmoe|--cpu-moe)\b", row.offload):
        return 10**6
    found = re.search(r"(?:--n-cpu-moe|-ncmoe)[ =](\d+)", row.offload)
    return int(found.group(1)) if found else None


def row_machine(row: Measurement, catalog: Catalog) -> Machine:
    ram = row.ram_gb or DEFAULT_RAM_GIB
    # The host as published ("EPYC 9654, 12×DDR5-4800"): the estimator matches its CPU platform for the
    # host memory bandwidth, as the probe does with the CPU model it reads.
    cpu = host_cpu(row.host or None)
    bare = Machine(cpu=cpu, memory=Memory(total_bytes=int(ram * GIB)), gpus=())
    if row.device_class == "cpu":
        return _with_host_memory(simulate(bare, [], ram), row)
    if not row.gpu_id:
        raise NotEstimableError(f"GPU '{row.device}' not in the catalog")
    spec = catalog.gpu(row.gpu_id)
    if spec is None:
        raise NotEstimableError(f"catalog has no GPU {row.gpu_id}")
    machine = simulate(bare, [spec] * row.gpu_count, ram)
    if row.unified and row.ram_gb:
        # the machine as measured: its unified memory is the RAM it was sold with
        gpus = tuple(replace(g, memory_total_bytes=int(row.ram_gb * GIB)) for g in machine.gpus)
        apu = _apu_memory(row.host)
        if apu is not None:
            # an AMD APU as its probe reads it: the BIOS carve-out (mem_info_vram_total) and the GTT pool
            # (mem_info_gtt_total) the host's kernel parameters set, where the source states them
            carve, gtt = apu
            gpus = tuple(replace(g, memory_total_bytes=carve, memory_shared_bytes=gtt) for g in gpus)
        machine = replace(machine, gpus=gpus)
        raised = raised_gtt_machine(machine) if apu is None and _all_layers_on_gpu(row) else None
        if raised is not None:
            # every layer ran on an AMD APU's GPU: its owner had raised the GTT limit (the run could not
            # have loaded in half of RAM), though the source does not say to what; all but the reserve
            machine = raised[0]
    return _with_host_memory(machine, row)


def _all_layers_on_gpu(row: Measurement) -> bool:
    """llama.cpp run with every layer on the GPU (``-ngl 99`` / ``-ngl 999``) and nothing offloaded."""
    return row.offload_kind == "none" and re.search(r"-ngl 9{2,3}\b", row.offload) is not None


def _with_host_memory(machine: Machine, row: Measurement) -> Machine:
    """The machine with the host memory bandwidth its source says was measured, as a snapshot from
    ``rigcheck audit --measure`` carries it (cpu_hosts.host_memory); unchanged where none was."""
    memory = host_memory(row.host or None, machine.memory.total_bytes)
    return replace(machine, memory=memory) if memory.bandwidth_bytes_per_s else machine


def _apu_memory(host: str) -> tuple[int, int] | None:
    """``(carve-out, GTT)`` bytes from a host description such as "512 MB BIOS carve-out, GTT up to 124
    GiB via kernel parameters"; None when the host does not state both."""
    carve = re.search(r"(\d+(?:\.\d+)?) (MB|GB|GiB) BIOS carve-out", host)
    gtt = re.search(r"GTT up to (\d+(?:\.\d+)?) GiB", host)
    if not carve or not gtt:
        return None
    unit = {"MB": 1024**2, "GB": GIB, "GiB": GIB}[carve.group(2)]  # BIOS menus say MB/GB for MiB/GiB
    return int(float(carve.group(1)) * unit), int(float(gtt.group(1)) * GIB)


def estimate(row: Measurement, catalog: Catalog) -> Outcome:
    try:
        model = _model(row, catalog)
        quant = _quant_id(row, catalog)
        if row.metric == "file_bytes":
            weights = estimate_memory(model, Request(quant=quant, context=512), catalog).total("weights")
            return Outcome(row, float(weights))
        if not row.speed:
            raise NotEstimableError(f"metric {row.metric} not estimated by this script")
        machine = row_machine(row, catalog)
        # CPU-only: llama.cpp with no GPU layers is the estimator's "layers" placement with nothing on a GPU
        offload = "auto" if row.device_class == "cpu" else row.offload_kind
        engine = "ktransformers" if row.engine.lower().startswith("ktransformers") else "llama.cpp"
        if row.engine.lower().startswith("mlx"):
            engine = "mlx"
        if row.engine.lower().startswith("ollama"):
            engine = (
                "ollama"  # llama.cpp's kernels and factors under Ollama's defaults (core/estimate/ollama.py)
            )
        if engine == "ktransformers" and row.metric == "prefill_tokens_per_s" and machine.cpu.max_mhz is None:
            raise NotEstimableError(
                "the source names no CPU model: its cores × clock (the CPU compute peak) are unknown"
            )
        context = row_context(row)
        ngl = _gpu_layers(row)
        extra: dict[str, object] = {}
        if ngl is not None and "gpu_layers" in inspect.signature(fit).parameters:
            extra["gpu_layers"] = ngl
        n_cpu_moe = _cpu_expert_layers(row) if engine == "llama.cpp" else None
        if n_cpu_moe is not None:
            extra["cpu_expert_layers"] = n_cpu_moe
        backend = row.backend if row.backend in BACKENDS else None
        try:
            result = fit(
                model,
                machine,
                Request(
                    quant=quant,
                    context=context,
                    backend=backend,  # type: ignore[arg-type]
                    engine=engine,  # type: ignore[arg-type]
                    threads=_threads(row),
                    # the llama.cpp build the row ran (fit, held-out and blind alike): an older one is
                    # divided by each later kernel milestone (speed/engine_build.py)
                    engine_build=row.engine_build if engine == "llama.cpp" else None,
                    ubatch=row.ubatch,  # the run's -ub; None = llama-bench's default
                ),
                catalog,
                offload=offload,  # type: ignore[arg-type]
                live=False,
                advise=False,
                **extra,  # type: ignore[arg-type]
            )
        except (ValueError, TypeError, KeyError) as exc:
            if row.offload_kind == "experts":
                raise NotEstimableError(f"expert offload not supported by this estimator ({exc})") from None
            raise
        placement = result.placement
        if row.offload_kind == "experts" and placement.offload != "experts":
            raise NotEstimableError("expert offload not modelled by this estimator (no 'experts' placement)")
        if ngl is not None and not extra and placement.gpu_layers > ngl:
            raise NotEstimableError(
                "the run's -ngl is below the layers the estimator places, and fit() takes no layer count"
            )
        if result.verdict == "does_not_fit":
            return Outcome(row, None, f"estimator says it does not fit ({result.reasons[0]})")
        speed = result.speed
        value = (
            speed.decode_tokens_per_s if row.metric == "decode_tokens_per_s" else speed.prefill_tokens_per_s
        )
        if value is None:
            why = "; ".join(speed.explanation) or "no figure"
            if "not published" in why:
                raise NotEstimableError(
                    f"the catalog lacks this GPU's tensor throughput: no {METRIC_NAMES[row.metric]}"
                )
            return Outcome(row, None, f"no {METRIC_NAMES[row.metric]} estimate ({why})")
        return Outcome(row, float(value))
    except NotEstimableError as exc:
        return Outcome(row, None, str(exc), expressible=False)


# -- summaries ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    rows: int
    not_estimable: int
    no_estimate: int
    estimated: int
    median: float | None
    within: float | None

    @property
    def expressible(self) -> int:
        return self.rows - self.not_estimable


def summarise(outcomes: Sequence[Outcome]) -> Summary:
    expressible = [o for o in outcomes if o.expressible]
    errors = [abs(o.error) for o in expressible if o.error is not None]
    return Summary(
        rows=len(outcomes),
        not_estimable=len(outcomes) - len(expressible),
        no_estimate=len(expressible) - len(errors),
        estimated=len(errors),
        median=statistics.median(errors) if errors else None,
        within=sum(e <= WITHIN for e in errors) / len(expressible) if expressible else None,
    )


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def meets_target(s: Summary, median: float = TARGET_MEDIAN, share: float = TARGET_SHARE) -> str:
    if s.expressible < TARGET_MIN_ROWS:
        return "n < 10"
    ok = s.median is not None and s.median <= median and s.within is not None and s.within >= share
    return "met" if ok else "**missed**"


def groups(outcomes: Sequence[Outcome]) -> Iterable[tuple[str, str, list[Outcome]]]:
    """(subset, metric, outcomes) for every subset × metric that has rows."""
    for subset in SUBSETS:
        inside = [o for o in outcomes if subset in o.subsets]
        by_metric: dict[str, list[Outcome]] = defaultdict(list)
        for o in inside:
            by_metric[o.row.metric].append(o)
        for metric in ("decode_tokens_per_s", "prefill_tokens_per_s", "file_bytes"):
            if by_metric.get(metric):
                yield subset, metric, by_metric[metric]


def markdown_table(outcomes: Sequence[Outcome]) -> str:
    lines = [
        "| subset | metric | rows (fit / held out) | not estimable | median abs. error, fit | "
        "within ±35%, fit | median abs. error, held out | within ±35%, held out | target (held out) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for subset, metric, rows in groups(outcomes):
        fit_rows = [o for o in rows if o.row.split == "fit"]
        held = [o for o in rows if o.row.split == "holdout"]
        sf, sh = summarise(fit_rows), summarise(held)
        lines.append(
            f"| {subset} | {METRIC_NAMES[metric]} | {len(fit_rows)} / {len(held)} | "
            f"{sf.not_estimable + sh.not_estimable} | {_pct(sf.median)} | {_pct(sf.within)} | "
            f"{_pct(sh.median)} | {_pct(sh.within)} | {meets_target(sh)} |"
        )
    return "\n".join(lines)


def blind_table(outcomes: Sequence[Outcome]) -> str:
    """Issue 28's table: the blind rows per subset (decode) and prefill, with the issue's targets (decode per
    subset ≤ 20% median and ≥ 75% within ±35%; prefill ≤ 25% and ≥ 70%, judged over all blind rows)."""
    blind = [o for o in outcomes if o.row.split == "blind"]
    pages = {source_of(o.row) for o in blind}
    sites = {"/".join(page.split("/")[2 : 5 if "github.com" in page else 3]) for page in pages}
    lines = [
        f"Blind set: {len(blind)} rows from {len(pages)} source pages (threads, files) on {len(sites)} "
        "repositories or sites; no fitted row was read from any of these pages",
        "",
        "| subset | metric | rows | not estimable | no number | median abs. error | within ±35% | "
        "share reading high | target |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for subset, metric, rows in groups(blind):
        if metric == "file_bytes":
            continue
        s = summarise(rows)
        high = [o for o in rows if o.error is not None]
        share_high = sum(o.error > 0 for o in high) / len(high) if high else None  # type: ignore[operator]
        prefill = metric == "prefill_tokens_per_s"
        if prefill and subset != "all speed":
            target = "(prefill judged overall)"
        elif prefill:
            target = meets_target(s, TARGET_PREFILL_MEDIAN, TARGET_PREFILL_SHARE)
        else:
            target = meets_target(s)
        lines.append(
            f"| {subset} | {METRIC_NAMES[metric]} | {s.rows} | {s.not_estimable} | {s.no_estimate} | "
            f"{_pct(s.median)} | {_pct(s.within)} | {_pct(share_high)} | {target} |"
        )
    return "\n".join(lines)


def file_size_lines(outcomes: Sequence[Outcome]) -> list[str]:
    """File sizes are judged at ±3% (issue 14), not ±35%: how many meet it, and each that does not."""
    sized = [o for o in outcomes if o.row.metric == "file_bytes" and o.error is not None]
    good = [o for o in sized if abs(o.error or 0) <= FILE_WITHIN]
    lines = [f"File sizes within ±{FILE_WITHIN:.0%}: {len(good)} of {len(sized)} estimable rows"]
    for o in sorted(sized, key=lambda o: -abs(o.error or 0)):
        if abs(o.error or 0) > FILE_WITHIN:
            lines.append(
                f"- {o.row.id} ({o.row.format}): published {o.row.value / GIB:.2f} GiB, "
                f"estimate {(o.estimate or 0) / GIB:.2f} GiB ({o.error:+.1%})"
            )
    return lines


def reasons_table(outcomes: Sequence[Outcome], pick: Callable[[Outcome], bool]) -> list[str]:
    by_reason: dict[str, list[str]] = defaultdict(list)
    for o in outcomes:
        if pick(o):
            by_reason[o.reason].append(o.row.id)
    lines = []
    for reason, ids in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        shown = ", ".join(ids[:4]) + (f", … ({len(ids) - 4} more)" if len(ids) > 4 else "")
        lines.append(f"- {len(ids)} × {reason}: {shown}")
    return lines


# -- memory formula checks kept from the first version of this script ---------------------------------


@dataclass(frozen=True)
class FormulaCheck:
    what: str
    published: float
    unit: str
    source: str
    estimate: Callable[[Catalog], float]


def _mem(model_id: str, category: str, unit: int, **request: object) -> Callable[[Catalog], float]:
    def run(catalog: Catalog) -> float:
        spec = catalog.model(model_id)
        assert spec is not None, model_id
        est = estimate_memory(from_catalog(spec), Request(**request), catalog)  # type: ignore[arg-type]
        return est.total(category) / unit  # type: ignore[arg-type]

    return run


def _megatrain(what: str) -> Callable[[Catalog], float]:
    def run(catalog: Catalog) -> float:
        spec, gpu = catalog.model("qwen2.5-32b"), catalog.gpu("nvidia-h100-sxm5")
        assert spec is not None and gpu is not None
        bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=2048 * GIB), gpus=())
        box = simulate(bare, [gpu], 2048)
        model = from_catalog(spec)
        result = fit(model, box, Request(workload="full", context=1024, batch=96), catalog,
                     offload="full", live=False, advise=False)  # fmt: skip
        placement = result.placement
        if what == "tflops":  # 8·N FLOPs per token: 6N plus the recomputed forward pass
            tokens = result.speed.train_tokens_per_s or 0.0
            return tokens * 8 * model.arch.params_total / 1e12
        return (placement.cpu_bytes if what == "cpu" else sum(placement.gpu_bytes)) / 1e9

    return run


FORMULA_CHECKS = (
    FormulaCheck("Llama-3-8B bf16 weights in vLLM", 14.96, "GiB", "vllm-project/vllm PR #10511 start-up log",
                 _mem("llama-3.1-8b", "weights", GIB, quant="bf16")),
    FormulaCheck("Llama-3-8B-shape KV cache, n_ctx 2048 (llama.cpp)", 256, "MiB", "fedora-copr/logdetective PR #106 log",
                 _mem("llama-3.1-8b", "kv_cache", 1024**2, quant="q4_k_m", context=2048)),
    FormulaCheck("Llama-3-8B-shape KV cache, n_ctx 32768 (llama.cpp)", 4096, "MiB", "fedora-copr/logdetective PR #106 log",
                 _mem("llama-3.1-8b", "kv_cache", 1024**2, quant="q4_k_m", context=32768)),
    FormulaCheck("Llama-3-8B-shape compute buffer, n_ctx 32768", 2144, "MiB", "fedora-copr/logdetective PR #106 log",
                 _mem("llama-3.1-8b", "activations", 1024**2, quant="q4_k_m", context=32768,
                      flash_attention=False)),  # the logged run predates flash attention by default
    FormulaCheck("gpt-oss-20b checkpoint (MXFP4 experts, bf16 rest)", 12.82, "GiB",
                 "openai/gpt-oss config + checkpoint (memory-formulas §6.2)", _mem("gpt-oss-20b", "weights", GIB, quant="mxfp4",
                                                                                         engine="transformers")),
    FormulaCheck("MegaTrain Qwen2.5-32B host RAM", 327, "GB", "DLYuanGod/MegaTrain README@2a9f977 performance table",
                 _megatrain("cpu")),
    FormulaCheck("MegaTrain Qwen2.5-32B GPU memory, batch 96 × 1024", 40, "GB",
                 "DLYuanGod/MegaTrain README@2a9f977 performance table", _megatrain("gpu")),
    FormulaCheck("MegaTrain Qwen2.5-32B training throughput (8·N FLOPs per token)", 259, "TFLOPS",
                 "DLYuanGod/MegaTrain README@2a9f977 performance table", _megatrain("tflops")),
)  # fmt: skip


def formula_lines(catalog: Catalog) -> list[str]:
    lines = ["| check | published | estimate | error | source |", "|---|---:|---:|---:|---|"]
    for check in FORMULA_CHECKS:
        value = check.estimate(catalog)
        error = (value - check.published) / check.published
        lines.append(
            f"| {check.what} | {check.published:g} {check.unit} | {value:.2f} | {error:+.1%} | {check.source} |"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", action="store_true", help="print every row's estimate and error")
    parser.add_argument("--markdown", action="store_true", help="print only the BENCHMARKS.md table")
    args = parser.parse_args(argv)

    catalog = load_catalog(use_overlay=False)
    rows = load()
    blind_rows = load_blind()
    outcomes = [estimate(row, catalog) for row in rows]
    blind = [estimate(row, catalog) for row in blind_rows]
    table = markdown_table(outcomes)
    if args.markdown:
        print(table)
        print()
        print(blind_table(blind))
        print()
        print("\n".join(file_size_lines(outcomes)))
        return 0

    held = sum(1 for r in rows if r.split == "holdout")
    print(
        f"{len(rows)} measurements ({held} held out), {sum(not o.expressible for o in outcomes)} not estimable\n"
    )
    if args.rows:
        print(f"{'id':<66}{'split':>8}{'published':>14}{'estimate':>12}{'error':>9}  reason")
        for o in (*outcomes, *blind):
            est = "n/a" if o.estimate is None else f"{o.estimate:.4g}"
            err = "" if o.error is None else f"{o.error:+.0%}"
            print(f"{o.row.id:<66}{o.row.split:>8}{o.row.value:>14.4g}{est:>12}{err:>9}  {o.reason}")
        print()
    print(table)
    print()
    print(blind_table(blind))
    print()
    print("\n".join(file_size_lines(outcomes)))
    print("\nNot estimable (the estimator cannot express the row yet):")
    print("\n".join(reasons_table((*outcomes, *blind), lambda o: not o.expressible)) or "- none")
    print("\nExpressible but no number (counted as misses in the ±35% share):")
    print(
        "\n".join(reasons_table((*outcomes, *blind), lambda o: o.expressible and o.estimate is None))
        or "- none"
    )
    print("\nMemory formula checks (not part of the measurement set):")
    print("\n".join(formula_lines(catalog)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
