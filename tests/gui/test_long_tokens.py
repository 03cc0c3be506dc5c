"""A 4096-character name wraps inside its card instead of making the page scroll sideways."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QLabel, QScrollArea
from pytestqt.qtbot import QtBot
from test_harden3_long_names import FIXTURES, long_snapshot

from rigcheck.core.machine import load_machine
from rigcheck.gui.app import create_window, settle
from rigcheck.gui.widgets import breakable, esc


def test_breakable_leaves_words_paths_and_links_alone() -> None:
    link = "https://github.com/ml-explore/mlx-lm/blob/a4c64703906f709a493341508ac31af4085d2638/mlx_lm/BENCHMARKS.md#L31"
    assert breakable(link) == link and esc("a <b>") == "a &lt;b&gt;"
    long = "W" * 4096
    assert breakable(long).replace("\u200b", "") == long and "\u200b" in breakable(long)


def test_the_overview_never_scrolls_sideways_for_a_long_name(qtbot: QtBot, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window = create_window(settings, snapshot=load_machine(FIXTURES / "rtx4090-64gb.json"), snapshot_name="x")
    qtbot.addWidget(window)
    window.resize(1024, 700)
    window.show()
    settle(window)
    assert window.open_snapshot(long_snapshot(tmp_path / "long.json"))
    window.show_page("overview")
    settle(window)
    page = window.pages["overview"]
    labels = [w for w in page.findChildren(QLabel) if "WWWW" in w.text()]
    assert labels, "the long names are shown"
    assert max(w.minimumSizeHint().width() for w in labels) <= 1024
    for area in page.findChildren(QScrollArea):
        assert area.widget() is None or area.widget().minimumSizeHint().width() <= 1024
    window.close()
