"""Fit's memory chart: what the model needs as one stacked bar, then one bar per GPU and for RAM, each
against its own capacity.

Each device bar says "used / capacity (share)" inside it; where that is too long for the bar (a narrow
window) the share stays inside and "used / capacity" goes on a line under the bar, never cut. More than
a device's capacity fills its bar and says "over by …". On unified memory (a DGX Spark, a Strix Halo, a
Mac) the RAM the GPU does not use is the CPU's too: the RAM bar counts it (the budget leaves the CPU only
a margin, so llama.cpp's 1 GiB input embedding read "391%").
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPaintEvent, QPalette, QPen, QResizeEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from rigcheck.core.estimate.fit import FitResult
from rigcheck.core.units import fmt_bytes
from rigcheck.gui.i18n import percent, tr

CATEGORY_COLOURS = {
    "weights": "#4f7fd9",
    "kv_cache": "#3aa889",
    "activations": "#d9913c",
    "overhead": "#8c8f96",
    "gradients": "#b35cc4",
    "optimizer": "#d45b6a",
}
CATEGORY_NAMES = {
    "weights": "weights",
    "kv_cache": "KV cache",
    "activations": "activations",
    "overhead": "runtime",
    "gradients": "gradients",
    "optimizer": "optimizer",
}
#: a bar filled past its capacity
OVER_COLOUR = "#c98a12"
ROW_HEIGHT = 24
ROW_GAP = 6


class MemoryChart(QWidget):
    """A stacked bar of what the model needs, and one bar per GPU and for RAM: budget vs placed."""

    def __init__(self) -> None:
        super().__init__()
        self.result: FitResult | None = None
        self.device_names: list[str] = []
        #: the GPUs (indices) whose memory is the system's RAM
        self.shared: tuple[int, ...] = ()
        self.setMinimumHeight(160)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleName(tr("Memory chart"))

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(600, self._height())

    def show_result(self, result: FitResult, device_names: list[str], shared: Sequence[int] = ()) -> None:
        """``shared``: the GPUs whose memory is the system RAM (unified memory)."""
        self.result = result
        self.device_names = device_names
        self.shared = tuple(shared)
        self.setFixedHeight(self._height())
        est = result.estimate
        parts = ", ".join(
            f"{tr(CATEGORY_NAMES[c])} {fmt_bytes(est.total(c))}" for c in CATEGORY_COLOURS if est.total(c)
        )
        placed = "; ".join(
            f"{name} {fmt_bytes(used)} / {fmt_bytes(budget)}" for name, budget, used in self.rows()
        )
        self.setAccessibleDescription(f"{tr('Needs')} {fmt_bytes(est.total_bytes)}: {parts}; {placed}")
        self.update()

    def rows(self) -> list[tuple[str, int, int]]:
        """(device, its budget, bytes placed there) for each GPU and RAM, as the bars draw them. RAM holds
        what the placement put there and the weights the engine keeps in host memory wherever the layers
        go (llama.cpp's input embedding): the bar and the verdict's "stays in RAM" agree. On unified memory
        RAM's budget includes what the GPU leaves unused of the same memory."""
        if self.result is None:
            return []
        result = self.result
        ram = result.placement.cpu_bytes + result.estimate.host_weight_bytes
        gpu_budgets, gpu_placed = result.budget.gpu_bytes, result.placement.gpu_bytes
        free_shared = sum(
            max(0, gpu_budgets[i] - (gpu_placed[i] if i < len(gpu_placed) else 0))
            for i in self.shared
            if i < len(gpu_budgets)
        )
        budgets = [*gpu_budgets, result.budget.cpu_bytes + free_shared]
        placed = [*gpu_placed, ram]
        return list(zip([*self.device_names, self._ram_name()], budgets, placed, strict=False))

    def _ram_name(self) -> str:
        """'RAM', or 'RAM (shared)' where its budget counts what the GPU leaves of the same memory (the
        reasons' "… remain for the CPU" is the part no GPU may take)."""
        return tr("RAM (shared)") if self.shared else tr("RAM")

    # -- words -------------------------------------------------------------------------------------

    def _label_width(self, metrics: QFontMetrics) -> int:
        """The labels' own width (at most 150 px), so the bars keep room on a narrow window."""
        if self.result is None:
            return 0
        needs = tr("Needs") + f" {fmt_bytes(self.result.estimate.total_bytes)}"
        texts = [needs, *self.device_names, self._ram_name()]
        return min(150, max(metrics.horizontalAdvance(t) for t in texts) + 14)

    def _bar_width(self, metrics: QFontMetrics) -> int:
        return self.width() - self._label_width(metrics) - 12

    def row_words(self) -> list[tuple[str, str]]:
        """Per device bar: the words inside it and those on a line under it ("" when all fit inside)."""
        metrics = QFontMetrics(self.font())
        room = self._bar_width(metrics) - 10
        words = []
        for _name, budget, used in self.rows():
            amounts = f"{fmt_bytes(used)} / {fmt_bytes(budget)}"
            if budget > 0 and used > budget:
                share = tr("over by {amount}", amount=fmt_bytes(used - budget))
                whole = f"{amounts} · {share}"
            else:
                share = percent(used / budget) if budget > 0 else ""
                whole = f"{amounts} ({share})" if share else amounts
            if metrics.horizontalAdvance(whole) <= room:
                words.append((whole, ""))
            else:  # a narrow window: the share in the bar, the amounts whole under it (and its label)
                words.append((share, amounts))
        return words

    def _two_lines(self) -> bool:
        return any(below for _inside, below in self.row_words())

    def _height(self) -> int:
        devices = len(self.device_names) + 1  # and RAM
        pitch = ROW_HEIGHT + ROW_GAP
        if self.result is not None and self._two_lines():
            pitch += QFontMetrics(self.font()).lineSpacing()
        return 6 + ROW_HEIGHT + 10 + pitch * devices

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if self.result is not None and self.height() != self._height():
            self.setFixedHeight(self._height())  # the amounts moved under the bars, or back inside

    # -- painting ----------------------------------------------------------------------------------

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        if self.result is None:
            return
        result = self.result
        est = result.estimate
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        text = palette.color(QPalette.ColorRole.WindowText)
        metrics = QFontMetrics(self.font())
        label_width = self._label_width(metrics)
        width = self._bar_width(metrics)
        y = 6.0
        row_height = float(ROW_HEIGHT)

        def label(row_y: float, words: str) -> None:
            painter.setPen(text)
            painter.drawText(
                QRectF(0, row_y, label_width - 8, row_height), Qt.AlignmentFlag.AlignVCenter, words
            )

        # What the model needs, as a whole: its own scale (the full width is the total).
        label(y, tr("Needs") + f" {fmt_bytes(est.total_bytes)}")
        x = float(label_width)
        total = max(est.total_bytes, 1)
        for category, colour in CATEGORY_COLOURS.items():
            part = est.total(category)  # type: ignore[arg-type]
            if not part:
                continue
            w = width * part / total
            painter.fillRect(QRectF(x, y, w, row_height), QColor(colour))
            name = tr(CATEGORY_NAMES[category])
            if metrics.horizontalAdvance(name) + 8 < w:
                painter.setPen(QColor("white"))
                painter.drawText(QRectF(x, y, w, row_height), Qt.AlignmentFlag.AlignCenter, name)
            x += w
        y += row_height + 10

        # Each device against its own capacity: the full width is what it may use, so a 24 GiB GPU
        # is not a sliver next to 1.5 TiB of RAM.
        for (name, budget, used), (inside, below) in zip(self.rows(), self.row_words(), strict=True):
            label(y, name)
            outline = QRectF(label_width, y, width, row_height)
            over = budget > 0 and used > budget
            ram = name == self._ram_name()
            fill_colour = QColor(OVER_COLOUR if over else "#8c8f96" if ram else "#4f7fd9")
            fill_colour.setAlpha(200)
            share = min(used, budget) / budget if budget > 0 else 0.0
            painter.fillRect(QRectF(label_width, y, width * share, row_height), fill_colour)
            painter.setPen(QPen(text, 1, Qt.PenStyle.DashLine))
            painter.drawRect(outline)
            painter.setPen(text)
            painter.drawText(
                QRectF(label_width + 6, y, width - 6, row_height), Qt.AlignmentFlag.AlignVCenter, inside
            )
            y += row_height
            if below:
                # ending where the bar ends, under the label too when the bar is shorter than the words
                line = QRectF(0, y + 1, label_width + width, metrics.lineSpacing())
                painter.drawText(line, Qt.AlignmentFlag.AlignRight, below)
                y += metrics.lineSpacing()
            y += ROW_GAP
        painter.end()
