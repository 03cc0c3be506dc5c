"""What a GPU costs: per unit of compute, per GB, in electricity, to own, and when buying beats renting.

The method is the cost-per-TFLOP guide in ``shared/seeds/002_ab477cb36c5a1177.txt`` (an Italian article;
it names no site and no date). Its figures, with ``P`` the purchase price, ``r`` the hourly rent, ``W``
the GPU's power, ``u`` the utilisation, ``e`` the electricity price and ``c`` the cooling factor:

- cost per FP16 TFLOP-hour = ``r ÷ dense FP16 TFLOPS`` ("dividere il prezzo orario di noleggio cloud per
  il rating FP16 TFLOPS");
- price per GB of VRAM = ``P ÷ GB`` (the metric ``shared/seeds/000_15906b73c227beb0.txt`` names: "prezzo
  per GB di VRAM");
- electricity per year = ``W × u × 8760 h × e × (1 + c) ÷ 1000`` (its table "assume utilizzo medio al 60%
  e tariffa elettrica di $0,10/kWh");
- ownership per hour of use = ``(P + electricity per year × years) ÷ (years × 8760 × u)`` ("$/ora effettivo
  (proprietà su 3 anni)"; its H100 figure, ~$1.05/h, is this at u = 100% with its $0.02/h of cooling, plus
  a maintenance it does not quantify);
- break-even = ``P ÷ r`` hours of use ("25.000 / 3,15 = ~7.937 ore": the seed leaves electricity out, kept
  here as ``breakeven_hours_simple``) and, counting the electricity (and cooling) a used hour costs the
  owner, ``P ÷ (r - W × e × (1 + c) ÷ 1000)``; in months, hours ÷ (u × 730 h).

Prices are catalog data with a date and a source (``docs/catalog.md#prices``); the user may override any
of them, and every figure's formula comes back in words, with its numbers.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date as _date
from typing import Literal

from rigcheck.core.catalog import Confidence, GpuSpec
from rigcheck.core.errors import InputError
from rigcheck.core.said import Joined, Num, Said, Sig, Text, render_all, say

SEED_002 = "shared/seeds/002_ab477cb36c5a1177.txt"
SEED_000 = "shared/seeds/000_15906b73c227beb0.txt"
#: the seed's electricity table: "Assume utilizzo medio al 60% e tariffa elettrica di $0,10/kWh" (SEED_002)
SEED_UTILIZATION = 0.60
SEED_ELECTRICITY_USD_PER_KWH = 0.10
#: the seed's H100 (700 W): "elettricità ($0,07/ora), overhead di raffreddamento ($0,02/ora)" (SEED_002):
#: cooling costs 0.02 / 0.07 ≈ 29% of the GPU's own energy. A suggestion for ``Prices.cooling_factor``;
#: the default stays 0 (a desktop in a room has no separate cooling bill).
SEED_COOLING_FACTOR = 0.02 / 0.07
HOURS_PER_YEAR = 8760.0
#: a price this many months old or older gets a note (a choice of this module, not a cited figure: the
#: seed's prices are all "~" and GPU generations change "ogni 18-24 mesi", SEED_002)
STALE_AFTER_MONTHS = 6
USER_SOURCE = "entered by the user"

PriceKind = Literal["street", "launch", "cloud", "user"]


@dataclass(frozen=True)
class Prices:
    """The assumptions every figure uses; all editable by the user."""

    #: the seed's default, "tariffa elettrica di $0,10/kWh" (SEED_002); the user types their own
    electricity_usd_per_kwh: float = SEED_ELECTRICITY_USD_PER_KWH
    #: the seed's default, "utilizzo medio al 60%" (SEED_002): the share of all hours the GPU works
    utilization: float = SEED_UTILIZATION
    #: extra energy for cooling as a fraction of GPU energy (0 = none); SEED_COOLING_FACTOR is the seed's
    cooling_factor: float = 0.0
    #: the ownership period: the seed's "proprietà su 3 anni"
    years: float = 3.0
    hours_per_month: float = HOURS_PER_YEAR / 12

    def __post_init__(self) -> None:
        checks = (
            ("electricity_usd_per_kwh", self.electricity_usd_per_kwh >= 0, "must not be negative"),
            ("utilization", 0 < self.utilization <= 1, "must be above 0 and at most 1 (100%)"),
            ("cooling_factor", self.cooling_factor >= 0, "must not be negative"),
            ("years", self.years > 0, "must be above 0"),
            ("hours_per_month", 0 < self.hours_per_month <= 744, "must be above 0 and at most 744 (31 days)"),
        )
        for name, ok, problem in checks:
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and ok):
                raise InputError("prices", f"{name}: {value!r} {problem}")


DEFAULT_PRICES = Prices()


@dataclass(frozen=True)
class PriceFact:
    usd: float
    #: "YYYY-MM" or "YYYY-MM-DD" when the price was seen/published (or recorded, for an undated source)
    date: str | None
    #: URL or "shared/seeds/<file>" (+ the site the seed quotes), or USER_SOURCE
    source: str
    overridden: bool = False
    #: whole months from ``date`` to the day the cost was computed
    age_months: int | None = None
    #: (low, high) when the source gives a range; ``usd`` is then its midpoint
    range_usd: tuple[float, float] | None = None
    #: a used card's price
    used: bool = False
    #: "primary", "secondary" or "uncertain" (the catalog's field confidence); None for the user's own
    confidence: Confidence | None = None
    #: "street" (a market price), "launch" (the MSRP), "cloud" (hourly rent) or "user"
    kind: PriceKind = "street"


@dataclass(frozen=True)
class GpuCost:
    gpu_id: str
    name: str
    purchase: PriceFact | None
    rent_per_hour: PriceFact | None
    fp16_tflops: float | None
    power_watts: float | None
    #: rent_per_hour / fp16_tflops (dense)
    usd_per_tflop_hour: float | None
    #: purchase / max(memory_gb)
    usd_per_gb_vram: float | None
    #: power × utilization × 8760 × price × (1 + cooling_factor) / 1000
    electricity_usd_per_year: float | None
    #: (purchase + electricity × years) / (years × 8760 × utilization): per hour actually used
    ownership_usd_per_hour: float | None
    #: hours of use after which buying beats renting: purchase / (rent - electricity cost per used hour)
    breakeven_hours: float | None
    #: breakeven_hours / (utilization × hours_per_month)
    breakeven_months: float | None
    #: each figure's formula with its numbers, as said: :attr:`formulas` in words
    formulas_said: tuple[Text, ...]
    #: missing prices, old prices ("price from 2024-03, 20 months old"), used or ranged prices, as said:
    #: :attr:`notes` in words
    notes_said: tuple[Text, ...]
    #: what one used hour costs the owner in electricity (and cooling): power × price × (1 + cooling) / 1000
    electricity_usd_per_hour: float | None = None
    #: the seed's own break-even, electricity left out: purchase / rent
    breakeven_hours_simple: float | None = None
    breakeven_months_simple: float | None = None
    #: the assumptions used
    prices: Prices = DEFAULT_PRICES

    @property
    def formulas(self) -> tuple[str, ...]:
        return render_all(self.formulas_said)

    @property
    def notes(self) -> tuple[str, ...]:
        return render_all(self.notes_said)


# -- prices ---------------------------------------------------------------------------------------

_DATE = re.compile(r"(\d{4})-(\d{2})(?:-(\d{2}))?")


def _parse(text: str) -> tuple[int, int, int | None] | None:
    match = _DATE.fullmatch(text.strip())
    if not match or not 1 <= int(match.group(2)) <= 12:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3)) if match.group(3) else None


def price_age_months(date: str | None, today: str) -> int | None:
    """Whole months from ``date`` ("YYYY-MM" or "YYYY-MM-DD") to ``today``; None when either is unknown.

    With both days known, a month counts only once its day is reached ("2025-01-31" → "2025-02-28" is 0);
    a date in the future is 0 months old.
    """
    if date is None:
        return None
    seen, now = _parse(date), _parse(today)
    if seen is None or now is None:
        return None
    months = (now[0] - seen[0]) * 12 + now[1] - seen[1]
    if seen[2] is not None and now[2] is not None and now[2] < seen[2]:
        months -= 1
    return max(months, 0)


def _checked_override(name: str, value: float | None) -> float | None:
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise InputError("prices", f"{name}: {value!r} must be a number, not negative")
    return value


def _purchase(spec: GpuSpec, override: float | None, today: str) -> PriceFact | None:
    if override is not None:
        return PriceFact(override, today, USER_SOURCE, overridden=True, age_months=0, kind="user")
    if spec.street_price_usd is not None:
        low, high = spec.street_price_usd, spec.street_price_high_usd
        ranged = high is not None and high != low
        return PriceFact(
            (low + high) / 2 if ranged and high is not None else low,
            spec.street_price_date,
            spec.street_price_source or spec.source,
            age_months=price_age_months(spec.street_price_date, today),
            range_usd=(low, high) if ranged and high is not None else None,
            used=spec.street_price_used,
            confidence=spec.field_confidence.get("street_price_usd", spec.confidence),
            kind="street",
        )
    if spec.launch_price_usd is not None:
        return PriceFact(
            spec.launch_price_usd,
            None,
            spec.source,  # the entry's own source: where its specifications (and MSRP) come from
            confidence=spec.field_confidence.get("launch_price_usd", spec.confidence),
            kind="launch",
        )
    return None


def _rent(spec: GpuSpec, override: float | None, today: str) -> PriceFact | None:
    if override is not None:
        return PriceFact(override, today, USER_SOURCE, overridden=True, age_months=0, kind="user")
    if spec.cloud_price_usd_hour is None:
        return None
    return PriceFact(
        spec.cloud_price_usd_hour,
        spec.cloud_price_date,
        spec.cloud_price_source or spec.source,
        age_months=price_age_months(spec.cloud_price_date, today),
        confidence=spec.field_confidence.get("cloud_price_usd_hour", spec.confidence),
        kind="cloud",
    )


# -- formatting -----------------------------------------------------------------------------------


def _usd(value: float) -> Joined:
    if abs(value) >= 1000:
        return Joined("", ("$", Num(value)))
    if abs(value) >= 1 or round(value, 2) == value:
        return Joined("", ("$", Num(value, 2)))
    return Joined("", ("$", Sig(value, 3)))


def _num(value: float) -> Num | Sig:
    return Num(value) if value == int(value) else Sig(value, 4)


def _pct(value: float) -> Joined:
    return Joined("", (Sig(value * 100, 4), "%"))


def _price_notes(name: str, fact: PriceFact | None, spec: GpuSpec) -> list[Said]:
    label = say(name)
    if fact is None:
        return [
            say(
                "No {label} in the catalog for {gpu}: enter one to see the figures that need it.",
                label=label,
                gpu=spec.name,
            )
        ]
    notes: list[Said] = []
    if fact.kind == "launch":
        year = f", {spec.release_year}" if spec.release_year else ""
        notes.append(
            say(
                "The {label} is the launch price (MSRP{year}), {price}; today's price may differ.",
                label=label,
                year=year,
                price=_usd(fact.usd),
            )
        )
    if fact.range_usd is not None:
        low, high = fact.range_usd
        notes.append(
            say(
                "The source gives {low}–{high} for the {label}; the midpoint is used.",
                low=_usd(low),
                high=_usd(high),
                label=label,
            )
        )
    if fact.used:
        notes.append(say("The {label} is for a used card.", label=label))
    if fact.confidence == "uncertain":
        notes.append(say("The {label} is uncertain: see the catalog entry's notes.", label=label))
    if not fact.overridden:
        if fact.date is None and fact.kind != "launch":
            notes.append(say("The {label} has no date.", label=label))
        elif fact.age_months is not None and fact.age_months >= STALE_AFTER_MONTHS:
            notes.append(
                say(
                    "The {label} is from {date}, {months} months old.",
                    label=label,
                    date=fact.date,
                    months=fact.age_months,
                )
            )
    return notes


# -- the model ------------------------------------------------------------------------------------


def gpu_cost(
    spec: GpuSpec,
    prices: Prices = DEFAULT_PRICES,
    *,
    purchase_usd: float | None = None,
    rent_usd_hour: float | None = None,
    today: str | None = None,
    power_watts: float | None = None,
) -> GpuCost:
    """Every cost figure for one GPU; a figure whose inputs are unknown is None, with a note saying why.

    ``purchase_usd`` / ``rent_usd_hour`` override the catalog's prices (``overridden`` is then set);
    ``power_watts`` overrides the catalog's ``tdp_watts`` (e.g. the driver's power limit); ``today``
    ("YYYY-MM-DD", default: the system date) dates overrides and ages the catalog's prices.
    """
    today = today or _date.today().isoformat()
    purchase = _purchase(spec, _checked_override("purchase_usd", purchase_usd), today)
    rent = _rent(spec, _checked_override("rent_usd_hour", rent_usd_hour), today)
    power = _checked_override("power_watts", power_watts)
    if power is None:
        power = spec.tdp_watts
    tflops = spec.fp16_tflops
    memory = max(spec.memory_gb) if spec.memory_gb else None
    u, e, c, years = prices.utilization, prices.electricity_usd_per_kwh, prices.cooling_factor, prices.years
    hours_used_per_month = u * prices.hours_per_month
    cooling: Text = Joined("", (" ", say("× (1 + {share} cooling)", share=_pct(c)))) if c else ""
    formulas: list[Said] = []
    notes = _price_notes("purchase price", purchase, spec) + _price_notes("cloud price", rent, spec)

    per_tflop = None
    if rent is not None and tflops:
        per_tflop = rent.usd / tflops
        formulas.append(
            say(
                "Cost per FP16 TFLOP-hour = {rent}/h ÷ {tflops} TFLOPS (dense FP16) = {cost}",
                rent=_usd(rent.usd),
                tflops=_num(tflops),
                cost=_usd(per_tflop),
            )
        )
    elif rent is not None:
        notes.append(say("{gpu}'s dense FP16 TFLOPS are unknown: no cost per TFLOP-hour.", gpu=spec.name))

    per_gb = None
    if purchase is not None and memory:
        per_gb = purchase.usd / memory
        formulas.append(
            say(
                "Price per GiB of VRAM = {price} ÷ {memory} GiB = {cost}/GiB",
                price=_usd(purchase.usd),
                memory=_num(memory),
                cost=_usd(per_gb),
            )
        )

    per_year = per_hour = None
    if power is not None:
        per_hour = power * e * (1 + c) / 1000
        per_year = per_hour * u * HOURS_PER_YEAR
        formulas.append(
            say(
                "Electricity per year = {power} W × {share} × {hours} h × {price}/kWh{cooling} ÷ "
                "1000 = {cost}",
                power=_num(power),
                share=_pct(u),
                hours=Num(HOURS_PER_YEAR),
                price=_usd(e),
                cooling=cooling,
                cost=_usd(per_year),
            )
        )
    else:
        notes.append(
            say(
                "{gpu}'s power is unknown: no electricity, ownership or full break-even figures.",
                gpu=spec.name,
            )
        )

    ownership = None
    if purchase is not None and per_year is not None:
        hours = years * HOURS_PER_YEAR * u
        ownership = (purchase.usd + per_year * years) / hours
        formulas.append(
            say(
                "Ownership per hour of use over {years} years = ({price} + {years} × {per_year}) "
                "÷ ({years} × {hours} h × {share}) = {cost}/h",
                years=_num(years),
                price=_usd(purchase.usd),
                per_year=_usd(per_year),
                hours=Num(HOURS_PER_YEAR),
                share=_pct(u),
                cost=_usd(ownership),
            )
        )

    simple_hours = simple_months = None
    breakeven_hours = breakeven_months = None
    if purchase is not None and rent is not None and rent.usd > 0:
        simple_hours = purchase.usd / rent.usd
        simple_months = simple_hours / hours_used_per_month
        formulas.append(
            say(
                "Break-even, rent only = {price} ÷ {rent}/h = {hours} h of use = {months} months at {share} "
                "({per_month} h a month)",
                price=_usd(purchase.usd),
                rent=_usd(rent.usd),
                hours=_num(round(simple_hours)),
                months=Num(simple_months, 1, group=False),
                share=_pct(u),
                per_month=_num(hours_used_per_month),
            )
        )
        if per_hour is not None and rent.usd > per_hour:
            breakeven_hours = purchase.usd / (rent.usd - per_hour)
            breakeven_months = breakeven_hours / hours_used_per_month
            formulas.append(
                say(
                    "Break-even with electricity = {price} ÷ ({rent}/h - {per_hour}/h electricity "
                    "and cooling) "
                    "= {hours} h of use = {months} months at {share}"
                    if c
                    else "Break-even with electricity = {price} ÷ ({rent}/h - {per_hour}/h electricity) "
                    "= {hours} h of use = {months} months at {share}",
                    price=_usd(purchase.usd),
                    rent=_usd(rent.usd),
                    per_hour=_usd(per_hour),
                    hours=_num(round(breakeven_hours)),
                    months=Num(breakeven_months, 1, group=False),
                    share=_pct(u),
                )
            )
        elif per_hour is not None:
            notes.append(
                say(
                    "Renting at {rent}/h costs no more than the electricity of an owned {gpu} "
                    "({per_hour}/h): "
                    "buying never breaks even.",
                    rent=_usd(rent.usd),
                    gpu=spec.name,
                    per_hour=_usd(per_hour),
                )
            )

    return GpuCost(
        gpu_id=spec.id,
        name=spec.name,
        purchase=purchase,
        rent_per_hour=rent,
        fp16_tflops=tflops,
        power_watts=power,
        usd_per_tflop_hour=per_tflop,
        usd_per_gb_vram=per_gb,
        electricity_usd_per_year=per_year,
        ownership_usd_per_hour=ownership,
        breakeven_hours=breakeven_hours,
        breakeven_months=breakeven_months,
        formulas_said=tuple(formulas),
        notes_said=tuple(notes),
        electricity_usd_per_hour=per_hour,
        breakeven_hours_simple=simple_hours,
        breakeven_months_simple=simple_months,
        prices=prices,
    )


def cumulative(
    cost: GpuCost, months: int, prices: Prices = DEFAULT_PRICES, count: int = 1
) -> tuple[list[float], list[float], list[float]]:
    """Month by month (0..months), what ``count`` GPUs cost in USD, rented and owned.

    Rent: ``count × rent × utilization × hours_per_month × month``. Own: ``count × (purchase +
    electricity per used hour × utilization × hours_per_month × month)`` (the purchase at month 0). A
    series whose prices are unknown (no rent; no purchase or no power) is an empty list.
    """
    if months < 0 or count < 1:
        raise InputError("prices", f"months {months!r} and count {count!r}: need months ≥ 0 and count ≥ 1")
    axis = [float(m) for m in range(months + 1)]
    hours = prices.utilization * prices.hours_per_month
    rent: list[float] = []
    own: list[float] = []
    if cost.rent_per_hour is not None:
        rent = [count * cost.rent_per_hour.usd * hours * m for m in axis]
    if cost.purchase is not None and cost.power_watts is not None:
        per_hour = cost.power_watts * prices.electricity_usd_per_kwh * (1 + prices.cooling_factor) / 1000
        own = [count * (cost.purchase.usd + per_hour * hours * m) for m in axis]
    return axis, rent, own
