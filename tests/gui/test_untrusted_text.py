"""Issue 17 #5: strings from snapshots and model files reach Qt only as plain text.

A hostname, a GPU name, a probe note or a GGUF model name that holds HTML must show as the characters
it is: never styled, never loading an image, never a link. Every page is opened on a hostile snapshot
and a hostile model, then every label, tooltip and text browser is swept.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QLabel, QTextBrowser, QWidget
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.core.catalog import load_catalog
from rigcheck.core.models.resolve import from_catalog
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"
#: what a hostile file would put in any string field
MARK = "<img src='/etc/hostname'><a href='https://evil.example/'>pwn</a>"


def _hostile_snapshot(tmp_path: Path) -> Path:
    data = json.loads((FIXTURES / "rtx4090-64gb.json").read_text())
    data["host"]["hostname"] = "host" + MARK
    data["gpus"][0]["name"] = "NVIDIA GeForce RTX 4090" + MARK
    data["cpu"]["model"] = "CPU" + MARK
    data["drivers"]["nvidia"] = "550.54" + MARK
    data["disks"] = [
        {"path": "/data" + MARK, "total_bytes": 10**12, "free_bytes": 10**11, "purpose": "x" + MARK}
    ]
    data["notes"] = [{"probe": "nvidia" + MARK, "level": "warning", "message": "GPU 0 " + MARK}]
    path = tmp_path / "<img src=x>.json"  # the file name is shown too
    path.write_text(json.dumps(data))
    return path


def _sweep(window: QWidget) -> list[str]:
    """Every place a hostile string is shown as rich text."""
    bad = []
    for label in window.findChildren(QLabel):
        text = label.text()
        if "<img" in text and label.textFormat() != Qt.TextFormat.PlainText:
            bad.append(f"label {label.objectName() or type(label.parent()).__name__}: {text[:120]!r}")
    for widget in window.findChildren(QWidget):
        if "<img" in widget.toolTip():
            bad.append(f"tooltip of {type(widget).__name__}: {widget.toolTip()[:120]!r}")
    for browser in window.findChildren(QTextBrowser):
        shown = browser.toHtml()
        if "<img" in shown or "<a " in shown:  # a real image or link, not the escaped characters
            bad.append(f"text browser: {shown[shown.find('<body') :][:300]!r}")
        if "evil.example" not in browser.toPlainText() and browser.isVisible():
            bad.append("the hostile model note is not shown as text in the Why? browser")
        if browser.openExternalLinks():
            bad.append("a text browser opens external links")
    return bad


def test_hostile_strings_are_plain_text_on_every_page(qtbot: QtBot, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    state = AppState(load_catalog(use_overlay=False), settings)
    window = MainWindow(state, small_machine)
    qtbot.addWidget(window)
    assert window.open_snapshot(_hostile_snapshot(tmp_path))
    model = from_catalog(load_catalog(use_overlay=False).model("qwen3-8b"))  # type: ignore[arg-type]
    state.choose_model(replace(model, name="Qwen" + MARK, notes=("a note " + MARK,)))
    for key in window.pages:
        window.show_page(key)
    fit = window.pages["fit"]
    fit.why_button.click()  # type: ignore[attr-defined]
    problems = _sweep(window)
    assert not problems, "\n".join(problems)
