"""Translations for the GUI: the core's one mechanism (:mod:`rigcheck.core.i18n`) plus the system locale.

A translator edits ``resources/translations/<lang>.toml``: one ``"English" = "Translation"`` line per
string, plain text, no tools needed. ``tr()`` looks the current language up; a missing entry falls back
to English, and ``tests/gui/test_i18n.py`` fails when a string shown by the GUI has no Italian entry.
The core's sentences (fit reasons, compatibility findings, the PSU budget, …) go through the same
table, so setting the language here translates them too. The language follows the system locale unless
the user picks one in the View menu; spin boxes and other Qt number widgets get the matching QLocale.
"""

from __future__ import annotations

from PySide6.QtCore import QLocale

from rigcheck.core import i18n as _core
from rigcheck.core.i18n import LANGUAGES, language, num, percent, seen, sig, tr

__all__ = [
    "LANGUAGES",
    "language",
    "num",
    "percent",
    "preload",
    "qlocale",
    "seen",
    "set_language",
    "sig",
    "system_language",
    "tr",
]

_QLOCALES = {"en": QLocale.Language.English, "it": QLocale.Language.Italian}


def system_language() -> str:
    name = QLocale.system().name().split("_", 1)[0]
    return name if name in LANGUAGES else "en"


def qlocale() -> QLocale:
    """The QLocale of the chosen language, for spin boxes and any number Qt formats itself."""
    if language() == "en":
        return QLocale(QLocale.Language.English, QLocale.Country.UnitedStates)
    return QLocale(_QLOCALES[language()])


def set_language(code: str) -> None:
    _core.set_language(code)
    # Qt widgets created from now on (spin boxes, validators) format numbers in the same language;
    # without this a spin box shows the system locale's "1,0 s" next to English text, or the reverse.
    # Only on a real change: QLocale.setDefault is not safe while worker threads may use QLocale.
    wanted = qlocale()
    if QLocale().name() != wanted.name():
        QLocale.setDefault(wanted)


def preload() -> None:
    """Every language's table and Babel's number data for it, read once (on a pool thread after start-up):
    a language switch then only swaps tables. Parsing it.toml (~15-25 ms) and loading Babel's locale data
    on the switch itself made its handler the slowest one of the app (issue 26)."""
    import babel.dates  # imported here, not by the first month name shown in Italian
    import babel.numbers  # noqa: F401
    from babel import Locale

    for code in LANGUAGES:
        _core.translations(code)
        if code != "en":
            Locale.parse(code).number_symbols  # noqa: B018 - loads the locale's data (Babel keeps it)
