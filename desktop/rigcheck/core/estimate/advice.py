"""What would help: advice after a verdict (a shorter context, a smaller format, more GPUs, more RAM), each
worked out by the solvers, not guessed.
"""

from __future__ import annotations

from rigcheck.core.catalog import Catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.gtt_advice import gtt_advice
from rigcheck.core.estimate.memory import GIB, MemoryEstimate, Request
from rigcheck.core.estimate.placement.budget import budgets
from rigcheck.core.estimate.placement.training import MEGATRAIN_HOST_BYTES
from rigcheck.core.estimate.placement.types import Offload, Placement
from rigcheck.core.estimate.solvers import best_quant, fewest_gpus, max_context
from rigcheck.core.estimate.training_advice import training_steps
from rigcheck.core.estimate.verdict import FitResult, Verdict
from rigcheck.core.machine import Machine
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.said import Bytes, Shown, Text, say


def advice_for(
    model: ModelInfo, machine: Machine, req: Request, catalog: Catalog, est: MemoryEstimate,
    *, verdict: Verdict, placement: Placement, live: bool,
) -> list[Text]:  # fmt: skip
    advice: list[Text] = []
    if verdict == "fits":
        spare = sum(b for b in budgets(machine, live, req.engine).gpu_bytes) - sum(placement.gpu_bytes)
        advice.append(say("{quant} fits with {spare} to spare", quant=est.quant_name, spare=Bytes(spare)))
        return advice
    if est.workload == "inference" and machine.gpus and req.engine != "ktransformers":
        # (ktransformers always keeps the routed experts in RAM: "entirely on the GPU" is not its choice)
        longest = max_context(model, machine, req, catalog, live=live)
        if longest is not None and longest < est.context:
            advice.append(say("reduce context to {k}k to fit entirely on the GPU", k=longest // 1024))
        if model.weights is None or req.quant:
            best = best_quant(model, machine, req, catalog, live=live)
            if best is not None and best[0] != est.quant_name:
                advice.append(
                    say(
                        "{quant} fits on the GPU with {spare} to spare",
                        quant=best[0],
                        spare=Bytes(best[1]),
                    )
                )
        if verdict == "fits_with_offload" and placement.gpu_layers < placement.total_layers:
            advice.append(
                say(
                    "{count} layers run from RAM: expect decode bound by RAM bandwidth",
                    count=placement.total_layers - placement.gpu_layers,
                )
            )
        raised = gtt_advice(model, machine, req, catalog)
        if raised is not None:
            advice.append(raised)
        first = machine.gpus[0]
        spec = catalog.gpu(first.catalog_id) if first.catalog_id else None
        if spec is not None and not first.unified_memory:  # a second APU cannot be added to a machine
            count = fewest_gpus(model, machine, spec, req, catalog, limit=8)
            if count is not None and count > len(machine.gpus):
                advice.append(
                    say("{count} × {gpu} would hold it entirely in GPU memory", count=count, gpu=spec.name)
                )
    if est.workload == "full" and verdict == "does_not_fit":
        host_need = MEGATRAIN_HOST_BYTES * model.arch.params_total
        have = budgets(machine, live).cpu_bytes
        if host_need > have:
            extra = (host_need - have + GIB - 1) // GIB
            advice.append(
                say(
                    "add {extra} GiB RAM for MegaTrain-style training (about {bytes} bytes per "
                    "parameter in RAM)",
                    extra=extra,
                    bytes=MEGATRAIN_HOST_BYTES,
                )
            )
    if est.workload in ("lora", "full") and verdict == "does_not_fit":
        advice.append(say("QLoRA (4-bit base) needs about a quarter of the weight memory"))
    if verdict == "does_not_fit":
        steps = next_steps(model, machine, req, catalog, est, live=live)
        steps += training_steps(model, machine, req, catalog, est, live=live)
        advice += steps
        if not steps and est.workload == "inference":
            advice.append(
                say("a smaller quantization, a shorter context, or a GPU with more memory would help")
            )
    return advice


#: RAM sizes a what-if tries, GiB (common DIMM totals: 2 or 4 modules of 16-64 GiB, server 8-16 modules)
RAM_STEPS_GIB = (32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048)
#: how many smaller catalog siblings are tried, largest first
SIBLINGS_TRIED = 6


def next_steps(
    model: ModelInfo, machine: Machine, req: Request, catalog: Catalog, est: MemoryEstimate, *, live: bool
) -> list[Text]:
    """For a model that does not fit: the next step, computed, each with its verdict and speed: the
    offload mode that would run it (training), the RAM that would, the largest smaller sibling in the
    catalog that runs here."""
    from rigcheck.core.estimate.fit import fit
    from rigcheck.core.verdict_words import result_words
    from rigcheck.core.whatif import simulate

    def said(result: FitResult) -> Shown:
        return Shown(result_words, result)  # its verdict and speed, in words when shown

    steps: list[Text] = []
    modes: tuple[Offload, ...] = ("optimizer", "params", "full") if est.workload != "inference" else ()
    for mode in modes:
        trial = fit(model, machine, req, catalog, offload=mode, live=live, advise=False)
        if trial.verdict != "does_not_fit":
            steps.append(say("--offload {mode} would run it: {words}", mode=mode, words=said(trial)))
            break
    have_gib = machine.memory.total_bytes / GIB
    for ram in RAM_STEPS_GIB:
        if ram <= have_gib:
            continue
        trial = fit(model, simulate(machine, None, ram), req, catalog, live=False, advise=False)
        if trial.verdict != "does_not_fit":
            steps.append(say("with {ram} GiB of RAM it would run: {words}", ram=ram, words=said(trial)))
            break
    sibling = _smaller_sibling(model, machine, req, catalog, live=live)
    if sibling is not None:
        name, quant, result = sibling
        steps.append(
            say(
                "the smaller {name} runs here at {quant}: {words} (rigcheck fit {id})",
                name=name,
                quant=quant,
                words=said(result),
                id=result.estimate.model.id,
            )
        )
    return steps


def _smaller_sibling(
    model: ModelInfo, machine: Machine, req: Request, catalog: Catalog, *, live: bool
) -> tuple[str, str, FitResult] | None:
    """The largest smaller catalog model of the same family that runs here (its own line first: the R1
    distills for DeepSeek-R1), preferring one that runs entirely on the GPUs."""
    from dataclasses import replace

    from rigcheck.core.estimate.fit import fit
    from rigcheck.core.estimate.recommend import display_quant, where_of
    from rigcheck.core.models.resolve import from_catalog
    from rigcheck.core.verdict_words import TIERS, tier_of

    spec = catalog.model(model.id)
    if spec is None or spec.params_b is None:
        return None
    stem = model.id.rsplit("-", 1)[0] if model.id[-1:] == "b" else model.id
    smaller = [m for m in catalog.models if m.family == spec.family and (m.params_b or 0) < spec.params_b]
    smaller.sort(key=lambda m: (not m.id.startswith(stem), -(m.params_b or 0)))
    found: list[tuple[int, str, str, FitResult]] = []
    for candidate in smaller[:SIBLINGS_TRIED]:
        info = from_catalog(candidate)
        # inference at the catalog's everyday format (the format ladder of a model that does not fit
        # ends at Q2_K, which says nothing about a model that does); training at its own
        quant = "Q4_K_M" if req.workload == "inference" else req.quant
        try:
            result = fit(info, machine, replace(req, quant=quant), catalog, live=live, advise=False)
        except InputError:
            continue
        if result.verdict == "does_not_fit":
            continue
        tps = (
            result.speed.decode_tokens_per_s
            if req.workload == "inference"
            else result.speed.train_tokens_per_s
        )
        rank = TIERS[tier_of(where_of(result), tps, workload=req.workload)][2]
        found.append((rank, candidate.name, display_quant(result.estimate.quant_name), result))
        if rank == 0:
            break  # runs entirely on the GPUs: the largest such is the answer
    if not found:
        return None
    # the best tier, the largest within it (candidates are tried largest first)
    _rank, name, quant, result = min(found, key=lambda f: f[0])
    return name, quant, result
