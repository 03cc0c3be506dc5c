"""The Overview's answer in one line over the cards, and its speeds side by side in one chart below them.

The headline counts the cards by tier ("12 of 16 run on the GPU · 3 with part in RAM · 1 too slow to
chat") and names the largest model that runs on the GPU alone. The chart draws every card's decode speed
as a bar on a log scale, in the card's colour, with reading speed (verdict_words.CHAT_TOKENS_PER_S) as a
dashed line: which models answer faster than one reads, at a glance, where the cards need reading one by
one. Both read only the card answers (recommend_cards), so they never disagree with the cards.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from rigcheck.core.verdict_words import CHAT_TOKENS_PER_S, speed_text
from rigcheck.gui.fitview import CardAnswer
from rigcheck.gui.i18n import num, tr

#: how the headline counts each tier (after "N of M run on the GPU")
TIER_WORDS = {
    "gpu+ram": "{n} with part in RAM",
    "cpu": "{n} on the CPU",
    "slow": "{n} too slow to chat",
    "does_not_fit": "{n} do not fit",
}


def headline(answers: Sequence[CardAnswer], gpus: int) -> tuple[str, str]:
    """The answer in two lines: how many of the cards run where, and the largest that runs on the GPU
    alone (else the fastest that runs at all)."""
    tiers = [a.view.tier or a.verdict for a in answers]
    total = len(answers)
    on_gpu = tiers.count("gpu")
    # the parts add up to the total: each card is counted once, in its tier
    if gpus:
        words = "{n} of {total} run on the GPU" if gpus == 1 else "{n} of {total} run on the GPUs"
        parts = [tr(words, n=on_gpu, total=total)]
    else:
        parts = [tr("{n} of {total} run on the CPU", n=tiers.count("cpu"), total=total)]
    for tier, words in TIER_WORDS.items():
        n = tiers.count(tier)
        if n and (gpus or tier != "cpu"):
            parts.append(tr(words, n=n))
    first = " · ".join(parts)
    gpu_ones = [a for a in answers if (a.view.tier or a.verdict) == "gpu"]
    if gpu_ones:
        best = max(gpu_ones, key=lambda a: (a.spec.params_b or 0.0, a.view.tokens_per_s or 0.0))
        second = tr(
            "Largest on the GPU alone: {model}, {quant} at {speed}"
            if gpus == 1
            else "Largest on the GPUs alone: {model}, {quant} at {speed}",
            model=best.spec.name,
            quant=best.view.quant or "",
            speed=speed_text(best.view.tokens_per_s),
        )
    else:
        running = [a for a in answers if a.view.where is not None and a.view.tokens_per_s]
        if running:
            best = max(running, key=lambda a: a.view.tokens_per_s or 0.0)
            second = tr(
                "Fastest here: {model}, {quant} at {speed}",
                model=best.spec.name,
                quant=best.view.quant or "",
                speed=speed_text(best.view.tokens_per_s),
            )
        else:
            second = tr("None of these models runs here: a card's “What would it take?” says what would.")
    return first, second


class SpeedChart(QWidget):
    """Every card's decode speed as a horizontal bar (log scale, fastest first), reading speed dashed."""

    ROW = 18
    NAME_WIDTH = 190

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, float | None, str, str]] = []
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleName(tr("Decode speed of each model"))

    def set_answers(self, answers: Sequence[CardAnswer]) -> None:
        rows = [
            (
                a.spec.name,
                a.view.tokens_per_s if a.view.where is not None else None,
                a.view.colour,
                a.view.quant,
            )
            for a in answers
        ]
        rows.sort(key=lambda r: -(r[1] or 0.0))
        self.rows = [(name, tps, colour, quant or "") for name, tps, colour, quant in rows]
        self.setFixedHeight(self.ROW * len(self.rows) + QFontMetrics(self.font()).height() + 10)
        self.setAccessibleDescription(
            "; ".join(
                f"{name}: {speed_text(tps) if tps else tr('does not run')}" for name, tps, _c, _q in self.rows
            )
        )
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(600, self.height())

    def scale(self) -> tuple[float, float]:
        """The log axis' ends, tokens/s: from below the slowest (at most 1) to above the fastest."""
        speeds = [s for _n, s, _c, _q in self.rows if s]
        lo = min([1.0, *speeds])
        hi = max([CHAT_TOKENS_PER_S * 2, *speeds])
        hi *= 1.05  # room for the fastest bar's end
        power = 10 ** math.floor(math.log10(hi))
        top = next(f * power for f in (1, 2, 5, 10) if f * power >= hi)  # not a mostly empty decade
        return 10 ** math.floor(math.log10(lo)), top

    def bar_rects(self) -> list[QRectF]:
        """Each row's bar (for tests); an empty one for a model that does not run."""
        left, right = self._plot()
        lo, hi = self.scale()
        span = math.log10(hi) - math.log10(lo)
        rects = []
        for n, (_name, tps, _colour, _quant) in enumerate(self.rows):
            if not tps:
                rects.append(QRectF())
                continue
            length = (math.log10(max(tps, lo)) - math.log10(lo)) / span * (right - left)
            rects.append(QRectF(left, n * self.ROW + 4, max(2.0, length), self.ROW - 8))
        return rects

    def _plot(self) -> tuple[float, float]:
        metrics = QFontMetrics(self.font())
        speed_room = metrics.horizontalAdvance("~9,999 tokens/s · Q4_K_XL ") + 8
        name_width = min(self.NAME_WIDTH, self.width() // 3)
        return float(name_width + 8), float(max(name_width + 60, self.width() - speed_room))

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        lo, hi = self.scale()
        painter = QPainter(self)
        palette = self.palette()
        text = palette.color(QPalette.ColorRole.WindowText)
        grey = palette.color(QPalette.ColorRole.PlaceholderText)
        metrics = QFontMetrics(self.font())
        left, right = self._plot()
        span = math.log10(hi) - math.log10(lo)
        rows_bottom = self.ROW * len(self.rows)

        def x_of(value: float) -> float:
            return left + (math.log10(value) - math.log10(lo)) / span * (right - left)

        grid = QColor(text)
        grid.setAlpha(40)
        decade = lo
        while decade <= hi * 1.0001:  # a grid line and a label per power of ten
            x = x_of(decade)
            painter.setPen(QPen(grid, 1))
            painter.drawLine(int(x), 0, int(x), rows_bottom)
            painter.setPen(grey)
            label = num(decade, 0 if decade >= 1 else 1)
            painter.drawText(
                QRectF(x - 30, rows_bottom + 2, 60, metrics.height()), Qt.AlignmentFlag.AlignHCenter, label
            )
            decade *= 10
        if not math.isclose(math.log10(hi), round(math.log10(hi))):  # the top of the axis, when not a decade
            painter.setPen(grey)
            label = num(hi, 0)
            painter.drawText(
                QRectF(right - 60, rows_bottom + 2, 60, metrics.height()), Qt.AlignmentFlag.AlignRight, label
            )
        x = x_of(CHAT_TOKENS_PER_S)  # reading speed: faster than this, a reply comes faster than one reads
        painter.setPen(QPen(grey, 1.2, Qt.PenStyle.DashLine))
        painter.drawLine(int(x), 0, int(x), rows_bottom)  # under the bars and their words, not across them
        for n, ((name, tps, colour, quant), bar) in enumerate(zip(self.rows, self.bar_rects(), strict=True)):
            top = n * self.ROW
            painter.setPen(text)
            shown = metrics.elidedText(name, Qt.TextElideMode.ElideRight, int(left - 12))
            painter.drawText(QRectF(0, top, left - 8, self.ROW), Qt.AlignmentFlag.AlignVCenter, shown)
            if tps:
                painter.fillRect(bar, QColor(colour))
                words = f"{speed_text(tps)}" + (f" · {quant}" if quant else "")
            else:
                words = tr("does not run")
            painter.setPen(grey if not tps else text)
            at = bar.right() + 6 if tps else left
            painter.drawText(
                QRectF(at, top, self.width() - at, self.ROW), Qt.AlignmentFlag.AlignVCenter, words
            )
        painter.end()
