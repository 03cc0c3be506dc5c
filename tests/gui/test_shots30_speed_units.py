"""Units stay whole where a label or cell wraps (issue 30, screenshots): Fit's speed card at 900 px in
Italian read "77 GB/" over "s: Intel Core…", the Upgrade table "(819 GB/" over "s)"."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QFont, QFontMetricsF
from pytestqt.qtbot import QtBot

from fakes.windows import answered, snapshot_window, wrapped_lines
from rigcheck.gui import i18n
from rigcheck.gui.markup import units_whole

pytestmark = pytest.mark.gui

JOINER = "\u2060"


def test_units_whole_joins_only_slashed_units(qtbot: QtBot) -> None:
    assert (
        units_whole("a 77 GB/s: 9 token/s, $0.68/h")
        == f"a 77 GB/{JOINER}s: 9 token/{JOINER}s, $0.68/{JOINER}h"
    )
    assert units_whole("ggml/src/ggml-cuda/mmq.cu@027ef87") == "ggml/src/ggml-cuda/mmq.cu@027ef87"  # a path
    text = "RAM: 5,3 GiB di pesi letti per token a 77 GB/s: Intel Core 12th gen desktop"
    font = QFont()
    for width in range(40, int(QFontMetricsF(font).horizontalAdvance(text)), 3):
        lines = wrapped_lines(units_whole(text), width, font)
        assert not any(line.rstrip().endswith("/") for line in lines[:-1]), (width, lines)


def test_the_speed_card_joins_its_units(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "cpu-only-32gb.json", language="it")
    try:
        window.setMinimumSize(0, 0)
        window.resize(900, 600)
        window.show()
        window.show_page("fit")
        answered(qtbot, window)
        text = window.pages["fit"].speed.text()  # type: ignore[attr-defined]
        assert f"77 GB/{JOINER}s" in text and "GB/s" not in text
    finally:
        i18n.set_language("en")


def test_the_upgrade_comparison_joins_its_units(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json", language="it")
    try:
        window.resize(1024, 700)
        window.show()
        window.show_page("upgrade")
        answered(qtbot, window)
        table = window.pages["upgrade"].table  # type: ignore[attr-defined]
        texts = [table.item(r, c).text() for r in range(table.rowCount()) for c in (1, 2)]
        assert any(f"token/{JOINER}s" in t for t in texts)
        assert not any("token/s" in t for t in texts)
    finally:
        i18n.set_language("en")
