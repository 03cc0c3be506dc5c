"""Every page at the smallest supported size (1024×700), in English and Italian, for several machines:
no key label is cut off, and the dark palette keeps text readable."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QProgressBar, QWidget
from pytestqt.qtbot import QtBot

from rigcheck.core.machine import load_machine
from rigcheck.gui import i18n
from rigcheck.gui.app import create_window, settle

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"
SMALLEST = (1024, 700)


def clipped(page: QWidget) -> list[str]:
    """Visible one-line labels and buttons narrower than their text needs (Qt clips such text)."""
    found = []
    for widget in page.findChildren(QWidget):
        if not widget.isVisibleTo(page) or widget.width() <= 0:
            continue
        if isinstance(widget, QLabel):
            text = widget.text()
            if (
                not text
                or widget.wordWrap()
                or (widget.pixmap() is not None and not widget.pixmap().isNull())
            ):
                continue
            need = widget.minimumSizeHint().width()
        elif isinstance(widget, QAbstractButton):
            text = widget.text()
            if not text:
                continue
            need = widget.minimumSizeHint().width()
        elif isinstance(widget, QProgressBar):
            text = widget.text() if widget.isTextVisible() else ""
            if not text:
                continue
            need = widget.fontMetrics().horizontalAdvance(text) + 8  # the style's text margins
        else:
            continue
        if widget.width() + 1 < need:
            found.append(f"{type(widget).__name__} {text[:50]!r}: {widget.width()} px of {need}")
    return found


@pytest.mark.parametrize("language", ["en", "it"])
@pytest.mark.parametrize("snapshot", ["rtx4090-64gb.json", "two-gpus-128gb.json", "m2-ultra-192gb.json",
                                      "cpu-only-32gb.json", "hgx-h100x8-2tb.json"])  # fmt: skip
def test_no_key_label_is_cut_at_1024x700(qtbot: QtBot, tmp_path: Path, language: str, snapshot: str) -> None:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    settings.setValue("ui/language", language)
    try:
        window = create_window(settings, snapshot=load_machine(FIXTURES / snapshot), snapshot_name=snapshot)
        qtbot.addWidget(window)
        window.setMinimumSize(0, 0)
        window.resize(*SMALLEST)
        window.show()
        problems = []
        for key in window.pages:
            window.show_page(key)
            settle(window, timeout_s=20)
            problems += [f"{key}: {p}" for p in clipped(window.stack.currentWidget())]
        window.close()
    finally:
        i18n.set_language("en")
    assert not problems, "\n".join(problems)


def contrast(a: QColor, b: QColor) -> float:
    """WCAG 2.x contrast ratio of two colours (https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio)."""

    def luminance(c: QColor) -> float:
        def channel(v: float) -> float:
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def dark_palette() -> QPalette:
    palette = QPalette()
    for role, colour in (
        (QPalette.ColorRole.Window, "#1f2125"), (QPalette.ColorRole.WindowText, "#e6e6e6"),
        (QPalette.ColorRole.Base, "#17181b"), (QPalette.ColorRole.Text, "#e6e6e6"),
        (QPalette.ColorRole.Button, "#2a2d32"), (QPalette.ColorRole.ButtonText, "#e6e6e6"),
        (QPalette.ColorRole.PlaceholderText, "#9aa0a6"), (QPalette.ColorRole.Highlight, "#3d7bd9"),
    ):  # fmt: skip
        palette.setColor(role, QColor(colour))
    return palette


def test_dark_palette_keeps_text_readable(qtbot: QtBot, tmp_path: Path) -> None:
    """Every page's labels follow the palette: against the dark window or card colour their text has
    at least WCAG AA's 4.5:1 (3:1 for large and muted text is not asked: muted text is 4.5:1 here too)."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    old = app.palette()
    app.setPalette(dark_palette())
    try:
        settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
        window = create_window(
            settings, snapshot=load_machine(FIXTURES / "two-gpus-128gb.json"), snapshot_name="dark"
        )
        qtbot.addWidget(window)
        window.resize(1280, 800)
        window.show()
        problems = []
        for key in window.pages:
            window.show_page(key)
            settle(window, timeout_s=20)
            for label in window.stack.currentWidget().findChildren(QLabel):
                if not label.isVisibleTo(window) or not label.text() or label.styleSheet():
                    continue  # a label with its own style sheet (a coloured badge) sets both colours
                fg = label.palette().color(label.foregroundRole())
                bg = _background(label)
                ratio = contrast(fg, bg)
                if ratio < 4.5:
                    problems.append(f"{key}: {label.text()[:40]!r} {fg.name()} on {bg.name()}: {ratio:.1f}:1")
        window.close()
    finally:
        app.setPalette(old)
    assert not problems, "\n".join(problems)


def _background(widget: QWidget) -> QColor:
    """The colour behind a widget: the nearest ancestor (or itself) that fills its background."""
    current: QWidget | None = widget
    while current is not None:
        if current.autoFillBackground():
            return current.palette().color(current.backgroundRole())
        current = current.parentWidget()
    return widget.palette().color(QPalette.ColorRole.Window)


def test_the_clipping_check_sees_a_cut_label(qtbot: QtBot) -> None:
    page = QWidget()
    qtbot.addWidget(page)
    label = QLabel("Reason and fix, the point of the page", page)
    label.setFixedWidth(60)
    wrapped = QLabel("Reason and fix, the point of the page", page)
    wrapped.setWordWrap(True)
    wrapped.setFixedWidth(60)
    page.show()
    found = clipped(page)
    assert len(found) == 1 and "Reason and fix" in found[0]


def test_nothing_scrolls_sideways_and_the_ram_text_is_whole_at_1024x700(qtbot: QtBot, tmp_path: Path) -> None:
    """A machine whose available RAM is known (as a live probe gives it), at the smallest size: the RAM
    text is not cut, and the Models and Fleet tables need no sideways scrolling (issue 26, layout)."""
    from dataclasses import replace

    from test_fleet_page import write_fleet

    from rigcheck.core.machine import save_machine

    base = load_machine(FIXTURES / "rtx4090-64gb.json")
    machine = replace(base, memory=replace(base.memory, available_bytes=41 * 1024**3))
    snapshot = tmp_path / "live-like.json"
    save_machine(machine, snapshot)
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window = create_window(settings, snapshot=load_machine(snapshot), snapshot_name="live-like.json")
    qtbot.addWidget(window)
    window.setMinimumSize(0, 0)
    window.resize(*SMALLEST)
    window.show()
    settle(window, timeout_s=20)
    overview = window.stack.currentWidget()
    shown = [w.text() for w in overview.findChildren(QLabel) + overview.findChildren(QProgressBar)]
    assert any("available of" in text for text in shown), "the available RAM is said"
    problems = [f"overview: {p}" for p in clipped(overview)]
    window.show_page("models")
    settle(window, timeout_s=20)
    models = window.pages["models"].table  # type: ignore[attr-defined]
    if models.horizontalScrollBar().maximum() > 0:
        problems.append(f"models: scrolls sideways by {models.horizontalScrollBar().maximum()} px")
    window.show_page("fleet")
    folder = tmp_path / "audits"
    folder.mkdir()
    write_fleet(folder)
    fleet = window.pages["fleet"]
    fleet.open_folder(folder)  # type: ignore[attr-defined]
    settle(window, timeout_s=20)
    if fleet.table.horizontalScrollBar().maximum() > 0:  # type: ignore[attr-defined]
        problems.append(f"fleet: scrolls sideways by {fleet.table.horizontalScrollBar().maximum()} px")  # type: ignore[attr-defined]
    window.close()
    assert not problems, "\n".join(problems)


def test_the_format_table_shows_every_format_without_its_own_scroll_bar(qtbot: QtBot, tmp_path: Path) -> None:
    """At 1920×1080 the Fit page's format table is not a six-row box with a scroll bar (issue 26)."""
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window = create_window(
        settings, snapshot=load_machine(FIXTURES / "m2-ultra-192gb.json"), snapshot_name="m2"
    )
    qtbot.addWidget(window)
    window.resize(1920, 1080)
    window.show()
    window.show_page("fit")
    settle(window, timeout_s=20)
    ladder = window.pages["fit"].ladder  # type: ignore[attr-defined]
    assert 6 < ladder.rowCount() <= 16
    assert ladder.verticalScrollBar().maximum() == 0, "every format is in view"
    window.close()
