"""Every string the GUI shows has an Italian translation, and switching language changes the pages."""

from __future__ import annotations

import tomllib
from importlib.resources import files
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from fakes.windows import snapshot_window
from rigcheck.gui import i18n

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


def italian() -> dict[str, str]:
    text = files("rigcheck.resources").joinpath("translations/it.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def test_every_shown_string_has_an_italian_entry(qtbot: QtBot, tmp_path: Path) -> None:
    i18n.seen.clear()
    try:
        for snapshot in ("rtx4090-64gb.json", "m2-ultra-192gb.json"):
            window = snapshot_window(qtbot, tmp_path, snapshot, language="it")
            for key in window.pages:
                window.show_page(key)
            fit = window.pages["fit"]
            fit.why_button.click()  # type: ignore[attr-defined]
            fit.fit_max_context()  # type: ignore[attr-defined]
            fit.fit_best_quant()  # type: ignore[attr-defined]
            window.state.pool.waitForDone()
            assert window.nav.item(0).text() == "Panoramica"
            window.close()
    finally:
        i18n.set_language("en")
    missing = sorted(s for s in i18n.seen if s not in italian())
    assert not missing, f"strings without an Italian entry: {missing}"


def test_translations_file_is_clean() -> None:
    table = italian()
    assert all(value.strip() for value in table.values())
    # placeholders and accelerators survive translation
    for source, target in table.items():
        assert ("{" in source) == ("{" in target), source
        assert ("&" in source) <= ("&" in target), source
