"""What can change on a machine whose GPU and memory are built in (a Mac, a DGX Spark, a laptop).

Nothing can be added or swapped (:func:`rigcheck.core.estimate.chassis.chassis` says ``built_in``): the
choices are the same chip family with more memory (the tiers the catalog lists as ``memory_gb``), or a
different built-in machine with more memory. Each choice is another Machine, so a model is placed on it by
the same estimator as everything else (:func:`rigcheck.core.estimate.upgrade.outcome`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from rigcheck.core.catalog import Catalog, GpuSpec
from rigcheck.core.estimate.chassis import chassis
from rigcheck.core.estimate.memory import Request
from rigcheck.core.machine import Machine
from rigcheck.core.said import Num, Said, Sig, render, say
from rigcheck.core.whatif import gpu_from_spec, upgrade

GIB = 1024**3
#: how many choices a listing keeps
MAX_CHOICES = 8


@dataclass(frozen=True)
class MachineChoice:
    """A built-in machine to switch to: a chip with a memory size."""

    #: "tier": the same chip family with more memory; "machine": a different built-in machine
    kind: Literal["tier", "machine"]
    gpu_id: str
    name: str
    memory_gib: float
    bandwidth_gbs: float | None
    machine: Machine
    #: how ``model_id`` runs on it, when a model was asked (an upgrade.Outcome)
    outcome: object | None = None
    model_id: str | None = None


def is_built_in(machine: Machine, catalog: Catalog) -> bool:
    """A laptop or a system-on-chip: no GPU can be added or swapped."""
    return bool(machine.gpus) and chassis(machine, catalog).kind == "built_in"


def why_built_in(machine: Machine, catalog: Catalog) -> str:
    """:func:`why_built_in_said` in words."""
    return render(why_built_in_said(machine, catalog))


def why_built_in_said(machine: Machine, catalog: Catalog) -> Said:
    """One sentence: why GPUs, RAM and PSU cannot change on this machine, and what can."""
    unified = any(g.unified_memory for g in machine.gpus)
    if unified:
        return say(
            "The GPU and its memory are built into the chip and share the machine's RAM: nothing can be "
            "added or swapped. What can change is the machine: the same chip family with more memory, or "
            "another machine."
        )
    return say(
        "A laptop's GPU and its memory are soldered to the board: nothing can be added or swapped. What "
        "can change is the machine: the same GPU family with more memory, or another machine."
    )


def _family(spec: GpuSpec) -> str:
    """The chip family a spec belongs to: its architecture without the process note ("Apple M2")."""
    return (spec.architecture or spec.id).split(" (")[0].strip().lower()


def _built_in_spec(spec: GpuSpec) -> bool:
    return spec.form_factor in ("soc", "laptop") and bool(spec.memory_gb) and spec.segment != "datacenter"


def _machine_for(base: Machine, spec: GpuSpec, memory_gib: float) -> Machine:
    """``base`` turned into ``spec`` with ``memory_gib`` (unified: that much RAM, the GPU sharing it)."""
    gpu = gpu_from_spec(spec, 0)
    if spec.unified_memory:
        gpu = replace(gpu, memory_total_bytes=None)  # the platform's share rule applies (core/unified.py)
        trial = upgrade(base, gpus=[], ram_gb=memory_gib)
        return replace(trial, gpus=(gpu,))
    gpu = replace(gpu, memory_total_bytes=int(memory_gib * GIB))
    return replace(upgrade(base, gpus=[]), gpus=(gpu,))


def _current_memory(machine: Machine, spec: GpuSpec | None) -> float:
    if spec is not None and spec.unified_memory:
        return machine.memory.total_bytes / GIB
    sizes = [g.memory_total_bytes for g in machine.gpus if g.memory_total_bytes]
    return max(sizes) / GIB if sizes else 0.0


def machine_choices(
    machine: Machine,
    catalog: Catalog,
    *,
    model_id: str | None = None,
    workload: str = "inference",
    context: int | None = None,
    request: Request | None = None,
    min_tokens_per_s: float | None = None,
) -> list[MachineChoice]:
    """The built-in machines one could switch to from ``machine``: the same chip family with more memory
    first, then other built-in machines with more memory than this one has. With ``model_id``, each is
    placed with that model and the ones it runs on come first (least memory first); at most
    :data:`MAX_CHOICES`."""
    from rigcheck.core.estimate.upgrade import catalog_model, outcome  # upgrade imports this module

    own = catalog.spec_for(machine.gpus[0]) if machine.gpus else None
    have = _current_memory(machine, own)
    family = _family(own) if own is not None else None
    choices: list[MachineChoice] = []
    for spec in catalog.gpus:
        if not _built_in_spec(spec):
            continue
        same = family is not None and _family(spec) == family
        if own is not None and spec.unified_memory != own.unified_memory and same:
            continue
        for size in sorted(set(spec.memory_gb)):
            if size <= have * 1.01:
                continue
            kind: Literal["tier", "machine"] = "tier" if same else "machine"
            choices.append(
                MachineChoice(
                    kind,
                    spec.id,
                    spec.name,
                    float(size),
                    spec.bandwidth_gbs,
                    _machine_for(machine, spec, float(size)),
                )
            )
    if model_id is None:
        return sorted(choices, key=lambda c: (c.kind != "tier", c.memory_gib))[:MAX_CHOICES]
    info = catalog_model(model_id, catalog)
    placed = [
        replace(
            c,
            outcome=outcome(info, c.machine, catalog, workload=workload, context=context, request=request),
            model_id=info.id,
        )
        for c in choices
    ]
    if min_tokens_per_s is not None:  # another machine slower than asked is no answer (a tier stays)
        placed = [c for c in placed if c.kind == "tier" or not _too_slow(c, workload, min_tokens_per_s)]
    # per chip, only the smallest memory that reaches the best answer that chip gives (no 512 GiB
    # M3 Ultra when the 256 GiB one runs it just as well)
    best: dict[str, MachineChoice] = {}
    for choice in sorted(placed, key=lambda c: c.memory_gib):
        kept = best.get(choice.gpu_id)
        if kept is None or _rank(choice) < _rank(kept):
            best[choice.gpu_id] = choice

    def key(c: MachineChoice) -> tuple[bool, bool, int, float, float]:
        field = "decode_tokens_per_s" if workload == "inference" else "train_tokens_per_s"
        tps = getattr(c.outcome, field, None)
        # what runs first, the same chip family (more memory) before other machines, then faster first
        return (_rank(c) == 2, c.kind != "tier", _rank(c), -(tps or 0.0), c.memory_gib)

    ranked = sorted(best.values(), key=key)
    shown = ranked[:MAX_CHOICES]
    tiers = [c for c in ranked if c.kind == "tier"]
    if tiers and not any(c.kind == "tier" for c in shown):  # the same chip with more memory, said even
        shown = [*shown[: MAX_CHOICES - 1], tiers[0]]  # when it is not enough
    return shown


def _too_slow(choice: MachineChoice, workload: str, floor: float) -> bool:
    field = "decode_tokens_per_s" if workload == "inference" else "train_tokens_per_s"
    tps = getattr(choice.outcome, field, None)
    return tps is not None and tps < floor


def _rank(choice: MachineChoice) -> int:
    """0: entirely on the GPU, 1: with offload, 2: does not fit."""
    verdict = getattr(choice.outcome, "verdict", "does_not_fit")
    return {"fits": 0, "fits_with_offload": 1}.get(verdict, 2)


def choice_label(choice: MachineChoice) -> str:
    """ "M4 Max with 128 GiB (546 GB/s)" in the current language."""
    return render(choice_label_said(choice))


def choice_label_said(choice: MachineChoice) -> Said:
    """ "M4 Max with 128 GiB (546 GB/s)", as said."""
    if choice.bandwidth_gbs:
        return say(
            "{name} with {memory} GiB ({bandwidth} GB/s)",
            name=choice.name,
            memory=Sig(choice.memory_gib, 6),
            bandwidth=Num(choice.bandwidth_gbs, group=False),
        )
    return say("{name} with {memory} GiB", name=choice.name, memory=Sig(choice.memory_gib, 6))


__all__ = [
    "MAX_CHOICES",
    "MachineChoice",
    "choice_label",
    "choice_label_said",
    "is_built_in",
    "machine_choices",
    "why_built_in",
    "why_built_in_said",
]
