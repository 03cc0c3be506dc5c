"""The main window's menus: File (open, open recent, save audit, probe, quit), View (a page each,
Ctrl+1…, and the language), Help (About); the recent snapshots kept in the settings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Slot
from PySide6.QtGui import QAction, QActionGroup, QKeySequence

import rigcheck
from rigcheck.gui import i18n
from rigcheck.gui.i18n import tr
from rigcheck.gui.startup import page_table as _page_table

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMenu, QMenuBar

    from rigcheck.gui.state import AppState

RECENT_LIMIT = 8


class Menus:
    """MainWindow's menu bar, its ``save_action`` and ``recent_menu``."""

    state: AppState
    recent_menu: QMenu
    save_action: QAction

    if TYPE_CHECKING:  # QMainWindow's, MainWindow's, MachineSources' and LanguageSwitch's

        def menuBar(self) -> QMenuBar: ...  # noqa: N802 - Qt's name

        def close(self) -> bool: ...

        def show_page(self, key: str) -> None: ...

        def start_probe(self) -> None: ...

        def open_snapshot(self, path: Path) -> bool: ...

        def _open_snapshot_dialog(self) -> None: ...

        def _save_audit_dialog(self) -> None: ...

        def set_language(self, code: str) -> None: ...

    def _action(
        self, text: str, slot: Callable[[], Any], shortcut: QKeySequence | str | None = None
    ) -> QAction:
        action = QAction(tr(text), self)
        # setShortcuts, not setShortcut: PySide's setShortcut (any argument) and QKeySequence(StandardKey)
        # create every Qt enum before the first frame (see gui.startup); a standard key gets all of the
        # platform's bindings for it, as Qt recommends
        if isinstance(shortcut, QKeySequence.StandardKey):
            action.setShortcuts(shortcut)
        elif shortcut is not None:
            action.setShortcuts([QKeySequence(shortcut)])
        action.triggered.connect(slot)
        return action

    def _build_menus(self) -> None:
        menus = self.menuBar()
        menus.clear()
        file_menu = menus.addMenu(tr("&File"))
        file_menu.addAction(
            self._action("&Open snapshot…", self._open_snapshot_dialog, QKeySequence.StandardKey.Open)
        )
        self.recent_menu = file_menu.addMenu(tr("Open &recent"))
        self._fill_recent()
        self.save_action = self._action(
            "&Save audit…", self._save_audit_dialog, QKeySequence.StandardKey.Save
        )
        self.save_action.setEnabled(self.state.machine is not None)
        file_menu.addAction(self.save_action)
        file_menu.addAction(self._action("Probe &this computer", self.start_probe, "F5"))
        file_menu.addSeparator()
        file_menu.addAction(self._action("&Quit", self.close, QKeySequence.StandardKey.Quit))

        view = menus.addMenu(tr("&View"))
        for number, (key, title, _factory) in enumerate(_page_table(), 1):
            # triggered(bool) passes `checked` first: without the placeholder it lands in `k` (issue 26)
            view.addAction(
                self._action(title, lambda _checked=False, k=key: self.show_page(k), f"Ctrl+{number}")
            )
        view.addSeparator()
        languages = view.addMenu(tr("&Language"))
        group = QActionGroup(self)
        chosen = str(self.state.settings.value("ui/language", "system"))
        for code, name in (("system", tr("System")), *i18n.LANGUAGES.items()):
            action = QAction(name, self, checkable=True)
            action.setChecked(code == chosen)
            action.triggered.connect(lambda _checked=False, c=code: self.set_language(c))
            group.addAction(action)
            languages.addAction(action)

        help_menu = menus.addMenu(tr("&Help"))
        help_menu.addAction(self._action("&About RigCheck", self._about))

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        recent = self._recent()
        for path in recent:
            self.recent_menu.addAction(path, lambda p=path: self.open_snapshot(Path(p)))
        self.recent_menu.setEnabled(bool(recent))

    def _recent(self) -> list[str]:
        value = self.state.settings.value("files/recent", [])
        return [str(v) for v in value] if isinstance(value, list) else ([str(value)] if value else [])

    def _remember(self, path: Path) -> None:
        recent = [str(path), *(p for p in self._recent() if p != str(path))][:RECENT_LIMIT]
        self.state.settings.setValue("files/recent", recent)
        self._fill_recent()

    @Slot()
    def _about(self) -> None:
        from PySide6.QtWidgets import QMessageBox

        QMessageBox.about(
            self,
            tr("About RigCheck"),
            f"<b>RigCheck {rigcheck.__version__}</b><p>"
            + tr("Will this model run on this machine, how fast, and if not, what would it take?")
            + "</p>",
        )
