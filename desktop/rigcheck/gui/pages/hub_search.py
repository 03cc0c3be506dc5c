"""The Models page's hub search: the Hugging Face hub as a live catalog, each result answered with its fit
on the machine the pages show.

:class:`HubSearch` runs :func:`search_hub` and :func:`answer_hits` (core/models/hub_search.py) on the app's
thread pool. It only emits signals (queued to the GUI thread) and reads a :class:`threading.Event` that the
Cancel button sets; it never touches a widget. Results arrive one at a time, so the table fills as the
headers are read; a hub that cannot be reached is one line under the search box.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, QRunnable, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rigcheck.core.catalog import Catalog
from rigcheck.core.errors import InputError
from rigcheck.core.known_text import in_language
from rigcheck.core.machine import Machine
from rigcheck.core.models.hub import Cancelled
from rigcheck.core.models.hub_search import HubAnswer, HubHit, answer_hits, search_hub
from rigcheck.gui.i18n import num, tr
from rigcheck.gui.state import AppState

#: results asked of the hub per search
LIMIT = 20
WHERE = {"gpu": "runs on the GPU", "gpu+ram": "GPU + RAM", "cpu": "on the CPU"}


class _SearchSignals(QObject):
    progress = Signal(str)
    hits = Signal(object)
    answer = Signal(object)
    done = Signal()
    failed = Signal(str)
    cancelled = Signal()


class HubSearch(QRunnable):
    """Search the hub for ``query`` and answer each result on ``machine`` (None: list them only)."""

    def __init__(self, query: str, machine: Machine | None, catalog: Catalog, stop: threading.Event) -> None:
        super().__init__()
        self.signals = _SearchSignals()
        self._query = query
        self._machine = machine
        self._catalog = catalog
        self._stop = stop

    def run(self) -> None:
        try:
            hits = search_hub(self._query, limit=LIMIT)
            self.signals.hits.emit(tuple(hits))
            if self._machine is not None:
                answers = answer_hits(
                    hits,
                    self._machine,
                    self._catalog,
                    progress=self.signals.progress.emit,
                    cancel=self._stop.is_set,
                )
                for answer in answers:
                    self.signals.answer.emit(answer)
        except Cancelled:
            self.signals.cancelled.emit()
        except InputError as exc:
            self.signals.failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - shown to the user, never lost
            self.signals.failed.emit(f"hf:search: {type(exc).__name__}: {exc}")
        else:
            if self._stop.is_set():
                self.signals.cancelled.emit()
            else:
                self.signals.done.emit()


class HubSearchPanel(QWidget):
    """A query box, Search the hub / Cancel, one status line, and a table of results with their fit."""

    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self._job: HubSearch | None = None
        self._stop = threading.Event()
        self._running = False
        self._rows: dict[str, int] = {}
        self.answers: dict[str, HubAnswer] = {}

        self.query = QLineEdit()
        self.query.setPlaceholderText(tr("Search the hub, e.g. qwen3 gguf"))
        self.query.setClearButtonEnabled(True)
        self.query.setAccessibleName(tr("Hub search"))
        self.query.returnPressed.connect(self.start)
        self.search_button = QPushButton(tr("Search the hub"))
        self.search_button.clicked.connect(self.start)
        self.cancel_button = QPushButton(tr("Cancel"))
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        self.status.setVisible(False)
        self.results = QTableWidget(0, 4)
        self.results.setHorizontalHeaderLabels(
            [tr("Model"), tr("Downloads"), tr("Best format"), tr("Fit here")]
        )
        self.results.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.results.verticalHeader().setVisible(False)
        self.results.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.results.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.results.cellDoubleClicked.connect(self._choose_row)
        self.results.setVisible(False)

        row = QHBoxLayout()
        row.addWidget(self.query, 1)
        row.addWidget(self.search_button)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(self.results)

    @property
    def busy(self) -> bool:
        return self._running

    @Slot()
    def start(self) -> None:
        if self._running:
            return
        self._stop = stop = threading.Event()
        self.destroyed.connect(lambda *_: stop.set())  # a search outliving the panel stops at its next step
        job = HubSearch(self.query.text().strip(), self.state.machine, self.state.catalog, stop)
        queued = Qt.ConnectionType.QueuedConnection
        job.signals.progress.connect(self._progress, queued)
        job.signals.hits.connect(self._hits, queued)
        job.signals.answer.connect(self._answer, queued)
        job.signals.done.connect(self._done, queued)
        job.signals.failed.connect(self._failed, queued)
        job.signals.cancelled.connect(self._cancelled, queued)
        self._job = job  # kept until the next search, so its signals outlive every queued emit
        self._set_busy(True)
        self._say(tr("Searching the hub…"))
        self.state.pool.start(job)

    @Slot()
    def cancel(self) -> None:
        if self._running:
            self._stop.set()
            self.cancel_button.setEnabled(False)
            self._say(tr("Cancelling…"))

    @Slot(str)
    def _progress(self, step: str) -> None:
        if self._running and not self._stop.is_set():
            self._say(step)

    @Slot(object)
    def _hits(self, hits: tuple[HubHit, ...]) -> None:
        self.results.setRowCount(0)
        self._rows = {}
        self.answers = {}
        for hit in hits:
            row = self.results.rowCount()
            self.results.insertRow(row)
            self._rows[hit.id] = row
            cells = (hit.id, num(hit.downloads) if hit.downloads is not None else "?", "", "")
            for column, text in enumerate(cells):
                self.results.setItem(row, column, QTableWidgetItem(text))
        self.results.setVisible(bool(hits))
        if not hits:
            self._say(tr("No text-generation model on the hub matches"))

    @Slot(object)
    def _answer(self, answer: HubAnswer) -> None:
        row = self._rows.get(answer.hit.id)
        if row is None:
            return
        self.answers[answer.hit.id] = answer
        if answer.problem is not None:
            fit = answer.problem.splitlines()[0] if answer.problem else ""
        elif answer.where is None:
            fit = tr("does not run here")
        else:
            fit = tr(WHERE.get(answer.where, answer.where))
            if answer.decode_tokens_per_s:
                fit += tr(", ~{speed} tokens/s", speed=num(answer.decode_tokens_per_s, 1))
        self.results.setItem(row, 2, QTableWidgetItem(answer.quant or ""))
        item = QTableWidgetItem(fit)
        item.setToolTip(fit)
        self.results.setItem(row, 3, item)

    @Slot()
    def _done(self) -> None:
        self._set_busy(False)
        if self.results.rowCount():
            self._say(tr("{count} results; double-click one to fit it", count=self.results.rowCount()))

    @Slot(str)
    def _failed(self, message: str) -> None:
        self._set_busy(False)
        line = message.strip().splitlines()[0] if message.strip() else ""
        self._say(f"⚠ {in_language(line)}")  # the hub's and the readers' lines are English

    @Slot()
    def _cancelled(self) -> None:
        self._set_busy(False)
        self._say(tr("Cancelled"))

    @Slot(int, int)
    def _choose_row(self, row: int, _column: int) -> None:
        item = self.results.item(row, 0)
        answer = self.answers.get(item.text()) if item is not None else None
        if answer is not None and answer.model is not None:
            self.state.choose_model(answer.model)

    def _set_busy(self, busy: bool) -> None:
        self._running = busy
        self.search_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)

    def _say(self, text: str) -> None:
        self.status.setText(text)
        self.status.setVisible(bool(text))
