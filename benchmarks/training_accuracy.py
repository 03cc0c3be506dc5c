"""The training estimate against the cited training measurements, per method, split and metric.

Run: ``.venv/bin/python benchmarks/training_accuracy.py`` (``--rows`` for every row, ``--markdown`` for
the BENCHMARKS.md tables alone).

Every row of ``benchmarks/data/training.csv`` is rebuilt with its own settings: the catalog model, the
row's framework profile, optimizer, precision, LoRA rank and targets, checkpointing, attention kernel,
batch, sequence length, gradient accumulation and GPU count, through ``estimate_memory`` (the path ``rigcheck fit/estimate
--workload ...`` takes). A memory row read from the allocator is compared with ``gpu_peak_bytes``; one
whose kind is not stated, or a device's capacity, with ``gpu_bytes`` (allocator peak + CUDA context).
A max-context row is solved for the largest context whose process total fits the VRAM the row names
("8 GB" cards are 8 GiB). Out-of-memory rows and every measured run give a fits/does-not-fit verdict.

A model the catalog lacks is counted from its own config.json (benchmarks/data/configs/, through the
open-world reader). Rows the estimator cannot express are listed as not estimable with the reason,
never dropped: an encoder-decoder model, DeepSpeed's ZeRO-3 offload of LoRA.

The held-out quarter (``TrainingMeasurement.split``) is reported apart: no constant was fitted on it.
Targets (issue 27): per method a median absolute error ≤ 12% and ≥ 75% of rows within ±20%; verdicts
agree with ≥ 90% of outcomes; max contexts within ±30%.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import Request, estimate_memory, training_setup
from rigcheck.core.estimate.placement import megatrain
from rigcheck.core.estimate.training_memory import layer_token_bytes, training_memory
from rigcheck.core.estimate.training_profiles import PROFILES
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ArchConfig, ModelInfo
from rigcheck.core.whatif import simulate
from training_configs import model_for
from training_measurements import TrainingMeasurement, load

GIB = 1024**3
WITHIN = 0.20
CONTEXT_WITHIN = 0.30
#: a max-context answer under this many tokens is "does not fit" (the sources write OOM)
SMALLEST_CONTEXT = 256
FRAMEWORK_IDS = {"transformers+peft": "transformers", "ms-swift": "transformers"}
#: host RAM of the simulated machine for speed rows (the sources do not say; enough not to limit)
HOST_RAM = 512 * GIB


class NotEstimableError(Exception):
    pass


@dataclass(frozen=True)
class Outcome:
    row: TrainingMeasurement
    estimate: float | None = None
    #: the estimate's own verdict, for rows with an outcome to compare
    fits: bool | None = None
    reason: str = ""
    #: bytes of the model states alone (weights, gradients, optimizer states) for the row's stated settings
    states: float | None = None
    #: MegaTrain rows: the least its code holds at the row's settings (megatrain_floor)
    floor: float | None = None
    #: MegaTrain GPU rows: the batch at which the estimate equals the published figure (a diagnostic of
    #: the unstated batch, never fed back into the estimate)
    implied_batch: float | None = None
    #: MegaTrain rows of hybrid models: the estimate with transformers' pure-torch delta rule instead of
    #: fla's kernels, in words (a diagnostic of the unstated kernels, never fed back into the estimate)
    fallback: str = ""

    @property
    def below_states(self) -> bool:
        """The published figure is smaller than its own model states: the settings stated cannot be
        the settings run (or the figure is not the peak)."""
        measured = self.row.base_value
        least = self.states if self.states is not None else self.floor
        return least is not None and measured is not None and measured < least

    @property
    def error(self) -> float | None:
        measured = self.row.base_value
        return None if self.estimate is None or measured is None else (self.estimate - measured) / measured

    @property
    def verdict_agrees(self) -> bool | None:
        return None if self.fits is None else self.fits == (self.row.outcome == "fits")


def _capacity(row: TrainingMeasurement, catalog: Catalog) -> int | None:
    if row.gpu_memory_gb:
        return int(row.gpu_memory_gb * GIB)
    spec = catalog.gpu(row.gpu_id) if row.gpu_id else None
    if spec is None or not spec.memory_gb:
        return None
    return int(max(spec.memory_gb) * GIB)


def request(row: TrainingMeasurement, context: int | None = None) -> Request:
    if row.framework == "deepspeed" and row.method != "full":
        raise NotEstimableError("DeepSpeed ZeRO-3 offload of LoRA is not part of this estimate")
    method = "full" if row.method == "offload" else row.method
    optimizer = row.optimizer.split("+")[0]
    return Request(
        workload=method,  # type: ignore[arg-type]
        context=context or row.seq_len,
        batch=row.batch or 1,
        framework=FRAMEWORK_IDS.get(row.framework, row.framework),  # type: ignore[arg-type]
        optimizer=None if optimizer == "not stated" else optimizer,  # type: ignore[arg-type]
        precision="fp32" if row.precision == "fp32" else "bf16",
        lora_rank=row.lora_rank,
        lora_targets=row.targets or None,
        checkpointing=row.checkpointing,  # type: ignore[arg-type]
        attention="eager" if row.attention == "eager" else "flash",
        gpus=row.gpu_count,
        offload_states=row.method == "offload",
        grad_accumulation=row.grad_accum or 1,
    )


def shared_recipe(rows: Sequence[TrainingMeasurement]) -> list[TrainingMeasurement]:
    """Rows that are columns of one table line (same ``source_url`` and ``verbatim``) beside a transformers
    column compare frameworks under one training script: a row that does not state its optimizer is read
    with the transformers column's optimizer (its own if stated, else the transformers profile's: TrainingArguments'
    ``default_optim = "adamw_torch"``, huggingface/transformers src/transformers/training_args.py@v4.47.0), not
    with its framework's notebook default. Unsloth's context-length tables (unslothai/unsloth
    README.md@000252c 'Context length benchmarks', https://unsloth.ai/blog/llama3-3) state one recipe for both
    columns (QLoRA r=32 on all linear layers, batch 1) and no optimizer."""
    baseline: dict[tuple[str, str], str] = {}
    for r in rows:
        if FRAMEWORK_IDS.get(r.framework, r.framework) == "transformers" and r.verbatim:
            prof = PROFILES["transformers"]
            default = prof.optimizer_full if r.method in ("full", "offload") else prof.optimizer_lora
            baseline[(r.source_url, r.verbatim)] = default if r.optimizer == "not stated" else r.optimizer
    return [
        replace(r, optimizer=baseline[(r.source_url, r.verbatim)])
        if r.optimizer == "not stated" and (r.source_url, r.verbatim) in baseline
        else r
        for r in rows
    ]


def estimate(row: TrainingMeasurement, catalog: Catalog) -> Outcome:
    try:
        model = _model(row, catalog)
        if row.framework == "megatrain":
            return _megatrain(row, model, catalog)
        capacity = _capacity(row, catalog)
        if row.metric == "max_context":
            if capacity is None:
                raise NotEstimableError("no VRAM size")
            from rigcheck.core.estimate.memory import training_max_context

            found = training_max_context(model, request(row, 1), catalog, capacity)
            fits = found >= SMALLEST_CONTEXT
            return Outcome(row, float(found) if fits and row.outcome == "fits" else None, fits)
        if row.metric == "tokens_per_s":
            return _speed(row, model, catalog)
        if row.metric != "gpu_memory":
            raise NotEstimableError(f"{row.metric} is not part of this estimate")
        if not row.seq_len and row.outcome == "fits":
            raise NotEstimableError("sequence length not stated")
        # an out-of-memory row without its length: judged at the shortest context counted (it must not fit)
        est = estimate_memory(
            model, request(row, row.seq_len or SMALLEST_CONTEXT), catalog, gpu_capacity=capacity
        )
        shown = est.gpu_peak_bytes if row.memory_kind == "allocator" else est.training_gpu_bytes
        fits = None if capacity is None else est.training_gpu_bytes <= capacity
        value = float(shown) if row.outcome == "fits" else None
        return Outcome(row, value, fits, states=_states(model, row) if value else None)
    except NotEstimableError as exc:
        return Outcome(row, reason=str(exc))


#: parts of a training step that are the model's states, not temporaries or activations
STATE_PARTS = ("weights", "base weights", "LoRA adapters", "gradients", "optimizer states", "master")


def _states(model: ModelInfo, row: TrainingMeasurement) -> float:
    req = request(row)
    mem = training_memory(model.arch, training_setup(req), req.context or 1, req.batch)
    return float(
        sum(
            p.bytes
            for p in mem.parts
            if p.where == "gpu" and p.category != "activations" and any(w in p.name for w in STATE_PARTS)
        )
    )


def _model(row: TrainingMeasurement, catalog: Catalog) -> ModelInfo:
    """The catalog's model, else the model counted from the row's stored config.json."""
    if row.model_id:
        spec = catalog.model(row.model_id)
        if spec is None:
            raise NotEstimableError(f"catalog has no model {row.model_id}")
        return from_catalog(spec)
    found = model_for(row.model)
    if isinstance(found, str):
        raise NotEstimableError(found)
    return found


def _speed(row: TrainingMeasurement, model: ModelInfo, catalog: Catalog) -> Outcome:
    """``fit``'s training tokens/s on the row's GPU, times the data-parallel GPUs (the sources give the
    whole run's tokens/s)."""
    spec = catalog.gpu(row.gpu_id) if row.gpu_id else None
    if spec is None:
        raise NotEstimableError("GPU not in the catalog")
    bare = Machine(cpu=CPU(logical_cores=64), memory=Memory(total_bytes=HOST_RAM), gpus=())
    machine = simulate(bare, [spec] * row.gpu_count, HOST_RAM / GIB)
    req = replace(request(row), gpus=row.gpu_count)
    result = fit(model, machine, req, catalog, live=False, advise=False)
    tps = result.speed.train_tokens_per_s
    if tps is None or result.placement is None:
        return Outcome(row, None, False, reason=f"no speed: {result.verdict}")
    # a sharded run's tokens/s are every GPU's already; a run placed on one GPU is one replica of the row's
    used = sum(1 for b in result.placement.gpu_bytes if b)
    return Outcome(row, tps * row.gpu_count / used, None)


def _megatrain(row: TrainingMeasurement, model: ModelInfo, catalog: Catalog) -> Outcome:
    """``fit --offload full`` (MegaTrain-style streaming, the generic full-fine-tuning request) on the row's
    GPU. Each metric is read as MegaTrain's train.py logs it: host RAM as the process RSS after the step
    (the gradients freed), GPU memory as the allocator peak, TFLOPS as 6·N per token ÷ step time. A
    TFLOPS row that states no batch runs at the largest batch that fits the GPU."""
    spec = catalog.gpu(row.gpu_id) if row.gpu_id else None
    if spec is None:
        raise NotEstimableError("MegaTrain row without its GPU")
    bare = Machine(cpu=CPU(logical_cores=64), memory=Memory(total_bytes=2048 * GIB), gpus=())
    machine = simulate(bare, [spec] * row.gpu_count, 2048)
    arch = model.arch
    context = row.seq_len or 1
    batch = row.batch
    if not batch:
        if row.metric != "tflops":
            raise NotEstimableError("MegaTrain memory row without its batch")
        probe = fit(model, machine, Request(workload="full", context=context, batch=1), catalog,
                    offload="full", live=False, advise=False)  # fmt: skip
        batch = megatrain.largest_batch(arch, probe.budget.gpu_bytes[0], context)
    req = Request(workload="full", context=context, batch=batch)
    result = fit(model, machine, req, catalog, offload="full", live=False, advise=False)
    p, tps = result.placement, result.speed.train_tokens_per_s
    fits = p is not None and sum(p.gpu_bytes) > 0
    fallback = _fallback(row, model, machine, catalog, batch) if "linear" in arch.layer_kinds else ""
    if row.metric == "host_memory":
        return Outcome(row, float(megatrain.host_resident_bytes(arch, row.gpu_count)), None)
    if row.metric == "gpu_memory":
        shown = megatrain.gpu_peak_bytes(arch, context, batch)
        if row.memory_kind == "device capacity":
            shown = megatrain.gpu_bytes(arch, context, batch)
        value = float(shown) if row.memory_kind != "device capacity" else None
        implied = None
        if value and row.base_value is not None:
            free = row.base_value - megatrain.fixed_bytes(arch)
            implied = free / megatrain.sample_bytes(arch, context)
        return Outcome(
            row,
            value,
            fits,
            floor=float(megatrain_floor(arch, context, batch)) if value else None,
            implied_batch=implied,
            fallback=fallback,
        )
    if row.metric == "tflops" and tps is not None:
        if p is None or sum(1 for b in p.gpu_bytes if b) != row.gpu_count:
            raise NotEstimableError(f"MegaTrain does not place on the row's {row.gpu_count} GPUs")
        flops = megatrain.REPORTED_FLOPS_PER_PARAM * model.arch.params_total
        return Outcome(row, tps * flops / 1e12, None, fallback=fallback)  # every worker's tokens
    raise NotEstimableError(f"MegaTrain {row.metric}: the run does not fit its GPU")


def _fallback(
    row: TrainingMeasurement, model: ModelInfo, machine: Machine, catalog: Catalog, batch: int
) -> str:
    """The MegaTrain row's estimate were its Gated DeltaNet layers on transformers' pure-torch delta rule:
    at the row's batch, or, where that does not fit the GPU, at the largest batch that does."""
    arch, context = model.arch, row.seq_len or 1

    def value(b: int) -> str | None:
        req = Request(workload="full", context=context, batch=b, linear_kernels="torch")
        result = fit(model, machine, req, catalog, offload="full", live=False, advise=False)
        p, tps = result.placement, result.speed.train_tokens_per_s
        if p is None or not sum(p.gpu_bytes) or tps is None:
            return None
        if row.metric == "tflops":
            return f"{tps * megatrain.REPORTED_FLOPS_PER_PARAM * arch.params_total / 1e12:.0f} TFLOPS"
        if row.metric == "gpu_memory":
            return f"{megatrain.gpu_peak_bytes(arch, context, b, 'torch') / 1e9:.1f} GB"
        return None

    if row.metric not in ("tflops", "gpu_memory"):
        return ""
    published = f"{row.base_value / 1e9:.1f} GB" if row.metric == "gpu_memory" else f"{row.value:.0f} TFLOPS"
    at_batch = value(batch)
    if at_batch is not None:
        return f"{row.id}: {at_batch} at batch {batch} (published {published})"
    probe = fit(model, machine, Request(workload="full", context=context, batch=1, linear_kernels="torch"),
                catalog, offload="full", live=False, advise=False)  # fmt: skip
    largest = megatrain.largest_batch(arch, probe.budget.gpu_bytes[0], context, "torch")
    there = value(largest) if largest else None
    return (
        f"{row.id}: batch {batch} does not fit the GPU (largest {largest}"
        + (f", {there} there" if there else "")
        + f"; published {published})"
    )


def megatrain_floor(arch: ArchConfig, context: int, batch: int) -> int:
    """The least MegaTrain's code can hold at its GPU peak, whatever its kernels save: the GPU weights,
    the checkpoints, and the larger of every loss chunk's bf16 logits (flash-attn's cross entropy saves
    its input) and one recomputed layer's saved tensors with fused kernels (inputs of its norms and
    linears only, training_memory.layer_token_bytes(fused=True)). No gradients, no temporaries."""
    layer = layer_token_bytes(arch, True, "flash", context) * context
    per_sample = megatrain.checkpoint_bytes(arch, context) + max(megatrain.logits_bytes(arch, context), layer)
    return megatrain.weight_bytes(arch) + batch * per_sample


def _group(row: TrainingMeasurement) -> str:
    if row.framework == "megatrain":
        return f"MegaTrain {row.metric}"
    if row.metric == "tokens_per_s":
        return f"tokens/s ({row.framework})"
    if row.metric == "max_context":
        return f"max context ({row.framework})"
    return {"full": "full", "lora": "LoRA", "qlora": "QLoRA", "offload": "offload"}[row.method]


def _stats(outcomes: Sequence[Outcome]) -> tuple[int, float | None, float | None, float | None]:
    errors = [abs(o.error) for o in outcomes if o.error is not None]
    signed = [o.error for o in outcomes if o.error is not None]
    within = CONTEXT_WITHIN if outcomes and outcomes[0].row.metric == "max_context" else WITHIN
    if not errors:
        return 0, None, None, None
    share = sum(1 for e in errors if e <= within) / len(errors)
    return len(errors), statistics.median(errors), statistics.median(signed), share


def report(outcomes: Iterable[Outcome]) -> list[str]:
    done = list(outcomes)
    lines = [
        "| subset | split | rows | median abs error | median signed | within ±20% (±30% contexts) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in done:
        if o.estimate is not None:
            groups[_group(o.row)].append(o)
    for name in sorted(groups):
        for split in ("fit", "holdout"):
            rows = [o for o in groups[name] if o.row.split == split]
            n, med, signed, share = _stats(rows)
            if n:
                lines.append(f"| {name} | {split} | {n} | {med:.0%} | {signed:+.0%} | {share:.0%} |")
    verdicts = [o for o in done if o.verdict_agrees is not None]
    for split in ("fit", "holdout"):
        part = [o for o in verdicts if o.row.split == split]
        if part:
            agree = sum(1 for o in part if o.verdict_agrees)
            lines.append(
                f"| fits / does not fit | {split} | {len(part)} | | | {agree / len(part):.0%} agree |"
            )
    below = [o for o in done if o.below_states and o.states is not None]
    counted = sum(1 for o in done if o.states is not None)
    named = ": " + ", ".join(o.row.id for o in below) if below else ""
    lines.append("")
    lines.append(
        "Measured below their own model states (weights + gradients + optimizer states for the settings "
        f"stated): {len(below)} of {counted} memory rows{named}"
    )
    floors = [o for o in done if o.floor is not None]
    under = [o for o in floors if o.below_states]
    if floors:
        shown = "; ".join(
            f"{o.row.id} {o.row.base_value / 1e9:.1f} GB published, floor {o.floor / 1e9:.1f} GB at batch "
            f"{o.row.batch}; the estimate equals the figure at batch {o.implied_batch:.0f}"
            for o in under
        )
        lines.append("")
        lines.append(
            "MegaTrain GPU rows measured below what its code must hold at the row's batch (GPU weights + "
            "checkpoints + the larger of the saved logits and one layer's saved tensors, no gradients): "
            f"{len(under)} of {len(floors)}" + (f" ({shown})" if shown else "")
        )
    fallbacks = [o.fallback for o in done if o.fallback]
    if fallbacks:
        lines.append("")
        lines.append(
            "MegaTrain rows of hybrid models, had their Gated DeltaNet layers run transformers' pure-torch "
            "delta rule instead of fla's kernels (Request.linear_kernels='torch', estimate/gdn_fallback.py): "
            + "; ".join(fallbacks)
        )
    missing = [o for o in done if o.reason]
    lines.append("")
    lines.append(f"Not estimable: {len(missing)} of {len(done)} rows.")
    reasons: dict[str, int] = defaultdict(int)
    for o in missing:
        reasons[o.reason] += 1
    for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1]):
        lines.append(f"- {count} × {reason}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", action="store_true", help="print every row's estimate")
    parser.add_argument("--markdown", action="store_true", help="print only the tables")
    args = parser.parse_args(argv)
    catalog = load_catalog()
    outcomes = [estimate(r, catalog) for r in shared_recipe(load())]
    if args.rows:
        for o in outcomes:
            err = f"{o.error:+.0%}" if o.error is not None else "—"
            verdict = (
                "" if o.verdict_agrees is None else ("verdict ok" if o.verdict_agrees else "VERDICT WRONG")
            )
            measured = o.row.base_value
            shown = (
                f"{o.estimate / 1e9:.2f} GB vs {measured / 1e9:.2f}" if o.row.metric == "gpu_memory" and o.estimate
                else f"{o.estimate} vs {measured}"
            )  # fmt: skip
            print(f"{o.row.split:7} {o.row.id:48} {err:>6} {shown if o.estimate else o.reason} {verdict}")
        print()
    print("\n".join(report(outcomes)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
