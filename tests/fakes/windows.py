"""The desktop app's main window on a saved snapshot, for GUI tests: settings in the test's temp folder; how
Qt wraps a text (`wrapped_lines`)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtGui import QFont, QTextLayout, QTextOption
from pytestqt.qtbot import QtBot

from rigcheck.core.machine import load_machine
from rigcheck.gui.app import create_window
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.fleet import FleetPage

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


def snapshot_window(
    qtbot: QtBot, tmp_path: Path, snapshot: str | Path, *, language: str | None = None
) -> MainWindow:
    """The main window showing ``snapshot`` (a file name under tests/fixtures/machines, or a path), in
    ``language`` when given; registered with ``qtbot`` so that it is closed after the test."""
    path = snapshot if isinstance(snapshot, Path) else FIXTURES / snapshot
    settings = QSettings(str(tmp_path / f"{path.stem}.ini"), QSettings.Format.IniFormat)
    if language is not None:
        settings.setValue("ui/language", language)
    window = create_window(settings, snapshot=load_machine(path), snapshot_name=path.name)
    qtbot.addWidget(window)
    return window


def answered(qtbot: QtBot, window: MainWindow, timeout_ms: int = 20000) -> None:
    """Wait until the answers the pages work out on the pool (the Overview's cards, Fit's format table,
    the compatibility findings) have been shown."""
    qtbot.waitUntil(lambda: not window.busy(), timeout=timeout_ms)


def open_fleet(qtbot: QtBot, window: MainWindow, folder: Path, timeout_ms: int = 30000) -> FleetPage:
    """Show the Fleet page, open ``folder`` on it and wait until every machine has its verdict."""
    window.show_page("fleet")
    page = window.pages["fleet"]
    assert isinstance(page, FleetPage)
    page.open_folder(folder)
    qtbot.waitUntil(
        lambda: page.fleet is not None and bool(page.verdicts) and not page.busy(), timeout=timeout_ms
    )
    return page


def wrapped_lines(text: str, width: float, font: QFont) -> list[str]:
    """``text`` laid out with word wrap at ``width`` pixels in ``font``, line by line: what a wrapping label
    or table cell shows."""
    layout = QTextLayout(text, font)
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WordWrap)
    layout.setTextOption(option)
    layout.beginLayout()
    lines = []
    while (line := layout.createLine()).isValid():
        line.setLineWidth(width)
        lines.append(text[line.textStart() : line.textStart() + line.textLength()])
    layout.endLayout()
    return lines
