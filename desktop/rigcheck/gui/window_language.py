"""The main window in another language: its own strings, then every built page's, in place (each page
keeps its settings, open files and threads); the page on screen at once, the others one per event-loop
turn."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer

from rigcheck.gui import i18n
from rigcheck.gui.i18n import tr
from rigcheck.gui.startup import page_table as _page_table
from rigcheck.gui.workers import Job, held_starts

if TYPE_CHECKING:
    from PySide6.QtWidgets import QLabel, QListWidget, QPushButton, QStackedWidget, QWidget

    from rigcheck.core.machine import Machine
    from rigcheck.gui.retranslate import Translator
    from rigcheck.gui.state import AppState


class LanguageSwitch:
    """MainWindow's language switch: the pages still to retranslate wait in ``_to_retranslate``."""

    state: AppState
    nav: QListWidget
    stack: QStackedWidget
    machine_label: QLabel
    this_computer: QPushButton
    open_button: QPushButton
    _built: dict[str, QWidget]
    _jobs: set[Job]
    _to_retranslate: list[QWidget]

    if TYPE_CHECKING:  # Menus' and MachineSources'

        def _build_menus(self) -> None: ...

        def _machine_changed(self, machine: Machine, label: str, is_live: bool) -> None: ...

    def set_language(self, code: str) -> None:
        """Show the app in another language without rebuilding anything: each page keeps its state."""
        self.state.settings.setValue("ui/language", code)
        old = i18n.language()
        i18n.set_language(i18n.system_language() if code == "system" else code)
        if i18n.language() != old:
            from rigcheck.gui.retranslate import Translator  # only when switching

            with held_starts():  # the pages' new work starts once every page has its new texts
                self.retranslate(Translator(old, i18n.language()))

    def retranslate(self, translate: Translator) -> None:
        """The window's own strings, then every built page: fixed strings in place, then the page's
        ``retranslate()`` for what it composes from data: at once for the page on screen, one page per
        event-loop turn for the others, so a switch never holds the GUI thread for all pages at once."""
        for row, (_key, title, _factory) in enumerate(_page_table(), 1):
            item = self.nav.item(row - 1)
            item.setText(tr(title))
            item.setToolTip(f"{tr(title)} (Ctrl+{row})")
        self._build_menus()
        self.this_computer.setText(tr("This computer"))
        self.this_computer.setToolTip(tr("Probe this computer again (F5)"))
        self.open_button.setText(tr("Open snapshot…"))
        self.state.machine_label = self._label_in(self.state.machine_label, translate)
        from rigcheck.gui.retranslate import retranslate_tree

        for row in range(self.stack.count()):  # the built pages, and the placeholders of the others
            retranslate_tree(self.stack.widget(row), translate)
        current = self.stack.currentWidget()
        again = getattr(current, "retranslate", None)
        if callable(again):
            again()
        queued = not self._to_retranslate
        self._to_retranslate = [p for p in self._built.values() if p is not current]
        if queued and self._to_retranslate:
            QTimer.singleShot(0, self, self._retranslate_next)
        if self.state.machine is not None:
            self._machine_changed(self.state.machine, self.state.machine_label, self.state.is_live)
        elif self._jobs:
            self.machine_label.setText(tr("Probing this computer…"))

    def _retranslate_next(self) -> None:
        """One hidden page's composed texts in the new language; the next one on the next turn."""
        if not self._to_retranslate:
            return
        page = self._to_retranslate.pop(0)
        again = getattr(page, "retranslate", None)
        if callable(again):
            again()
        if self._to_retranslate:
            QTimer.singleShot(0, self, self._retranslate_next)

    @staticmethod
    def _label_in(label: str, translate: Translator) -> str:
        """The machine's label ("This computer", "Snapshot rtx4090.json") in the new language."""
        whole = translate(label)
        if whole is not None:
            return whole
        word, sep, name = label.partition(" ")
        while sep:
            new = translate(word)
            if new is not None:
                return f"{new} {name}"
            head, sep, name = name.partition(" ")
            word = f"{word} {head}"
        return label
