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

from collections.abc import Sequence
from dataclasses import replace

from rigcheck.core.catalog import Catalog, GpuSpec
from rigcheck.core.estimate.cost import DEFAULT_PRICES, Prices
from rigcheck.core.estimate.fit import FitResult, fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.power import power_budget
from rigcheck.core.estimate.recommend import Prefer, display_quant, recommend, where_of
from rigcheck.core.estimate.upgrade_options import (
    DEFAULT_INFERENCE_QUANT,
    DESKTOP_RAM_LIMIT_GIB,
    MAX_OPTIONS,
    MAX_SHARDED_GPUS,
    RAM_SIZES_GIB,
    TRAINING_GPUS,
    ZERO3_SOURCE,
    _cost,
    buyable_gpus,
    cheapest_gpus_for,
    training_options,
)
from rigcheck.core.estimate.upgrade_records import (
    NODE_GPUS,
    POPULAR_MODELS,
    WORKLOADS,
    ModelChange,
    Option,
    Outcome,
    UpgradeReport,
    Verdict,
    _gpu_names,
    _money,
    _specs,
    _workload,
    catalog_model,
)
from rigcheck.core.machine import Machine
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.said import Joined, Num, Percent, Shown, Sig, Text, say
from rigcheck.core.verdict_words import Words, placement_words, speed_text, verdict_where


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


__all__ = [
    "DEFAULT_INFERENCE_QUANT",
    "DESKTOP_RAM_LIMIT_GIB",
    "MAX_OPTIONS",
    "MAX_SHARDED_GPUS",
    "NODE_GPUS",
    "POPULAR_MODELS",
    "RAM_SIZES_GIB",
    "TRAINING_GPUS",
    "WORKLOADS",
    "ZERO3_SOURCE",
    "ModelChange",
    "Option",
    "Outcome",
    "UpgradeReport",
    "Verdict",
    "buyable_gpus",
    "catalog_model",
    "cheapest_gpus_for",
    "compare",
    "outcome",
    "outcome_words",
    "training_options",
]
