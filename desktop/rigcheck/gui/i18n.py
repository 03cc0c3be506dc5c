"""Translations: English source strings, Italian (and any language added as a TOML file).

A translator edits ``resources/translations/<lang>.toml``: one ``"English" = "Translation"`` line per
string, plain text, no tools needed. ``tr()`` looks the current language up; a missing entry falls back
to English, and ``tests/gui/test_i18n.py`` fails when a string shown by the GUI has no Italian entry.
The language follows the system locale unless the user picks one in the View menu.
"""

from __future__ import annotations

import tomllib
from importlib.resources import files

from PySide6.QtCore import QLocale

LANGUAGES = {"en": "English", "it": "Italiano"}


class _Current:
    code = "en"
    table: dict[str, str] = {}  # noqa: RUF012 - replaced whole, never mutated


_current = _Current()
#: every string tr() was asked for, so the tests can check the translation table covers the GUI
seen: set[str] = set()


def system_language() -> str:
    name = QLocale.system().name().split("_", 1)[0]
    return name if name in LANGUAGES else "en"


def set_language(code: str) -> None:
    code = code if code in LANGUAGES else "en"
    table: dict[str, str] = {}
    if code != "en":
        text = files("rigcheck.resources").joinpath(f"translations/{code}.toml").read_text(encoding="utf-8")
        table = {str(k): str(v) for k, v in tomllib.loads(text).items()}
    _current.code, _current.table = code, table


def language() -> str:
    return _current.code


def tr(text: str) -> str:
    seen.add(text)
    return _current.table.get(text, text)
