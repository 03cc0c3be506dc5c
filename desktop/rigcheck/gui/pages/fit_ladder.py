"""The Fit page's format table ("ladder": every weight format's answer on this machine, the
recommended one marked) and the command lines for the chosen format, worked out on the pool."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
)

from rigcheck.core.errors import InputError
from rigcheck.core.estimate.commands import Commands, commands_for
from rigcheck.core.estimate.fit import FitResult
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.recommend import (
    Recommendation,
    Rung,
    display_quant,
    recommend,
    where_of,
)
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.units import approx_speed, fmt_bytes
from rigcheck.gui.fitview import view_of_result
from rigcheck.gui.i18n import tr
from rigcheck.gui.state import AppState
from rigcheck.gui.widgets import sized_once, tooltip
from rigcheck.gui.workers import Job, submit

#: the most rows the format table shows before it scrolls
LADDER_ROWS = 16


class FormatLadder:
    """FitPage's format table (``ladder``) and its command line (``command``, ``command_engine``)."""

    state: AppState
    quant: QComboBox
    ladder: QTableWidget
    ladder_note: QLabel
    command: QLineEdit
    command_engine: QComboBox
    command_note: QLabel
    copy_button: QPushButton
    commands: Commands | None
    recommendation: Recommendation | None
    _ladder_job: Job | None
    _ladder_generation: int

    if TYPE_CHECKING:  # FitPage's

        def request(self) -> Request: ...

        def _quant_index(self, quant_id: str | None) -> int: ...

    def _fill_ladder(self, model: ModelInfo, result: FitResult) -> None:
        """Every format's answer and the commands, worked out on the pool (a recommendation walks a dozen
        formats: 5–40 ms on a big model or machine) and shown when ready; a newer request wins."""
        self._ladder_generation += 1
        generation = self._ladder_generation
        machine, catalog, live = self.state.machine, self.state.catalog, self.state.is_live
        request = self.request()
        current = display_quant(result.estimate.quant_name)

        def work() -> tuple[Recommendation | None, Commands | None]:
            if machine is None:
                return None, None
            try:
                rec = recommend(
                    model, machine, request.workload, catalog, context=request.context,
                    engine=request.engine, live=live, request=request,
                )  # fmt: skip
            except InputError:
                return None, None
            rung = Rung(current, None, result, where_of(result))
            return rec, commands_for(rec, machine, catalog, live=live, rung=rung)

        def done(answer: tuple[Recommendation | None, Commands | None]) -> None:
            if generation == self._ladder_generation:  # else stale: a newer setting has been asked for
                self._ladder_job = None
                self._show_ladder(*answer, current)

        def failed(message: str) -> None:
            if generation == self._ladder_generation:
                self._ladder_job = None
                self.ladder_note.setText(f"✘ {message}")

        self._ladder_job = submit(self.state.pool, work, done, failed, owner=self)

    def _show_ladder(self, rec: Recommendation | None, commands: Commands | None, current: str) -> None:
        self.recommendation = rec
        self.ladder.setRowCount(0)
        if rec is None:
            self.ladder_note.setText("")
            self._set_commands(None)
            return
        self.ladder_note.setText(
            tr("Recommended: {answer}. Double-click a format to try it.").format(
                answer=" · ".join(rec.why[:1]) or tr("nothing runs here")
            )
        )
        with sized_once(self.ladder.horizontalHeader()):  # the columns measured once, not per cell
            self._fill_rungs(rec, current)
        # every format shown at once (up to LADDER_ROWS): the page scrolls, not a 6-row box inside it
        rows = min(self.ladder.rowCount(), LADDER_ROWS)
        height = self.ladder.horizontalHeader().height() + 2 * self.ladder.frameWidth() + 2
        height += sum(self.ladder.rowHeight(r) for r in range(rows))
        self.ladder.setMinimumHeight(max(120, height))
        self.ladder.setMaximumHeight(max(120, height))
        self._set_commands(commands)

    def _fill_rungs(self, rec: Recommendation, current: str) -> None:
        """One row per format of ``rec``; the one shown (``current``) selected once all are in (a row
        selected midway lays the table out, and each cell set after it measured every column again)."""
        self.ladder.setRowCount(len(rec.ladder))
        shown = None
        for row, rung in enumerate(rec.ladder):
            view = view_of_result(rung.result, rung.quant)
            tps = rung.tokens_per_s
            cells = (
                ("▶ " if rung is rec.best else "") + rung.quant,
                f"{view.glyph} {tr(view.words)}",
                fmt_bytes(rung.result.estimate.total_bytes),
                fmt_bytes(rung.result.estimate.total("weights")),  # the weight files: what a download takes
                f"~{approx_speed(tps)}" if tps is not None and rung.runs else "—",
                rung.quality_note() or "—",  # none published: a dash, as a speed not known
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column in (2, 3, 4):  # sizes and speeds line up on their digits
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if column == 1:
                    item.setForeground(QColor(view.colour))
                    item.setToolTip(rung.words)
                if column == len(cells) - 1 and rung.quality is not None:
                    item.setToolTip(tooltip(rung.quality.source))  # a catalog overlay's text
                self.ladder.setItem(row, column, item)
            if rung.quant == current:
                shown = row
        if shown is not None:
            self.ladder.selectRow(shown)

    def _set_commands(self, commands: Commands | None) -> None:
        self.commands = commands
        wanted = self.command_engine.currentText()
        self.command_engine.blockSignals(True)
        self.command_engine.clear()
        for engine in commands.commands if commands else {}:
            self.command_engine.addItem(engine)
        index = self.command_engine.findText(wanted)
        self.command_engine.setCurrentIndex(max(index, 0))
        self.command_engine.blockSignals(False)
        self._show_command()

    @Slot()
    def _show_command(self) -> None:
        commands = self.commands
        engine = self.command_engine.currentText()
        text = commands.commands.get(engine, "") if commands else ""
        self.command.setText(text)
        self.command.setCursorPosition(0)
        self.copy_button.setEnabled(bool(text))
        notes = []
        if commands is not None and commands.download_bytes:
            notes.append(f"{tr('Download')}: {fmt_bytes(commands.download_bytes)}")
        if commands is not None:
            notes += [f"{name}: {note}" for name, note in commands.notes.items()]
        self.command_note.setText(" · ".join(notes))

    @Slot()
    def copy_command(self) -> None:
        if self.command.text():
            QGuiApplication.clipboard().setText(self.command.text())
            self.command_note.setText(tr("Copied to the clipboard"))

    @Slot(int, int)
    def _ladder_chosen(self, row: int, _column: int) -> None:
        rec = self.recommendation
        if rec is None or not 0 <= row < len(rec.ladder):
            return
        index = self._quant_index(rec.ladder[row].quant_id)
        if index >= 0:
            self.quant.setCurrentIndex(index)
