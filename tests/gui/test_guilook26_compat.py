"""Compatibility at 900 and 1024 px (issue 26): a finding reads in a few lines — its subject in bold, the
reason and the fix beneath, in one wide column — not in a dozen lines of five narrow columns."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from rigcheck.core.machine import load_machine
from rigcheck.gui.app import create_window, settle
from rigcheck.gui.pages.compat import FINDING, CompatPage

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


@pytest.mark.parametrize(
    ("snapshot", "size"), [("rtx4090-64gb.json", (1024, 700)), ("m2-ultra-192gb.json", (900, 600))]
)
def test_findings_are_a_few_lines_tall(
    qtbot: QtBot, tmp_path: Path, snapshot: str, size: tuple[int, int]
) -> None:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window = create_window(settings, snapshot=load_machine(FIXTURES / snapshot), snapshot_name="m")
    qtbot.addWidget(window)
    window.setMinimumSize(0, 0)
    window.resize(*size)
    window.show()
    window.show_page("compat")
    settle(window, timeout_s=20)
    page = window.pages["compat"]
    assert isinstance(page, CompatPage)
    tree = page.tree
    assert tree.header().sectionSize(FINDING) >= 0.55 * tree.viewport().width()
    line = tree.fontMetrics().lineSpacing()
    heights = [
        tree.visualItemRect(group.child(r)).height() / line
        for group in (tree.topLevelItem(g) for g in range(tree.topLevelItemCount()))
        for r in range(group.childCount())
    ]
    assert heights and max(heights) <= 8, max(heights)
    assert sum(heights) / len(heights) <= 5
    # the status words sit on one line where the window leaves room for them
    if size[0] >= 1024:
        status = tree.header().sectionSize(0) - 2 * tree.indentation()
        words = {group.child(r).text(0) for group in (tree.topLevelItem(g) for g in range(tree.topLevelItemCount()))
                 for r in range(group.childCount())}  # fmt: skip
        assert all(tree.fontMetrics().horizontalAdvance(w) <= status for w in words)
    window.close()


def test_a_long_fix_shows_its_first_sentences() -> None:
    from rigcheck.gui.pages.compat import FIX_SHOWN, first_sentences

    short = "Install torch 2.15.0."
    assert first_sentences(short) == short
    long = "Update the driver to R580. " + "Then read the notes, which say much more. " * 8
    shown = first_sentences(long)
    assert (
        shown.startswith("Update the driver to R580.") and shown.endswith("…") and len(shown) <= FIX_SHOWN + 2
    )
    one = "word " * 100
    assert len(first_sentences(one)) <= FIX_SHOWN + 2 and first_sentences(one).endswith("…")
