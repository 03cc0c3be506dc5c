"""The Models page says it is busy while every model's answer is on the pool (issue 30, screenshots): its
progress bar was named ``busy``, so the window's wait (``settle``, the screenshot script, ``answered``)
skipped the page and grabbed a fit column still empty, its width measured from the title alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from fakes.windows import snapshot_window
from rigcheck.gui.app import settle
from rigcheck.gui.pages.models import FIT

pytestmark = pytest.mark.gui


def test_settle_waits_for_the_fit_column(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.resize(1024, 700)
    window.show()
    window.show_page("models")
    page = window.pages["models"]
    assert callable(page.busy)
    assert settle(window)
    assert not page.busy()
    source = page.source  # type: ignore[attr-defined]
    texts = [str(source.data(source.index(row, FIT)) or "") for row in range(source.rowCount())]
    assert texts and all(texts), "a model without its answer on this machine"
