"""The GUI fuzz suite's harness (issue 30 #5, #14; Build 3): hostile strings, and a sweep that finds
every place one is rendered as rich text or widens the window.

Every payload's markup carries the word ``pwn`` inside a tag (``<b title=pwn>``), which the app's own
rich text never holds; :data:`RAW` finds such a tag in a widget's source text. A tag left raw in a
label whose format is not plain text, in a tooltip (Qt guesses a tooltip's format), in a table cell's
tooltip or in a pyqtgraph label (titles, legends and axis labels are HTML) is rendered as markup; a
text document that holds an image or a link to the payload's host rendered one.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from PySide6.QtCore import QAbstractItemModel, QAbstractListModel, QAbstractTableModel, QModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QLabel,
    QMessageBox,
    QTextEdit,
    QToolTip,
    QWidget,
)

#: a tag of a payload, left raw (escaped, it reads ``&lt;b title=pwn&gt;`` and does not match)
RAW = re.compile(r"<[a-z][a-z0-9]*\b[^<>]*\bpwn\b", re.IGNORECASE)
#: what a rendered payload leaves in a document's HTML: an image, or a link to the payload's host
RENDERED = re.compile(r"<img\b|href=\"https?://evil\.example", re.IGNORECASE)
#: markup, line breaks, bidi controls and length, each as a file would hold them in any string field
MARKUP = (
    "<b title=pwn>bold</b>",
    "<img src='file:///etc/hostname' alt=pwn>",
    "<a href='https://evil.example/pwn'>link</a>",
    "<table bgcolor=red id=pwn><tr><td>cell</td></tr></table>",
    "<font color=red class=pwn>red</font>",
    "two\n<i class=pwn>lines</i>",
    "\u202e<u class=pwn>bidi</u>\u2069",
    "<qt class=pwn><h1>big</h1>",
    "<h1 class=pwn>" + "W" * 4000,  # a field holds at most 4096 characters
)
PAYLOADS = st.sampled_from(MARKUP)
#: the widths the sweep holds the window to (the smallest window the app is laid out for)
WIDTH = 1024


def file_name(payload: str, stem: str) -> str:
    """``payload`` as part of a file name: no slash, and within the usual 255 bytes."""
    text = payload.replace("/", "\u2215").replace("\x00", "")
    return (stem + text)[:120]


@dataclass
class Dialogs:
    """Every message box the app opened (never shown: ``exec`` returns at once) and every tooltip it
    showed through ``QToolTip.showText``, with the format each was shown in."""

    shown: list[tuple[str, Qt.TextFormat, str]] = field(default_factory=list)

    def problems(self) -> list[str]:
        return [
            f"{kind} shown as {fmt.name}: {text[:100]!r}"
            for kind, fmt, text in self.shown
            if RAW.search(text) and fmt != Qt.TextFormat.PlainText
        ]


@contextmanager
def recorded_dialogs() -> Iterator[Dialogs]:
    """Message boxes and tooltips recorded instead of shown; the static helpers (``warning``…), which
    guess the format from the text, are recorded as AutoText."""
    dialogs = Dialogs()
    saved = {name: QMessageBox.__dict__.get(name) for name in ("exec", "warning", "critical",
             "information", "question", "about")}  # fmt: skip
    saved_tip = QToolTip.__dict__.get("showText")

    def exec_(box: QMessageBox) -> int:
        for text in (box.text(), box.informativeText()):
            dialogs.shown.append(("message box", box.textFormat(), text))
        return 0

    def static(_parent: object, _title: str, text: str, *_args: object, **_kw: object) -> int:
        dialogs.shown.append(("static message box", Qt.TextFormat.AutoText, text))
        return 0

    def tip(*args: object, **_kw: object) -> None:
        text = next((a for a in args if isinstance(a, str)), "")
        dialogs.shown.append(("QToolTip.showText", Qt.TextFormat.AutoText, text))

    QMessageBox.exec = exec_  # type: ignore[method-assign]
    for name in ("warning", "critical", "information", "question", "about"):
        setattr(QMessageBox, name, staticmethod(static))
    QToolTip.showText = staticmethod(tip)  # type: ignore[method-assign,assignment]
    try:
        yield dialogs
    finally:
        for name, value in saved.items():
            if value is None:
                delattr(QMessageBox, name)
            else:
                setattr(QMessageBox, name, value)
        if saved_tip is None:
            delattr(QToolTip, "showText")
        else:
            QToolTip.showText = saved_tip  # type: ignore[method-assign]


def _indexes(model: QAbstractItemModel, limit: int = 3000) -> Iterator[QModelIndex]:
    """The model's cells, children too, at most ``limit`` of them."""
    flat = isinstance(
        model, QAbstractTableModel | QAbstractListModel
    )  # their parent-taking calls are private
    stack = [QModelIndex()]
    seen = 0
    while stack and seen < limit:
        parent = stack.pop()
        rows = model.rowCount() if flat else model.rowCount(parent)
        columns = (
            1
            if isinstance(model, QAbstractListModel)
            else model.columnCount()
            if flat
            else model.columnCount(parent)
        )
        for row in range(min(rows, limit)):
            for column in range(columns):
                index = model.index(row, column, parent)
                seen += 1
                yield index
                if not flat and column == 0 and model.rowCount(index) > 0:
                    stack.append(index)


def rendered(root: QWidget) -> list[str]:
    """Every place under ``root`` where a payload is rendered as rich text."""
    bad: list[str] = []
    for label in root.findChildren(QLabel):
        if RAW.search(label.text()) and label.textFormat() != Qt.TextFormat.PlainText:
            bad.append(
                f"label ({label.textFormat().name}) in {type(label.parent()).__name__}: {label.text()[:100]!r}"
            )
    for widget in [root, *root.findChildren(QWidget)]:
        if RAW.search(widget.toolTip()):
            bad.append(f"tooltip of {type(widget).__name__}: {widget.toolTip()[:100]!r}")
    for view in root.findChildren(QAbstractItemView):
        model = view.model()
        if model is None:
            continue
        for index in _indexes(model):
            tip = index.data(Qt.ItemDataRole.ToolTipRole)
            if isinstance(tip, str) and RAW.search(tip):
                bad.append(f"cell tooltip in {type(view).__name__}: {tip[:100]!r}")
    for document in root.findChildren(QTextEdit):  # QTextBrowser too
        if RENDERED.search(document.toHtml()):
            bad.append(f"{type(document).__name__} rendered: {document.toPlainText()[:100]!r}")
    if "pyqtgraph" in sys.modules:
        bad += _pyqtgraph(root)
    return bad


def _pyqtgraph(root: QWidget) -> list[str]:
    import pyqtgraph as pg
    from PySide6.QtWidgets import QGraphicsTextItem

    bad = []
    for view in root.findChildren(pg.GraphicsView):
        scene = view.scene()
        for item in scene.items() if scene is not None else ():
            if isinstance(item, pg.LabelItem) and RAW.search(str(item.text)):
                bad.append(f"pyqtgraph label (title or legend): {item.text[:100]!r}")
            elif isinstance(item, pg.AxisItem) and RAW.search(str(item.labelText)):
                bad.append(f"pyqtgraph axis label: {item.labelText[:100]!r}")
            elif isinstance(item, QGraphicsTextItem) and RENDERED.search(item.toHtml()):
                bad.append(f"pyqtgraph text: {item.toPlainText()[:100]!r}")
    return bad


def too_wide(window: QWidget) -> str | None:
    """Why the window is wider than :data:`WIDTH` allows (or its layout asks to be), else None."""
    screen = QApplication.primaryScreen().availableGeometry().width()
    if window.width() > max(WIDTH, screen):
        return f"the window grew to {window.width()} px"
    if window.minimumSizeHint().width() > WIDTH:
        return "the window asks for {} px: {}".format(
            window.minimumSizeHint().width(), "; ".join(_widest(window))
        )
    return None


def _widest(root: QWidget) -> list[str]:
    """The innermost visible widgets asking for more than :data:`WIDTH` (the ones at fault)."""
    found = []
    for widget in root.findChildren(QWidget):
        if not widget.isVisible() or widget.minimumSizeHint().width() <= WIDTH * 0.4:
            continue
        children = [c for c in widget.findChildren(QWidget) if c.isVisible()]
        if all(c.minimumSizeHint().width() <= WIDTH * 0.4 for c in children):
            text = widget.text()[:60] if isinstance(widget, QLabel) else ""
            found.append(f"{type(widget).__name__} in {type(widget.parent()).__name__} "
                         f"({widget.minimumSizeHint().width()} px) {text!r}")  # fmt: skip
    return found[:8]


def strings_of(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every string value in a JSON document."""
    if isinstance(data, str):
        return [path]
    if isinstance(data, dict):
        return [p for k, v in data.items() for p in strings_of(v, (*path, k))]
    if isinstance(data, list):
        return [p for i, v in enumerate(data) for p in strings_of(v, (*path, i))]
    return []
