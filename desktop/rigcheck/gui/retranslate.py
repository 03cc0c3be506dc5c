"""Switch the language of widgets that already exist, keeping them, their state and their threads.

A page sets its fixed strings once, with ``tr()``, when it is built. On a language switch the window does
not rebuild it (that threw away the user's settings, an open replay or fleet, and the Monitor's sampling
thread): :func:`retranslate_tree` walks the page's widgets and replaces every text that *is* a known
string in the old language (a label, a button, a combo item, a header, a tooltip, an accessible name, a
spin box's suffix) by the same string in the new one, and gives spin boxes the new QLocale, so "0.5 s"
becomes "0,5 s". Texts a page composes from values (a verdict, a table cell) are not known strings: each
page's ``retranslate()`` makes those again from the data it holds.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QComboBox,
    QDoubleSpinBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QSpinBox,
    QTableWidget,
    QTabWidget,
    QTreeWidget,
    QWidget,
)

from rigcheck.core import i18n as core_i18n
from rigcheck.gui.i18n import qlocale

#: the tooltip form widgets.tooltip() writes around a plain string
_TOOLTIP = re.compile(r"^<p style='white-space:pre-wrap'>(.*)</p>$", re.DOTALL)


class Translator:
    """Maps a text shown in language ``old`` to the same string in ``new``; None for a text that is not
    one of the strings in the translation tables (a name, a number, a composed sentence)."""

    def __init__(self, old: str, new: str) -> None:
        self._new = core_i18n.translations(new)
        if old == "en":
            known = set().union(*(core_i18n.translations(code) for code in core_i18n.LANGUAGES))
            self._source: dict[str, str] = {text: text for text in known}
        else:
            self._source = {shown: english for english, shown in core_i18n.translations(old).items()}

    def __call__(self, text: str) -> str | None:
        if not text or not text.strip():
            return None
        match = _TOOLTIP.match(text)
        if match:
            inner = self(html.unescape(match.group(1)))
            return None if inner is None else f"<p style='white-space:pre-wrap'>{html.escape(inner)}</p>"
        core = text.strip()
        english = self._source.get(core)
        if english is None:
            return None
        start = text.index(core)
        return text[:start] + self._new.get(english, english) + text[start + len(core) :]


def _swap(get: Callable[[], str], put: Callable[[str], object], translate: Translator) -> None:
    new = translate(get())
    if new is not None:
        put(new)


def retranslate_tree(root: QWidget, translate: Translator) -> None:
    """Translate ``root`` and every widget inside it in place (see the module's docstring)."""
    for widget in [root, *root.findChildren(QWidget)]:
        _retranslate_widget(widget, translate)


def _retranslate_widget(widget: QWidget, translate: Translator) -> None:
    _swap(widget.toolTip, widget.setToolTip, translate)
    _swap(widget.accessibleName, widget.setAccessibleName, translate)
    _swap(widget.windowTitle, widget.setWindowTitle, translate)
    if isinstance(widget, QLabel | QAbstractButton):
        _swap(widget.text, widget.setText, translate)
    elif isinstance(widget, QGroupBox):
        _swap(widget.title, widget.setTitle, translate)
    elif isinstance(widget, QLineEdit):
        _swap(widget.placeholderText, widget.setPlaceholderText, translate)
    elif isinstance(widget, QComboBox):
        for index in range(widget.count()):
            _swap(lambda i=index: widget.itemText(i), lambda t, i=index: widget.setItemText(i, t), translate)
    elif isinstance(widget, QTabWidget):
        for index in range(widget.count()):
            _swap(lambda i=index: widget.tabText(i), lambda t, i=index: widget.setTabText(i, t), translate)
    elif isinstance(widget, QTableWidget):
        for column in range(widget.columnCount()):
            item = widget.horizontalHeaderItem(column)
            if item is not None:
                _swap(item.text, item.setText, translate)
                _swap(item.toolTip, item.setToolTip, translate)
    elif isinstance(widget, QTreeWidget):
        # the titles changed with the model's signals held, then announced once: each title's own signal
        # had the header re-measure every row for its fitted columns (five titles, five passes)
        header, model = widget.headerItem(), widget.model()
        held = model.blockSignals(True)
        try:
            for column in range(widget.columnCount()):
                _swap(lambda c=column: header.text(c), lambda t, c=column: header.setText(c, t), translate)
        finally:
            model.blockSignals(held)
        if widget.columnCount():
            model.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, widget.columnCount() - 1)
    elif isinstance(widget, QListWidget):
        for row in range(widget.count()):
            item = widget.item(row)
            _swap(item.text, item.setText, translate)
            _swap(item.toolTip, item.setToolTip, translate)
    if isinstance(widget, QAbstractSpinBox):
        _swap(widget.specialValueText, widget.setSpecialValueText, translate)
        if isinstance(widget, QSpinBox | QDoubleSpinBox):
            _swap(widget.suffix, widget.setSuffix, translate)
            _swap(widget.prefix, widget.setPrefix, translate)
        widget.setLocale(qlocale())  # the value is shown again with the new decimal separator
