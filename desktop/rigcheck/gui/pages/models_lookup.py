"""The Models page's hub look-up: :func:`load_hub_model` on the thread pool as a :class:`HubLookup`.

The worker only emits signals (queued to the GUI thread) and reads a :class:`threading.Event` that the
Cancel button sets; it never touches a widget. Errors are shown inline, in one line: no dialog blocks the
page."""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, QRunnable, Qt, Signal, SignalInstance, Slot
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton, QWidget

from rigcheck.core.catalog import Catalog
from rigcheck.core.errors import InputError
from rigcheck.core.known_text import in_language
from rigcheck.core.models.hub import Cancelled, load_hub_model
from rigcheck.core.models.spec import ModelInfo
from rigcheck.gui.i18n import tr
from rigcheck.gui.state import AppState


class _LookupSignals(QObject):
    progress = Signal(str)
    found = Signal(object)
    failed = Signal(str)
    cancelled = Signal()


class HubLookup(QRunnable):
    """``load(repo_id, progress=…, cancel=…, catalog=…)`` on a pool thread, reported through signals.

    It holds no widget: ``stop`` is the only thing the GUI shares with it, and the GUI only sets it.
    """

    def __init__(
        self, repo_id: str, load: Callable[..., ModelInfo], catalog: Catalog, stop: threading.Event
    ) -> None:
        super().__init__()
        self.repo_id = repo_id
        self.signals = _LookupSignals()
        self._load = load
        self._catalog = catalog
        self._stop = stop

    def run(self) -> None:
        try:
            model = self._load(
                self.repo_id,
                progress=self.signals.progress.emit,
                cancel=self._stop.is_set,
                catalog=self._catalog,
            )
        except Cancelled:
            self.signals.cancelled.emit()
        except InputError as exc:
            self.signals.failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - anything else is shown to the user, never lost
            self.signals.failed.emit(f"hf:{self.repo_id}: {type(exc).__name__}: {exc}")
        else:
            if self._stop.is_set():  # finished just as the user said stop: honour the stop
                self.signals.cancelled.emit()
            else:
                self.signals.found.emit(model)


class HubLookupControls:
    """ModelsPage's "Not in the catalog?" row (``hub_id``, ``lookup_button``, ``cancel_button``), its
    progress (``activity``, ``step``) and the page's one-line ``message``."""

    state: AppState
    hub_id: QLineEdit
    lookup_button: QPushButton
    cancel_button: QPushButton
    activity: QWidget
    step: QLabel
    message: QLabel
    _lookup: HubLookup | None
    _repo_id: str
    _stop: threading.Event
    _running: bool
    destroyed: SignalInstance  # QObject's

    @Slot()
    def start_lookup(self) -> None:
        if self._running:
            return
        repo_id = self.hub_id.text().strip()
        if not repo_id:
            self._show_message(tr("Type a Hugging Face id such as org/name"), error=True)
            self.hub_id.setFocus()
            return
        self._stop = stop = threading.Event()
        self.destroyed.connect(lambda *_: stop.set())  # a look-up outliving the page stops at its next step
        job = HubLookup(repo_id, load_hub_model, self.state.catalog, self._stop)
        queued = Qt.ConnectionType.QueuedConnection
        job.signals.progress.connect(self._lookup_progress, queued)
        job.signals.found.connect(self._lookup_found, queued)
        job.signals.failed.connect(self._lookup_failed, queued)
        job.signals.cancelled.connect(self._lookup_cancelled, queued)
        self._lookup = job  # kept until the next look-up, so its signals outlive every queued emit
        self._repo_id = repo_id
        self._show_message("")
        self.step.setText(tr("Looking up {repo}…").format(repo=repo_id))
        self._set_busy(True)
        self.state.pool.start(job)

    @Slot()
    def cancel_lookup(self) -> None:
        if self._running:
            self._stop.set()
            if self.cancel_button.hasFocus():
                self.hub_id.setFocus()
            self.cancel_button.setEnabled(False)
            self.step.setText(tr("Cancelling…"))

    @Slot(str)
    def _lookup_progress(self, step: str) -> None:
        if self._running and not self._stop.is_set():
            self.step.setText(tr("Looking up {repo}: {step}…").format(repo=self._repo_id, step=step))

    @Slot(object)
    def _lookup_found(self, model: ModelInfo) -> None:
        self._set_busy(False)
        self.state.choose_model(model)

    @Slot(str)
    def _lookup_failed(self, message: str) -> None:
        self._set_busy(False)
        self._show_message(in_language(message), error=True)

    @Slot()
    def _lookup_cancelled(self) -> None:
        self._set_busy(False)
        self._show_message(tr("Cancelled"))

    def _set_busy(self, busy: bool) -> None:
        # a button losing its focus as it is disabled hands it to the one the user needs next
        if busy:
            focus_on_lookup = self.lookup_button.hasFocus()
            self.cancel_button.setEnabled(True)
            if focus_on_lookup:
                self.cancel_button.setFocus()
            self.lookup_button.setEnabled(False)
        else:
            focus_on_cancel = self.cancel_button.hasFocus()
            self.lookup_button.setEnabled(True)
            if focus_on_cancel:
                self.hub_id.setFocus()
            self.cancel_button.setEnabled(False)
        self._running = busy
        self.activity.setVisible(busy)

    def _show_message(self, text: str, *, error: bool = False) -> None:
        line = text.strip().splitlines()[0] if text.strip() else ""
        self.message.setText(f"⚠ {line}" if line and error else line)
        self.message.setVisible(bool(line))
