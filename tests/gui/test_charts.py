"""The Monitor's chart helpers: axis steps, time labels, and peak downsampling that keeps spikes and gaps."""

from __future__ import annotations

import numpy as np
import pytest

from rigcheck.gui.charts import _peak, nice_ceiling, nice_step, time_label

pytestmark = pytest.mark.gui


def test_axis_steps_are_1_2_5() -> None:
    assert nice_step(100) == 25 and nice_step(600) == 200 and nice_step(24) == 10 and nice_step(3000) == 1000
    assert nice_ceiling(455, 100) == 500 and nice_ceiling(0, 500) == 500


def test_time_labels_in_seconds_and_minutes_ending_now() -> None:
    assert time_label(0) == "now"
    assert time_label(-30, 10) == "\N{MINUS SIGN}30 s"
    assert time_label(-60, 60) == "\N{MINUS SIGN}1 min" and time_label(-300, 60) == "\N{MINUS SIGN}5 min"
    assert (
        time_label(-5400, 1800) == "\N{MINUS SIGN}90 min" and time_label(-9000, 3600) == "\N{MINUS SIGN}2.5 h"
    )


def test_peak_downsampling_keeps_every_spike_and_gap() -> None:
    x = np.linspace(-100, 0, 10_000)
    y = np.zeros_like(x)
    y[1234] = 99.0  # a one-sample spike
    y[5000:5600] = np.nan  # a gap (the sensor did not answer)
    px, py = _peak(x, y, -100.0, 100, 100.0)
    assert len(px) <= 2 * 100
    assert np.nanmax(py) == 99.0  # the spike survives
    assert np.isnan(py).any()  # so does the gap: the line breaks there


def test_a_wide_line_is_drawn_as_two_one_pixel_lines() -> None:
    from rigcheck.gui.charts import Series, line_pens

    series = Series("#4f7fd9", np.zeros(3), np.zeros(3), width=1.8)
    dense = line_pens(series, dense=True)  # no antialiasing: a whole pixel apart
    assert [(pen.widthF(), dx) for pen, dx in dense] == [(1.0, 0.0), (1.0, 1.0)]
    antialiased = line_pens(series, dense=False)
    assert [(pen.widthF(), dx) for pen, dx in antialiased] == [(1.0, 0.0), (1.0, 0.5)]
    thin = Series("#4f7fd9", np.zeros(3), np.zeros(3), width=1.0)
    assert [(pen.widthF(), dx) for pen, dx in line_pens(thin, dense=False)] == [(1.0, 0.0)]
