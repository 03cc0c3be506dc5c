"""The Models page's detail pane: the selected model on this machine, as LM Studio shows a model before a
download (issue 26 Build 4). A badge per format says where it runs here, the memory it needs on this
machine, its download and its speed; below, the command that runs the recommended format, to copy.

The recommendation (every format, and the commands) is worked out on the pool (``workers.submit``) and
shown when ready; a newer selection, machine or backend wins and a stale answer is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QGuiApplication, QResizeEvent
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget

from rigcheck.core.catalog import Backend, Catalog, ModelSpec
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.commands import Commands, commands_for
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.recommend import Recommendation, recommend
from rigcheck.core.known_text import in_language
from rigcheck.core.machine import Machine
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.units import approx_speed, fmt_bytes
from rigcheck.gui.fitview import view_of_result
from rigcheck.gui.i18n import tr
from rigcheck.gui.state import AppState
from rigcheck.gui.widgets import Card, esc, muted, tooltip
from rigcheck.gui.workers import Job, submit


@dataclass(frozen=True)
class Badge:
    """One format of the model on this machine, as its badge says it."""

    quant: str
    glyph: str
    #: English source words (translated when shown): "On the GPU", "GPU + RAM", …
    words: str
    colour: str
    #: what it needs on this machine (weights, KV cache at the asked context, runtime)
    memory_bytes: int
    #: the weight files' size: what a download of this format takes
    download_bytes: int
    tokens_per_s: float | None
    recommended: bool


@dataclass(frozen=True)
class Detail:
    spec: ModelSpec
    badges: tuple[Badge, ...]
    why: str
    commands: Commands | None
    #: why nothing could be worked out (the model's config cannot be read), else ""
    error: str = ""


def work_out_detail(
    spec: ModelSpec, machine: Machine, catalog: Catalog, *, live: bool, backend: Backend | None
) -> Detail:
    """Every format's answer for ``spec`` on ``machine`` and the commands for the recommended one (inference
    at the recommendation's context, as Overview, Models and 'rigcheck fit' answer). Runs on a worker."""
    rec: Recommendation = recommend(
        from_catalog(spec), machine, "inference", catalog, live=live, request=Request(backend=backend)
    )
    badges = []
    for rung in rec.ladder:
        view = view_of_result(rung.result, rung.quant)
        est = rung.result.estimate
        badges.append(
            Badge(
                rung.quant,
                view.glyph,
                view.short_words,
                view.colour,
                est.total_bytes,
                est.total("weights"),
                rung.tokens_per_s if rung.runs else None,
                rung is rec.best,
            )
        )
    commands = commands_for(rec, machine, catalog, live=live) if rec.best is not None else None
    return Detail(spec, tuple(badges), " · ".join(rec.why[:1]), commands)


def badge_html(badge: Badge) -> str:
    """ "✓ ▶ Q4_K_M 5.6 GiB ↓ 4.6 GiB ~95 tok/s", kept on one line (the gaps between badges wrap): the
    shared glyph and colour of where it runs (its words in the tooltip and the accessible text), what it
    needs on this machine, its download and its speed."""
    speed = f" ~{approx_speed(badge.tokens_per_s)} {tr('tok/s')}" if badge.tokens_per_s is not None else ""
    text = f"{fmt_bytes(badge.memory_bytes)} ↓ {fmt_bytes(badge.download_bytes)}{speed}"
    name = esc(f"▶ {badge.quant}" if badge.recommended else badge.quant).replace(" ", "&nbsp;")
    glyph = f"<span style='color:{badge.colour}'>{badge.glyph}&nbsp;<b>{name}</b></span>"
    # no break inside a badge, not even after the "/" of "tok/s" (Qt breaks there): a word joiner holds it
    return f"{glyph}&nbsp;{esc(text).replace(' ', '&nbsp;').replace('/', '&#8288;/&#8288;')}"


#: the width one badge takes in the grid of formats (the longest: "✓ ▶ Q4_K_XL 123.4 GiB ↓ 120.1 GiB ~1,234
#: tok/s" at the default font)
BADGE_PX = 300


def badges_table(cells: list[str], columns: int) -> str:
    """The badges in a grid of ``columns``: formats line up in columns instead of wrapping anywhere."""
    columns = max(1, columns)
    rows = [cells[i : i + columns] for i in range(0, len(cells), columns)]
    body = "".join(
        "<tr>" + "".join(f"<td style='padding-right:18px'>{cell}</td>" for cell in row) + "</tr>"
        for row in rows
    )
    return f"<table cellspacing='0' cellpadding='1'>{body}</table>"


def badge_words(badge: Badge) -> str:
    """The badge in words, for the tooltip and screen readers."""
    speed = f", ~{approx_speed(badge.tokens_per_s)} {tr('tok/s')}" if badge.tokens_per_s is not None else ""
    return (
        f"{badge.quant}: {tr(badge.words)}, {fmt_bytes(badge.memory_bytes)} {tr('here')}, "
        f"{tr('Download')} {fmt_bytes(badge.download_bytes)}{speed}"
    )


class ModelDetail(Card):
    """The selected catalog model on this machine: per-format badges and the command to run it."""

    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self.body.setContentsMargins(12, 8, 12, 8)
        self.body.setSpacing(4)
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.body.addWidget(self.title)
        self.badges = QLabel()
        self.badges.setTextFormat(Qt.TextFormat.RichText)
        self.badges.setWordWrap(True)
        self.badges.setAccessibleName(tr("Formats on this machine"))
        self.body.addWidget(self.badges)
        self.legend = muted(
            tr("Each format: the memory it needs here · ↓ its download · its speed; ▶ recommended.")
        )
        self.legend.setVisible(False)
        self.body.addWidget(self.legend)
        self._cells: list[str] = []
        self._columns = 0
        row = QHBoxLayout()
        self.engine = QComboBox()
        self.engine.setAccessibleName(tr("Engine of the command"))
        self.engine.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.command = QLineEdit()
        self.command.setReadOnly(True)
        self.command.setAccessibleName(tr("Command to run it"))
        self.copy_button = QPushButton(tr("Copy"))
        self.copy_button.setAccessibleName(tr("Copy the command"))
        self.copy_button.clicked.connect(self.copy_command)
        row.addWidget(QLabel(tr("Run it with")))
        row.addWidget(self.engine)
        row.addWidget(self.command, 1)
        row.addWidget(self.copy_button)
        self.command_row = QWidget()
        self.command_row.setLayout(row)
        row.setContentsMargins(0, 0, 0, 0)
        self.body.addWidget(self.command_row)
        self.note = muted("")
        self.note.setWordWrap(True)
        self.body.addWidget(self.note)
        self.engine.currentIndexChanged.connect(self._show_command)
        self.detail: Detail | None = None
        self.spec: ModelSpec | None = None
        self._job: Job | None = None
        self._generation = 0
        self._clear(tr("Select a model to see how each of its formats runs here."))

    def busy(self) -> bool:
        return self._job is not None

    def show_spec(self, spec: ModelSpec | None) -> None:
        """Work out ``spec`` on the current machine (None: nothing selected)."""
        self.spec = spec
        self._generation += 1
        generation = self._generation
        machine = self.state.machine
        if spec is None or machine is None:
            self._job = None
            self._clear(tr("Select a model to see how each of its formats runs here."))
            return
        catalog, live, backend = self.state.catalog, self.state.is_live, self.state.backend
        self.title.setText(f"<b>{esc(spec.name)}</b> · {esc(spec.hf_id)}")
        self.badges.setText(esc(tr("Working out what runs here…")))

        def done(detail: Detail) -> None:
            if generation == self._generation:  # else stale: another model, machine or backend asked since
                self._job = None
                self._show(detail)

        def failed(message: str) -> None:
            if generation == self._generation:
                self._job = None
                self._clear(f"✘ {message}")

        def work() -> Detail:
            try:
                return work_out_detail(spec, machine, catalog, live=live, backend=backend)
            except InputError as exc:  # one line naming the problem, as the rest of the page says it
                return Detail(spec, (), "", None, in_language(str(exc)))

        self._job = submit(self.state.pool, work, done, failed, owner=self)

    def refresh(self) -> None:
        """The machine, backend or language changed: the same model again."""
        self.show_spec(self.spec)

    def _clear(self, message: str) -> None:
        self.detail = None
        if self.spec is None:
            self.title.setText(esc(message))
            self.badges.clear()
        else:
            self.badges.setText(esc(message))
        self.badges.setVisible(self.spec is not None)
        self.legend.setVisible(False)
        self._cells = []
        self._fill_engines(None)

    def _show(self, detail: Detail) -> None:
        if detail.error:
            self._clear(f"✘ {detail.error}")
            return
        self.detail = detail
        self.badges.setVisible(True)
        self._cells = [badge_html(b) for b in detail.badges]
        self._columns = 0
        self._lay_out_badges()
        self.legend.setVisible(bool(self._cells))
        words = "\n".join(badge_words(b) for b in detail.badges)
        self.badges.setAccessibleDescription(words)
        self.badges.setToolTip(tooltip("\n".join(t for t in (detail.why, words) if t)))
        self._fill_engines(detail.commands)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._lay_out_badges()

    def _lay_out_badges(self) -> None:
        """As many badge columns as the pane's width holds (two at 1024 px, five at 1920)."""
        if not self._cells:
            return
        columns = max(1, min(len(self._cells), (self.width() - 24) // BADGE_PX))
        if columns != self._columns:
            self._columns = columns
            self.badges.setText(badges_table(self._cells, columns))

    def _fill_engines(self, commands: Commands | None) -> None:
        wanted = self.engine.currentText() or "llama.cpp"  # the one most people run first
        self.engine.blockSignals(True)
        self.engine.clear()
        for engine in commands.commands if commands else {}:
            self.engine.addItem(engine)
        self.engine.setCurrentIndex(max(self.engine.findText(wanted), 0))
        self.engine.blockSignals(False)
        self.command_row.setVisible(self.engine.count() > 0)
        self._show_command()

    @Slot()
    def _show_command(self) -> None:
        commands = self.detail.commands if self.detail is not None else None
        text = commands.commands.get(self.engine.currentText(), "") if commands else ""
        self.command.setText(text)
        self.command.setCursorPosition(0)
        self.copy_button.setEnabled(bool(text))
        self.note.setText(
            tr("Nothing runs on this machine at this context.")
            if self.detail is not None and commands is None
            else ""
        )
        self.note.setVisible(bool(self.note.text()))

    @Slot()
    def copy_command(self) -> None:
        if self.command.text():
            QGuiApplication.clipboard().setText(self.command.text())
            self.note.setText(tr("Copied to the clipboard"))
            self.note.setVisible(True)
