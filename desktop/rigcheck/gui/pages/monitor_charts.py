"""The Monitor page's cards and charts: a MetricCard per metric, each GPU in its pen, and the drawing of
every card from one redraw's _View (fixed scales, reference lines at a capacity, a limit, a slowdown)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel

from rigcheck.core.machine import Machine
from rigcheck.core.monitor import FloatArray, History
from rigcheck.core.replay import Recording
from rigcheck.gui.charts import RefLine, Series, TimeChart, nice_ceiling, nice_step
from rigcheck.gui.elide import ElidedLabel
from rigcheck.gui.i18n import num, percent, tr
from rigcheck.gui.state import AppState
from rigcheck.gui.widgets import Card

PENS = ("#4f7fd9", "#d9913c", "#3aa889", "#b35cc4", "#d45b6a", "#8c8f96", "#c9b22e", "#4fb6d9")
CPU_PEN, RAM_PEN = "#e0603a", "#2f9e9e"
GIB = 1024**3


def gpu_pen(index: int) -> str:
    return PENS[index % len(PENS)]


def _last_finite(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite[-1]) if len(finite) else None


def _shared(values: dict[int, float]) -> float | None:
    """The value every GPU has in common (a capacity, a limit), or None when they differ or none is known."""
    distinct = set(values.values())
    return distinct.pop() if len(distinct) == 1 else None


def _reference_lines(
    values: dict[int, float],
    colour: str,
    shared_label: Callable[[float], str],
    gpu_label: Callable[[int, float], str],
) -> list[RefLine]:
    """One reference line in ``colour`` where every GPU has the same value, else one per GPU in its pen."""
    shared = _shared(values)
    if shared is not None:
        return [RefLine(shared, colour, shared_label(shared))]
    return [RefLine(v, gpu_pen(i), gpu_label(i, v)) for i, v in values.items()]


def _max_finite(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite.max()) if len(finite) else None


@dataclass(frozen=True)
class _View:
    """What one redraw reads: the rows in the time window (``lo:hi`` of the source's), their offsets from
    the right edge, the row shown. Only the window is scaled and drawn: a replay of 300,000 rows costs a
    redraw what its five minutes on screen cost."""

    source: History | Recording
    t: FloatArray
    x: FloatArray
    at: int
    window: float
    lo: int = 0
    hi: int = 0
    rows: int = 0

    def values(self, key: str, scale: float = 1.0) -> FloatArray:
        found = self.source.series(key)[1]
        if len(found) != self.rows:
            return np.full(len(self.t), np.nan)
        return found[self.lo : self.hi] * scale

    def current(self, series: FloatArray) -> float | None:
        value = float(series[self.at]) if 0 <= self.at < len(series) else math.nan
        return value if math.isfinite(value) else None


def _shown(value: float | None, fmt: Callable[[float], str]) -> str:
    return fmt(value) if value is not None else "n/a"


class MetricCard(Card):
    """One metric: its title, the current value per GPU in large type, a detail line, and a chart."""

    def __init__(self, title: str, y_unit: str) -> None:
        super().__init__()
        self.setMinimumHeight(190)
        top = QHBoxLayout()
        self.title = QLabel(f"<b>{title}</b> <span style='font-weight:normal'>({y_unit})</span>")
        self.title.setAccessibleName(title)
        top.addWidget(self.title)
        # elided where the card is narrow (two cards side by side at 900 px), whole in its tooltip: the
        # detail never widens the card past the window. It alone takes the room beside the title (a stretch
        # before it took half: "capacità 24,0 Gi…" in a 385 px card at 1024 px)
        self.detail = ElidedLabel("")
        palette = self.detail.palette()
        palette.setColor(QPalette.ColorRole.WindowText, palette.color(QPalette.ColorRole.PlaceholderText))
        self.detail.setPalette(palette)
        self.detail.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.title.setMinimumWidth(self.title.sizeHint().width())
        top.addWidget(self.detail, 1)
        self.body.addLayout(top)
        self.value = QLabel("–")
        self.value.setTextFormat(Qt.TextFormat.RichText)
        self.value.setAccessibleName(title + " " + tr("now"))
        font = QFont(self.value.font())
        font.setPointSizeF(font.pointSizeF() * 1.7)
        font.setBold(True)
        self.value.setFont(font)
        self.value.setWordWrap(True)
        self.body.addWidget(self.value)
        self.chart = TimeChart(y_unit=y_unit)
        self.body.addWidget(self.chart, 1)

    def show_values(self, values: list[tuple[str, str]]) -> None:
        """Current values as (colour, text); a coloured square before each when there are several."""
        if not values:
            self.value.setText("–")
            return
        if len(values) == 1 and values[0][0] == "":
            self.value.setText(values[0][1])
            return
        small = len(values) > 2
        size = "font-size:small;" if small else ""
        # each value held together, the gaps between them free to wrap: a narrow card (two side by side at
        # 900 px) puts "RAM 41.0 GiB" on a second line instead of widening past the window
        self.value.setText(
            "&nbsp; ".join(
                f"<span style='white-space:nowrap'><span style='color:{colour}'>■</span>"
                f"<span style='{size}'>&nbsp;{text}</span></span>"
                for colour, text in values
            )
        )


class MetricCharts:
    """MonitorPage's drawing of each card (``cards``) from a redraw's _View."""

    state: AppState
    cards: dict[str, MetricCard]
    history: History
    recording: Recording | None
    _clock_max: float

    def _card_values(self, card: MetricCard, parts: list[tuple[str, str]], many: bool) -> None:
        card.show_values(parts if many else [("", parts[0][1])] if parts else [])

    def _draw_util(self, view: _View, gpus: list[tuple[int, str]]) -> None:
        card = self.cards["util"]
        series, parts = [], []
        for i, _name in gpus:
            y = view.values(f"gpu{i}_util_percent")
            series.append(Series(gpu_pen(i), view.x, y))
            parts.append((gpu_pen(i), _shown(view.current(y), lambda v: f"{num(v, group=False)} %")))
        card.chart.y_range = (0.0, 100.0)
        card.chart.set_data(series, [], view.window)
        self._card_values(card, parts, len(gpus) > 1)
        card.detail.setText("")

    def _draw_memory(self, view: _View, gpus: list[tuple[int, str]]) -> None:
        card = self.cards["memory"]
        series, parts, capacities = [], [], {}
        for i, _name in gpus:
            y = view.values(f"gpu{i}_mem_used_bytes", 1 / GIB)
            total = _last_finite(view.values(f"gpu{i}_mem_total_bytes", 1 / GIB))
            if total is None and self.recording is None:
                latest = self.history.latest()
                gpu = next((g for g in latest.gpus if g.index == i), None) if latest else None
                total = gpu.memory_total_bytes / GIB if gpu and gpu.memory_total_bytes else None
            if total:
                capacities[i] = total
            series.append(Series(gpu_pen(i), view.x, y))
            parts.append((gpu_pen(i), _shown(view.current(y), lambda v: f"{num(v, 1, group=False)} GiB")))
        top = max([*capacities.values(), _max_finite(np.concatenate([s.y for s in series])) or 1.0])
        step = nice_step(top)
        card.chart.y_range = (0.0, nice_ceiling(top * 1.02, step))
        lines = _reference_lines(
            capacities,
            "#8c8f96",
            lambda cap: tr("capacity") + f" {num(cap, 1, group=False)} GiB",
            lambda i, c: f"GPU {i} {num(c, group=False)} GiB",
        )
        if _shared(capacities) is not None:
            card.detail.setText(lines[0].label + (" " + tr("each") if len(gpus) > 1 else ""))
        else:
            card.detail.setText("" if capacities else tr("capacity not recorded"))
        card.chart.set_data(series, lines, view.window)
        self._card_values(card, parts, len(gpus) > 1)

    def _draw_power(self, view: _View, gpus: list[tuple[int, str]]) -> None:
        card = self.cards["power"]
        series, parts, limits = [], [], {}
        total_now, known = 0.0, True
        for i, _name in gpus:
            y = view.values(f"gpu{i}_power_w")
            limit = _last_finite(view.values(f"gpu{i}_power_limit_w"))
            if limit:
                limits[i] = limit
            series.append(Series(gpu_pen(i), view.x, y))
            value = view.current(y)
            parts.append((gpu_pen(i), _shown(value, lambda v: f"{num(v, group=False)} W")))
            if value is None:
                known = False
            else:
                total_now += value
        observed = _max_finite(np.concatenate([s.y for s in series])) or 0.0
        top = max([*limits.values(), observed, 50.0]) * 1.1
        card.chart.y_range = (0.0, nice_ceiling(top, nice_step(top)))
        lines = _reference_lines(
            limits,
            "#c8433a",
            lambda _w: tr("power limit"),
            lambda i, w: f"GPU {i} {tr('limit')} {num(w, group=False)} W",
        )
        card.chart.set_data(series, lines, view.window)
        self._card_values(card, parts, len(gpus) > 1)
        detail = []
        if limits and len(gpus) == 1:
            detail.append(tr("limit") + f" {num(next(iter(limits.values())), group=False)} W")
        if len(gpus) > 1 and known:
            detail.append(tr("all GPUs") + f" {num(total_now, group=False)} W")
        psu = self._psu_watts()
        if psu and known:
            detail.append(
                tr("{share} of the {psu} W PSU").format(
                    share=f"{percent(total_now / psu)}", psu=f"{num(psu, group=False)}"
                )
            )
        card.detail.setText(" · ".join(detail))

    def _psu_watts(self) -> float | None:
        machine = self.state.machine
        return machine.psu.watts if isinstance(machine, Machine) else None

    def _draw_temperature(self, view: _View, gpus: list[tuple[int, str]]) -> None:
        card = self.cards["temperature"]
        series, parts, slowdowns = [], [], {}
        for i, _name in gpus:
            y = view.values(f"gpu{i}_temp_c")
            slow = _last_finite(view.values(f"gpu{i}_temp_slowdown_c"))
            if slow:
                slowdowns[i] = slow
            series.append(Series(gpu_pen(i), view.x, y))
            parts.append((gpu_pen(i), _shown(view.current(y), lambda v: f"{num(v, group=False)} °C")))
        observed = _max_finite(np.concatenate([s.y for s in series])) or 0.0
        top = max([100.0, observed + 5, *(s + 10 for s in slowdowns.values())])
        card.chart.y_range = (0.0, nice_ceiling(top, 20.0))
        lines = _reference_lines(
            slowdowns,
            "#c8433a",
            lambda v: tr("slows down at") + f" {num(v, group=False)} °C",
            lambda i, v: f"GPU {i}: " + tr("slows down at") + f" {num(v, group=False)} °C",
        )
        if _shared(slowdowns) is not None:
            card.detail.setText(lines[0].label)
        else:
            card.detail.setText("" if slowdowns else tr("slowdown threshold not reported"))
        card.chart.set_data(series, lines, view.window)
        self._card_values(card, parts, len(gpus) > 1)

    def _draw_clock(self, view: _View, gpus: list[tuple[int, str]]) -> None:
        card = self.cards["clock"]
        series, parts = [], []
        for i, _name in gpus:
            y = view.values(f"gpu{i}_sm_clock_mhz")
            series.append(Series(gpu_pen(i), view.x, y))
            parts.append((gpu_pen(i), _shown(view.current(y), lambda v: f"{num(v, group=False)} MHz")))
        observed = _max_finite(np.concatenate([s.y for s in series])) or 0.0
        self._clock_max = max(self._clock_max, observed)  # the scale only grows: no jumping axis
        card.chart.y_range = (0.0, nice_ceiling(self._clock_max * 1.05, 500.0))
        card.chart.set_data(series, [], view.window)
        self._card_values(card, parts, len(gpus) > 1)
        card.detail.setText(tr("GPU core (SM) clock"))

    def _draw_host(self, view: _View) -> None:
        card = self.cards.get("host")
        if card is None:
            return
        cpu = view.values("cpu_percent")
        total = self._ram_total()
        ram = view.values("ram_used_bytes", 100 / total) if total else np.full(len(view.x), np.nan)
        card.chart.y_range = (0.0, 100.0)
        card.chart.set_data([Series(CPU_PEN, view.x, cpu), Series(RAM_PEN, view.x, ram)], [], view.window)
        used = view.current(view.values("ram_used_bytes", 1 / GIB))
        card.show_values(
            [
                (CPU_PEN, "CPU " + _shown(view.current(cpu), lambda v: f"{num(v, group=False)} %")),
                (RAM_PEN, "RAM " + _shown(used, lambda v: f"{num(v, 1, group=False)} GiB")),
            ]
        )
        card.detail.setText(tr("RAM of") + f" {num(total / GIB, group=False)} GiB" if total else "")

    def _ram_total(self) -> float | None:
        if self.recording is None:
            latest = self.history.latest()
            if latest is not None and latest.ram_total_bytes:
                return float(latest.ram_total_bytes)
        machine = self.state.machine
        return float(machine.memory.total_bytes) if isinstance(machine, Machine) else None
