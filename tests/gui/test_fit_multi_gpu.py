"""The Fit page takes llama.cpp's multi-GPU split (-sm) and a GPU-layers cap (-ngl), as `rigcheck fit
--split-mode` and `--gpu-layers` do."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.core.catalog import load_catalog
from rigcheck.core.machine import CPU, Machine, Memory, save_machine
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.fit import AUTO_GPU_LAYERS, FitPage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
GPU = "nvidia-geforce-rtx-4090"


def open_page(qtbot: QtBot, tmp_path: Path) -> FitPage:
    catalog = load_catalog(use_overlay=False)
    snapshot = tmp_path / "two-4090.json"
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * 1024**3), gpus=())
    save_machine(simulate(bare, [catalog.gpu(GPU)] * 2, 64), snapshot)  # type: ignore[list-item]
    state = AppState(catalog, QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    window = MainWindow(state, small_machine)
    qtbot.addWidget(window)
    window.open_snapshot(snapshot)
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    spec = catalog.model("llama-3.1-8b")
    assert spec is not None
    page.state.choose_model(from_catalog(spec))
    page.quant.setCurrentIndex(page.quant.findData("q4_k_m"))
    return page


def used_gpus(page: FitPage) -> int:
    assert page.result is not None
    return sum(1 for b in page.result.placement.gpu_bytes if b)


def test_split_mode_and_gpu_layers_reach_the_fit(qtbot: QtBot, tmp_path: Path) -> None:
    page = open_page(qtbot, tmp_path)
    assert page.split.currentData() == "layer" and page.gpu_layers.value() == AUTO_GPU_LAYERS
    assert used_gpus(page) == 2  # llama.cpp's default: both GPUs
    page.split.setCurrentIndex(page.split.findData("none"))
    assert used_gpus(page) == 1
    page.gpu_layers.setValue(10)
    assert page.result is not None
    assert page.result.placement.gpu_layers == 10
    assert page.result.verdict == "fits_with_offload"
    page.gpu_layers.setValue(AUTO_GPU_LAYERS)
    assert page.result is not None and page.result.verdict == "fits"
