"""An upgrade report as text people read (``rigcheck upgrade``) and as JSON (``--json``)."""

from __future__ import annotations

import copy
from dataclasses import fields, is_dataclass
from typing import Any

from rigcheck.core.estimate.cost import GpuCost, PriceFact
from rigcheck.core.estimate.power import PowerBudget
from rigcheck.core.estimate.upgrade import Option, Outcome, UpgradeReport, outcome_words
from rigcheck.core.machine import Machine
from rigcheck.core.report.tables import render
from rigcheck.core.units import fmt_bytes

#: up to this many models, each gets its placement (or why it does not fit) in words
DETAIL_MODELS = 3
_SHORT = {"fits": "fits", "fits_with_offload": "offload", "does_not_fit": "does not fit"}


# -- JSON -----------------------------------------------------------------------------------------


def _record(value: Any) -> Any:
    """``value`` as ``dataclasses.asdict`` gives it, with each said field (``notes_said``) in its place as
    its words under the plain name (``notes``), in the records nested in it too."""
    if is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in fields(value):
            name = f.name.removesuffix("_said")
            out[name] = getattr(value, name) if name != f.name else _record(getattr(value, name))
        return out
    if isinstance(value, list | tuple):
        return type(value)(_record(v) for v in value)
    if isinstance(value, dict):
        return {k: _record(v) for k, v in value.items()}
    return copy.deepcopy(value)


def option_json(option: Option) -> dict[str, Any]:
    data: dict[str, Any] = _record(option)
    data["machine"] = option.machine.to_dict()
    return data


def upgrade_json(report: UpgradeReport) -> dict[str, Any]:
    """The whole report: records as ``dataclasses.asdict``, machines as their snapshot dicts."""
    return {
        "before": report.before.to_dict(),
        "after": report.after.to_dict(),
        "workload": report.workload,
        "context": report.context,
        "models": [_record(m) for m in report.models],
        "power_before": _record(report.power_before),
        "power_after": _record(report.power_after),
        "costs": [_record(c) for c in report.costs],
        "purchase_usd": report.purchase_usd,
        "suggestions": list(report.suggestions),
        "alternatives": [option_json(o) for o in report.alternatives],
    }


# -- text -----------------------------------------------------------------------------------------


def _money(value: float | None) -> str:
    if value is None:
        return "?"
    return f"${value:,.0f}" if value >= 100 else f"${value:,.2f}"


def _gpus(machine: Machine) -> str:
    counts: dict[str, int] = {}
    for gpu in machine.gpus:
        counts[gpu.name] = counts.get(gpu.name, 0) + 1
    return " + ".join(f"{n} × {name}" if n > 1 else name for name, n in counts.items()) or "no GPU"


def _side(outcome: Outcome, workload: str) -> tuple[str, str, str]:
    said = outcome_words(outcome, workload)  # the words and the speed every surface shows
    tps = said.tokens_per_s
    return (
        said.short,
        outcome.quant or "",
        (f"{tps:,.0f}" if tps >= 10 else f"{tps:g}") if tps is not None else "",
    )


def _psu(budget: PowerBudget) -> str:
    psu = f"{budget.psu_watts:g} W PSU" if budget.psu_watts is not None else "PSU not given"
    draw = f"{budget.sustained_watts:.0f} W sustained, {budget.peak_watts:.0f} W peak"
    if not budget.complete:
        draw += " (known parts only)"
    headroom = f", headroom {budget.headroom_watts:+.0f} W" if budget.headroom_watts is not None else ""
    suggested = (
        f"; {budget.suggested_psu_watts:.0f} W would be ok" if budget.suggested_psu_watts is not None else ""
    )
    return f"{draw}; {psu}: {budget.verdict}{headroom}{suggested}"


def _fact(fact: PriceFact | None, unit: str = "") -> str:
    if fact is None:
        return "unknown (not in the catalog)"
    parts: list[str] = [fact.kind if fact.kind != "user" else "yours"]
    if fact.date:
        parts.append(fact.date)
    if fact.used:
        parts.append("used")
    if fact.range_usd is not None:
        parts.append(f"range {_money(fact.range_usd[0])}–{_money(fact.range_usd[1])}")
    return f"{_money(fact.usd)}{unit} ({', '.join(parts)}; source: {fact.source})"


def _cost_lines(cost: GpuCost) -> list[str]:
    lines = [
        f"  {cost.name}:",
        f"    purchase          {_fact(cost.purchase)}",
        f"    rent              {_fact(cost.rent_per_hour, '/h')}",
    ]

    def figure(label: str, value: float | None, text: str) -> None:
        lines.append(f"    {label:<17} {text if value is not None else 'unknown'}")

    figure(
        "$/TFLOP-hour",
        cost.usd_per_tflop_hour,
        f"${cost.usd_per_tflop_hour:.4f} (FP16 dense)" if cost.usd_per_tflop_hour is not None else "",
    )
    figure("$/GiB VRAM", cost.usd_per_gb_vram, f"{_money(cost.usd_per_gb_vram)}/GiB")
    figure(
        "electricity/year",
        cost.electricity_usd_per_year,
        f"{_money(cost.electricity_usd_per_year)} "
        f"({cost.power_watts or 0:.0f} W at {cost.prices.utilization:.0%} use, "
        f"${cost.prices.electricity_usd_per_kwh:.2f}/kWh)",
    )
    figure(
        "ownership",
        cost.ownership_usd_per_hour,
        f"{_money(cost.ownership_usd_per_hour)}/h of use over {cost.prices.years:g} years",
    )
    if cost.breakeven_hours is not None:
        lines.append(
            f"    break-even        {cost.breakeven_hours:,.0f} h of use "
            f"= {cost.breakeven_months or 0:.1f} months at {cost.prices.utilization:.0%} "
            "(buying beats renting after that)"
        )
    else:
        lines.append("    break-even        unknown (needs a purchase and a rent price)")
    lines += [f"    note: {n}" for n in cost.notes]
    return lines


def _alternatives(report: UpgradeReport) -> list[str]:
    lines: list[str] = []
    names = {m.model_id: m.name for m in report.models}
    purchase = report.purchase_usd
    seen: list[str] = []
    for option in report.alternatives:
        if option.model_id not in seen:
            seen.append(option.model_id)
    for model_id in seen:
        options = [o for o in report.alternatives if o.model_id == model_id]
        quant = options[0].quant if report.workload == "inference" and options[0].quant else ""
        what = "tokens/s" if report.workload == "inference" else "train tok/s"
        headers = ["GPUs", "buy", "rent/h", what]
        if purchase:
            headers.append(f"h of rent for {_money(purchase)}")
        rows = []
        for o in options:
            row = [
                o.description,
                _money(o.purchase_usd)
                + (" used" if o.cost and o.cost.purchase and o.cost.purchase.used else ""),
                _money(o.rent_usd_hour) if o.rent_usd_hour is not None else "?",
                f"{o.tokens_per_s:,.1f}" if o.tokens_per_s is not None else "?",
            ]
            if purchase:
                row.append(f"{purchase / o.rent_usd_hour:,.0f}" if o.rent_usd_hour else "")
            rows.append(row)
        at = f" at {quant}" if quant else ""
        lines += [
            "",
            f"Catalog GPUs that run {names.get(model_id, model_id)} entirely in GPU memory{at} "
            "(cheapest first; ? = not in the catalog):",
            *(f"  {line}" for line in render(headers, rows, right={1, 2, 3, 4}).splitlines()),
        ]
    return lines


def upgrade_text(report: UpgradeReport) -> str:
    before, after = report.before, report.after
    context = (
        f"context {report.context:,}" if report.context else "default context (8k or the model's maximum)"
    )
    lines = [
        f"Before: {_gpus(before)}, {fmt_bytes(before.memory.total_bytes)} RAM",
        f"After:  {_gpus(after)}, {fmt_bytes(after.memory.total_bytes)} RAM",
        f"Workload: {report.workload}, {context}",
        "",
    ]
    what = "tok/s" if report.workload == "inference" else "train tok/s"
    rows = []
    for change in report.models:
        b, a = _side(change.before, report.workload), _side(change.after, report.workload)
        note = "new" if change.newly_runnable else ""
        if change.better is not None and change.better.quant:
            note = ", ".join(n for n in (note, f"{change.better.quant} now possible") if n)
        rows.append([change.name, *b, *a, note])
    headers = ["model", "before", "format", what, "after", "format", what, ""]
    lines += render(headers, rows, right={3, 6}).splitlines()
    if len(report.models) <= DETAIL_MODELS:
        for change in report.models:
            lines += [
                "",
                f"{change.name}:",
                f"  before: {change.before.placement or _SHORT[change.before.verdict]}",
                f"  after:  {change.after.placement or _SHORT[change.after.verdict]}",
            ]
    lines += [
        "",
        "format: the recommended one (docs/recommendation.md); after keeps the format used before while "
        "it still runs, and says which better one the upgrade makes possible; "
        "new: runnable, or entirely on the GPUs, only after (listed first).",
        "",
        "Power:",
        f"  before: {_psu(report.power_before)}",
        f"  after:  {_psu(report.power_after)}",
    ]
    if report.costs:
        total = f" (in all {_money(report.purchase_usd)})" if report.purchase_usd else ""
        lines += ["", f"Costs of the new GPUs{total}:"]
        for cost in report.costs:
            lines += _cost_lines(cost)
    lines += _alternatives(report)
    if report.suggestions:
        lines += ["", "Suggestions:", *(f"  - {s}" for s in report.suggestions)]
    return "\n".join(lines)
