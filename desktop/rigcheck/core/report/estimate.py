"""Estimates and fit verdicts as JSON (the CLI contract) and as text people read."""

from __future__ import annotations

from typing import Any

from rigcheck.core.estimate.fit import FitResult
from rigcheck.core.estimate.memory import MemoryEstimate
from rigcheck.core.estimate.recommend import placement_json, verdict_words
from rigcheck.core.machine import Machine
from rigcheck.core.text import one_line
from rigcheck.core.units import fmt_bytes


def estimate_json(est: MemoryEstimate) -> dict[str, Any]:
    model = est.model
    return {
        "model": {
            "id": model.id,
            "name": model.name,
            "architecture": model.arch.model_type,
            "params_total": model.arch.params_total,
            "params_active": model.arch.params_active,
            "layers": model.arch.num_layers,
            "source": model.source,
            "source_kind": model.source_kind,
            "params_source": model.params_source,
            # outside the decoder, never in params_total: vision/audio towers and MTP (draft) layers
            "tower_params": model.arch.tower_params,
            "tower_params_source": model.arch.tower_source or None,
            "mtp_params": model.arch.mtp_params,
            "mtp_shared_params": model.arch.mtp_shared_params,
            "mtp_params_source": model.arch.mtp_source or None,
        },
        "speculative": est.speculative,
        "quant": est.quant_name,
        "context": est.context,
        "batch": est.batch,
        "workload": est.workload,
        "engine": est.engine,
        "kv_cache_type": est.kv_type,
        "kv_cache_bytes_per_token": est.kv_cache_bytes_per_token,
        "memory": est.summary(),
        "terms": [
            {
                "category": t.category,
                "name": t.name,
                "bytes": t.bytes,
                "provenance": t.provenance,
                "formula": t.formula,
                "source": t.source,
            }
            for t in est.terms
        ],
        "notes": [*model.notes, *est.notes, *(f"assumed {k}" for k in model.arch.assumed)],
        "training": None if est.framework is None else training_json(est),
    }


def training_json(est: MemoryEstimate) -> dict[str, Any]:
    """A framework estimate's readings: the allocator peak (torch.cuda.max_memory_allocated) and the
    process total with the CUDA context (nvidia-smi), per GPU, and what stays in host RAM."""
    from rigcheck.core.estimate.lora_targets import lora_plan
    from rigcheck.core.estimate.training_profiles import stack_name

    rank = est.lora_rank or 0
    plan = lora_plan(est.model.arch, est.lora_targets) if est.lora_targets and rank else None
    modules = [
        {"module": w.module, "in": w.fan_in, "out": w.fan_out, "layers": w.layers, "params": w.params(rank)}
        for w in (plan.wrapped if plan else ())
    ]
    return {
        "framework": est.framework,
        "stack": stack_name(est.framework),
        "checkpointing": est.checkpointing,
        # the GPUs the model states are sharded over, each holding the per-GPU figures below
        "gpus": est.training_gpus,
        "trainable_params": est.trainable_params,
        "lora_rank": est.lora_rank,
        "lora_alpha": est.lora_alpha,
        "lora_targets": list(est.lora_targets),
        # the modules those targets wrap, layer kind by layer kind (core/estimate/lora_targets.py)
        "lora_modules": modules,
        "lora_not_wrapped": list(plan.left) if plan else [],
        "lora_assumed": list(plan.assumed) if plan else [],
        "gpu_peak_bytes": est.gpu_peak_bytes,
        "gpu_peak_reading": "PyTorch allocator peak (torch.cuda.max_memory_allocated)",
        "gpu_bytes": est.training_gpu_bytes,
        "gpu_bytes_reading": "process total with the CUDA context (nvidia-smi)",
        "host_bytes": est.training_host_bytes,
    }


def fit_json(result: FitResult) -> dict[str, Any]:
    s = result.speed
    return {
        "verdict": result.verdict,
        "placement": placement_json(result),
        "budget": {"gpu_bytes": list(result.budget.gpu_bytes), "cpu_bytes": result.budget.cpu_bytes},
        "speed": {
            "decode_tokens_per_s": _round(s.decode_tokens_per_s),
            "prefill_tokens_per_s": _round(s.prefill_tokens_per_s),
            "train_tokens_per_s": _round(s.train_tokens_per_s),
            "bound_by": s.bound_by,
            "explanation": list(s.explanation),
            "estimated_decode_tokens_per_s": _round(s.estimated_decode_tokens_per_s),
            "estimated_prefill_tokens_per_s": _round(s.estimated_prefill_tokens_per_s),
            "measured_from": s.measured_from,
            # an older engine build: each later milestone's ratio divided out (speed/engine_build.py)
            "engine_build": result.estimate.engine_build,
            "build_terms": [
                {
                    "milestone": t.milestone,
                    "metric": t.metric,
                    "value": t.value,
                    "formula": t.formula,
                    "source": t.source,
                }
                for t in s.build_terms
            ],
        },
        "estimate": estimate_json(result.estimate),
        "params_source": result.estimate.model.params_source,
        "reasons": list(result.reasons),
        "advice": list(result.advice),
    }


def _round(value: float | None) -> float | None:
    return round(value, 1) if value is not None else None


def _origin(kind: str, source: str) -> str:
    if kind == "catalog":
        return "architecture from the catalog's copy of its config.json"
    if kind == "file":
        return f"read from {source}"
    return f"config from {source}"


def params_text(count: float) -> str:
    """ "8.03B", "3.4M", "950K": the unit a parameter count reads in, never "0.00B" for a tiny model."""
    if count >= 1e9:
        return f"{count / 1e9:.2f}B"
    if count >= 1e6:
        return f"{count / 1e6:.1f}M"
    return f"{count / 1e3:.0f}K" if count >= 1e3 else f"{count:.0f}"


def estimate_text(est: MemoryEstimate) -> str:
    model = est.model
    arch = model.arch
    active = f", {params_text(arch.params_active)} active" if arch.is_moe else ""
    lines = [
        f"{model.name}: {arch.model_type}, {params_text(arch.params_total)} parameters{active}, "
        f"{arch.num_layers} layers ({_origin(model.source_kind, model.source)})",
        f"{est.workload}, {est.quant_name}, context {est.context:,} × batch {est.batch}, "
        f"KV cache {est.kv_type} ({fmt_bytes(est.kv_cache_bytes_per_token)} per token)",
        "",
    ]
    width = max(len(t.name) for t in est.terms)
    for term in est.terms:
        lines.append(
            f"  {term.name:<{width}}  {fmt_bytes(term.bytes):>10}  [{term.provenance}] {term.formula}"
        )
        if term.source:
            lines.append(f"  {'':<{width}}  {'':>10}  source: {term.source}")
    lines.append(f"  {'total':<{width}}  {fmt_bytes(est.total_bytes):>10}")
    if est.framework is not None:
        from rigcheck.core.estimate.training_profiles import stack_name

        host = f"; {fmt_bytes(est.training_host_bytes)} in host RAM" if est.training_host_bytes else ""
        lines.append(
            f"  {stack_name(est.framework)}: allocator peak {fmt_bytes(est.gpu_peak_bytes)} "
            f"(torch.cuda.max_memory_allocated), {fmt_bytes(est.training_gpu_bytes)} with the CUDA context "
            f"(nvidia-smi){host}"
        )
    notes = [*model.notes, *est.notes, *(f"assumed {k} (not in the config)" for k in arch.assumed)]
    if notes:
        lines += ["", *(f"note: {n}" for n in notes)]
    return _joined(lines)


def _joined(lines: list[str]) -> str:
    """The lines as one text, each kept one line: a file name, architecture or note holding a line
    separator (LF, CR, NEL, U+2028/2029) shows it escaped instead of forging a line (issue 30 #9)."""
    return "\n".join(one_line(line) for line in lines)


def fit_text(result: FitResult, machine: Machine) -> str:
    est = result.estimate
    what = f"{est.model.name}, {est.quant_name}, {est.workload}, context {est.context:,}"
    lines = [f"{verdict_words(result).upper()}: {what}"]
    lines += [f"  {r}" for r in result.reasons]
    s = result.speed
    speeds = []
    if s.decode_tokens_per_s is not None:
        speeds.append(f"decode ~{s.decode_tokens_per_s:.1f} tokens/s")
    if s.prefill_tokens_per_s is not None:
        speeds.append(f"prefill ~{s.prefill_tokens_per_s:,.0f} tokens/s")
    if s.train_tokens_per_s is not None:
        speeds.append(f"training ~{s.train_tokens_per_s:,.0f} tokens/s")
    if speeds:
        lines += [
            "",
            ("Speed (measured, see below): " if s.measured_from else "Speed (estimate): ")
            + ", ".join(speeds)
            + (f"; bound by {s.bound_by}" if s.bound_by else ""),
        ]
    lines += [f"  {e}" for e in s.explanation]
    if result.advice:
        lines += ["", "Advice:", *(f"  - {a}" for a in result.advice)]
    lines += ["", "Memory:", *(f"  {line}" for line in estimate_text(est).split("\n")[3:])]
    return _joined(lines)
