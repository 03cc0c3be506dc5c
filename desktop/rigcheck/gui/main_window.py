"""The main window: pages on the left, the machine being shown on top, menus, drag and drop.

Pages are built by :meth:`MainWindow.build_pages` from the ``PAGES`` table and talk to each other
only through the shared :class:`~rigcheck.gui.state.AppState`. Switching language translates them in
place (:mod:`rigcheck.gui.retranslate`): every page keeps its settings, its open files and its threads.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QTimer, Slot
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

import rigcheck
from rigcheck.core.errors import InputError
from rigcheck.core.known_text import in_language
from rigcheck.core.machine import Machine, load_machine, save_machine
from rigcheck.gui import i18n
from rigcheck.gui.i18n import tr
from rigcheck.gui.markup import esc
from rigcheck.gui.startup import KEY_ROLE, Lazy, LazyPages
from rigcheck.gui.startup import fill_placeholder as _fill_placeholder
from rigcheck.gui.startup import load_for_first_page as _load_for_first_page
from rigcheck.gui.startup import looks_like_snapshot as _looks_like_snapshot
from rigcheck.gui.startup import page_table as _page_table
from rigcheck.gui.startup import warm_imports as _warm_imports
from rigcheck.gui.state import AppState
from rigcheck.gui.workers import Job, held_starts, report_exception, submit

if TYPE_CHECKING:  # the event classes only annotate: each class PySide sets up costs ~0.3 ms at start-up
    from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QPaintEvent, QShowEvent

    from rigcheck.gui.retranslate import Translator

RECENT_LIMIT = 8
#: a shown window whose first frame was not painted by then (a platform that never paints) loads anyway
LOAD_FALLBACK_MS = 250
#: start-up preloads wait for the first page to have its data, polling this often, for at most this long
SETTLED_POLL_MS = 50
SETTLED_LATEST_MS = 700


class MainWindow(QMainWindow):
    def __init__(self, state: AppState, probe: Callable[[], Machine], debug: bool = False) -> None:
        super().__init__()
        self.state = state
        self.debug = debug
        #: page key -> "ExceptionType: message" for each page whose construction failed
        self.page_errors: dict[str, str] = {}
        self.probe_failed = False
        self._probe = probe
        self._jobs: set[Job] = set()
        self._factories: dict[str, Callable[[AppState], QWidget]] = {}
        self._built: dict[str, QWidget] = {}
        #: the pool job loading the catalog while the window shows placeholders (None once it is in)
        self._catalog_job: Job | None = None
        #: why loading the catalog on the pool failed (the pages are then built, and fail, one by one)
        self._catalog_error: str | None = None
        #: what waits for the first frame (after_first_frame); whether it was painted
        self._after_first_frame: list[Callable[[], object]] = []
        self._painted = False
        self.setAcceptDrops(True)
        self.setWindowTitle("RigCheck")
        self.setMinimumSize(900, 600)

        self.nav = QListWidget()
        self.nav.setAccessibleName("Pages")
        self.nav.setFixedWidth(190)
        self.nav.setFrameShape(QListWidget.Shape.NoFrame)
        self.nav.setStyleSheet("QListWidget::item { padding: 9px 14px; }")
        self.stack = QStackedWidget()
        self.nav.currentRowChanged.connect(self._show_row)

        self.machine_label = QLabel()
        self.machine_label.setObjectName("machineLabel")
        self.machine_label.setAccessibleName("Machine shown")
        self.this_computer = QPushButton()
        self.this_computer.clicked.connect(self.start_probe)
        self.open_button = QPushButton()
        self.open_button.clicked.connect(self._open_snapshot_dialog)
        bar = QHBoxLayout()
        bar.setContentsMargins(12, 8, 12, 8)
        bar.addWidget(self.machine_label, 1)
        bar.addWidget(self.this_computer)
        bar.addWidget(self.open_button)

        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addLayout(bar)
        column.addWidget(self.stack, 1)
        central = QWidget()
        row = QHBoxLayout(central)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.nav)
        row.addWidget(right, 1)
        self.setCentralWidget(central)

        #: pages whose own retranslate() a language switch has still to run (one per event-loop turn)
        self._to_retranslate: list[QWidget] = []
        state.machine_changed.connect(self._machine_changed)
        state.page_requested.connect(self.show_page)
        state.model_chosen.connect(lambda _m: self.show_page("fit"))
        state.upgrade_requested.connect(self.what_would_it_take)
        self.build_pages()
        self._restore()
        # the pages' modules take 30-90 ms each to import, a snapshot's decoders ~9 ms to write: a worker
        # does both once the window is up, so that first showing a page or opening a snapshot does not
        # (modules and code only: no Qt object is made; startup.warm_imports)
        self.when_settled(
            500, lambda: submit(self.state.pool, _warm_imports, lambda _r: None, lambda _m: None)
        )

    # -- pages -----------------------------------------------------------------------------------

    def build_pages(self) -> None:
        """(Re)build the page list and menus in the current language, keeping the page shown.

        A page is constructed the first time it is shown (or asked for through ``pages``), so start-up
        pays only for the first page.
        """
        current = self.nav.currentRow()
        self.nav.blockSignals(True)
        self.nav.clear()
        while self.stack.count():
            widget = self.stack.widget(0)
            self.stack.removeWidget(widget)
            widget.deleteLater()
        self._factories = {key: factory for key, _title, factory in _page_table()}
        self._built = {}
        self.pages = LazyPages(self)
        for number, (key, title, _factory) in enumerate(_page_table(), 1):
            item = QListWidgetItem(tr(title))
            item.setToolTip(f"{tr(title)} (Ctrl+{number})")
            item.setData(KEY_ROLE, key)
            self.nav.addItem(item)
            placeholder = QWidget()  # until the page is first shown
            placeholder.setObjectName(f"page-{key}-loading")
            self.stack.addWidget(placeholder)
        self.nav.blockSignals(False)
        self.nav.setCurrentRow(max(current, 0))
        self._show_row(self.nav.currentRow())
        self._build_menus()
        self.this_computer.setText(tr("This computer"))
        self.this_computer.setToolTip(tr("Probe this computer again (F5)"))
        self.open_button.setText(tr("Open snapshot…"))
        if self.state.machine is not None:
            self._machine_changed(self.state.machine, self.state.machine_label, self.state.is_live)

    def page(self, key: str) -> QWidget:
        """The page for ``key``, built on first use."""
        built = self._built.get(key)
        if built is None:
            try:
                built = self._factories[key](self.state)
            except Exception as exc:  # noqa: BLE001 - a broken page must not take the window down
                built = self._failed_page(key, exc)
            else:
                built.setObjectName(f"page-{key}")
            row = list(self._factories).index(key)
            placeholder = self.stack.widget(row)
            shown = self.stack.currentWidget() is placeholder
            self.stack.insertWidget(row, built)
            if shown:  # asked for while its placeholder was on screen: the page takes its place there
                self.stack.setCurrentWidget(built)
            self.stack.removeWidget(placeholder)
            placeholder.deleteLater()
            self._built[key] = built
        return built

    def _failed_page(self, key: str, exc: Exception) -> QWidget:
        """In place of a page whose construction raised: one plain-text line saying so.

        The failure is kept in ``page_errors`` (``gui --screenshot`` exits non-zero on any) and written
        to stderr as one line; the traceback only with ``--debug``.
        """
        message = f"{type(exc).__name__}: {exc}"
        self.page_errors[key] = message
        report_exception(exc, f"the {key} page failed to open", debug=self.debug)
        from PySide6.QtCore import Qt  # once the first frame is up (see gui.startup)

        failed = QWidget()
        failed.setObjectName(f"page-{key}-failed")
        label = QLabel(tr("This page could not be opened:") + f"\n{message}")
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        QVBoxLayout(failed).addWidget(label)
        return failed

    @Slot(str, str, object)
    def what_would_it_take(self, model_id: str, workload: str, context: object) -> None:
        """Show Upgrade answering what it would take to run ``model_id`` (from a does-not-fit verdict)."""
        self.show_page("upgrade")
        page = self.pages["upgrade"]
        ask = getattr(page, "what_would_it_take", None)
        if callable(ask):
            ask(model_id, workload, context if isinstance(context, int) else None)

    def busy(self) -> bool:
        """Whether the catalog is still loading (asking starts it), or a built page still has deferred
        work queued (a debounce timer, a pool job)."""
        if self._catalog_job is not None:
            return True
        if not self.state.catalog_loaded and self._catalog_error is None:
            self.load_catalog()  # whoever waits for the window waits for the catalog: it loads now
            return True
        return bool(self._to_retranslate) or any(
            callable(getattr(page, "busy", None)) and page.busy()  # type: ignore[attr-defined]
            for page in self._built.values()
        )

    @Slot(int)
    def _show_row(self, row: int) -> None:
        if not 0 <= row < len(self._factories):
            return
        key = list(self._factories)[row]
        if self.state.catalog_loaded or key in self._built or self._catalog_error is not None:
            self.stack.setCurrentWidget(self.page(key))
        else:  # its placeholder, until the catalog is in (_catalog_arrived builds the page then)
            placeholder = self.stack.widget(row)
            if placeholder.layout() is None:
                _fill_placeholder(placeholder, _page_table()[row][1])
            self.stack.setCurrentIndex(row)

    def load_catalog(self) -> None:
        """Load the catalog (and the shown page's module) on the pool, once; the page is built when it is in.

        Started once the window's first frame is painted (see ``paintEvent``), so that the worker's Python
        does not share the interpreter with the GUI thread's first layout and paint."""
        if self._catalog_job is not None or self.state.catalog_loaded or self._catalog_error is not None:
            return
        factory = self._factories[list(self._factories)[max(self.nav.currentRow(), 0)]]
        module = factory.module if isinstance(factory, Lazy) else None
        state = self.state
        self._catalog_job = submit(
            state.pool, lambda: _load_for_first_page(state, module), self._catalog_arrived,
            self._catalog_failed, owner=self,
        )  # fmt: skip

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        super().paintEvent(event)
        self._painted = True
        if not self.state.catalog_loaded and self._catalog_job is None:
            QTimer.singleShot(0, self, self.load_catalog)  # after this first frame is on screen
        if self._after_first_frame:
            later, self._after_first_frame = self._after_first_frame, []
            for fn in later:
                QTimer.singleShot(0, self, fn)

    def after_first_frame(self, fn: Callable[[], object]) -> None:
        """Run ``fn`` once the window's first frame is painted (at once if it already was)."""
        if self._painted:
            fn()
        else:
            self._after_first_frame.append(fn)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if not self.state.catalog_loaded:  # a platform that never paints the window still gets its pages
            QTimer.singleShot(LOAD_FALLBACK_MS, self, self.load_catalog)

    def when_settled(
        self, after_ms: int, fn: Callable[[], object], latest_ms: int = SETTLED_LATEST_MS
    ) -> None:
        """Run ``fn`` ``after_ms`` from now once the first page has its data (catalog in, no page busy),
        at the latest ``latest_ms`` from now: background preloads then do not share the interpreter with
        the page the user is waiting for."""
        deadline = QTimer(self)
        deadline.setSingleShot(True)
        deadline.start(latest_ms)

        def attempt() -> None:
            if deadline.isActive() and not (self.state.catalog_loaded and not self.busy()):
                QTimer.singleShot(SETTLED_POLL_MS, self, attempt)
                return
            deadline.stop()
            deadline.deleteLater()
            fn()

        QTimer.singleShot(after_ms, self, attempt)

    def _catalog_arrived(self, _result: object) -> None:
        """The catalog is in: the page on screen is built in place of its placeholder."""
        self._catalog_job = None
        self._show_row(self.nav.currentRow())

    def _catalog_failed(self, message: str) -> None:
        """The catalog did not load: each page, when shown, tries again and says why it cannot open."""
        self._catalog_job = None
        self._catalog_error = message
        self._show_row(self.nav.currentRow())

    @Slot(str)
    def show_page(self, key: str) -> None:
        for row in range(self.nav.count()):
            if self.nav.item(row).data(KEY_ROLE) == key:
                self.nav.setCurrentRow(row)
                return

    # -- menus -----------------------------------------------------------------------------------

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

    # -- machine ---------------------------------------------------------------------------------

    @Slot()
    def start_probe(self) -> None:
        self.machine_label.setText(tr("Probing this computer…"))
        self.probe_failed = False
        job = submit(self.state.pool, self._probe, self._probe_done, self._probe_failed)
        self._jobs.add(job)

    @Slot(object)
    def _probe_done(self, machine: Machine) -> None:
        self._jobs.clear()
        psu = self.state.psu_watts()
        if psu:
            machine = machine.with_psu(psu)
        self.state.set_machine(machine, tr("This computer"), True)

    @Slot(str)
    def _probe_failed(self, message: str) -> None:
        self._jobs.clear()
        self.probe_failed = True
        self.machine_label.setText(esc(tr("Probing failed:") + " " + message))

    def _machine_changed(self, machine: Machine, label: str, is_live: bool) -> None:
        gpus = len(machine.gpus)
        what = tr("GPU") if gpus == 1 else tr("GPUs")
        # a snapshot's file name may be 255 bytes: cut, whole in the tooltip, so it never widens the window
        whole, label = label, label if len(label) <= 48 else label[:47] + "…"
        self.machine_label.setToolTip(
            "" if whole == label else f"<p style='white-space:pre-wrap'>{esc(whole)}</p>"
        )
        if is_live:
            self.machine_label.setText(f"<b>{esc(label)}</b> · {gpus} {what}")
            self.machine_label.setStyleSheet("")
        else:
            self.machine_label.setText(f"⚠ <b>{esc(label)}</b> · {gpus} {what} · {tr('not this computer')}")
            self.machine_label.setStyleSheet("QLabel#machineLabel { color: palette(highlight); }")
        if hasattr(self, "save_action"):
            self.save_action.setEnabled(True)
        self.setWindowTitle(f"RigCheck — {whole}")

    def open_snapshot(self, path: Path) -> bool:
        """Show a saved snapshot (or the one inside a report); a bad file gets a message, never a crash."""
        try:
            machine = load_machine(path)
        except InputError as exc:
            _warn(self, tr("Cannot open snapshot"), in_language(str(exc)))
            return False
        self._remember(path)
        self.state.set_machine(machine, f"{tr('Snapshot')} {path.name}", False)
        return True

    @Slot()
    def _open_snapshot_dialog(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        name, _ = QFileDialog.getOpenFileName(
            self, tr("Open snapshot"), "", tr("RigCheck snapshots and reports (*.json)")
        )
        if name:
            self.open_snapshot(Path(name))

    @Slot()
    def _save_audit_dialog(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        if self.state.machine is None:
            return
        name, _ = QFileDialog.getSaveFileName(self, tr("Save audit"), "rigcheck-audit.json", "JSON (*.json)")
        if name:
            try:
                save_machine(self.state.machine, Path(name))
            except (OSError, InputError) as exc:  # InputError: a folder (the shared writer refuses it)
                why = exc.problem if isinstance(exc, InputError) else exc.strerror or exc
                _warn(self, tr("Cannot save audit"), f"{name}: {why}")

    # -- drag and drop ---------------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt's name
        if event.mimeData().hasUrls() and all(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt's name
        urls = event.mimeData().urls()
        if urls:
            event.acceptProposedAction()
            self.load_path(Path(urls[0].toLocalFile()))

    def load_path(self, path: Path) -> None:
        """A dropped file: a snapshot opens as the machine, a monitor CSV in the Monitor's replay;
        anything else is read as a model."""
        if path.exists() and not (path.is_file() or path.is_dir()):  # a pipe or device: a read may never end
            _warn(
                self,
                tr("Cannot open this file"),
                tr(
                    "{name} is not a file or folder RigCheck can open (a pipe, a socket or a device)",
                    name=path.name,
                ),
            )
            return
        if path.suffix.lower() == ".csv":
            self.show_page("monitor")
            self.pages["monitor"].open_recording(path)  # type: ignore[attr-defined]
            return
        if _looks_like_snapshot(path):
            self.open_snapshot(path)
            return
        from rigcheck.core.models.files import load_model_path

        self.statusBar().showMessage(tr("Reading") + f" {path.name}…")
        job = submit(
            self.state.pool,
            lambda: load_model_path(path, catalog=self.state.catalog),
            self._model_loaded,
            self._model_failed,
        )
        self._jobs.add(job)

    @Slot(object)
    def _model_loaded(self, model: object) -> None:
        self._jobs.clear()
        self.statusBar().clearMessage()
        self.state.choose_model(model)  # type: ignore[arg-type]

    @Slot(str)
    def _model_failed(self, message: str) -> None:
        self._jobs.clear()
        self.statusBar().clearMessage()
        _warn(self, tr("Cannot read this model"), message.split(": ", 1)[-1])

    # -- settings --------------------------------------------------------------------------------

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

    def _restore(self) -> None:
        # a damaged or hand-edited settings file (a string, a number, bytes that are no geometry) never
        # stops the window from opening: what does not restore is the default (issue 30 #15)
        geometry = self.state.settings.value("window/geometry")
        if not (isinstance(geometry, QByteArray | bytes) and self.restoreGeometry(geometry)):
            self.resize(1280, 800)
        try:
            page = int(self.state.settings.value("window/page", 0))  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError):
            page = 0
        if 0 <= page < self.nav.count():
            self.nav.setCurrentRow(page)

    def shutdown(self) -> None:
        """Stop every page's threads and the pool's queued work, and wait for what is running: a QThread
        still running when its page is freed aborts the process (SIGABRT at quit, issue 26)."""
        for page in self._built.values():
            shutdown = getattr(page, "shutdown", None)
            if callable(shutdown):
                shutdown()  # the Monitor page joins its sampling thread; others cancel their work
        self.state.pool.clear()  # jobs not started yet never start
        self.state.pool.waitForDone(10_000)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        self.shutdown()
        self.state.settings.setValue("window/geometry", self.saveGeometry())
        self.state.settings.setValue("window/page", self.nav.currentRow())
        super().closeEvent(event)


def _warn(parent: QWidget, title: str, text: str) -> None:
    from rigcheck.gui.widgets import warn  # the widgets module (and Qt's enums) after the first frame

    warn(parent, title, text)
