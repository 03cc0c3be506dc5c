"""One vocabulary for where a model runs and how fast: the words, glyph, colour role and speed text that
``fit``, ``fleet``, ``upgrade``, the reports, their charts and every GUI page show.

Qt-free and computation-free: callers pass what the estimate found (where it runs, tokens/s) and get
back :class:`Words`. The speed is rounded once, here (:func:`rounded_speed`, two significant figures: the
estimate is not better than that, BENCHMARKS.md), and every surface prints that rounded value, so one
question never reads "~2" on one page and "~1.6" on another.

Tiers, best first:

- ``gpu`` ✓ runs on the GPU(s);
- ``gpu+ram`` ◐ runs on the GPU + RAM (part of the model in RAM);
- ``cpu`` ◐ runs on the CPU;
- ``slow`` ◔ runs, too slow to chat: inference that decodes below :data:`CHAT_TOKENS_PER_S`, wherever
  it runs (the where stays in :attr:`Words.where`);
- ``does_not_fit`` ✗ does not fit.

A speed that cannot be estimated reads "speed unknown: <why>", never a blank or a dash.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from rigcheck.core.i18n import num, sig, tr

if TYPE_CHECKING:
    from rigcheck.core.estimate.verdict import FitResult

Where = Literal["gpu", "gpu+ram", "cpu"]
Tier = Literal["gpu", "gpu+ram", "cpu", "slow", "does_not_fit"]
#: what a surface paints the tier with; the glyph and the words carry the meaning, colour only helps
ColourRole = Literal["ok", "partial", "slow", "fail"]

#: below this decode speed a chat reply comes slower than people read: about 238 words a minute for
#: silent reading of non-fiction (Brysbaert 2019, "How many words do we read per minute?", Journal of
#: Memory and Language 109, 104047, https://doi.org/10.1016/j.jml.2019.104047) at about 1.3 tokens a
#: word (English text, BPE tokenizers) is ~5 tokens/s.
CHAT_TOKENS_PER_S = 5.0

#: tier -> (glyph, colour role, sort rank)
TIERS: dict[Tier, tuple[str, ColourRole, int]] = {
    "gpu": ("✓", "ok", 0),
    "gpu+ram": ("◐", "partial", 1),
    "cpu": ("◐", "partial", 2),
    "slow": ("◔", "slow", 3),
    "does_not_fit": ("✗", "fail", 4),
}
#: colour role -> a colour that reads on light and dark backgrounds (the GUI's and the HTML report's)
COLOURS: dict[ColourRole, str] = {"ok": "#2e9d57", "partial": "#c98a12", "slow": "#b0651f", "fail": "#c8433a"}


@dataclass(frozen=True)
class Words:
    tier: Tier
    glyph: str
    #: the verdict in words, lower case ("runs on the GPU + RAM"); :attr:`label` adds the glyph
    words: str
    colour: ColourRole
    #: where it runs ("gpu", "gpu+ram", "cpu"), None when it does not fit; kept for the slow tier too
    where: Where | None
    #: "~19 tokens/s", "~1 token/s", "speed unknown: <why>"; "" when it does not run
    speed: str
    #: the speed as every surface shows it (rounded once), None when unknown or it does not run
    tokens_per_s: float | None
    rank: int

    @property
    def label(self) -> str:
        return f"{self.glyph} {self.words}"

    @property
    def short(self) -> str:
        """The words for a narrow column: "GPU", "GPU+RAM", "CPU", "too slow", "does not fit"."""
        return {
            "gpu": "GPU",
            "gpu+ram": "GPU+RAM",
            "cpu": "CPU",
            "slow": tr("too slow"),
            "does_not_fit": tr("no"),
        }[self.tier]

    @property
    def sentence(self) -> str:
        """ "runs on the GPU, ~19 tokens/s"; "does not fit"."""
        return f"{self.words}, {self.speed}" if self.speed else self.words


def rounded_speed(tokens_per_s: float) -> float:
    """Two significant figures: 124.5 -> 120, 45.3 -> 45, 3.27 -> 3.3, 1436 -> 1400."""
    if tokens_per_s <= 0 or tokens_per_s != tokens_per_s:  # noqa: PLR0124 - NaN check
        return 0.0
    return float(f"{tokens_per_s:.2g}")


def speed_text(tokens_per_s: float | None, *, training: bool = False, unknown_why: str | None = None) -> str:
    """ "~19 tokens/s", "~1 token/s", "~1,400 training tokens/s"; "speed unknown: <why>" without one."""
    if tokens_per_s is None:
        return tr("speed unknown: {why}", why=unknown_why or tr("no speed estimate for this hardware"))
    value = rounded_speed(tokens_per_s)
    shown = sig(value) if value < 10 else num(value)
    if training:
        return tr("~{speed} training tokens/s", speed=shown)
    return tr("~{speed} token/s", speed=shown) if value == 1 else tr("~{speed} tokens/s", speed=shown)


def result_words(result: FitResult) -> str:
    """A fit in words, its verdict and its speed: "runs on the GPU + RAM (37 of 80 layers in RAM), ~4.1
    tokens/s" (what advice quotes of a trial fit)."""
    training = result.estimate.workload != "inference"
    tps = result.speed.train_tokens_per_s if training else result.speed.decode_tokens_per_s
    return f"{verdict_words(result)}, {speed_text(tps, training=training)}"


def where_words(where: Where | None, *, gpus: int = 1, detail: str | None = None) -> str:
    """ "runs on the GPU", "runs on the GPUs + RAM (37 of 80 layers in RAM)", "runs on the CPU"."""
    if where is None:
        return tr("does not fit")
    if where == "cpu":
        return tr("runs on the CPU")
    if where == "gpu":
        return tr("runs on the GPUs") if gpus > 1 else tr("runs on the GPU")
    if detail:
        template = "runs on the GPUs + RAM ({what})" if gpus > 1 else "runs on the GPU + RAM ({what})"
        return tr(template, what=detail)
    return tr("runs on the GPUs + RAM") if gpus > 1 else tr("runs on the GPU + RAM")


def tier_of(where: Where | None, tokens_per_s: float | None, *, workload: str = "inference") -> Tier:
    """The tier alone, without its words: where it runs, or ``slow`` for inference below chat speed."""
    if where is None:
        return "does_not_fit"
    slow = tokens_per_s is not None and rounded_speed(tokens_per_s) < CHAT_TOKENS_PER_S
    return "slow" if workload == "inference" and slow else where


def placement_words(
    where: Where | None,
    tokens_per_s: float | None,
    *,
    workload: str = "inference",
    gpus: int = 1,
    detail: str | None = None,
    unknown_why: str | None = None,
) -> Words:
    """The one description of a placement: tier, glyph, words, colour role and speed text."""
    training = workload != "inference"
    tier = tier_of(where, tokens_per_s, workload=workload)
    words = where_words(where, gpus=gpus, detail=detail)
    if tier == "slow" and where is not None:
        on = {"gpu": tr("on the GPU"), "gpu+ram": tr("on the GPU + RAM"), "cpu": tr("on the CPU")}[where]
        words = tr("runs, too slow to chat ({where})", where=on)
    glyph, colour, rank = TIERS[tier]
    if where is None:
        return Words(tier, glyph, words, colour, None, "", None, rank)
    speed = speed_text(tokens_per_s, training=training, unknown_why=unknown_why)
    shown = rounded_speed(tokens_per_s) if tokens_per_s is not None else None
    return Words(tier, glyph, words, colour, where, speed, shown, rank)


def verdict_words(result: FitResult) -> str:
    """The verdict as it reads: "runs on the GPU", "runs on the GPU + RAM (experts in RAM)", "runs on
    the CPU", "runs, too slow to chat (on the CPU)"."""
    from rigcheck.core.estimate.recommend import where_of

    where = where_of(result)
    p = result.placement
    several = sum(1 for b in p.gpu_bytes if b) > 1
    what = {
        "experts": tr("experts in RAM"),
        "layers": tr(
            "{count} of {total} layers in RAM", count=p.total_layers - p.gpu_layers, total=p.total_layers
        ),
        "optimizer": tr("optimizer in RAM"),
        "params": tr("parameters in RAM"),
        "full": tr("MegaTrain-style, states in RAM"),
    }.get(p.offload) or tr("part in RAM")
    inference = result.estimate.workload == "inference"
    tps = result.speed.decode_tokens_per_s if inference else result.speed.train_tokens_per_s
    words = placement_words(
        where, tps, workload=result.estimate.workload, gpus=2 if several else 1,
        detail=what if where == "gpu+ram" else None,
    )  # fmt: skip
    return words.words


def verdict_where(verdict: str, where: str | None) -> Where | None:
    """``where`` from a verdict alone (results written before ``where`` was recorded): an offload
    verdict without one is read as GPU + RAM."""
    if verdict == "does_not_fit":
        return None
    if where in ("gpu", "gpu+ram", "cpu"):
        return where  # type: ignore[return-value]
    return "gpu" if verdict == "fits" else "gpu+ram"
