"""Monitor (issue 26): a recording without GPU names ("GPU 0") says "GPU 0" once in the legend."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

from pytestqt.qtbot import QtBot
from test_monitor_page import make_sample, monitor, replay, window  # noqa: F401 - the fixture

from rigcheck.core.monitor import columns, row
from rigcheck.gui.main_window import MainWindow


def test_unnamed_gpu_is_named_once(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:  # noqa: F811
    path = tmp_path / "one-gpu.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        first = make_sample(0, 1.0, gpus=1)
        writer = csv.DictWriter(handle, columns(first), extrasaction="ignore")
        writer.writeheader()
        for n in range(30):
            sample = make_sample(n, 1.0, gpus=1)
            sample = replace(sample, gpus=tuple(replace(g, name="GPU 0") for g in sample.gpus))
            writer.writerow({k: "" if v is None else v for k, v in row(sample).items()})
    page = monitor(window)
    assert replay(qtbot, page, path)
    legend = [page.legend.itemAt(i).widget().text() for i in range(page.legend.count())]
    gpu = [t for t in legend if "GPU 0" in t]
    assert len(gpu) == 1 and gpu[0].count("GPU 0") == 1 and "·" not in gpu[0]
    window.close()
