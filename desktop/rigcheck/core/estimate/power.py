"""The PSU budget: what the machine may draw, continuously and in spikes, against the PSU it has.

Each GPU counts at its power limit (read from the driver, else the catalog's board power) and, for the
peak, times its architecture's transient factor (``[[power_factor]]`` in the catalog: the short spikes,
or "power excursions", that trip PSUs); the CPU and the rest of the platform count at cited class
figures, labelled estimates. The totals are compared with the PSU the user entered and with the
vendor-recommended PSU of the GPUs.

Verdict rule (``psu`` = the PSU's rated continuous wattage):

- ``unknown``: no PSU entered, or a part's power (a GPU's limit or transient factor, the CPU) is
  unknown, unless the known sustained load alone already exceeds the PSU (then ``insufficient``).
- ``insufficient``: ``sustained > psu`` (the rating is what a PSU delivers continuously), or
  ``peak > psu × 1.8``: beyond even the ATX 3.0 excursion tolerance for 1 ms spikes.
- ``tight``: it runs, with a caveat: ``peak > psu`` (only a PSU built to ATX 3.x rides that out; ATX 2.x
  set no excursion requirement and such a unit may shut down), or ``sustained > psu / 1.2`` (less than the
  ~20% headroom PSUs are sized with), or ``psu`` is below the GPU vendor's recommended PSU.
- ``ok``: none of the above.

Live power readings (the monitor) are compared with the same ``sustained_watts`` / ``psu_watts``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from rigcheck.core.catalog import Catalog
from rigcheck.core.machine import GPU, Machine
from rigcheck.core.said import Joined, Num, Percent, Said, Shown, Sig, Text, render, render_all, say

Provenance = Literal["nvml", "catalog", "estimate"]
PowerVerdict = Literal["ok", "tight", "insufficient", "unknown"]

#: ATX 3.0 requires PSUs with the 12VHPWR connector to carry 200% of their rating for 100 µs, 180% for
#: 1 ms, 160% for 10 ms and 120% for 100 ms (Intel ATX 3.0 design guide as reported by
#: https://hothardware.com/news/psu-manufs-can-skirt-atx-30-tolerance-testing ; secondary). The transient
#: factors describe spikes of about 1 ms and shorter, so a peak beyond 180% of the rating is too much even
#: for an ATX 3.0 unit; ATX 2.x set no excursion requirement at all
#: (https://www.slashgear.com/1902896/rtx-5090-how-much-power-can-pull-nvidia-geforce-gpu/).
ATX3_EXCURSION_1MS = 1.8
ATX3_SOURCE = "https://hothardware.com/news/psu-manufs-can-skirt-atx-30-tolerance-testing"
#: PSUs are sized "roughly 20% more power than the system would natively utilize"; they are most efficient
#: at 60–80% load (https://www.gamersnexus.net/dictionary/6-psu/46-maximum-power-watts ; secondary)
SUSTAINED_HEADROOM = 1.2
HEADROOM_SOURCE = "https://www.gamersnexus.net/dictionary/6-psu/46-maximum-power-watts"
#: Intel's PSU sizing example: a 300 W GPU on an ATX 3.0 PSU of 750 W "with 300 watts for the CPU and
#: another 150 watts for the rest of the hardware" (Intel's Stephen Eastman to PCWorld, reported by
#: TweakTown; secondary). The 150 W is the platform base load here; the 300 W the CPU figure when the
#: CPU's class is not recognised.
INTEL_SIZING_SOURCE = "https://www.tweaktown.com/news/85717/pcie-5-0-gpus-can-have-power-excursions-use-up-to-1800w-of/index.html"
PLATFORM_WATTS = 150.0
GENERIC_CPU_WATTS = 300.0
#: a desktop CPU (Core i3–i9, Core Ultra, Ryzen): Intel's Core i9-13900K, the top mainstream desktop part,
#: is "rated for a max turbo power of 253 W, with a base power of 125 W" (Intel's ratings quoted by the
#: review at DESKTOP_CPU_SOURCE; secondary). Base power counts as sustained, turbo power as peak;
#: smaller CPUs draw less, so this errs high.
DESKTOP_CPU_SUSTAINED = 125.0
DESKTOP_CPU_PEAK = 253.0
DESKTOP_CPU_SOURCE = "https://www.news9live.com/technology/review/intel-core-i9-13900k-review-brute-forcing-its-way-to-the-top-217581/amp"
#: the PSU sizes offered in advice, watts (common retail steps)
_PSU_STEP = 50

_APPLE = re.compile(r"\bapple\b", re.IGNORECASE)
#: "Mobile", "Laptop", or a model number with a mobile suffix: i7-12700H, Ultra 7 155H, Ryzen 9 7945HX
_LAPTOP = re.compile(r"\b(?:mobile|laptop)\b|\b\d{3,5}(?:h|hx|hs|hk|u|p)\b", re.IGNORECASE)
_DESKTOP = re.compile(
    r"\bcore(?:\(tm\))?\s*(?:i[3579]|ultra\s*[3579])\b|\bryzen(?:\(tm\))?\s*[3579]\b", re.IGNORECASE
)
_HEDT_SERVER = re.compile(r"\b(?:xeon|epyc|threadripper)\b", re.IGNORECASE)


@dataclass(frozen=True)
class PowerItem:
    #: "GPU 0 GeForce RTX 4090", "CPU", "platform (board, RAM, drives, fans)", as said: :attr:`name` in words
    name_said: Text
    #: what it may draw continuously (a GPU's power limit); 0 when unknown (``sustained_known``)
    sustained_watts: float
    #: with transient spikes (sustained × factor); when the factor is unknown, the sustained figure, as a
    #: lower bound (``peak_known`` is then False)
    peak_watts: float
    provenance: Provenance
    #: e.g. "450 W limit × 1.2 transient factor (Ada Lovelace: …)", as said: :attr:`formula` in words
    formula_said: Text
    #: where the factor/figure comes from (URLs, with the confidence where it is not the vendor's own), as
    #: said: :attr:`source` in words
    source_said: Text
    #: the transient factor applied, for GPUs
    factor: float | None = None
    #: the transient factor's confidence ("primary", "secondary", "uncertain"), for GPUs
    factor_confidence: str | None = None
    sustained_known: bool = True
    peak_known: bool = True

    @property
    def name(self) -> str:
        return render(self.name_said)

    @property
    def formula(self) -> str:
        return render(self.formula_said)

    @property
    def source(self) -> str:
        return render(self.source_said)


@dataclass(frozen=True)
class PowerBudget:
    items: tuple[PowerItem, ...]
    #: sums over the items; with a part unknown (``complete`` False) they are lower bounds
    sustained_watts: float
    peak_watts: float
    #: what the user entered (machine.psu.watts), or the override
    psu_watts: float | None
    #: the largest vendor-recommended PSU among the GPUs (catalog), if published
    recommended_psu_watts: float | None
    verdict: PowerVerdict
    #: psu minus peak (negative when the peak exceeds the rating)
    headroom_watts: float | None
    #: plain sentences with numbers, as said: :attr:`reasons` and :attr:`advice` in words
    reasons_said: tuple[Text, ...]
    advice_said: tuple[Text, ...]
    #: the PSU size this budget calls "ok" (peak covered, 20% sustained headroom, vendor recommendation met)
    suggested_psu_watts: float | None = None
    #: every part's power is known
    complete: bool = True

    @property
    def reasons(self) -> tuple[str, ...]:
        return render_all(self.reasons_said)

    @property
    def advice(self) -> tuple[str, ...]:
        return render_all(self.advice_said)


# -- items ----------------------------------------------------------------------------------------


def _from_catalog(gpu: GPU) -> bool:
    """A GPU the what-if simulator built from the catalog: its "limit" is the catalog's figure."""
    return (gpu.source or "").startswith("catalog")


def _gpu_item(position: int, gpu: GPU, catalog: Catalog) -> tuple[PowerItem, Text | None, float | None]:
    """The GPU's item, a reason when something is unknown, and its vendor-recommended PSU."""
    index = gpu.index if gpu.index is not None else position
    name = f"GPU {index} {gpu.name}"
    spec = catalog.spec_for(gpu)
    recommended = spec.psu_recommended_watts if spec else None
    limit: float | None
    provenance: Provenance
    where: Text
    if gpu.power_limit_watts is not None and not _from_catalog(gpu):
        limit, provenance = gpu.power_limit_watts, "nvml"
        where = say("power limit read from the driver ({source})", source=gpu.source or "probe")
    elif gpu.power_limit_watts is not None or (spec is not None and spec.tdp_watts is not None):
        limit = (
            gpu.power_limit_watts if gpu.power_limit_watts is not None else spec.tdp_watts if spec else None
        )
        provenance = "catalog"
        if spec is not None:
            conf = spec.field_confidence.get("tdp_watts", spec.confidence)
            where = say(
                "catalog board power of {id} ({source}; {confidence})",
                id=spec.id,
                source=spec.source,
                confidence=conf,
            )
        else:
            where = say("catalog board power ({source})", source=gpu.source)
    else:
        limit, provenance, where = None, "catalog", ""
    if limit is None:
        why = (
            say(
                "{name}: its power limit is unknown (the driver did not report one and the catalog entry "
                "{id} has no board power)",
                name=name,
                id=spec.id,
            )
            if spec
            else say(
                "{name}: its power limit is unknown (the driver did not report one and it matches "
                "no catalog entry)",
                name=name,
            )
        )
        item = PowerItem(
            name, 0.0, 0.0, "catalog", say("power unknown"), "—", sustained_known=False, peak_known=False
        )
        return item, why, recommended
    factor = catalog.power_factor(spec) if spec else None
    if factor is None:
        arch: Text = spec.architecture if spec and spec.architecture else say("its architecture")
        segment = f" {spec.segment}" if spec and spec.segment else ""
        why = say(
            "{name}: no measured transient factor for {kind} GPUs, so its spikes above the {limit} "
            "W limit are unknown",
            name=name,
            kind=Joined("", (arch, segment)),
            limit=Sig(limit, 6),
        )
        formula = say("{limit} W limit; transient factor unknown, spikes not counted", limit=Sig(limit, 6))
        item = PowerItem(name, limit, limit, provenance, formula, where, peak_known=False)
        return item, why, recommended
    peak = limit * factor.factor
    formula = (
        say(
            "{limit} W limit × {factor} transient factor ({architecture}: {measured})",
            limit=Sig(limit, 6),
            factor=Sig(factor.factor, 6),
            architecture=factor.architecture,
            measured=factor.measured,
        )
        if factor.measured
        else say(
            "{limit} W limit × {factor} transient factor ({architecture})",
            limit=Sig(limit, 6),
            factor=Sig(factor.factor, 6),
            architecture=factor.architecture,
        )
    )
    source = say(
        "{where}; factor: {source} ({confidence})",
        where=where,
        source=factor.source,
        confidence=factor.confidence,
    )
    item = PowerItem(name, limit, peak, provenance, formula, source, factor.factor, factor.confidence)
    return item, None, recommended


def cpu_item(model: str | None) -> tuple[PowerItem, Text | None]:
    """The CPU's class estimate by its model string, and a reason when its power is unknown."""
    label: Text = model or say("model unknown")
    if model and _APPLE.search(model):
        why = say(
            "CPU: Apple silicon is one chip with the GPU behind a built-in power supply; no per-part power "
            "figure is catalogued, so no budget can be drawn"
        )
        formula = say("{cpu}: Apple silicon, power unknown", cpu=label)
        return PowerItem(
            "CPU", 0.0, 0.0, "estimate", formula, "—", sustained_known=False, peak_known=False
        ), why
    if model and _LAPTOP.search(model):
        why = say(
            "CPU: a laptop processor runs from its power adapter, not a desktop PSU; no class figure applies"
        )
        formula = say("{cpu}: laptop class, power unknown", cpu=label)
        return PowerItem(
            "CPU", 0.0, 0.0, "estimate", formula, "—", sustained_known=False, peak_known=False
        ), why
    if model and _DESKTOP.search(model) and not _HEDT_SERVER.search(model):
        formula = say(
            "{cpu}: desktop class, {sustained} W sustained (base power) and {peak} W peak (max turbo power) "
            "of a Core i9-13900K, the top mainstream part",
            cpu=label,
            sustained=Sig(DESKTOP_CPU_SUSTAINED, 6),
            peak=Sig(DESKTOP_CPU_PEAK, 6),
        )
        source = say("{source} (secondary; estimate)", source=DESKTOP_CPU_SOURCE)
        return PowerItem("CPU", DESKTOP_CPU_SUSTAINED, DESKTOP_CPU_PEAK, "estimate", formula, source), None
    formula = (
        say(
            "{cpu}: workstation/server class, {watts} W as in Intel's PSU sizing example; "
            "high-core-count parts may draw more",
            cpu=label,
            watts=Sig(GENERIC_CPU_WATTS, 6),
        )
        if model and _HEDT_SERVER.search(model)
        else say(
            "{cpu}: class not recognised, {watts} W as in Intel's PSU sizing example",
            cpu=label,
            watts=Sig(GENERIC_CPU_WATTS, 6),
        )
    )
    source = say("{source} (secondary; estimate)", source=INTEL_SIZING_SOURCE)
    return PowerItem("CPU", GENERIC_CPU_WATTS, GENERIC_CPU_WATTS, "estimate", formula, source), None


def platform_item() -> PowerItem:
    return PowerItem(
        say("platform (board, RAM, drives, fans)"),
        PLATFORM_WATTS,
        PLATFORM_WATTS,
        "estimate",
        say(
            "{watts} W for the rest of the hardware, as in Intel's PSU sizing example",
            watts=Sig(PLATFORM_WATTS, 6),
        ),
        say("{source} (secondary; estimate)", source=INTEL_SIZING_SOURCE),
    )


# -- the budget -----------------------------------------------------------------------------------


def _w(watts: float) -> Num:
    """Whole watts, ungrouped as the sentences always printed them."""
    return Num(watts, group=False)


def _bracket_key(item: PowerItem) -> str:
    """The parenthesis of a GPU item's formula in English, "(Ada Lovelace: …)": its factor's words."""
    formula = item.formula_said
    values = dict(formula.values) if isinstance(formula, Said) else {}
    architecture, measured = values.get("architecture", ""), values.get("measured")
    return f"({architecture}: {measured})" if measured else f"({architecture})"


def _bracketed(formula: Text) -> str:
    """What the parenthesis of ``formula`` says, in words: "Ada Lovelace: …"."""
    text = render(formula)
    return text[text.index(" (") + 1 :].strip("()") if " (" in text else text


def _round_up(watts: float) -> float:
    return float(math.ceil(watts / _PSU_STEP) * _PSU_STEP)


def power_budget(machine: Machine, catalog: Catalog, *, psu_watts: float | None = None) -> PowerBudget:
    """The machine's power budget against its PSU (``psu_watts`` overrides ``machine.psu.watts``).

    See the module docstring for the verdict rule and where each figure comes from.
    """
    psu = psu_watts if psu_watts is not None else machine.psu.watts
    items: list[PowerItem] = []
    unknown: list[Text] = []
    recommended: float | None = None
    recommended_by = ""
    gpus: list[PowerItem] = []
    for position, gpu in enumerate(machine.gpus):
        item, why, rec = _gpu_item(position, gpu, catalog)
        items.append(item)
        gpus.append(item)
        if why:
            unknown.append(why)
        if rec is not None and (recommended is None or rec > recommended):
            recommended, recommended_by = rec, gpu.name
    cpu, why = cpu_item(machine.cpu.model)
    items.append(cpu)
    if why:
        unknown.append(why)
    items.append(platform_item())

    sustained = sum(i.sustained_watts for i in items)
    peak = sum(i.peak_watts for i in items)
    complete = not unknown
    reasons: list[Text] = []
    advice: list[Text] = []
    suggested = None
    if complete:
        suggested = _round_up(max(peak, sustained * SUSTAINED_HEADROOM, recommended or 0.0))
    if complete:
        reasons.append(
            say(
                "Estimated draw: {sustained} W sustained, {peak} W in transient spikes "
                "({gpus}; CPU and platform are estimates).",
                sustained=_w(sustained),
                peak=_w(peak),
                gpus=Joined(", ", tuple(Joined("", (i.name_said, " ", _w(i.peak_watts), " W")) for i in gpus))
                if gpus
                else say("no GPU"),
            )
        )
    else:
        reasons.append(
            say(
                "Known parts alone: {sustained} W sustained, {peak} W with spikes (lower bounds).",
                sustained=_w(sustained),
                peak=_w(peak),
            )
        )
    reasons.extend(unknown)
    # the factor's parenthesis in the formula, "450 W limit × 1.2 transient factor (Ada Lovelace: …)",
    # once per factor, in the order of its English words
    shaky = {_bracket_key(i): i.formula_said for i in gpus if i.factor_confidence == "uncertain"}
    reasons.extend(
        say("An uncertain transient factor is used: {what}.", what=Shown(_bracketed, shaky[key]))
        for key in sorted(shaky)
    )

    verdict: PowerVerdict
    if psu is None:
        verdict = "unknown"
        reasons.append(say("No PSU wattage entered."))
        advice.append(
            say(
                "Enter your PSU's rated wattage (printed on its label) to check it against the "
                "estimated {peak} W peak.",
                peak=_w(peak),
            )
            if complete
            else say(
                "Enter your PSU's rated wattage (printed on its label) to check it against the "
                "estimated load."
            )
        )
        if suggested is not None:
            advice.append(say("For this machine a {watts} W PSU or larger would be ok.", watts=_w(suggested)))
    elif sustained > psu:
        verdict = "insufficient"
        reasons.append(
            say(
                "The sustained load of {sustained} W exceeds the {psu} W PSU: a PSU's rating is what it "
                "delivers continuously.",
                sustained=_w(sustained),
                psu=Sig(psu, 6),
            )
            if complete
            else say(
                "The sustained load of {sustained} W (known parts alone) exceeds the {psu} W PSU: a PSU's "
                "rating is what it delivers continuously.",
                sustained=_w(sustained),
                psu=Sig(psu, 6),
            )
        )
    elif not complete:
        verdict = "unknown"
    elif peak > psu * ATX3_EXCURSION_1MS:
        verdict = "insufficient"
        reasons.append(
            say(
                "Spikes of {peak} W are {share} of the {psu} W PSU, beyond even the ATX 3.0 tolerance of "
                "{tolerance} for 1 ms ({source}).",
                peak=_w(peak),
                share=Percent(peak / psu),
                psu=Sig(psu, 6),
                tolerance=Percent(ATX3_EXCURSION_1MS),
                source=ATX3_SOURCE,
            )
        )
    else:
        verdict = "ok"
        if peak > psu:
            verdict = "tight"
            reasons.append(
                say(
                    "Spikes of {peak} W exceed the {psu} W rating ({share}): a PSU built to ATX "
                    "3.x must carry "
                    "180% for 1 ms and 200% for 100 µs ({source}), an older ATX 2.x unit has no such "
                    "requirement and may shut down.",
                    peak=_w(peak),
                    psu=Sig(psu, 6),
                    share=Percent(peak / psu),
                    source=ATX3_SOURCE,
                )
            )
        if sustained * SUSTAINED_HEADROOM > psu:
            verdict = "tight"
            reasons.append(
                say(
                    "The sustained {sustained} W is {share} of the {psu} W PSU, less than the ~20% headroom "
                    "PSUs are sized with ({source}).",
                    sustained=_w(sustained),
                    share=Percent(sustained / psu),
                    psu=Sig(psu, 6),
                    source=HEADROOM_SOURCE,
                )
            )
        if recommended is not None and psu < recommended:
            verdict = "tight"
        if verdict == "ok":
            reasons.append(
                say(
                    "The {psu} W PSU covers the {peak} W peak with {spare} W to spare and keeps "
                    "the sustained "
                    "{sustained} W at {share} of its rating.",
                    psu=Sig(psu, 6),
                    peak=_w(peak),
                    spare=_w(psu - peak),
                    sustained=_w(sustained),
                    share=Percent(sustained / psu),
                )
            )
    if psu is not None and recommended is not None:
        if psu < recommended:
            reasons.append(
                say(
                    "The {psu} W PSU is below the {recommended} W the GPU vendor recommends for {gpu}.",
                    psu=Sig(psu, 6),
                    recommended=Sig(recommended, 6),
                    gpu=recommended_by,
                )
            )
        else:
            reasons.append(
                say(
                    "The GPU vendor recommends at least {recommended} W for {gpu}: met.",
                    recommended=Sig(recommended, 6),
                    gpu=recommended_by,
                )
            )

    if psu is not None and verdict in ("tight", "insufficient"):
        if suggested is not None:
            advice.append(
                say(
                    "A {suggested} W PSU would cover the {peak} W peak and leave 20% headroom over the "
                    "{sustained} W sustained load.",
                    suggested=_w(suggested),
                    peak=_w(peak),
                    sustained=_w(sustained),
                )
            )
        if peak > psu and verdict == "tight":
            advice.append(
                say("If you keep this PSU, make sure it is built to ATX 3.0 or 3.1 (its label says so).")
            )
        if gpus:
            advice.append(
                say(
                    "Lowering the GPU power limit (nvidia-smi -pl, or the vendor's tool) lowers both figures."
                )
            )
    if not complete and psu is not None:
        advice.append(say("The verdict needs every part's power; the reasons say what is missing."))

    headroom = psu - peak if psu is not None and complete else None
    return PowerBudget(
        items=tuple(items),
        sustained_watts=sustained,
        peak_watts=peak,
        psu_watts=psu,
        recommended_psu_watts=recommended,
        verdict=verdict,
        headroom_watts=headroom,
        reasons_said=tuple(reasons),
        advice_said=tuple(advice),
        suggested_psu_watts=suggested,
        complete=complete,
    )


def live_load(budget: PowerBudget, measured_watts: float) -> float | None:
    """A live reading (the monitor's summed power) as a fraction of the PSU, or None without a PSU."""
    if not budget.psu_watts:
        return None
    return measured_watts / budget.psu_watts
