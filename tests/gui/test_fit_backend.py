"""The Fit page's GPU backend: the llama.cpp backend whose speed factors apply, as `rigcheck fit --backend`
takes it. A Strix Halo runs ROCm or Vulkan, and the two give different prompt speeds for BF16."""

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
from rigcheck.gui.pages.fit import FitPage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
STRIX = "amd-ryzen-ai-max-plus-395-radeon-8060s"


def open_page(qtbot: QtBot, tmp_path: Path) -> FitPage:
    catalog = load_catalog(use_overlay=False)
    snapshot = tmp_path / "strix-halo.json"
    if not snapshot.exists():
        bare = Machine(cpu=CPU(logical_cores=32), memory=Memory(total_bytes=128 * 1024**3), gpus=())
        save_machine(simulate(bare, [catalog.gpu(STRIX)], 128), snapshot)  # type: ignore[list-item]
    state = AppState(catalog, QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    window = MainWindow(state, small_machine)
    qtbot.addWidget(window)
    window.open_snapshot(snapshot)
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    spec = catalog.model("ministral-3-14b")
    assert spec is not None
    state.choose_model(from_catalog(spec))
    page.quant.setCurrentIndex(page.quant.findData("bf16"))
    return page


def explanation(page: FitPage) -> str:
    assert page.result is not None
    return " ".join(page.result.speed.explanation)


def test_the_backend_sets_the_speed_factors_and_is_remembered(qtbot: QtBot, tmp_path: Path) -> None:
    page = open_page(qtbot, tmp_path)
    assert page.backend.currentData() == ""  # Automatic: AMD's usual backend, ROCm
    assert "(amd-apu, rocm)" in explanation(page)
    assert page.result is not None
    rocm_prefill = page.result.speed.prefill_tokens_per_s
    page.backend.setCurrentIndex(page.backend.findData("vulkan"))
    assert page.result.estimate.backend == "vulkan"
    said = explanation(page)
    assert "(amd-apu, vulkan)" in said and "promote it to FP32" in said
    assert page.result.speed.prefill_tokens_per_s != rocm_prefill
    # a new window on the same settings starts on Vulkan
    again = open_page(qtbot, tmp_path)
    assert again.backend.currentData() == "vulkan" and "(amd-apu, vulkan)" in explanation(again)


def test_only_llama_cpp_takes_a_backend(qtbot: QtBot, tmp_path: Path) -> None:
    page = open_page(qtbot, tmp_path)
    page.backend.setCurrentIndex(page.backend.findData("vulkan"))
    page.engine.setCurrentIndex(page.engine.findData("vllm"))
    assert not page.backend.isEnabled() and page.request().backend is None
    page.engine.setCurrentIndex(page.engine.findData("llama.cpp"))
    assert page.backend.isEnabled() and page.request().backend == "vulkan"
