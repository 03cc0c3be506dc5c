"""One translation mechanism for the core, the CLI and the GUI, with locale-aware numbers.

Sentences are written in English in the code and looked up whole, with named placeholders, in
``resources/translations/<lang>.toml`` (one ``"English {size}" = "Italiano {size}"`` line per string;
a translator needs no tools). ``tr("needs {size}", size=...)`` translates the template first and fills
it afterwards, so a translation can move the placeholders where its grammar wants them; sentences
are never glued from translated fragments.

The language is process-wide and English by default: the CLI never changes it, so its output (and
every test that reads it) stays English. The GUI sets it at start-up and when the user picks another
language (``rigcheck.gui.i18n`` delegates here). A missing entry falls back to English.

Numbers in sentences go through :func:`num` and :func:`percent`: Python's own formatting in English
(byte-for-byte what the CLI always printed), Babel's CLDR data for any other language ("8.192",
"12,5 %").
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Final

LANGUAGES: Final = {"en": "English", "it": "Italiano"}


class _Current:
    code = "en"
    table: dict[str, str] = {}  # noqa: RUF012 - replaced whole, never mutated


_current = _Current()
#: every template tr() was asked for, so tests can check the translation table covers what is shown
seen: set[str] = set()


@cache
def translations(code: str) -> dict[str, str]:
    """The English -> ``code`` table (empty for English), read once per language; callers must not
    change it (the GUI reads it to translate a page in place on a language switch)."""
    if code not in LANGUAGES or code == "en":
        return {}
    import tomllib  # here: an English start-up never parses a table (tomllib ~5 ms to import)
    from importlib.resources import files

    text = files("rigcheck.resources").joinpath(f"translations/{code}.toml").read_text(encoding="utf-8")
    return {str(k): str(v) for k, v in tomllib.loads(text).items()}


def set_language(code: str) -> None:
    """Switch the process to ``code`` ("en", "it"); an unknown code means English."""
    code = code if code in LANGUAGES else "en"
    _current.code, _current.table = code, translations(code)


def language() -> str:
    return _current.code


def tr(text: str, /, **values: object) -> str:
    """``text`` in the current language; with ``values``, the translated template filled in."""
    seen.add(text)
    translated = _current.table.get(text, text)
    return translated.format(**values) if values else translated


def num(value: float, decimals: int = 0, *, group: bool = True) -> str:
    """``value`` with ``decimals`` fixed decimals, grouped unless ``group`` is false:
    "8,192" / "8.192", "1.5" / "1,5"."""
    if _current.code == "en":
        return f"{value:{',' if group else ''}.{decimals}f}"
    pattern = ("#,##0" if group else "0") + ("." + "0" * decimals if decimals else "")
    return _formatter(_current.code, pattern, False)(value)


def sig(value: float, digits: int = 2) -> str:
    """``value`` to ``digits`` significant figures without grouping, like ``f"{value:.2g}"``."""
    text = f"{value:.{digits}g}"
    return text if _current.code == "en" else text.replace(".", ",")


def percent(fraction: float, decimals: int = 0) -> str:
    """A fraction as a percentage: 0.125 -> "12%" in English, "12 %" in Italian."""
    if _current.code == "en":
        return f"{fraction:.{decimals}%}"
    pattern = "#,##0" + ("." + "0" * decimals if decimals else "") + "%"
    return _formatter(_current.code, pattern, True)(fraction)


@cache
def _formatter(code: str, pattern: str, percent: bool) -> Callable[[float], str]:
    """Babel's formatter for one locale and pattern, parsed once: ``format_decimal`` parses the locale
    and the pattern again on every call (~120 µs), which made working out every model in Italian take
    twice as long as in English (issue 26)."""
    from decimal import Decimal

    from babel import Locale
    from babel.numbers import parse_pattern

    locale = Locale.parse(code)
    parsed = parse_pattern(pattern)

    def fmt(value: float) -> str:
        # format_decimal's own steps: a float goes through Decimal(str(value)), so 2.675 rounds as written
        number = Decimal(str(value)) if isinstance(value, float) else value
        return str(parsed.apply(number, locale))

    return fmt


def month_year(year: int, month: int) -> str:
    """ "June 2028" in English, "giugno 2028" in Italian (CLDR month names through Babel)."""
    if _current.code == "en":
        import calendar

        return f"{calendar.month_name[month]} {year}"
    from datetime import date

    from babel.dates import format_date

    return str(format_date(date(year, month, 1), "LLLL y", locale=_current.code))
