"""The Monitor charts' reference-line labels (issue 26): two GPUs' limits a few degrees apart are both
labelled, and no label sits on another label or on another reference line."""

from __future__ import annotations

import numpy as np
import pytest
from pytestqt.qtbot import QtBot

from rigcheck.gui.charts import RefLine, Series, TimeChart

pytestmark = pytest.mark.gui


def chart_with(
    qtbot: QtBot, values: list[float], y_range: tuple[float, float], size: tuple[int, int]
) -> TimeChart:
    chart = TimeChart(y_range=y_range)
    qtbot.addWidget(chart)
    chart.resize(*size)
    x = np.linspace(-300, 0, 50)
    lines = [RefLine(v, "#c8433a", f"GPU {i}: slows down at {v:.0f} °C") for i, v in enumerate(values)]
    chart.set_data([Series("#4a7fd8", x, np.full_like(x, 50.0))], lines, 300.0)
    return chart


@pytest.mark.parametrize(
    ("values", "y_range", "size"),
    [
        ([90.0, 95.0], (0.0, 120.0), (340, 150)),  # the temperature card at 1024 px
        ([450.0, 350.0], (0.0, 600.0), (340, 150)),  # the power card
        ([90.0, 95.0, 92.0], (0.0, 120.0), (700, 260)),  # three GPUs at 1920 px
    ],
)
def test_reference_labels_never_overlap(
    qtbot: QtBot, values: list[float], y_range: tuple[float, float], size: tuple[int, int]
) -> None:
    chart = chart_with(qtbot, values, y_range, size)
    boxes = chart.reference_label_boxes()
    assert len(boxes) == len(values)  # every limit is labelled
    for n, box in enumerate(boxes):
        assert box.right() <= chart.width() and box.top() >= 0
        for other in boxes[n + 1 :]:
            assert not box.intersects(other), (box, other)
    rect = chart._plot_rect()
    lo, hi = y_range
    ys = sorted(rect.bottom() - (v - lo) / (hi - lo) * rect.height() for v in values)
    for box in boxes:
        crossed = [y for y in ys if box.top() < y < box.bottom()]
        assert not crossed, (box, crossed)
