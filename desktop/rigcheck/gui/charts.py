"""A small time-series chart drawn with QPainter: fixed axes, reference lines, a "now" at the right.

The Monitor page needs a few lines per chart against a fixed scale, redrawn once a second; QPainter
does that with nothing to import (pyqtgraph and its start-up cost stay with the pages that need its
interaction). Series are peak-downsampled to two points per pixel column, as pyqtgraph's
``setDownsampling(mode="peak")`` does, and NaN breaks a line, as ``connect="finite"`` does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFontMetrics,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPalette,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import QSizePolicy, QWidget

from rigcheck.gui.i18n import tr

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Series:
    colour: str
    #: seconds relative to the right edge ("now": 0, the past negative)
    x: FloatArray
    y: FloatArray
    width: float = 1.8


@dataclass(frozen=True)
class RefLine:
    """A horizontal reference (a capacity, a limit, a threshold) with a short label."""

    value: float
    colour: str
    label: str


def nice_step(span: float, target_ticks: int = 4) -> float:
    """A 1-2-5 step that cuts ``span`` into about ``target_ticks`` parts."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / target_ticks
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def nice_ceiling(value: float, step: float) -> float:
    """``value`` rounded up to a multiple of ``step`` (at least one step)."""
    return max(step, math.ceil(value / step) * step)


#: time-axis steps, seconds: the first giving at most 6 ticks across the window is used
_TIME_STEPS = (5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200)


def time_label(seconds: float, step: float = 1.0) -> str:
    """-30 -> "-30 s", -120 -> "-2 min", -5400 -> "-1.5 h" (with a real minus sign); 0 -> "now"."""
    if abs(seconds) < 0.5:
        return tr("now")
    sign = "\N{MINUS SIGN}" if seconds < 0 else "+"
    s = abs(seconds)
    if s < 120 and step < 60:
        return f"{sign}{s:.0f} s"
    if s < 7200:
        minutes = s / 60
        return f"{sign}{minutes:.0f} min" if minutes == int(minutes) else f"{sign}{minutes:.1f} min"
    return f"{sign}{s / 3600:.1f} h"


#: a line with more points than this is drawn without antialiasing (see ``paintEvent``)
DENSE_POINTS = 400


class TimeChart(QWidget):
    """Lines over the last ``window_s`` seconds, against a fixed y range."""

    #: the mouse is over the chart at this many seconds from the right edge (None: it left)
    hovered = Signal(object)

    def __init__(self, y_range: tuple[float, float] = (0.0, 100.0), y_unit: str = "") -> None:
        super().__init__()
        self.y_range = y_range
        self.y_unit = y_unit
        self.window_s = 300.0
        self.series: list[Series] = []
        self.lines: list[RefLine] = []
        self.now_label = ""
        self.cursor_x: float | None = None
        #: the chart drawn without its cursor, and what it was drawn for (see ``paintEvent``)
        self._picture: QPixmap | None = None
        self._drawn_for: tuple[object, ...] = ()
        self.setMinimumSize(200, 110)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMouseTracking(True)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(360, 150)

    def set_data(self, series: list[Series], lines: list[RefLine], window_s: float) -> None:
        self.series, self.lines, self.window_s = series, lines, window_s
        self._picture = None
        self.update()

    def set_cursor(self, x: float | None) -> None:
        self.cursor_x = x
        self.update()

    # -- geometry ----------------------------------------------------------------------------------

    def _plot_rect(self) -> QRectF:
        metrics = QFontMetrics(self.font())
        lo, hi = self.y_range
        step = nice_step(hi - lo)
        widest = max(metrics.horizontalAdvance(self._y_text(v)) for v in (lo, hi, hi - step))
        left = widest + 8
        bottom = metrics.height() + 4
        return QRectF(left, 6, max(10.0, self.width() - left - 8), max(10.0, self.height() - bottom - 8))

    def reference_label_boxes(self) -> list[QRectF]:
        """Where the reference lines' labels are drawn (for tests: none overlaps another or a line)."""
        boxes = self._reference_labels(self._plot_rect(), QFontMetrics(self.font()))
        return [box for _line, _y, box in boxes if box is not None]

    def _reference_labels(
        self, rect: QRectF, metrics: QFontMetrics
    ) -> list[tuple[RefLine, float, QRectF | None]]:
        """Each shown reference line, its y and its label's box: above the line where that crosses no other
        line and no label placed before, else below it, else further right, else beside the others above the
        top line or below the bottom one (two limits 5 °C apart get one label above and one below, never one
        on top of the other); None when no place is free."""
        lo, hi = self.y_range
        shown = [
            (line, rect.bottom() - (line.value - lo) / (hi - lo) * rect.height())
            for line in self.lines
            if lo <= line.value <= hi
        ]
        ys = [y for _line, y in shown]
        height = metrics.height()
        placed: list[QRectF] = []
        result: list[tuple[RefLine, float, QRectF | None]] = []
        for n, (line, y) in enumerate(sorted(shown, key=lambda pair: pair[1])):
            if not line.label:
                result.append((line, y, None))
                continue
            width = metrics.horizontalAdvance(line.label) + 2
            others = [other for m, other in enumerate(sorted(ys)) if m != n]
            box = None
            # its own line first; lines too close together (three limits within 5 °C) take the row above
            # the top line or below the bottom one, in their own colour
            for top in (y - height - 1, y + 1, min(ys) - height - 1, max(ys) + 1):
                if top < rect.top() - 4 or top + height > rect.bottom() + 2:
                    continue
                if any(top < other < top + height for other in others):
                    continue  # it would sit on another line
                left = rect.left() + 4
                candidate = QRectF(left, top, width, height)
                while any(candidate.intersects(p) for p in placed) and candidate.right() < rect.right():
                    left = max(p.right() for p in placed if candidate.intersects(p)) + 12
                    candidate = QRectF(left, top, width, height)
                if candidate.right() <= rect.right() and not any(candidate.intersects(p) for p in placed):
                    box = candidate
                    break
            if box is not None:
                placed.append(box)
            result.append((line, y, box))
        return result

    def _y_text(self, value: float) -> str:
        return f"{value:.0f}" if abs(value) >= 10 or value == int(value) else f"{value:.1f}"

    def _map(self, rect: QRectF, x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
        lo, hi = self.y_range
        px = rect.right() + x / self.window_s * rect.width()
        py = rect.bottom() - (y - lo) / (hi - lo) * rect.height()
        return px, np.clip(py, rect.top() - 2, rect.bottom() + 2)

    # -- painting ----------------------------------------------------------------------------------

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        """The chart from its picture (drawn again only when its data, size, scale, font or palette
        changed), then the cursor. The Monitor's six charts were drawn whole on every repaint, 25–35 ms of
        the GUI thread each time the page moved under them (a reading bar shown or hidden over them)."""
        key = self._picture_key()
        if self._picture is None or self._drawn_for != key:
            ratio = self.devicePixelRatioF()
            picture = QPixmap(QSize(math.ceil(self.width() * ratio), math.ceil(self.height() * ratio)))
            picture.setDevicePixelRatio(ratio)
            picture.fill(Qt.GlobalColor.transparent)
            drawing = QPainter(picture)
            self._draw(drawing)
            drawing.end()
            self._picture, self._drawn_for = picture, key
        painter = QPainter(self)
        painter.drawPixmap(0, 0, self._picture)
        if self.cursor_x is not None and -self.window_s <= self.cursor_x <= 0:
            rect = self._plot_rect()
            x = rect.right() + self.cursor_x / self.window_s * rect.width()
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(QPen(self.palette().color(QPalette.ColorRole.WindowText), 1, Qt.PenStyle.DotLine))
            painter.drawLine(QPointF(x, rect.top()), QPointF(x, rect.bottom()))
        painter.end()

    def _picture_key(self) -> tuple[object, ...]:
        """What the chart's picture depends on besides its data (:meth:`set_data` drops the picture)."""
        return (
            self.width(), self.height(), self.devicePixelRatioF(), self.y_range, self.y_unit, self.window_s,
            self.now_label, self.font().key(), self.palette().cacheKey(),
        )  # fmt: skip

    def _draw(self, painter: QPainter) -> None:
        """Everything but the cursor: grid, axes, reference lines and their labels, the series."""
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        text = palette.color(QPalette.ColorRole.WindowText)
        grid = QColor(text)
        grid.setAlpha(40)
        rect = self._plot_rect()
        metrics = QFontMetrics(self.font())
        lo, hi = self.y_range

        # y grid and labels
        step = nice_step(hi - lo)
        painter.setPen(QPen(grid, 1))
        value = lo
        while value <= hi + 1e-9:
            y = rect.bottom() - (value - lo) / (hi - lo) * rect.height()
            painter.setPen(QPen(grid, 1))
            painter.drawLine(QPointF(rect.left(), y), QPointF(rect.right(), y))
            painter.setPen(text)
            label = self._y_text(value)
            painter.drawText(
                QRectF(0, y - metrics.height() / 2, rect.left() - 5, metrics.height()),
                int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                label,
            )
            value += step

        # time axis: ticks at round steps back from the right edge
        tick = next((s for s in _TIME_STEPS if self.window_s / s <= 6), _TIME_STEPS[-1])
        baseline = rect.bottom() + 2
        t = 0.0
        free_right = math.inf  # labels are placed right to left; one that would overlap is skipped
        while t >= -self.window_s - 1e-9:
            x = rect.right() + t / self.window_s * rect.width()
            painter.setPen(QPen(grid, 1))
            painter.drawLine(QPointF(x, rect.top()), QPointF(x, rect.bottom()))
            label = self.now_label if (t == 0 and self.now_label) else time_label(t, tick)
            width = metrics.horizontalAdvance(label)
            left = min(max(x - width / 2, rect.left()), rect.right() - width)
            if left + width + 6 <= free_right:
                painter.setPen(text)
                painter.drawText(QPointF(left, baseline + metrics.ascent()), label)
                free_right = left
            t -= tick

        # reference lines (dashed), each labelled where its label crosses no other line or label
        references = self._reference_labels(rect, metrics)
        for line, y, _box in references:
            pen = QPen(QColor(line.colour), 1.3, Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.drawLine(QPointF(rect.left(), y), QPointF(rect.right(), y))

        painter.setClipRect(rect.adjusted(-1, -3, 1, 3))
        for series in self.series:
            path = self._path(rect, series.x, series.y)
            if path is not None:
                dense = path.elementCount() > DENSE_POINTS
                # a dense line (a long window or a replay: a point every pixel or two) is drawn without
                # antialiasing, which costs ~6x as much there and shows little: 12 such lines took the
                # GUI thread over 100 ms per repaint
                painter.setRenderHint(QPainter.RenderHint.Antialiasing, not dense)
                for pen, dx in line_pens(series, dense=dense):
                    painter.setPen(pen)
                    painter.drawPath(path.translated(dx, dx) if dx else path)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setClipping(False)

        # the reference lines' labels over the curves, on a backing of the chart's colour: readable where a
        # curve passes under them
        backing = QColor(palette.color(QPalette.ColorRole.Base))
        backing.setAlpha(215)
        for line, _y, box in references:
            if box is not None:
                painter.fillRect(box.adjusted(-2, 0, 2, 0), backing)
                painter.setPen(QColor(line.colour))
                painter.drawText(QPointF(box.left(), box.top() + metrics.ascent()), line.label)

    def _path(self, rect: QRectF, x: FloatArray, y: FloatArray) -> QPainterPath | None:
        keep = x >= -self.window_s - 1e-9
        x, y = x[keep], y[keep]
        if not len(x):
            return None
        columns = max(1, int(rect.width()))
        if len(x) > 2 * columns:
            x, y = _peak(x, y, -self.window_s, columns, self.window_s)
        px, py = self._map(rect, x, y)
        path = QPainterPath()
        pen_down = False
        for xi, yi, ok in zip(px.tolist(), py.tolist(), np.isfinite(y).tolist(), strict=True):
            if not ok:
                pen_down = False
            elif pen_down:
                path.lineTo(xi, yi)
            else:
                path.moveTo(xi, yi)
                path.lineTo(xi + 0.5, yi)  # a lone reading (the first tick, one between gaps) shows as a dot
                pen_down = True
        return path

    # -- mouse -------------------------------------------------------------------------------------

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        rect = self._plot_rect()
        x = event.position().x()
        if rect.left() <= x <= rect.right():
            self.hovered.emit((x - rect.right()) / rect.width() * self.window_s)
        super().mouseMoveEvent(event)

    def leaveEvent(self, event: object) -> None:  # noqa: N802 - Qt's name
        self.hovered.emit(None)
        super().leaveEvent(event)  # type: ignore[arg-type]


def line_pens(series: Series, *, dense: bool) -> list[tuple[QPen, float]]:
    """The pens a series is drawn with, each with its offset (right and down, pixels). A line wider than
    a pixel is two 1-pixel lines: half a pixel apart when antialiased, a pixel apart when dense (drawn
    without antialiasing), about as heavy as one of ``series.width``. Qt strokes a wider pen into an
    outline first: ~14 ms a line of a replay's jagged 5 minutes antialiased (the Monitor's 14 lines:
    a scrub's whole repaint), ~6 ms a dense one; a 1-pixel pen is drawn directly, 0.1-0.2 ms."""
    colour = QColor(series.colour)
    if series.width <= 1.0:
        return [(QPen(colour, series.width), 0.0)]
    return [(QPen(colour, 1.0), 0.0), (QPen(colour, 1.0), 1.0 if dense else 0.5)]


def _peak(
    x: FloatArray, y: FloatArray, start: float, columns: int, span: float
) -> tuple[FloatArray, FloatArray]:
    """Min and max of each pixel column, in time order (NaN columns stay NaN, so gaps survive)."""
    bins = np.clip(((x - start) / span * columns).astype(np.int64), 0, columns - 1)
    edges = np.flatnonzero(np.diff(bins)) + 1
    starts = np.concatenate(([0], edges))
    lows = np.fmin.reduceat(y, starts)  # fmin/fmax skip NaN; an all-NaN column stays NaN
    highs = np.fmax.reduceat(y, starts)
    xs = x[starts]
    out_x = np.repeat(xs, 2)
    out_y = np.empty(2 * len(starts))
    out_y[0::2], out_y[1::2] = lows, highs
    return out_x, out_y
