"""What would let a LoRA/QLoRA/full fine-tune that does not fit run here, each step computed with its
verdict and speed: the longest context that fits this setup, a stack whose loss and kernels need less
(Unsloth's fused loss and offloaded checkpoints, torchtune's chunked loss), checkpoints offloaded to
RAM, a smaller LoRA rank. Each step is one ``fit`` of the changed request, never a rule of thumb.
"""

from __future__ import annotations

from dataclasses import replace

from rigcheck.core.catalog import Catalog
from rigcheck.core.estimate.memory import MemoryEstimate, Request, training_max_context
from rigcheck.core.estimate.verdict import FitResult
from rigcheck.core.i18n import num, tr
from rigcheck.core.machine import Machine
from rigcheck.core.models.spec import ModelInfo

#: a context shorter than this is not offered (a fine-tune's examples rarely fit in fewer tokens)
SHORTEST_CONTEXT = 512
#: stacks tried beside the one asked for, leanest first (training_profiles: fused, then chunked loss)
LEANER_STACKS = ("unsloth", "torchtune")
#: the LoRA rank tried when the one asked for is larger
SMALL_RANK = 8


def _said(result: FitResult) -> str:
    from rigcheck.core.estimate.recommend import verdict_words
    from rigcheck.core.verdict_words import speed_text

    return f"{verdict_words(result)}, {speed_text(result.speed.train_tokens_per_s, training=True)}"


def _try(model: ModelInfo, machine: Machine, req: Request, catalog: Catalog, live: bool) -> FitResult:
    from rigcheck.core.estimate.fit import fit

    return fit(model, machine, req, catalog, live=live, advise=False)


def _longest(model: ModelInfo, req: Request, catalog: Catalog, capacity: int, now: int) -> int | None:
    """The longest context (a multiple of 256, under ``now``) this setup fits in ``capacity``."""
    found = training_max_context(model, replace(req, context=None), catalog, capacity)
    found = min(found, now - 1) // 256 * 256
    return found if found >= SHORTEST_CONTEXT else None


def training_steps(
    model: ModelInfo, machine: Machine, req: Request, catalog: Catalog, est: MemoryEstimate, *, live: bool
) -> list[str]:
    if est.workload == "inference" or not machine.gpus:
        return []
    # the GPU budget this training fit itself uses (its safety margin, not an inference engine's)
    capacity = max(_try(model, machine, req, catalog, live).budget.gpu_bytes, default=0)
    if capacity <= 0:
        return []
    steps: list[str] = []
    context = est.context
    shorter = _longest(model, req, catalog, capacity, context)
    if shorter is not None:
        trial = _try(model, machine, replace(req, context=shorter), catalog, live)
        if trial.verdict != "does_not_fit":
            steps.append(
                tr("at context {context} it fits: {words}", context=num(shorter), words=_said(trial))
            )
    for stack in LEANER_STACKS:
        if stack == est.framework or (stack == "unsloth" and req.gpus > 1):
            continue
        lean = replace(req, framework=stack)
        trial = _try(model, machine, lean, catalog, live)
        if trial.verdict != "does_not_fit":
            steps.append(
                tr(
                    "--framework {stack} fits at context {context}: {words}",
                    stack=stack,
                    context=num(context),
                    words=_said(trial),
                )
            )
            break
        longest = _longest(model, lean, catalog, capacity, context)
        if longest is not None and (shorter is None or longest > shorter):
            trial = _try(model, machine, replace(lean, context=longest), catalog, live)
            if trial.verdict != "does_not_fit":
                steps.append(
                    tr(
                        "--framework {stack} fits up to context {context}: {words}",
                        stack=stack,
                        context=num(longest),
                        words=_said(trial),
                    )
                )
                break
    if est.checkpointing != "offloaded":
        trial = _try(model, machine, replace(req, checkpointing="offloaded"), catalog, live)
        if trial.verdict != "does_not_fit":
            steps.append(tr("--checkpointing offloaded fits: {words}", words=_said(trial)))
    if est.workload != "full" and (req.lora_rank or est.lora_rank or 0) > SMALL_RANK:
        trial = _try(model, machine, replace(req, lora_rank=SMALL_RANK), catalog, live)
        if trial.verdict != "does_not_fit":
            steps.append(tr("--lora-rank {rank} fits: {words}", rank=SMALL_RANK, words=_said(trial)))
    return steps
