"""The main window's catalog loading: started on the pool once the first frame is painted, the shown page
built in place of its placeholder when it is in (or, failed, each page saying why), and what waits for the
first frame or for the first page to have its data."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer

from rigcheck.gui.startup import Lazy
from rigcheck.gui.startup import load_for_first_page as _load_for_first_page
from rigcheck.gui.workers import Job, submit

if TYPE_CHECKING:
    from PySide6.QtWidgets import QListWidget, QWidget

    from rigcheck.gui.state import AppState

#: start-up preloads wait for the first page to have its data, polling this often, for at most this long
SETTLED_POLL_MS = 50
SETTLED_LATEST_MS = 700


class CatalogLoading:
    """MainWindow's catalog job (``_catalog_job``, ``_catalog_error``) and its first-frame hooks."""

    state: AppState
    nav: QListWidget
    _factories: dict[str, Callable[[AppState], QWidget]]
    _catalog_job: Job | None
    _catalog_error: str | None
    _after_first_frame: list[Callable[[], object]]
    _painted: bool

    if TYPE_CHECKING:  # MainWindow's

        def busy(self) -> bool: ...

        def _show_row(self, row: int) -> None: ...

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

    def after_first_frame(self, fn: Callable[[], object]) -> None:
        """Run ``fn`` once the window's first frame is painted (at once if it already was)."""
        if self._painted:
            fn()
        else:
            self._after_first_frame.append(fn)

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
