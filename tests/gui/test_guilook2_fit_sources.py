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


@pytest.mark.parametrize("size", [(1024, 700), (1920, 1080)])
def test_format_table_columns_hold_their_text_with_room(
    qtbot: QtBot, tmp_path: Path, size: tuple[int, int]
) -> None:
    from PySide6.QtCore import Qt

    from fakes.windows import answered, snapshot_window

    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.setMinimumSize(0, 0)
    window.resize(*size)
    window.show()
    window.show_page("fit")
    answered(qtbot, window)
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    ladder = page.ladder
    assert ladder.rowCount() > 0
    metrics = ladder.fontMetrics()
    for column in range(ladder.columnCount() - 1):  # the last stretches
        widest = max(
            metrics.horizontalAdvance(ladder.item(r, column).text()) for r in range(ladder.rowCount())
        )
        assert ladder.columnWidth(column) >= widest + 12, (column, ladder.columnWidth(column), widest)
    for column in (2, 3, 4):
        assert ladder.item(0, column).textAlignment() & Qt.AlignmentFlag.AlignRight
    # the generation speed, the card's answer, is set larger than its explanation
    assert "font-size:x-large" in page.speed.text()
    window.close()


def test_settings_are_grouped_what_is_loaded_then_how_it_runs(qtbot: QtBot, tmp_path: Path) -> None:
    from fakes.windows import answered, snapshot_window

    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.resize(1024, 700)
    window.show()
    window.show_page("fit")
    answered(qtbot, window)
    page = window.pages["fit"]
    assert isinstance(page, FitPage)

    def top(widget: object) -> int:
        return widget.mapTo(page, widget.rect().topLeft()).y()  # type: ignore[attr-defined]

    assert top(page.load_group) < top(page.quant) < top(page.kv) < top(page.run_group) < top(page.workload)
    assert top(page.workload) < top(page.offload) < top(page.engine)
    window.close()
