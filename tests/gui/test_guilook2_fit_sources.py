"""Fit (issue 26): the verdict card's sentences read without the core's bracketed source citations (an
English URL or kernel path inside an Italian sentence); the sources move to the card's tooltip."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.core.catalog import load_catalog
from rigcheck.core.i18n import set_language
from rigcheck.core.unified import AMD_GTT_SOURCE, GB10_SOURCE
from rigcheck.gui.cited import split_sources
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.fit import FitPage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
PLATFORMS = Path(__file__).resolve().parent.parent / "fixtures" / "machines" / "platforms"


def test_split_sources_takes_out_known_and_url_citations() -> None:
    text, found = split_sources(f"less 12.8 GiB the system keeps ({GB10_SOURCE}); less a margin")
    assert text == "less 12.8 GiB the system keeps; less a margin" and found == [GB10_SOURCE]
    text, found = split_sources("as measured (https://example.org/a (b c)), then more")
    assert text == "as measured, then more" and found == ["https://example.org/a (b c)"]
    assert split_sources("GPU 0 (RTX 4090): 24 GiB") == ("GPU 0 (RTX 4090): 24 GiB", [])


@pytest.mark.parametrize(
    ("snapshot", "source"), [("dgx-spark.json", GB10_SOURCE), ("strix-halo-rocm7.json", AMD_GTT_SOURCE)]
)
def test_italian_verdict_card_has_no_source_text(
    qtbot: QtBot, tmp_path: Path, snapshot: str, source: str
) -> None:
    set_language("it")
    try:
        state = AppState(
            load_catalog(use_overlay=False), QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
        )
        window = MainWindow(state, small_machine)
        qtbot.addWidget(window)
        window.open_snapshot(PLATFORMS / snapshot)
        qtbot.waitUntil(lambda: not window.busy(), timeout=20000)
        page = window.pages["fit"]
        assert isinstance(page, FitPage)
        assert page.result is not None
        assert any(source in r for r in page.result.reasons)  # the core still cites it (CLI, reports)
        shown = page.reasons.text() + page.speed.text()
        assert "http" not in shown and "drivers/gpu" not in shown
        assert "memoria unificata" in page.reasons.text() or "GTT" in page.reasons.text()
        assert source in page.reasons.toolTip()
        window.close()
    finally:
        set_language("en")
