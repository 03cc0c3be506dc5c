"""The Upgrade page's results: the machine now against the candidate, as a headline, a summary, a table
of every model before → after, the PSU budget and the costs (buying, renting, the chart between them)."""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QLabel, QTableWidget, QTableWidgetItem

from rigcheck.core.catalog import GpuSpec
from rigcheck.core.estimate.cost import Prices, cumulative
from rigcheck.core.estimate.power import PowerBudget
from rigcheck.core.estimate.upgrade import Outcome, UpgradeReport
from rigcheck.gui.i18n import num, tr
from rigcheck.gui.markup import units_whole
from rigcheck.gui.pages.upgrade_parts import CostChart, outcome_colour, outcome_text
from rigcheck.gui.state import AppState
from rigcheck.gui.widgets import POWER_VERDICTS, esc, tooltip

MONTHS = 36


class BeforeAfter:
    """UpgradePage's answer once ``compare`` is done: ``headline``, ``summary``, ``table``, ``power_text``,
    ``cost_text`` and ``chart``."""

    state: AppState
    added: list[GpuSpec]
    built_in: bool
    headline: QLabel
    summary: QLabel
    table: QTableWidget
    power_text: QLabel
    cost_text: QLabel
    chart: CostChart

    if TYPE_CHECKING:  # UpgradePage's

        def prices(self) -> Prices: ...

    def _fill_headline(self, report: UpgradeReport) -> None:
        """How many of the compared models run on the GPU (entirely) and at all, now and on the candidate."""
        total = len(report.models)
        if not total:
            self.headline.setVisible(False)
            return
        gpu = [sum(_on_gpu(o) for o in outcomes) for outcomes in _sides(report)]
        runs = [sum(o.verdict != "does_not_fit" for o in outcomes) for outcomes in _sides(report)]
        words = tr(
            "Now → candidate: {before} → {after} of {total} models run on the GPU",
            before=gpu[0],
            after=gpu[1],
            total=total,
        )
        parts = [f"<b>{esc(words)}</b>"]
        if runs[0] != runs[1] or runs[1] != gpu[1]:
            parts.append(esc(tr("{before} → {after} run at all", before=runs[0], after=runs[1])))
        self.headline.setText(" · ".join(parts))
        self.headline.setVisible(True)

    def _fill_summary(self, report: UpgradeReport) -> None:
        newly = [c.name for c in report.models if c.newly_runnable]
        changed = [
            c.name
            for c in report.models
            if not c.newly_runnable and outcome_text(c.before) != outcome_text(c.after)
        ]
        if not newly and not changed:
            self.summary.setText(
                esc(
                    tr("The candidate changes nothing yet: pick another machine above.")
                    if self.built_in
                    else tr("The candidate changes nothing yet: add or replace a GPU, or change the RAM.")
                )
            )
            return
        parts = []
        if newly:
            names = ", ".join(html.escape(n) for n in newly[:4]) + (" …" if len(newly) > 4 else "")
            parts.append(f"<b>★ {len(newly)} {tr('newly runnable')}</b>: {names}")
        if changed:
            parts.append(f"{len(changed)} {tr('more change speed or format')}")
        self.summary.setText(" · ".join(parts))

    def _fit_table_rows(self) -> None:
        """Each row as tall as its wrapped verdicts at the columns' widths ("… · BF16 now possible" in bold
        on two lines overran a row of the default height); a few dozen rows, after each fill or resize."""
        table = self.table
        least = table.verticalHeader().defaultSectionSize()
        wrap = int(Qt.TextFlag.TextWordWrap)
        for row in range(table.rowCount()):
            tallest = 0
            for column in (1, 2):
                item = table.item(row, column)
                if item is None:
                    continue
                box = QRect(0, 0, max(20, table.columnWidth(column) - 8), 10_000)
                tallest = max(
                    tallest, QFontMetrics(item.font()).boundingRect(box, wrap, item.text()).height()
                )
            table.setRowHeight(row, max(least, tallest + 8))

    def _fill_table(self, report: UpgradeReport) -> None:
        self.table.setRowCount(len(report.models))
        bold = QFont(self.table.font())
        bold.setBold(True)
        # what the upgrade changes first: newly runnable, then any other change, then the rest
        ordered = sorted(
            report.models,
            key=lambda c: (not c.newly_runnable, outcome_text(c.before) == outcome_text(c.after)),
        )
        for row, change in enumerate(ordered):
            name = QTableWidgetItem(("★ " if change.newly_runnable else "") + change.name)
            # "~160 token/s" never broken after its slash where a cell wraps (Italian at 1024 px)
            before = QTableWidgetItem(units_whole(outcome_text(change.before)))
            after_text = outcome_text(change.after)
            if change.better is not None and change.better.quant:
                after_text += " · " + tr("{quant} now possible").format(quant=change.better.quant)
            after = QTableWidgetItem(units_whole(after_text))
            if change.newly_runnable:
                for item in (name, after):
                    item.setFont(bold)
                name.setToolTip(tr("Newly runnable on the candidate"))
            elif before.text() != after.text():
                after.setFont(bold)
                name.setToolTip(tr("Changes on the candidate"))
            before.setForeground(outcome_colour(change.before))
            after.setForeground(outcome_colour(change.after))
            self.table.setItem(row, 0, name)
            self.table.setItem(row, 1, before)
            self.table.setItem(row, 2, after)
        self.table.resizeColumnToContents(0)
        self._fit_table_rows()
        # every model at once where the window has the room (1920 px left 150 px empty under a table that
        # scrolled); past 600 px the page scrolls, not the table
        rows = sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        frame = self.table.horizontalHeader().height() + 2 * self.table.frameWidth() + 2
        self.table.setMinimumHeight(max(300, min(600, rows + frame)))

    def _fill_power(self, report: UpgradeReport) -> None:
        def line(label: str, budget: PowerBudget) -> str:
            glyph, words, _colour = POWER_VERDICTS[budget.verdict]
            headroom = budget.headroom_watts
            room = f"{headroom:+.0f} W" if headroom is not None else tr("unknown")
            return (
                f"<b>{label}</b>: {glyph} {tr(words)} · {tr('peaks')} "
                f"{num(budget.peak_watts, group=False)} W · "
                f"{tr('headroom')} {room}"
            )

        advice = "".join(f"<br>→ {esc(a)}" for a in report.power_after.advice)
        self.power_text.setText(
            line(tr("Now"), report.power_before) + "<br>" + line(tr("Candidate"), report.power_after) + advice
        )

    def _fill_costs(self, report: UpgradeReport) -> None:
        if not report.costs:
            self.cost_text.setText(tr("No new GPU in the candidate."))
            self.chart.clear()
            return
        lines = []
        prices = self.prices()
        sources = []
        for cost in report.costs:
            parts = [f"<b>{esc(cost.name)}</b>"]
            if cost.purchase:
                spec = self.state.catalog.gpu(cost.gpu_id)
                if cost.purchase.kind == "launch":
                    year = f", {spec.release_year}" if spec is not None and spec.release_year else ""
                    parts.append(f"{tr('launch price')} ${num(cost.purchase.usd)} (MSRP{year})")
                else:
                    when = cost.purchase.date or tr("undated")
                    parts.append(
                        f"{tr('buy')} ${num(cost.purchase.usd)} ({esc(when)}{_site(cost.purchase.source)})"
                    )
                sources.append(f"{cost.name}, {tr('price')}: {cost.purchase.source}")
            else:
                parts.append(tr("purchase price unknown"))
            if cost.rent_per_hour:
                when = cost.rent_per_hour.date or tr("undated")
                parts.append(
                    f"{tr('rent')} ${num(cost.rent_per_hour.usd, 2, group=False)}/h "
                    f"({esc(when)}{_site(cost.rent_per_hour.source)})"
                )
                sources.append(f"{cost.name}, {tr('cloud rent')}: {cost.rent_per_hour.source}")
            if cost.usd_per_tflop_hour is not None:
                parts.append(f"${num(cost.usd_per_tflop_hour, 4, group=False)} / FP16 TFLOP-h")
            if cost.usd_per_gb_vram is not None:
                parts.append(f"${num(cost.usd_per_gb_vram)} / GiB")
            if cost.electricity_usd_per_year is not None:
                parts.append(f"{tr('electricity')} ${num(cost.electricity_usd_per_year)}/{tr('year')}")
            if cost.breakeven_months is not None:
                parts.append(f"{tr('break-even')} {num(cost.breakeven_months, 1)} {tr('months')}")
            lines.append(" · ".join(parts))
            lines += [f"<small>{esc(n)}</small>" for n in cost.notes]
        self.cost_text.setText("<br>".join(lines))
        formulas = [f for c in report.costs for f in c.formulas]
        self.cost_text.setToolTip(tooltip("\n".join([*formulas, "", tr("Sources") + ":", *sources])))
        chartable = next((c for c in report.costs if c.purchase and c.rent_per_hour), None)
        if chartable is None:  # no chart without data: it needs both prices
            self.chart.clear()
            return
        count = sum(1 for s in self.added if s.id == chartable.gpu_id) or 1
        months, rent, own = cumulative(chartable, MONTHS, prices, count=count)
        self.chart.draw(f"{count} × {chartable.name}: {tr('renting vs owning')}", months, rent, own)


def _on_gpu(outcome: Outcome) -> bool:
    """Runs entirely on the GPUs (the shared vocabulary's "Runs on the GPU")."""
    return outcome.verdict == "fits" and outcome.where in (None, "gpu")


def _sides(report: UpgradeReport) -> tuple[list[Outcome], list[Outcome]]:
    """Every compared model's outcome now, and on the candidate."""
    return [c.before for c in report.models], [c.after for c in report.models]


def _site(source: str) -> str:
    """ ", gputracker.dev" for a source that is a web page: the site a price was seen on (the whole
    source is in the tooltip); nothing for any other source."""
    match = re.match(r"https?://(?:www\.)?([^/\s]+)", source)
    return f", {esc(match.group(1))}" if match else ""
