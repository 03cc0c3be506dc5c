"""What an estimate says, kept as data until it is shown: a sentence's English template and its raw
values, made into words once, at the edge.

The estimate's computation (memory, placement, speed, verdict, advice, solvers) decides *what* to say
and returns it as :class:`Said` values: the template, written whole in English where the decision is made
(it is the key of ``resources/translations/<lang>.toml``), and the numbers it fills in, each with its
kind (:class:`Bytes`, :class:`Num`, :class:`Percent`, :class:`Sig`) instead of as formatted text. It
never calls the translation layer. :func:`render` is the one place those become a sentence, with
:func:`~rigcheck.core.i18n.tr` and the locale-aware number formats, in the language current when it is
shown; the results' ``reasons``, ``advice`` and ``explanation`` views call it, and the CLI, the GUI and
the report writers read those.

A value that is neither a kind nor a :class:`Said` is filled in as it is (a model id, a flag, a layer
count printed as Python prints it). A plain ``str`` where a :class:`Said` may stand is a sentence
already made (code not yet moved to this form) and is shown unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rigcheck.core.i18n import num, percent, seen, sig, tr
from rigcheck.core.units import fmt_bytes


@dataclass(frozen=True)
class Bytes:
    """A memory size, shown in binary units (``fmt_bytes``: "24.0 GiB", "512.0 MiB")."""

    value: int | float


@dataclass(frozen=True)
class Num:
    """A number with ``decimals`` fixed decimals, grouped unless ``group`` is false, and an optional
    ``unit`` written after it untranslated (" GiB", " W", " tokens/s" are symbols, not words)."""

    value: float
    decimals: int = 0
    group: bool = True
    unit: str = ""


@dataclass(frozen=True)
class Percent:
    """A fraction shown as a percentage (0.9 -> "90%")."""

    value: float
    decimals: int = 0


@dataclass(frozen=True)
class Sig:
    """A number to ``digits`` significant figures ("0.07", "1.2e+02")."""

    value: float
    digits: int = 2


@dataclass(frozen=True)
class Joined:
    """Parts shown one after another with ``sep`` between them (the separator is punctuation, not
    translated): a list of shares, or a sentence with a clause added after "; "."""

    sep: str
    parts: tuple[object, ...]


@dataclass(frozen=True)
class Shown:
    """A value an edge vocabulary puts into words when shown: ``words(value)`` (a fit's verdict and speed,
    :func:`rigcheck.core.verdict_words.result_words`), for a sentence that quotes another result."""

    words: Callable[[Any], str]
    value: object


@dataclass(frozen=True)
class Said:
    """One sentence to be shown: ``template`` (English, with named ``{placeholders}``) and its values."""

    template: str
    #: (placeholder, value) pairs: a tuple, so that a sentence, and a result holding it, stays hashable
    values: tuple[tuple[str, object], ...] = ()

    def __post_init__(self) -> None:
        # a template is recorded when it is said, as tr() records what it is asked for, so the translation
        # coverage tests see every sentence an estimate may show, read or not
        seen.add(self.template)

    def __str__(self) -> str:
        return render(self)


def say(template: str, /, **values: object) -> Said:
    """``Said(template, values)``, written like the ``tr()`` call it replaces."""
    return Said(template, tuple(values.items()))


#: a sentence as the estimate returns it: said (made into words when shown) or already made
Text = Said | Joined | str


def render(value: object) -> str:
    """``value`` in words, in the current language: a :class:`Said` translated and filled in, a kind
    formatted for the locale, anything else as ``str`` does."""
    if isinstance(value, Said):
        if not value.values:
            return tr(value.template)
        return tr(value.template, **{key: _filled(v) for key, v in value.values})
    return str(_filled(value))


def render_all(values: tuple[object, ...]) -> tuple[str, ...]:
    return tuple(render(v) for v in values)


def _filled(value: object) -> object:
    """What goes into a placeholder: the kinds formatted, sentences rendered, anything else unchanged
    (so a template's own format spec, ``{x:.1f}``, still applies to a raw number)."""
    fill = _FILL.get(type(value))
    return value if fill is None else fill(value)


#: each kind's words, by exact type (one look-up for the raw values most placeholders hold)
_FILL: dict[type, Callable[[Any], object]] = {
    Bytes: lambda v: fmt_bytes(v.value),
    Num: lambda v: num(v.value, v.decimals, group=v.group) + v.unit,
    Percent: lambda v: percent(v.value, v.decimals),
    Sig: lambda v: sig(v.value, v.digits),
    Said: render,
    Shown: lambda v: v.words(v.value),
    Joined: lambda v: v.sep.join(str(_filled(part)) for part in v.parts),
}
