"""Parts of the Upgrade page: the renting-vs-owning chart (pyqtgraph imported when first drawn) and the
table of ways to run a model, each row with a "Try it" button."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QRect, Qt, QTimer
from PySide6.QtGui import QColor, QResizeEvent
from PySide6.QtWidgets import (
    QHeaderView,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rigcheck.core.estimate.recommend import display_quant
from rigcheck.core.estimate.soldered import MachineChoice, choice_label
from rigcheck.core.estimate.upgrade import Option, Outcome
from rigcheck.core.verdict_words import speed_text
from rigcheck.gui.fitview import verdict_view
from rigcheck.gui.i18n import num, tr
from rigcheck.gui.markup import units_whole
from rigcheck.gui.widgets import esc, tooltip


def _outcome_view(outcome: Outcome) -> tuple[str, str, str, float | None, bool]:
    """(glyph, words, colour, speed, training) of an outcome, as :func:`verdict_view` says it."""
    training = outcome.decode_tokens_per_s is None and outcome.train_tokens_per_s is not None
    speed = outcome.train_tokens_per_s if training else outcome.decode_tokens_per_s
    workload = "lora" if training else "inference"
    glyph, words, colour = verdict_view(outcome.verdict, outcome.where, speed, workload)
    return glyph, words, colour, speed, training


def outcome_colour(outcome: Outcome) -> QColor:
    """The verdict's colour, as the Models page and the Overview's cards paint it (green on the GPU, amber
    with part in RAM, red when it does not fit): the Upgrade tables printed every verdict in plain text."""
    return QColor(_outcome_view(outcome)[2])


def outcome_text(outcome: Outcome) -> str:
    """ "✔ Runs on the GPU · Q4_K_M · ~19 tokens/s", in the shared vocabulary."""
    glyph, words, _colour, speed, training = _outcome_view(outcome)
    parts = [f"{glyph} {tr(words)}"]
    if outcome.quant:
        parts.append(display_quant(outcome.quant))
    if outcome.verdict != "does_not_fit":
        parts.append(speed_text(speed, training=training))  # rounded once, as everywhere
    return " · ".join(parts)


def preload_chart() -> None:
    """Import pyqtgraph (about 0.3 s) where it costs nothing: on a worker thread, before a chart is drawn.
    Importing creates no widget or QObject, so any thread may do it; the plot itself is made on the GUI
    thread."""
    import pyqtgraph  # noqa: F401


class CostChart(QWidget):
    """Renting against owning over the months; the plot (and pyqtgraph) is made on first use, in steps
    of one event each (the plot, its axes and legend, its curves), so no step holds the GUI thread long."""

    def __init__(self) -> None:
        super().__init__()
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.plot: Any = None
        self._steps: list[Callable[[], None]] = []
        self._data: tuple[str, list[float], list[float], list[float]] | None = None
        self.setMinimumHeight(220)
        self.setVisible(False)

    def busy(self) -> bool:
        return bool(self._steps)

    def _make_plot(self) -> None:
        import pyqtgraph as pg  # ~0.3 s to import: preload_chart() does it on a worker first

        self.plot = pg.PlotWidget()
        self.plot.setBackground(self.palette().base().color())
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self._layout.addWidget(self.plot)

    def _make_axes(self) -> None:
        self.plot.setLabel("bottom", tr("months"))
        self.plot.setLabel("left", "USD")
        self.plot.addLegend(offset=(10, 5))

    def _make_curves(self) -> None:
        import pyqtgraph as pg

        self.rent_curve = self.plot.plot(pen=pg.mkPen("#d9913c", width=2), name=tr("renting"))
        self.own_curve = self.plot.plot(pen=pg.mkPen("#4f7fd9", width=2), name=tr("owning"))

    def _step(self) -> None:
        if self._steps:
            self._steps.pop(0)()
        if self._steps:
            QTimer.singleShot(0, self._step)
        elif self._data is not None:
            self._show(*self._data)

    def draw(self, title: str, months: Sequence[float], rent: Sequence[float], own: Sequence[float]) -> None:
        self._data = (title, list(months), list(rent), list(own))
        if self.plot is None and not self._steps:
            self._steps = [self._make_plot, self._make_axes, self._make_curves]
            QTimer.singleShot(0, self._step)
        elif not self._steps:
            self._show(*self._data)

    def _show(self, title: str, months: list[float], rent: list[float], own: list[float]) -> None:
        self.rent_curve.setData(months, rent)
        self.own_curve.setData(months, own)
        # pyqtgraph renders a title as HTML: a catalog overlay's GPU name is escaped
        self.plot.setTitle(esc(title), size="9pt")
        self.setVisible(True)

    def clear(self) -> None:
        self._data = None
        if self.plot is not None and not self._steps:
            self.rent_curve.setData([], [])
            self.own_curve.setData([], [])
        self.setVisible(False)  # no chart without data


def _cell(text: str, tip: str = "") -> QTableWidgetItem:
    # a word joiner after each unit's slash: a wrapped cell read "(819 GB/" over "s)" at 1024 px
    item = QTableWidgetItem(units_whole(text))
    if tip:
        item.setToolTip(tooltip(tip))
    return item


class _ButtonCell(QWidget):
    """A row's button at its own height, centred in a cell as tall as the row's wrapped texts (a cell
    widget is stretched to the cell: four lines of Italian notes made a 60-pixel grey slab of "Prova")."""

    def __init__(self, button: QPushButton) -> None:
        super().__init__()
        self.button = button
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 0, 2, 0)
        layout.addWidget(button, 0, Qt.AlignmentFlag.AlignVCenter)
        self.setFocusProxy(button)

    def click(self) -> None:
        self.button.click()


#: the ways table's columns at most this share of its width (the rest is Notes'): names, price, speed
CAPS = {0: 25, 1: 25, 2: 20}  # the speed's is a floor once Notes have room (see _size_columns)


class OptionsTable(QTableWidget):
    """Ways to run a model: GPUs to buy or rent, or (for a built-in machine) machines to switch to."""

    def __init__(self, on_try: Callable[[object], None]) -> None:
        super().__init__(0, 5)
        self._on_try = on_try
        self.rows: list[object] = []
        self.setAccessibleName(tr("Ways to run the model"))
        self.setTabKeyNavigation(False)  # one Tab stop; each row's button is its own
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        # two lines a row: a price over its standing ("$3.998" / "(prezzo di lancio)") and notes wrapped,
        # so Italian at 900 px reads them instead of "…"; what still does not fit is in each tooltip
        self.setWordWrap(True)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # set per fill (_fit_rows)
        self.verticalHeader().setDefaultSectionSize(2 * self.fontMetrics().lineSpacing() + 10)
        header = self.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Fixed)  # its names whole, within a third
        for column in (1, 2, 4):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Fixed)  # sized once per fill
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.setMinimumHeight(120)
        # the rows' heights follow the columns' widths, once they have settled (Notes stretch last)
        self._rows_timer = QTimer(self)
        self._rows_timer.setSingleShot(True)
        self._rows_timer.setInterval(0)
        self._rows_timer.timeout.connect(self._fit_rows)
        header.sectionResized.connect(lambda *_a: self._rows_timer.start())
        # never sideways: what does not fit a cell ends in "…" and is whole in its tooltip
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.doubleClicked.connect(lambda index: self._try(index.row()))
        self.set_headers(built_in=False)

    def set_headers(self, *, built_in: bool) -> None:
        first = tr("Machine") if built_in else tr("GPUs")
        self.setHorizontalHeaderLabels([first, tr("Price"), tr("Speed"), tr("Notes"), ""])

    def _size_columns(self) -> None:
        """The GPUs' names whole where they fit in a third of the table ("2 × GeForce RTX 5090", not
        "2 × GeForce RTX…"); Price, Speed and the button as wide as their text; Notes take the rest."""
        for column in (0, 1, 2, 4):
            self.resizeColumnToContents(column)
        buttons = [self.cellWidget(r, 4) for r in range(self.rowCount())]
        if any(buttons):  # as wide as "Try it", not the header's default width
            self.setColumnWidth(4, max(b.sizeHint().width() for b in buttons if b is not None) + 4)
        room = max(self.viewport().width(), 600)
        for column, share in CAPS.items():
            self.setColumnWidth(column, min(self.columnWidth(column), room * share // 100))
        # the speed (the answer) whole where Notes keep an eighth of the width; else down to its cap
        others = sum(0 if self.isColumnHidden(c) else self.columnWidth(c) for c in (0, 1, 4))
        speed = self.sizeHintForColumn(2)
        self.setColumnWidth(2, max(min(speed, room - others - room // 8), min(speed, room * CAPS[2] // 100)))

    def _fit_rows(self) -> None:
        """Each row one to four lines tall, as its wrapped texts need (a few rows: measured once per fill
        and width), and the table as tall as its rows, up to 560 px: one machine is no empty box."""
        metrics = self.fontMetrics()
        line = metrics.lineSpacing()
        least, most = line + 14, 4 * line + 10
        wrap = int(Qt.TextFlag.TextWordWrap)
        for row in range(self.rowCount()):
            tallest = 0
            for column in range(4):
                item = self.item(row, column)
                if item is None or self.isColumnHidden(column) or not item.text():
                    continue
                box = QRect(0, 0, max(20, self.columnWidth(column) - 6), 10_000)  # its margins
                tallest = max(tallest, metrics.boundingRect(box, wrap, item.text()).height())
            self.setRowHeight(row, max(least, min(most, tallest + 10)))
        rows = sum(self.rowHeight(r) for r in range(self.rowCount()))
        height = min(560, rows + self.horizontalHeader().height() + 8)
        if height != self.maximumHeight() or height != self.minimumHeight():
            self.setMinimumHeight(height)
            self.setMaximumHeight(height)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if self.rowCount():
            width = self.viewport().width()
            if width != getattr(self, "_fitted_width", None):
                self._fitted_width = width
                self._size_columns()
                self._rows_timer.start()  # once the stretched Notes have their width

    def _try(self, row: int) -> None:
        if 0 <= row < len(self.rows):
            self._on_try(self.rows[row])

    def _button(self, row: int, enabled: bool, why: str = "") -> None:
        button = QPushButton(tr("Try it"))  # short: the room goes to the notes (Italian at 900 px)
        button.setAccessibleName(tr("Try this"))
        button.setEnabled(enabled)
        if why:
            button.setToolTip(tooltip(why))
        button.clicked.connect(lambda _checked=False, r=row: self._try(r))
        self.setCellWidget(row, 4, _ButtonCell(button))

    def show_options(self, options: Sequence[Option]) -> None:
        self.set_headers(built_in=False)
        self.setColumnHidden(1, False)
        self.rows = list(options)
        self.setRowCount(len(options))
        for row, option in enumerate(options):
            if option.rent_only:  # why, in the tooltip and the greyed button's
                price = tr("rent only")
            elif option.purchase_usd is not None:
                price = f"${num(option.purchase_usd)}"
                if option.price_standing == "launch":
                    price += "\n" + tr("(launch price)")
            else:
                price = tr("no current price")
            if option.rent_usd_hour:
                price += f"\n{tr('or rent')} ${num(option.rent_usd_hour, 2, group=False)}/h"
            speed = speed_text(option.tokens_per_s) if option.tokens_per_s else tr("speed unknown")
            self.setItem(row, 0, _cell(option.description, option.notes[0] if option.notes else ""))
            why = [tr("to rent only (does not fit this machine)")] if option.rent_only else []
            self.setItem(row, 1, _cell(price, "\n".join([*why, *option.notes])))
            self.setItem(row, 2, _cell(speed))
            self.setItem(row, 3, _cell(_short_notes(option), "\n".join(option.notes)))
            self._button(row, not option.rent_only, tr("to rent only (does not fit this machine)"))
        self._size_columns()
        self._fit_rows()
        self._rows_timer.start()  # again once the widths have settled

    def show_choices(self, choices: Sequence[MachineChoice]) -> None:
        self.set_headers(built_in=True)
        # no machine has a price in the catalog (the line above the table says so): no column of "—"
        self.setColumnHidden(1, True)
        self.rows = list(choices)
        self.setRowCount(len(choices))
        for row, choice in enumerate(choices):
            outcome = choice.outcome if isinstance(choice.outcome, Outcome) else None
            kind = tr("same chip family, more memory") if choice.kind == "tier" else tr("another machine")
            self.setItem(row, 0, _cell(choice_label(choice)))
            self.setItem(row, 1, _cell(tr("price not in the catalog")))
            self.setItem(row, 2, _cell(outcome_text(outcome) if outcome is not None else "—"))
            if outcome is not None:
                self.item(row, 2).setForeground(outcome_colour(outcome))
            self.setItem(row, 3, _cell(kind))
            self._button(row, True)
        self._size_columns()
        self._fit_rows()
        self._rows_timer.start()  # again once the widths have settled


_BRACKETS = re.compile(r"\s*\([^()]*\)")


def _short_notes(option: Option) -> str:
    """What a buyer must know on one line: cards already owned, what else it needs, the price's
    standing; every note is in the tooltip."""
    parts = []
    if option.owned:
        parts.append(tr("you have {owned} already", owned=option.owned))
    prefix = tr("also needs {what}", what="")  # the notes are in the language shown
    # each need without its parenthesis ("(enter it on the Overview page)"): whole in the tooltip, and the
    # cell keeps to what is needed (Italian at 900 px ended in "…")
    needs = [_BRACKETS.sub("", n.removeprefix(prefix)) for n in option.notes if n.startswith(prefix)]
    if needs:
        parts.append(tr("also needs") + ": " + "; ".join(needs))
    if option.price_standing == "superseded":
        parts.append(tr("a newer generation replaced it: no current price"))
    if option.count > 8:
        parts.append(tr("more than one server"))
    return " · ".join(parts)


def options_summary(options: Sequence[Option]) -> str:
    """One line over the options: how they are priced (current prices, launch prices or none)."""
    kinds = {o.price_standing for o in options if not o.rent_only}
    if "current" in kinds:
        return tr("Cheapest first, by dated current prices; cards without one come after.")
    if "launch" in kinds:
        return tr(
            "The catalog has no dated current price for these cards: they are ranked by launch price "
            "(MSRP), which may differ from what they cost today. Cards a newer generation replaced get no "
            "price."
        )
    return tr("No current price in the catalog for any of these cards.")


__all__ = ["CostChart", "OptionsTable", "options_summary", "outcome_text"]
