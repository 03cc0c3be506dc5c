"""The commands about a model: ``models`` (the catalog, or the Hugging Face hub), ``estimate`` and
``fit``."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, TextIO

from rigcheck.cli.conventions import (
    EXIT_DOES_NOT_RUN,
    EXIT_OK,
    UsageError,
    _emit_json,
    _load_catalog,
    _one_line,
)
from rigcheck.cli.options import SPLIT_MODES
from rigcheck.cli.upgrade import _whatif_gpus

if TYPE_CHECKING:
    from rigcheck.core.estimate.memory import Request
    from rigcheck.core.estimate.placement.types import Split


def _cmd_models_hub(args: argparse.Namespace, out: TextIO) -> int:
    from rigcheck.core.machine import load_machine
    from rigcheck.core.models.hub_search import answer_hits, search_hub
    from rigcheck.core.probe import probe_machine
    from rigcheck.core.report.hub_search import hub_table

    if args.limit < 1:
        raise UsageError("--limit: expected a positive number")
    catalog = _load_catalog()
    hits = search_hub(args.hub, sort=args.sort, kind=args.hub_format, limit=args.limit)
    machine = load_machine(args.hub_machine) if args.hub_machine else probe_machine()

    def progress(message: str) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\r\033[K{_one_line(message)[:100]}")
            sys.stderr.flush()

    answers = list(answer_hits(hits, machine, catalog, progress=progress))
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
    if args.json:
        rows = [
            asdict(a.hit)
            | {
                "quant": a.quant,
                "where": a.where,
                "decode_tokens_per_s": a.decode_tokens_per_s,
                "problem": a.problem,
            }
            for a in answers
        ]
        _emit_json({"hub": rows, "sort": args.sort, "query": args.hub}, out)
    else:
        out.write(hub_table(answers, sort=args.sort, query=args.hub) + "\n")
    return EXIT_OK


def _cmd_models(args: argparse.Namespace, out: TextIO) -> int:
    from rigcheck.core.report.tables import model_table

    if getattr(args, "hub", None) is not None:
        return _cmd_models_hub(args, out)
    catalog = _load_catalog()
    models = catalog.search_models(args.search) if args.search else catalog.models
    if args.json:
        _emit_json({"models": [asdict(m) for m in models], "problems": list(catalog.problems)}, out)
    else:
        out.write(model_table(models) + "\n")
    return EXIT_OK


def _request(args: argparse.Namespace) -> Request:
    from rigcheck.core.estimate.memory import Request
    from rigcheck.core.estimate.training_profiles import parse_targets

    chosen = (args.optimizer, args.lora_rank, args.lora_targets, args.checkpointing, args.lora_alpha)
    framework = args.framework or ("transformers" if any(v is not None for v in chosen) else None)
    if args.precision != "bf16" and framework is None:
        framework = "transformers"
    return Request(
        quant=args.quant,
        context=args.context,
        batch=args.batch,
        kv_type=args.kv_cache_type,
        workload=args.workload,
        engine=args.engine,
        framework=framework if args.workload != "inference" else None,
        optimizer=args.optimizer,
        precision=args.precision,
        lora_rank=args.lora_rank,
        lora_targets=parse_targets(args.lora_targets) if args.lora_targets else None,
        checkpointing=args.checkpointing,
        lora_alpha=args.lora_alpha,
        gpus=getattr(args, "gpus", None) or 1,
        grad_accumulation=getattr(args, "grad_accum", 1),
        linear_kernels=getattr(args, "linear_kernels", "fla"),
        speculative=getattr(args, "speculative", None),
    )


def _cmd_estimate(args: argparse.Namespace, out: TextIO) -> int:
    from rigcheck.core.estimate.memory import estimate_memory
    from rigcheck.core.estimate.recommend import check_context
    from rigcheck.core.models.resolve import resolve_model
    from rigcheck.core.report.estimate import estimate_json, estimate_text

    catalog = _load_catalog()
    model = resolve_model(args.model, catalog)
    if args.context == "max":
        raise UsageError(
            "--context max solves a training run on a machine: use 'rigcheck fit --workload ...'"
        )
    check_context(model, args.context, rope_scaling=args.rope_scaling)
    est = estimate_memory(model, _request(args), catalog)
    if args.json:
        _emit_json(estimate_json(est), out)
    else:
        out.write(estimate_text(est) + "\n")
    return EXIT_OK


def _cmd_fit(args: argparse.Namespace, out: TextIO) -> int:
    from rigcheck.core.estimate.commands import commands_for
    from rigcheck.core.estimate.fit import fit
    from rigcheck.core.estimate.recommend import Rung, check_context, display_quant, recommend, where_of
    from rigcheck.core.machine import load_machine
    from rigcheck.core.models.resolve import resolve_model
    from rigcheck.core.probe import probe_machine
    from rigcheck.core.report.estimate import fit_text
    from rigcheck.core.report.recommend import recommendation_json, recommendation_text
    from rigcheck.core.whatif import upgrade

    catalog = _load_catalog()
    replaced, added = _whatif_gpus(args, catalog)
    model = resolve_model(args.model, catalog)
    whatif = replaced is not None or bool(added) or args.ram_gb is not None
    live = args.machine is None and not whatif
    machine = load_machine(args.machine) if args.machine else probe_machine()
    if whatif:
        machine = upgrade(machine, gpus=replaced, add_gpus=added, ram_gb=args.ram_gb)
    if args.power_limit is not None:
        limited = tuple(replace(g, power_limit_watts=args.power_limit) for g in machine.gpus)
        machine = replace(machine, gpus=limited)
    solve = args.context == "max"
    if solve:
        if args.workload == "inference":
            raise UsageError("--context max is for --workload lora, qlora or full")
        args.context = None
    req = replace(_request(args), backend=args.backend, threads=args.threads, engine_build=args.engine_build)
    if req.workload != "inference" and getattr(args, "gpus", None) is None:
        from rigcheck.core.estimate.training_profiles import run_gpus

        req = replace(req, gpus=run_gpus(req.framework, req.workload, len(machine.gpus)))
    if solve:  # the longest context whose training step fits this machine's GPU, this framework's way
        from rigcheck.core.estimate.solvers import max_context

        args.context = max_context(model, machine, req, catalog, live=live) or 512
        req = replace(req, context=args.context)
    if args.n_cpu_moe is not None and args.offload != "experts":
        raise UsageError("--n-cpu-moe needs --offload experts")
    split: Split = SPLIT_MODES[args.split_mode] if args.split_mode else args.split
    offload = args.offload
    if args.gpu_layers is not None:
        if offload not in ("auto", "layers"):
            raise UsageError("--gpu-layers needs --offload layers (or auto)")
        offload = "layers"
    check_context(model, args.context, rope_scaling=args.rope_scaling)
    rec = recommend(
        model, machine, req.workload, catalog, context=args.context, engine=req.engine, prefer=args.prefer,
        live=live, request=req, rope_scaling=True, split=split,
    )  # fmt: skip
    pinned = None
    if args.quant or offload != "auto" or args.tensor_split:
        pinned = fit(
            model, machine, req, catalog, offload=offload, live=live, split=split,
            cpu_expert_layers=args.n_cpu_moe, gpu_layers=args.gpu_layers, tensor_split=args.tensor_split,
        )  # fmt: skip
        result = pinned
    else:  # the recommended format again, now with advice
        chosen = rec.best.quant_id if rec.best else rec.ladder[-1].quant_id
        result = fit(model, machine, replace(req, quant=chosen), catalog, live=live, split=split)
    rung = Rung(display_quant(result.estimate.quant_name), req.quant, result, where_of(result))
    commands = commands_for(rec, machine, catalog, live=live, rung=rung)
    if args.measured is not None:
        from rigcheck.core.estimate.measured import apply_measured, load_llama_bench

        result = apply_measured(result, load_llama_bench(args.measured), machine, str(args.measured))
    if args.json:
        _emit_json(recommendation_json(rec, commands, result=result, pinned=pinned is not None), out)
    else:
        text = recommendation_text(rec, commands, pinned=pinned)
        out.write(text + "\n\n" + fit_text(result, machine) + "\n")
    if args.check and result.verdict == "does_not_fit":
        return EXIT_DOES_NOT_RUN
    return EXIT_OK
