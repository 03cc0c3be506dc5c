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
from rigcheck.core.i18n import num
from rigcheck.core.machine import Machine
from rigcheck.core.models.resolve import from_catalog

#: where -> the words in a narrow table column (the Models page)
SHORT_WORDS: dict[Where | None, str] = {
    "gpu": "On the GPU",
    "gpu+ram": "GPU + RAM",
    "cpu": "On the CPU",
    None: "Does not fit",
}
#: where -> (glyph, words (English source, translated when shown), colour, sort rank)
WHERE_VIEW: dict[Where | None, tuple[str, str, str, int]] = {
    "gpu": ("✔", "Runs on the GPU", "#2e9d57", 0),
    "gpu+ram": ("◐", "Runs on GPU + RAM", "#c98a12", 1),
    "cpu": ("◐", "Runs on the CPU", "#c98a12", 2),
    None: ("✘", "Does not fit", "#c8433a", 3),
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

    @property
    def short_words(self) -> str:
        return SHORT_WORDS[self.where]

    @property
    def rank(self) -> int:
        return WHERE_VIEW[self.where][3]

    def sort_key(self) -> tuple[int, float]:
        """Runs on the GPU first, then GPU + RAM, CPU, does not fit; faster first within each."""
        return (self.rank, -(self.tokens_per_s or 0.0))

    def detail(self) -> str:
        """ "Q4_K_M · ~95 tokens/s" (the words are shown apart, translated)."""
        parts = [self.quant] if self.quant else []
        if self.tokens_per_s is not None:
            parts.append(f"~{num(self.tokens_per_s)} tokens/s")
        return " · ".join(parts)


def view_of_result(result: FitResult, quant: str | None = None) -> FitView:
    where = where_of(result)
    glyph, words, colour, _rank = WHERE_VIEW[where]
    speed = result.speed
    tps = speed.decode_tokens_per_s if result.estimate.workload == "inference" else speed.train_tokens_per_s
    return FitView(
        where,
        glyph,
        words,
        colour,
        quant if where is not None else None,
        tps if where is not None else None,
        result.placement.offload,
    )


def fit_view(rec: Recommendation) -> FitView:
    if rec.best is None:
        return view_of_result(rec.result)
    return view_of_result(rec.best.result, rec.best.quant)


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
