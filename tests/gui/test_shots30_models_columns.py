"""The Models table at 900×600 in Italian (issue 30, screenshots): when even the least needed columns are
hidden and the rest leave the hub id under its minimum, the id column goes too (it was squeezed to
"Q…B"; the detail pane names the id whole); at 1024 px it stays, at least its minimum wide."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from fakes.windows import answered, snapshot_window
from rigcheck.gui import i18n
from rigcheck.gui.pages.models import HF_ID, HF_ID_MIN

pytestmark = pytest.mark.gui


@pytest.mark.parametrize(("width", "height"), [(900, 600), (1024, 700)])
def test_the_hub_id_column_is_readable_or_gone(qtbot: QtBot, tmp_path: Path, width: int, height: int) -> None:
    window = snapshot_window(qtbot, tmp_path, "platforms/strix-halo-rocm7.json", language="it")
    try:
        window.setMinimumSize(0, 0)
        window.resize(width, height)
        window.show()
        window.show_page("models")
        answered(qtbot, window)
        qtbot.wait(20)
        table = window.pages["models"].table  # type: ignore[attr-defined]
        hidden = table.isColumnHidden(HF_ID)
        assert hidden == (width == 900)
        if not hidden:
            assert table.columnWidth(HF_ID) >= HF_ID_MIN
        shown = sum(
            table.columnWidth(c) for c in range(table.model().columnCount()) if not table.isColumnHidden(c)
        )
        assert shown <= table.viewport().width() + 1  # no sideways scrolling
    finally:
        i18n.set_language("en")
