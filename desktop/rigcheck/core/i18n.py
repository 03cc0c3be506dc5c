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

import tomllib
from importlib.resources import files
from typing import Final

LANGUAGES: Final = {"en": "English", "it": "Italiano"}


class _Current:
    code = "en"
    table: dict[str, str] = {}  # noqa: RUF012 - replaced whole, never mutated


_current = _Current()
#: every template tr() was asked for, so tests can check the translation table covers what is shown
seen: set[str] = set()


def set_language(code: str) -> None:
    """Switch the process to ``code`` ("en", "it"); an unknown code means English."""
    code = code if code in LANGUAGES else "en"
    table: dict[str, str] = {}
    if code != "en":
        text = files("rigcheck.resources").joinpath(f"translations/{code}.toml").read_text(encoding="utf-8")
        table = {str(k): str(v) for k, v in tomllib.loads(text).items()}
    _current.code, _current.table = code, table


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
    from babel.numbers import format_decimal

    pattern = ("#,##0" if group else "0") + ("." + "0" * decimals if decimals else "")
    return str(format_decimal(value, format=pattern, locale=_current.code))


def sig(value: float, digits: int = 2) -> str:
    """``value`` to ``digits`` significant figures without grouping, like ``f"{value:.2g}"``."""
    text = f"{value:.{digits}g}"
    return text if _current.code == "en" else text.replace(".", ",")


def percent(fraction: float, decimals: int = 0) -> str:
    """A fraction as a percentage: 0.125 -> "12%" in English, "12 %" in Italian."""
    if _current.code == "en":
        return f"{fraction:.{decimals}%}"
    from babel.numbers import format_percent

    pattern = "#,##0" + ("." + "0" * decimals if decimals else "") + "%"
    return str(format_percent(fraction, format=pattern, locale=_current.code))


def month_year(year: int, month: int) -> str:
    """ "June 2028" in English, "giugno 2028" in Italian (CLDR month names through Babel)."""
    if _current.code == "en":
        import calendar

        return f"{calendar.month_name[month]} {year}"
    from datetime import date

    from babel.dates import format_date

    return str(format_date(date(year, month, 1), "LLLL y", locale=_current.code))
