"""What the GUI shows for a recommendation: the glyph, the words, the format and the speed.

Qt-free on purpose: the Overview cards, the Models page's fit column and the Fit page all paint a
:class:`FitView` made here from :func:`rigcheck.core.estimate.recommend.recommend`, and tests read the
same view the widgets paint. Colour is never the only signal: every view has a glyph and words.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rigcheck.core.catalog import Backend, Catalog, ModelSpec
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.fit import FitResult
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.recommend import Recommendation, Where, recommend, where_of
from rigcheck.core.machine import Machine
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.verdict_words import COLOURS, TIERS, placement_words, speed_text, verdict_where
from rigcheck.gui.paint_yield import step_aside

#: tier (rigcheck.core.verdict_words) -> the words in a narrow table column (the Models page)
SHORT_WORDS: dict[str | None, str] = {
    "gpu": "On the GPU",
    "gpu+ram": "GPU + RAM",
    "cpu": "On the CPU",
    "slow": "Too slow",
    "does_not_fit": "Does not fit",
    None: "Does not fit",
}
#: tier -> the words of a card (English source, translated when shown): the CLI's and the reports'
#: words (rigcheck.core.verdict_words), capitalised
TIER_WORDS: dict[str, str] = {
    "gpu": "Runs on the GPU",
    "gpu+ram": "Runs on the GPU + RAM",
    "cpu": "Runs on the CPU",
    "slow": "Runs, too slow to chat",
    "does_not_fit": "Does not fit",
}
#: where -> (glyph, words, colour, sort rank), for a placement without a speed (the shared tiers)
WHERE_VIEW: dict[Where | None, tuple[str, str, str, int]] = {
    where: (TIERS[tier][0], TIER_WORDS[tier], COLOURS[TIERS[tier][1]], TIERS[tier][2])
    for where, tier in (("gpu", "gpu"), ("gpu+ram", "gpu+ram"), ("cpu", "cpu"), (None, "does_not_fit"))
}


@dataclass(frozen=True)
class FitView:
    where: Where | None
    glyph: str
    #: English source text; pages pass it through ``tr``
    words: str
    colour: str
    #: the recommended format ("Q4_K_M"), None when nothing runs
    quant: str | None
    tokens_per_s: float | None
    #: fit.Placement.offload of the recommendation ("experts", "layers", …)
    offload: str = "none"
    #: the shared tier (rigcheck.core.verdict_words): gpu, gpu+ram, cpu, slow, does_not_fit
    tier: str = ""

    @property
    def short_words(self) -> str:
        return SHORT_WORDS[self.tier or self.where]

    @property
    def rank(self) -> int:
        return TIERS[self.tier][2] if self.tier in TIERS else WHERE_VIEW[self.where][3]

    def sort_key(self) -> tuple[int, float]:
        """Runs on the GPU first, then GPU + RAM, CPU, does not fit; faster first within each."""
        return (self.rank, -(self.tokens_per_s or 0.0))

    def detail(self) -> str:
        """ "Q4_K_M · ~95 tokens/s" (the words are shown apart, translated)."""
        parts = [self.quant] if self.quant else []
        if self.where is not None:
            parts.append(speed_text(self.tokens_per_s))  # rounded once, as the CLI and reports say it
        return " · ".join(parts)


def view_of_result(result: FitResult, quant: str | None = None) -> FitView:
    where = where_of(result)
    speed = result.speed
    tps = speed.decode_tokens_per_s if result.estimate.workload == "inference" else speed.train_tokens_per_s
    said = placement_words(where, tps, workload=result.estimate.workload)
    return FitView(
        where,
        said.glyph,
        TIER_WORDS[said.tier],
        COLOURS[said.colour],
        quant if where is not None else None,
        tps if where is not None else None,
        result.placement.offload,
        said.tier,
    )


def verdict_view(
    verdict: str, where: str | None, tokens_per_s: float | None, workload: str = "inference"
) -> tuple[str, str, str]:
    """(glyph, words (English source), colour) of a verdict the Upgrade and Fleet pages show, in the
    shared vocabulary: a GPU-less box "Runs on the CPU", ~1 token/s "Runs, too slow to chat"."""
    if verdict not in ("fits", "fits_with_offload", "does_not_fit"):
        return "?", verdict, "#7a7f87"
    said = placement_words(verdict_where(verdict, where), tokens_per_s, workload=workload)
    return said.glyph, TIER_WORDS[said.tier], COLOURS[said.colour]


def fit_view(rec: Recommendation) -> FitView:
    if rec.best is None:
        return view_of_result(rec.result)
    return view_of_result(rec.best.result, rec.best.quant)


@dataclass(frozen=True)
class CardAnswer:
    """One Overview card's answer: the view it paints, and the format and context Fit opens it with."""

    spec: ModelSpec
    view: FitView
    #: the catalog id of the recommended format ("" when nothing runs)
    quant_id: str
    #: the context the model was judged at
    context: int
    verdict: str


def recommend_cards(
    specs: Iterable[ModelSpec],
    machine: Machine,
    catalog: Catalog,
    *,
    live: bool,
    backend: Backend | None = None,
) -> tuple[CardAnswer, ...]:
    """The Overview's "what you can run" cards: each model's recommendation, as :func:`recommend_catalog`
    gives it, with what the card needs to open Fit on the same answer. Runs on a worker thread."""
    answers = []
    for spec in specs:
        step_aside()  # a paint of the window goes first (gui/paint_yield.py)
        try:
            rec = recommend(
                from_catalog(spec), machine, "inference", catalog, live=live, request=Request(backend=backend)
            )
        except InputError:
            continue
        quant = rec.best.quant_id if rec.best is not None and rec.best.quant_id else ""
        answers.append(
            CardAnswer(spec, fit_view(rec), quant, rec.result.estimate.context, rec.result.verdict)
        )
    return tuple(answers)


def recommend_catalog(
    specs: Iterable[ModelSpec],
    machine: Machine,
    catalog: Catalog,
    *,
    live: bool,
    backend: Backend | None = None,
) -> dict[str, FitView]:
    """The Models page's fit column: each catalog model's recommendation on ``machine`` (inference), with
    llama.cpp on ``backend`` (None: each vendor's usual one).

    Runs on a worker thread (records only, no Qt); a model whose config cannot be read is left out.
    """
    views: dict[str, FitView] = {}
    for spec in specs:
        try:
            model = from_catalog(spec)
            request = Request(backend=backend)
            views[spec.id] = fit_view(
                recommend(model, machine, "inference", catalog, live=live, request=request)
            )
        except InputError:
            continue
    return views
