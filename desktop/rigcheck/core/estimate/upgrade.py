"""What an upgrade buys, and what it would take: models before and after, power, costs, options.

:func:`compare` runs the same models on a machine and on its upgraded copy (:func:`rigcheck.core.whatif.
upgrade`): the verdict, the best format that fits on the GPUs and the speed of each, the PSU budget of
both, and what the new GPUs cost (:mod:`rigcheck.core.estimate.cost`). :func:`cheapest_gpus_for` lists
the catalog GPUs that would run a model entirely in GPU memory, by price; :func:`training_options` what
it takes to train a model: more RAM for MegaTrain-style offload, or enough of a big GPU to shard it.

Every verdict and speed comes from :func:`rigcheck.core.estimate.fit.fit` (or its placement and speed
steps); nothing here has its own memory model except the sharding count (ZeRO stage 3, below).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from rigcheck.core.catalog import Catalog, GpuSpec
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.buying import best_owned, is_step_down, newest_years, owned_count, standing
from rigcheck.core.estimate.chassis import chassis, needs_said
from rigcheck.core.estimate.cost import DEFAULT_PRICES, GpuCost, Prices, gpu_cost
from rigcheck.core.estimate.fit import (
    GPU_MARGIN,
    MEGATRAIN_HOST_BYTES,
    FitResult,
    Placement,
    budgets,
    estimate_speed,
    fit,
    place,
)
from rigcheck.core.estimate.memory import GIB, MemoryEstimate, Request, Workload, estimate_memory
from rigcheck.core.estimate.power import PowerBudget, power_budget
from rigcheck.core.estimate.recommend import Prefer, display_quant, recommend, where_of
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.said import Joined, Num, Percent, Shown, Sig, Text, render, render_all, say
from rigcheck.core.verdict_words import Words, placement_words, speed_text, verdict_where
from rigcheck.core.whatif import upgrade

Verdict = Literal["fits", "fits_with_offload", "does_not_fit"]
WORKLOADS: tuple[Workload, ...] = ("inference", "lora", "qlora", "full")

#: shown when the user names no models: 1B to 235B, dense and mixture-of-experts, smallest first
POPULAR_MODELS: tuple[str, ...] = (
    "llama-3.2-1b",
    "llama-3.2-3b",
    "qwen3-4b",
    "llama-3.1-8b",
    "qwen3-8b",
    "gemma-3-12b",
    "qwen3-14b",
    "gpt-oss-20b",
    "mistral-small-3.1-24b",
    "gemma-3-27b",
    "qwen3-30b-a3b",
    "qwen3-32b",
    "llama-3.3-70b",
    "qwen2.5-72b",
    "llama-4-scout-17b-16e",
    "gpt-oss-120b",
    "qwen3-235b-a22b",
)
#: the weight format assumed when a GPU is sized for inference without one: llama.cpp's usual choice
DEFAULT_INFERENCE_QUANT = "q4_k_m"
#: the big GPUs :func:`training_options` sizes a sharded run with (besides the machine's own GPU)
TRAINING_GPUS: tuple[str, ...] = (
    "nvidia-geforce-rtx-5090",
    "nvidia-rtx-pro-6000-blackwell-workstation",
    "nvidia-a100-sxm4-80gb",
    "nvidia-h100-sxm5",
    "nvidia-h200",
    "nvidia-b200",
    "amd-instinct-mi300x",
)
#: RAM sizes offered, GiB: what boards and DIMM kits commonly add up to
RAM_SIZES_GIB: tuple[int, ...] = (16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048)
#: a desktop board's RAM limit (4 DIMMs of 48 GiB on AM5/LGA1700, 64 GiB DIMMs push it to 256 GiB)
DESKTOP_RAM_LIMIT_GIB = 256
#: GPUs one server holds (HGX/DGX boards carry 8); more means several machines
NODE_GPUS = 8
#: most GPUs a sharded training option may take before it is not worth listing
MAX_SHARDED_GPUS = 64
#: how many options a listing keeps
MAX_OPTIONS = 8
#: where a GPU for a what-if may come from: cards that go into a desktop or server (not laptops or SoCs)
_BUYABLE_SEGMENTS = (None, "desktop", "workstation", "datacenter")
ZERO3_SOURCE = "ZeRO (arXiv 1910.02054) §5.3: stage 3 keeps (2 + 2 + K)·Ψ / N_d bytes of model states per GPU"


# -- records --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """One model on one machine."""

    verdict: Verdict
    #: inference: the best format that fits entirely on the GPUs, else the smallest that fits with
    #: offload, else None; training: the workload's own format (bf16, NF4) when it fits
    quant: str | None
    decode_tokens_per_s: float | None
    train_tokens_per_s: float | None
    #: where it runs, or why not ("everything on the GPU: …", "needs 57.7 GiB; GPUs offer …"), as said:
    #: :attr:`placement` in words
    placement_said: Text = ""
    #: "none", "layers", "experts", "optimizer", "params" or "full" (see fit.Placement.offload)
    offload: str = "none"
    #: gpu, gpu+ram or cpu (recommend.where_of); None when it does not run
    where: str | None = None
    #: the quant id asked for (None: the model's own files or the workload's format), to pin it again
    quant_id: str | None = None

    @property
    def placement(self) -> str:
        return render(self.placement_said)


@dataclass(frozen=True)
class ModelChange:
    model_id: str
    name: str
    before: Outcome
    after: Outcome
    #: before does_not_fit → after fits or fits_with_offload, or before offload → after entirely on GPU
    newly_runnable: bool
    #: what the recommendation is after the upgrade when it differs from ``after`` (which keeps the
    #: format used before, to compare like with like): a better format the upgrade makes possible
    better: Outcome | None = None


@dataclass(frozen=True)
class Option:
    """One way to make a model run."""

    #: "2 × GeForce RTX 5090", "1024 GiB RAM (+960 GiB, MegaTrain-style, keeps your GeForce RTX 4090)", as
    #: said: :attr:`description` in words
    description_said: Text
    machine: Machine
    verdict: str
    #: decode for inference, train tokens/s for training; None when it cannot be estimated (see notes)
    tokens_per_s: float | None
    #: for everything bought; None when a price is unknown (``notes`` say so)
    purchase_usd: float | None
    #: the cloud alternative's hourly price for the same GPUs, when the catalog has one
    rent_usd_hour: float | None
    #: as said: :attr:`notes` in words
    notes_said: tuple[Text, ...]
    #: "gpu" (buy or rent GPUs) or "ram" (add RAM, keep the GPUs)
    kind: Literal["gpu", "ram"] = "gpu"
    model_id: str = ""
    gpu_id: str | None = None
    #: how many of ``gpu_id``
    count: int = 0
    #: the RAM the option has, GiB (RAM options)
    ram_gib: float | None = None
    #: the GPU's cost figures (one unit), when it is a catalog GPU
    cost: GpuCost | None = None
    #: the weight format it was sized with ("Q4_K_M", "NF4 …", "bf16")
    quant: str | None = None
    #: the GPUs do not fit the machine the option is for (an SXM module for a desktop): rent them
    rent_only: bool = False
    #: how many of the ``count`` GPUs the machine has already (only ``count - owned`` are bought)
    owned: int = 0
    #: how the purchase price may rank it (:mod:`rigcheck.core.estimate.buying`): "current", "launch",
    #: "superseded" or "unknown"
    price_standing: str = "unknown"

    @property
    def description(self) -> str:
        return render(self.description_said)

    @property
    def notes(self) -> tuple[str, ...]:
        return render_all(self.notes_said)


@dataclass(frozen=True)
class UpgradeReport:
    before: Machine
    after: Machine
    #: "inference" | "lora" | "qlora" | "full"
    workload: str
    models: tuple[ModelChange, ...]
    power_before: PowerBudget
    power_after: PowerBudget
    #: one per distinct GPU model in ``after`` that is not in ``before`` (the purchase)
    costs: tuple[GpuCost, ...]
    #: plain sentences, as said: :attr:`suggestions` in words
    suggestions_said: tuple[Text, ...]
    #: tokens of context asked for (None: each model's default, 8192 or its maximum)
    context: int | None = None
    #: for every model that still does not run entirely on the GPUs after the upgrade: the cheapest
    #: catalog GPUs that would, and the cheapest to rent
    alternatives: tuple[Option, ...] = ()
    #: what the purchase costs in all (every added GPU counted); None when a price is unknown
    purchase_usd: float | None = None

    @property
    def suggestions(self) -> tuple[str, ...]:
        return render_all(self.suggestions_said)


# -- helpers --------------------------------------------------------------------------------------


def catalog_model(model_id: str, catalog: Catalog) -> ModelInfo:
    """A catalog model by id (case-insensitive); an InputError naming close ids when there is none."""
    spec = catalog.model(model_id.strip().lower())
    if spec is None:
        words = model_id.lower().replace("-", " ").split()
        close = [m.id for m in catalog.models if any(w in m.id for w in words)][:5]
        hint = f"; did you mean {', '.join(close)}?" if close else "; see 'rigcheck models'"
        raise InputError(model_id, f"not a catalog model id{hint}")
    return from_catalog(spec)


def _workload(workload: str) -> Workload:
    for known in WORKLOADS:
        if workload == known:
            return known
    raise InputError("--workload", f"unknown workload {workload!r} (known: {', '.join(WORKLOADS)})")


def _specs(machine: Machine, catalog: Catalog) -> list[GpuSpec | None]:
    return [
        catalog.gpu(g.catalog_id) if g.catalog_id and catalog.gpu(g.catalog_id) else catalog.match_gpu(g)
        for g in machine.gpus
    ]


def _gpu_names(machine: Machine) -> str:
    counts: dict[str, int] = {}
    for gpu in machine.gpus:
        counts[gpu.name] = counts.get(gpu.name, 0) + 1
    return " + ".join(f"{n} × {name}" if n > 1 else name for name, n in counts.items()) or "no GPU"


def _tokens(result: FitResult) -> float | None:
    speed = result.speed
    return speed.decode_tokens_per_s if result.estimate.workload == "inference" else speed.train_tokens_per_s


def _outcome_of(result: FitResult, quant: str | None, quant_id: str | None = None) -> Outcome:
    if result.verdict == "does_not_fit":
        return Outcome(
            "does_not_fit", None, None, None, result.reasons_said[0] if result.reasons_said else ""
        )
    return Outcome(
        result.verdict,
        quant,
        result.speed.decode_tokens_per_s,
        result.speed.train_tokens_per_s,
        result.reasons_said[0] if result.reasons_said else "",
        result.placement.offload,
        where_of(result),
        quant_id,
    )


def outcome(
    model: ModelInfo,
    machine: Machine,
    catalog: Catalog,
    *,
    workload: str = "inference",
    context: int | None = None,
    live: bool = False,
    prefer: Prefer = "quality",
    quant_id: str | None = None,
    request: Request | None = None,
) -> Outcome:
    """How ``model`` runs on ``machine``: the recommendation (:func:`~rigcheck.core.estimate.recommend.
    recommend`, the one answer every surface gives), or with ``quant_id`` (or ``request.quant``) that
    format pinned. ``request`` carries the other settings (batch, engine, KV-cache type) as for ``fit``."""
    kind = _workload(workload)
    base = replace(request or Request(), context=context, workload=kind)
    quant_id = quant_id or base.quant
    if quant_id is not None and kind == "inference":
        result = fit(model, machine, replace(base, quant=quant_id), catalog, live=live, advise=False)
        return _outcome_of(result, display_quant(result.estimate.quant_name), quant_id)
    engine = base.engine if request is not None and kind == "inference" else None  # training: its own
    rec = recommend(
        model, machine, kind, catalog, context=context, engine=engine, live=live, prefer=prefer,
        request=base, rope_scaling=True,
    )  # fmt: skip
    if rec.best is None:
        return _outcome_of(rec.result, None)
    return _outcome_of(rec.best.result, rec.best.quant, rec.best.quant_id)


def _newly_runnable(before: Outcome, after: Outcome) -> bool:
    if before.verdict == "does_not_fit":
        return after.verdict != "does_not_fit"
    return before.verdict == "fits_with_offload" and after.verdict == "fits"


def _cost(spec: GpuSpec, prices: Prices) -> GpuCost:
    return gpu_cost(spec, prices)


def _money(value: float) -> Joined:
    return Joined("", ("$", Num(value))) if value >= 100 else Joined("", ("$", Num(value, 2)))


def _price_note(cost: GpuCost, count: int) -> list[Text]:
    notes: list[Text] = []
    each: Text = Joined("", (" ", say("each"))) if count > 1 else ""
    if cost.purchase is not None:
        when = f", {cost.purchase.date}" if cost.purchase.date else ""
        kind = {"launch": "launch price", "street": "street price", "user": "your price"}.get(
            cost.purchase.kind, "price"
        )
        used: Text = Joined("", (", ", say("used"))) if cost.purchase.used else ""
        notes.append(
            Joined(
                "",
                (say(kind), " ", _money(cost.purchase.usd), each, used, when, f" ({cost.purchase.source})"),
            )
        )
    else:
        notes.append(say("purchase price unknown: the catalog has none for {gpu}", gpu=cost.name))
    if cost.rent_per_hour is not None:
        when = f", {cost.rent_per_hour.date}" if cost.rent_per_hour.date else ""
        notes.append(
            Joined(
                "",
                (
                    say("cloud rent"),
                    " ",
                    _money(cost.rent_per_hour.usd),
                    "/h",
                    each,
                    when,
                    f" ({cost.rent_per_hour.source})",
                ),
            )
        )
    return notes


# -- compare --------------------------------------------------------------------------------------


def compare(
    before: Machine,
    after: Machine,
    catalog: Catalog,
    *,
    models: Sequence[str] | None = None,
    workload: str = "inference",
    context: int | None = None,
    prices: Prices = DEFAULT_PRICES,
    live_before: bool = False,
    prefer: Prefer = "quality",
    request: Request | None = None,
) -> UpgradeReport:
    """Each model on ``before`` and on ``after``; the PSU budget of both; what the new GPUs cost.

    ``models`` are catalog ids (default :data:`POPULAR_MODELS`); ``live_before`` uses the memory free
    now on ``before`` (a probed machine) instead of its capacity; ``after`` always counts capacity.
    """
    kind = _workload(workload)
    ids = list(models) if models else [m for m in POPULAR_MODELS if catalog.model(m) is not None]
    infos = [catalog_model(model_id, catalog) for model_id in ids]
    changes = []
    for info in infos:
        was = outcome(
            info, before, catalog, workload=kind, context=context, live=live_before, prefer=prefer,
            request=request,
        )  # fmt: skip
        best = outcome(
            info, after, catalog, workload=kind, context=context, live=False, prefer=prefer, request=request
        )
        now, better = best, None
        if was.verdict != "does_not_fit" and was.quant_id is not None and was.quant_id != best.quant_id:
            # like with like: the format it ran in before, if it still runs; the new best said apart
            same = outcome(
                info, after, catalog, workload=kind, context=context, live=False, quant_id=was.quant_id,
                request=request,
            )  # fmt: skip
            if same.verdict != "does_not_fit":
                now, better = same, best
        changes.append(ModelChange(info.id, info.name, was, now, _newly_runnable(was, now), better))
    changes.sort(key=lambda c: not c.newly_runnable)  # newly runnable first, else in the given order

    power_before = power_budget(before, catalog)
    power_after = power_budget(after, catalog)

    added = _added_gpus(before, after, catalog)
    costs = tuple(_cost(spec, prices) for spec in {s.id: s for s, _ in added}.values())
    purchase: float | None = 0.0
    for spec, count in _count(added):
        cost = next(c for c in costs if c.gpu_id == spec.id)
        if cost.purchase is None or purchase is None:
            purchase = None
        else:
            purchase += cost.purchase.usd * count
    if not added:
        purchase = None

    alternatives: list[Option] = []
    # Every model asked gets its answer; the work per model is bounded by the catalog's buyable GPUs
    # (at most NODE_GPUS trial counts each, starting at the count its memory needs).
    short = [c for c in changes if c.after.verdict != "fits"]
    for change in short:
        options = cheapest_gpus_for(
            change.model_id, catalog, workload=kind, context=context, base=before, prices=prices,
            quant=request.quant if request is not None else None,
        )  # fmt: skip
        alternatives.extend(options)

    report = UpgradeReport(
        before=before,
        after=after,
        workload=kind,
        models=tuple(changes),
        power_before=power_before,
        power_after=power_after,
        costs=costs,
        suggestions_said=(),
        context=context,
        alternatives=tuple(alternatives),
        purchase_usd=purchase,
    )
    return replace(report, suggestions_said=tuple(_suggestions(report, added, prices)))


def _added_gpus(before: Machine, after: Machine, catalog: Catalog) -> list[tuple[GpuSpec, int]]:
    """The catalog GPUs in ``after`` beyond those ``before`` has, by kind: (spec, how many more)."""
    have: dict[str, int] = {}
    for spec in _specs(before, catalog):
        if spec is not None:
            have[spec.id] = have.get(spec.id, 0) + 1
    kept = set(before.gpus)
    result: list[tuple[GpuSpec, int]] = []
    for spec, gpu in zip(_specs(after, catalog), after.gpus, strict=True):
        if spec is None:
            continue
        if gpu in kept and have.get(spec.id, 0) > 0:
            have[spec.id] -= 1
            continue
        result.append((spec, 1))
    return result


def _count(added: list[tuple[GpuSpec, int]]) -> list[tuple[GpuSpec, int]]:
    counts: dict[str, tuple[GpuSpec, int]] = {}
    for spec, n in added:
        counts[spec.id] = (spec, counts.get(spec.id, (spec, 0))[1] + n)
    return list(counts.values())


def outcome_words(outcome: Outcome, workload: str, gpus: int = 1) -> Words:
    """The shared placement vocabulary (:mod:`rigcheck.core.verdict_words`) for one outcome on a machine
    with ``gpus`` GPUs."""
    tps = outcome.decode_tokens_per_s if workload == "inference" else outcome.train_tokens_per_s
    return placement_words(verdict_where(outcome.verdict, outcome.where), tps, workload=workload, gpus=gpus)


def _speed_words(outcome: Outcome, workload: str) -> str:
    said = outcome_words(outcome, workload)
    return ", " + said.speed if said.tokens_per_s is not None else ""


def _speed_phrase(tps: float, workload: str) -> str:
    return speed_text(tps, training=workload != "inference")


def _outcome_said(outcome: Outcome, workload: str, gpus: int) -> Shown:
    """The outcome's placement words (:func:`outcome_words`), made when shown."""
    return Shown(lambda o: outcome_words(o, workload, gpus).words, outcome)


def _suggestions(report: UpgradeReport, added: list[tuple[GpuSpec, int]], prices: Prices) -> list[Text]:
    out: list[Text] = []
    workload = report.workload
    newly = [c for c in report.models if c.newly_runnable]
    for change in newly[:5]:
        values = {
            "model": change.name,
            "workload": workload,
            "before": _outcome_said(change.before, workload, len(report.before.gpus)),
            "after": _outcome_said(change.after, workload, len(report.after.gpus)),
            "quant": change.after.quant,
            "speed": Shown(lambda o: _speed_words(o, workload), change.after),
        }
        out.append(
            say("{model} ({workload}): {before} before, {after} after at {quant}{speed}.", **values)
            if change.after.quant
            else say("{model} ({workload}): {before} before, {after} after{speed}.", **values)
        )
    if len(newly) > 5:
        out.append(say("{count} more models become runnable; see the table.", count=len(newly) - 5))
    if not newly and report.models:
        out.append(say("No model changes verdict with this upgrade."))

    after = report.power_after
    if after.verdict in ("tight", "insufficient") and after.psu_watts is not None:
        fix: Text = (
            Joined(
                "",
                (
                    " ",
                    say("A {watts} W PSU would cover it.", watts=Num(after.suggested_psu_watts, group=False)),
                ),
            )
            if after.suggested_psu_watts
            else ""
        )
        template = (
            "Power: the {psu} W PSU is tight after the upgrade ({peak} W in spikes, {sustained} W sustained)."
            if after.verdict == "tight"
            else "Power: the {psu} W PSU is insufficient after the upgrade ({peak} W in spikes, "
            "{sustained} W sustained)."
        )
        out.append(
            Joined(
                "",
                (
                    say(
                        template,
                        psu=Sig(after.psu_watts, 6),
                        peak=Num(after.peak_watts, group=False),
                        sustained=Num(after.sustained_watts, group=False),
                    ),
                    fix,
                ),
            )
        )
    elif after.psu_watts is None and after.suggested_psu_watts is not None:
        out.append(
            say(
                "Power: no PSU wattage given (--psu-watts); after the upgrade a {watts} W PSU or larger "
                "would be ok ({peak} W in spikes).",
                watts=Num(after.suggested_psu_watts, group=False),
                peak=Num(after.peak_watts, group=False),
            )
        )

    for cost in report.costs:
        if cost.breakeven_hours is not None and cost.purchase and cost.rent_per_hour:
            months: Text = (
                Joined(
                    "",
                    (
                        " ",
                        say(
                            "({months} months at {share} use)",
                            months=Num(cost.breakeven_months, 1),
                            share=Percent(prices.utilization),
                        ),
                    ),
                )
                if cost.breakeven_months
                else ""
            )
            out.append(
                say(
                    "Buying a {gpu} ({price}) beats renting one ({rent}/h) after {hours} hours of use"
                    "{months}.",
                    gpu=cost.name,
                    price=_money(cost.purchase.usd),
                    rent=_money(cost.rent_per_hour.usd),
                    hours=Num(cost.breakeven_hours),
                    months=months,
                )
            )
        elif cost.purchase is None:
            out.append(
                say("The catalog has no purchase price for the {gpu}: costs are incomplete.", gpu=cost.name)
            )

    bought_names = " + ".join(f"{n} × {s.name}" if n > 1 else s.name for s, n in _count(added))
    for change in report.models:
        if change.after.verdict == "fits":
            continue
        options = [o for o in report.alternatives if o.model_id == change.model_id]
        if not options:
            if change.after.verdict == "does_not_fit":
                out.append(
                    say(
                        "{model} ({workload}): no catalog GPU found that runs it entirely in GPU memory.",
                        model=change.name,
                        workload=workload,
                    )
                )
            continue
        state = (
            say("still does not fit")
            if change.after.verdict == "does_not_fit"
            else say("still needs RAM offload")
        )
        where: Text = (
            Joined("", (" ", say("on {gpus}", gpus=_gpu_names(report.after)))) if report.after.gpus else ""
        )
        buy = next((o for o in options if o.purchase_usd is not None), None)
        if buy is not None:
            out.append(
                say(
                    "{model} ({workload}) {state}{where}; the cheapest catalog GPUs that hold it "
                    "entirely{at}: {gpus} ({price}){speed}.",
                    model=change.name,
                    workload=workload,
                    state=state,
                    where=where,
                    at=_at(buy, workload),
                    gpus=buy.description_said,
                    price=_money(buy.purchase_usd or 0.0)
                    if buy.price_standing == "current"
                    else say(
                        "launch price {price}, no current price in the catalog",
                        price=_money(buy.purchase_usd or 0.0),
                    ),
                    speed=_tps(buy, workload),
                )
            )
        rent = min(
            (o for o in options if o.rent_usd_hour is not None),
            key=lambda o: o.rent_usd_hour or 0.0,
            default=None,
        )
        if rent is not None and rent.rent_usd_hour:
            line: Text = say(
                "Rent instead: {gpus} at {rent}/h runs {model}{speed}",
                gpus=rent.description_said,
                rent=_money(rent.rent_usd_hour),
                model=change.name,
                speed=_tps(rent, workload),
            )
            if report.purchase_usd:
                hours = report.purchase_usd / rent.rent_usd_hour
                rent_months = hours / (prices.utilization * prices.hours_per_month)
                line = Joined(
                    "; ",
                    (
                        line,
                        say(
                            "the {price} for {gpus} would pay for {hours} hours of that "
                            "({months} months at {share} use)",
                            price=_money(report.purchase_usd),
                            gpus=bought_names,
                            hours=Num(hours),
                            months=Num(rent_months, 1),
                            share=Percent(prices.utilization),
                        ),
                    ),
                )
            out.append(Joined("", (line, ".")))
    return out


def _at(option: Option, workload: str) -> Text:
    """The format an inference option was sized with, as " at Q4_K_M"; training formats go unsaid."""
    if option.quant and workload == "inference":
        return Joined("", (" ", say("at {quant}", quant=option.quant)))
    return ""


def _tps(option: Option, workload: str) -> Joined:
    if option.tokens_per_s is None:
        return Joined("", (", ", say("speed unknown")))
    return Joined("", (", ", Shown(lambda tps: _speed_phrase(tps, workload), option.tokens_per_s)))


# -- cheapest GPUs --------------------------------------------------------------------------------

#: the machine a catalog GPU is sized in when no base is given: a 16-thread desktop with 128 GiB of RAM
_GENERIC_BOX = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=128 * GIB), gpus=())


def buyable_gpus(catalog: Catalog) -> list[GpuSpec]:
    """Catalog GPUs one can put in a box: desktop, workstation and data-centre cards with a known
    memory size (laptop GPUs and SoCs, Apple's included, come with their computer)."""
    return [
        g for g in catalog.gpus if g.memory_gb and g.segment in _BUYABLE_SEGMENTS and not g.unified_memory
    ]


def _runs_on_gpus(est: MemoryEstimate, machine: Machine, catalog: Catalog) -> FitResult | None:
    """``fit`` with no offload, the estimate shared: the placement and speed when it fits entirely."""
    budget = budgets(machine, live=False)
    placement = place(est, budget, "none")
    if placement is None:
        return None
    speed = estimate_speed(est, placement, machine, catalog)
    return FitResult("fits", placement, speed, est, budget, ())


def cheapest_gpus_for(
    model_id: str,
    catalog: Catalog,
    *,
    min_tokens_per_s: float = 10.0,
    workload: str = "inference",
    quant: str | None = None,
    context: int | None = None,
    max_count: int = 8,
    base: Machine | None = None,
    prices: Prices = DEFAULT_PRICES,
) -> list[Option]:
    """Catalog GPUs (1 to ``max_count`` of one kind, layer split) that run the model entirely in GPU
    memory in place of ``base``'s GPUs; with a ``base``, only GPUs of a form factor it takes, at most as
    many as it holds (:mod:`rigcheck.core.estimate.chassis`), each option noting what else it needs
    (slots, power cables, a bigger PSU); GPUs it cannot take stay only as ``rent_only`` options. The
    options are the fewest of each kind, sorted by purchase price (unknown prices last, the rentable
    first among them); at most :data:`MAX_OPTIONS`, always including the cheapest one to rent when any is.

    Inference without ``quant`` sizes Q4_K_M. Training is estimated on one GPU (as ``fit`` places it),
    so training options are single GPUs. A GPU known to be slower than ``min_tokens_per_s`` is left
    out; one whose speed cannot be estimated (throughput not published) stays, with a note.
    """
    model = catalog_model(model_id, catalog)
    kind = _workload(workload)
    if kind == "inference":
        req = Request(quant=quant or DEFAULT_INFERENCE_QUANT, context=context)
    else:
        req = Request(quant=quant, context=context, workload=kind)
    est = estimate_memory(model, req, catalog)
    machine = base or _GENERIC_BOX
    box = chassis(base, catalog) if base is not None else None
    owned = (
        best_owned(base, catalog) if base is not None and box is not None and box.max_gpus else (None, None)
    )
    newest = newest_years(catalog)
    options: list[Option] = []
    for spec in buyable_gpus(catalog):
        if is_step_down(spec, owned):  # never a smaller or slower GPU than the one owned
            continue
        have = owned_count(base, catalog, spec.id) if base is not None else 0
        # What does not fit the machine (an SXM module for a desktop) is still an option to rent.
        fits_box = box is None or box.takes(spec)
        rent_only = not fits_box
        if rent_only and gpu_cost(spec, prices).rent_per_hour is None:
            continue
        most = max_count if box is None or rent_only else min(max_count, box.max_gpus)
        counts = range(1, most + 1) if kind == "inference" else range(1, 2)
        capacity = max(spec.memory_gb) * GIB * (1 - GPU_MARGIN)
        first = max(1, math.ceil(est.total_bytes / capacity)) if kind == "inference" else 1
        for count in counts:
            if count < first:
                continue
            trial = upgrade(machine, gpus=[spec] * count)
            result = _runs_on_gpus(est, trial, catalog)
            if result is not None:
                break
        else:
            continue
        tps = _tokens(result)
        if tps is not None and tps < min_tokens_per_s:
            continue
        if not rent_only and 0 < count <= have:
            continue  # it already runs on the GPUs the machine has: nothing to buy
        extra: list[Text] = []
        if box is not None and rent_only:
            extra.append(say("to rent only: this machine is {why}", why=say(box.why)))
        elif base is not None:
            extra = [say("also needs {what}", what=n) for n in needs_said(base, trial, catalog, count)]
        option = _gpu_option(
            model, est, spec, count, trial, tps=tps, prices=prices, extra=extra,
            owned=0 if rent_only else have, newest=newest,
        )  # fmt: skip
        options.append(replace(option, purchase_usd=None, rent_only=True) if rent_only else option)
    return _cheapest_first(options)


def _gpu_option(
    model: ModelInfo,
    est: MemoryEstimate,
    spec: GpuSpec,
    count: int,
    machine: Machine,
    *,
    tps: float | None,
    prices: Prices,
    extra: Sequence[Text] = (),
    verdict: str = "fits",
    owned: int = 0,
    newest: dict[tuple[str, str | None], int] | None = None,
) -> Option:
    cost = _cost(spec, prices)
    rank = standing(spec, cost, newest if newest is not None else {})
    buy = count - owned
    values = {"quant": est.quant_name, "context": Num(est.context), "count": count}
    notes: list[Text] = [
        say("{quant}, {context}-token context, entirely on the GPU", **values)
        if count == 1
        else say("{quant}, {context}-token context, entirely on the {count} GPUs", **values),
        *extra,
    ]
    if tps is None:
        notes.append(
            say("speed unknown: the catalog has no tensor throughput or bandwidth for {gpu}", gpu=spec.name)
        )
    if count > NODE_GPUS:
        notes.append(
            say(
                "{count} GPUs are more than one server's {node}: {machines} machines",
                count=count,
                node=NODE_GPUS,
                machines=math.ceil(count / NODE_GPUS),
            )
        )
    if owned:
        notes.append(say("you have {owned} already: {buy} more to buy", owned=owned, buy=buy))
    if rank == "superseded" and cost.purchase is not None:
        notes.append(
            say(
                "no current price in the catalog: a newer generation has replaced the {gpu} (launched "
                "{year}), so its launch price of {price} says nothing about what it costs today",
                gpu=spec.name,
                year=spec.release_year or "?",
                price=_money(cost.purchase.usd),
            )
        )
    else:
        notes.extend(_price_note(cost, buy))
        if rank == "launch":
            notes.append(say("no current price in the catalog: ranked by its launch price (MSRP)"))
    if cost.breakeven_hours is not None:
        notes.append(
            say(
                "buying beats renting after {hours} hours of use ({months} months at {share})",
                hours=Num(cost.breakeven_hours),
                months=Num(cost.breakeven_months or 0, 1, group=False),
                share=Percent(prices.utilization),
            )
        )
    priced = cost.purchase is not None and rank in ("current", "launch")
    description: Text = (
        say("{buy} more × {gpu} ({count} in all, keeps yours)", buy=buy, gpu=spec.name, count=count)
        if owned
        else f"{count} × {spec.name}"
    )
    return Option(
        description_said=description,
        machine=machine,
        verdict=verdict,
        tokens_per_s=tps,
        purchase_usd=cost.purchase.usd * buy if cost.purchase and priced else None,
        rent_usd_hour=cost.rent_per_hour.usd * count if cost.rent_per_hour else None,
        notes_said=tuple(notes),
        kind="gpu",
        model_id=model.id,
        gpu_id=spec.id,
        count=count,
        ram_gib=machine.memory.total_bytes / GIB,
        cost=cost,
        quant=est.quant_name,
        owned=owned,
        price_standing=rank,
    )


def _cheapest_first(options: list[Option]) -> list[Option]:
    def key(o: Option) -> tuple[bool, bool, float, bool, float, float]:
        return (
            o.purchase_usd is None,
            o.price_standing != "current",  # a dated current price ranks before a launch price
            o.purchase_usd or 0.0,
            o.rent_usd_hour is None,
            o.rent_usd_hour or 0.0,
            -(o.tokens_per_s or 0.0),
        )

    ranked = sorted(options, key=key)
    kept = ranked[:MAX_OPTIONS]
    rentable = [o for o in ranked if o.rent_usd_hour is not None]
    if rentable and not any(o.rent_usd_hour is not None for o in kept):
        cheapest = min(rentable, key=lambda o: o.rent_usd_hour or 0.0)
        kept = [*kept[: MAX_OPTIONS - 1], cheapest]
    return kept


# -- training -------------------------------------------------------------------------------------


def training_options(
    model_id: str,
    machine: Machine,
    catalog: Catalog,
    *,
    workload: str = "full",
    context: int = 2048,
    prices: Prices = DEFAULT_PRICES,
) -> list[Option]:
    """What it takes to train ``model_id`` from ``machine``: RAM options first (the machine's GPUs and
    the smallest common RAM size that MegaTrain-style or ZeRO-Offload training fits in, ~12 bytes per
    parameter in RAM), then GPU options, cheapest first: the fewest of the machine's own GPU and of a
    few big catalog GPUs (:data:`TRAINING_GPUS`) that hold it, sharded ZeRO-3/FSDP-style when one
    GPU is not enough."""
    model = catalog_model(model_id, catalog)
    kind = _workload(workload)
    if kind == "inference":
        raise InputError("--workload", "training options need a training workload: lora, qlora or full")
    req = Request(context=context, workload=kind)
    est = estimate_memory(model, req, catalog)
    options: list[Option] = []

    ram = _ram_option(model, machine, req, catalog)
    if ram is not None:
        options.append(ram)

    ids = list(TRAINING_GPUS)
    own = [s for s in _specs(machine, catalog) if s is not None]
    if own and own[0].id not in ids:
        ids.insert(0, own[0].id)
    gpu_options = []
    for gpu_id in ids:
        spec = catalog.gpu(gpu_id)
        if spec is None or not spec.memory_gb:
            continue
        option = _sharded_option(model, est, spec, machine, catalog, prices=prices)
        if option is not None:
            gpu_options.append(option)
    options.extend(_cheapest_first(gpu_options))
    return options


def _ram_option(model: ModelInfo, machine: Machine, req: Request, catalog: Catalog) -> Option | None:
    if not machine.gpus or req.workload != "full":
        return None
    have = machine.memory.total_bytes / GIB
    for size in (have, *(s for s in RAM_SIZES_GIB if s > have)):
        trial = upgrade(machine, ram_gb=size)
        result = fit(model, trial, req, catalog, live=False, advise=False)
        if result.verdict == "does_not_fit":
            continue
        style = {"full": "MegaTrain-style", "optimizer": "ZeRO-Offload"}.get(
            result.placement.offload, "on the GPU"
        )
        gpus = _gpu_names(machine)
        more = size - have
        grow = f"+{more:g} GiB, " if more > 0 else "already installed, "
        notes: list[Text] = [
            result.reasons_said[0],
            "MegaTrain keeps the bf16 weights, their gradients at the step and fp32 Adam states in RAM: "
            f"{MEGATRAIN_HOST_BYTES} bytes per parameter "
            f"({MEGATRAIN_HOST_BYTES * model.arch.params_total / GIB:,.0f} GiB for this model)",
            "RAM price not in the catalog",
        ]
        if size > DESKTOP_RAM_LIMIT_GIB:
            notes.append(
                f"more than {DESKTOP_RAM_LIMIT_GIB} GiB needs a workstation or server board (desktop boards "
                f"take up to {DESKTOP_RAM_LIMIT_GIB} GiB)"
            )
        return Option(
            description_said=f"{size:,.0f} GiB RAM ({grow}{style}, keeps your {gpus})",
            machine=trial,
            verdict=result.verdict,
            tokens_per_s=result.speed.train_tokens_per_s,
            purchase_usd=None,
            rent_usd_hour=None,
            notes_said=tuple(notes),
            kind="ram",
            model_id=model.id,
            ram_gib=float(size),
            quant=result.estimate.quant_name,
        )
    return None


def _sharded_option(
    model: ModelInfo,
    est: MemoryEstimate,
    spec: GpuSpec,
    machine: Machine,
    catalog: Catalog,
    *,
    prices: Prices,
) -> Option | None:
    """The fewest ``spec`` GPUs that hold the run: one if ``fit`` places it, else ZeRO stage 3 (FSDP):
    weights, gradients and optimizer states split evenly, each GPU keeping its own activations."""
    single = upgrade(machine, gpus=[spec])
    result = _runs_on_gpus(est, single, catalog)
    if result is not None:
        return _gpu_option(
            model, est, spec, 1, single, tps=_tokens(result), prices=prices, newest=newest_years(catalog)
        )
    capacity = int(max(spec.memory_gb) * GIB * (1 - GPU_MARGIN))
    runtime = est.total("activations") + est.total("overhead")
    states = est.total_bytes - runtime
    room = capacity - runtime
    if room <= 0:
        return None
    count = max(2, math.ceil(states / room))
    if count > MAX_SHARDED_GPUS:
        return None
    trial = upgrade(machine, gpus=[spec] * count)
    per_gpu = states // count + runtime
    placement = Placement(
        (per_gpu, *(0 for _ in range(count - 1))), 0, model.arch.num_layers, model.arch.num_layers, "none"
    )
    one = estimate_speed(est, placement, single, catalog).train_tokens_per_s
    tps = one * count if one is not None else None
    extra = [
        f"sharded ZeRO-3/FSDP-style: {states / GIB:,.0f} GiB of weights, gradients and optimizer states over "
        f"{count} GPUs ({per_gpu / GIB:,.1f} GiB each with activations; {ZERO3_SOURCE})",
        "speed: one GPU's rate × the GPU count, communication not counted (an upper bound)",
    ]
    return _gpu_option(
        model, est, spec, count, trial, tps=tps, prices=prices, extra=extra, newest=newest_years(catalog)
    )
