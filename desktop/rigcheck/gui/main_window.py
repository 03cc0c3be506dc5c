"""The main window: pages on the left, the machine being shown on top, menus, drag and drop.

Pages are built by :meth:`MainWindow.build_pages` from the ``PAGES`` table and talk to each other
only through the shared :class:`~rigcheck.gui.state.AppState`. Switching language translates them in
place (:mod:`rigcheck.gui.retranslate`): every page keeps its settings, its open files and its threads.

The window builds its widgets, its pages and its Qt event handlers here, and mixes in the parts that own a
piece of it: the catalog loading after the first frame (``window_loading``), the menus and recent files
(``window_menus``), the language switch (``window_language``), and the machine shown with the files opened,
saved and dropped (``window_machine``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QTimer, Slot
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

from rigcheck.gui.i18n import tr
from rigcheck.gui.startup import KEY_ROLE, LazyPages
from rigcheck.gui.startup import fill_placeholder as _fill_placeholder
from rigcheck.gui.startup import page_table as _page_table
from rigcheck.gui.startup import warm_imports as _warm_imports
from rigcheck.gui.state import AppState
from rigcheck.gui.window_language import LanguageSwitch
from rigcheck.gui.window_loading import CatalogLoading
from rigcheck.gui.window_machine import MachineSources
from rigcheck.gui.window_menus import Menus
from rigcheck.gui.workers import Job, report_exception, submit

if TYPE_CHECKING:  # the event classes only annotate: each class PySide sets up costs ~0.3 ms at start-up
    from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QPaintEvent, QShowEvent

    from rigcheck.core.machine import Machine

#: a shown window whose first frame was not painted by then (a platform that never paints) loads anyway
LOAD_FALLBACK_MS = 250


class MainWindow(CatalogLoading, Menus, LanguageSwitch, MachineSources, QMainWindow):
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

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        super().paintEvent(event)
        self._painted = True
        if not self.state.catalog_loaded and self._catalog_job is None:
            QTimer.singleShot(0, self, self.load_catalog)  # after this first frame is on screen
        if self._after_first_frame:
            later, self._after_first_frame = self._after_first_frame, []
            for fn in later:
                QTimer.singleShot(0, self, fn)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if not self.state.catalog_loaded:  # a platform that never paints the window still gets its pages
            QTimer.singleShot(LOAD_FALLBACK_MS, self, self.load_catalog)

    @Slot(str)
    def show_page(self, key: str) -> None:
        for row in range(self.nav.count()):
            if self.nav.item(row).data(KEY_ROLE) == key:
                self.nav.setCurrentRow(row)
                return

    # -- drag and drop ---------------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt's name
        if event.mimeData().hasUrls() and all(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt's name
        urls = event.mimeData().urls()
        if urls:
            event.acceptProposedAction()
            self.load_path(Path(urls[0].toLocalFile()))

    # -- settings --------------------------------------------------------------------------------

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
