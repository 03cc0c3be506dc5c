"""Fit offers only the choices that apply: offload modes by workload and model kind, engine and backend
for inference only, the backends of the machine's GPUs, and for training the format it trains on."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.core.catalog import load_catalog
from rigcheck.core.models.resolve import from_catalog
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.fit import FitPage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
MACHINES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


def fit_page(qtbot: QtBot, tmp_path: Path, snapshot: str, model: str = "llama-3.1-8b") -> FitPage:
    state = AppState(
        load_catalog(use_overlay=False), QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    window = MainWindow(state, small_machine)
    qtbot.addWidget(window)
    assert window.open_snapshot(MACHINES / snapshot)
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    spec = state.catalog.model(model)
    assert spec is not None
    state.choose_model(from_catalog(spec))
    return page


def keys(combo: object) -> list[str]:
    return [combo.itemData(i) for i in range(combo.count())]  # type: ignore[attr-defined]


def choose(combo: object, key: str) -> None:
    combo.setCurrentIndex(combo.findData(key))  # type: ignore[attr-defined]


def test_offload_modes_follow_the_workload_and_the_model(qtbot: QtBot, tmp_path: Path) -> None:
    page = fit_page(qtbot, tmp_path, "rtx4090-64gb.json")
    assert keys(page.offload) == ["auto", "none", "layers"], "no experts offload for a dense model"
    moe = page.state.catalog.model("qwen3-30b-a3b")
    assert moe is not None
    page.state.choose_model(from_catalog(moe))
    assert keys(page.offload) == ["auto", "none", "layers", "experts"]
    choose(page.offload, "experts")
    choose(page.workload, "lora")
    assert keys(page.offload) == ["auto", "none", "optimizer", "full"], "no layer offload for training"
    assert page.offload.currentData() == "auto"
    assert page.result is not None and page.result.placement.offload in ("none", "optimizer", "full")
    assert not page.engine.isEnabled() and not page.backend.isEnabled()
    choose(page.workload, "inference")
    assert page.engine.isEnabled() and page.backend.isEnabled()
    assert "experts" in keys(page.offload)


def test_the_format_box_shows_what_training_uses(qtbot: QtBot, tmp_path: Path) -> None:
    page = fit_page(qtbot, tmp_path, "rtx4090-64gb.json")
    choose(page.quant, "q5_k_m")
    choose(page.workload, "qlora")
    assert page.quant.currentData() == "nf4" and not page.quant.isEnabled()
    assert page.result is not None and page.result.estimate.quant is not None
    assert page.result.estimate.quant.id.startswith("nf4")
    choose(page.workload, "full")
    assert page.quant.currentData() == "bf16"
    choose(page.workload, "inference")
    assert page.quant.currentData() == "q5_k_m" and page.quant.isEnabled(), "the inference choice is back"
    assert page.state.settings.value("fit/quant") == "q5_k_m"


@pytest.mark.parametrize(
    ("snapshot", "backends"),
    [
        ("rtx4090-64gb.json", ["", "cuda", "vulkan"]),
        ("m2-ultra-192gb.json", ["", "metal"]),
        ("cpu-only-32gb.json", [""]),
    ],
)
def test_backends_are_those_of_the_machines_gpus(
    qtbot: QtBot, tmp_path: Path, snapshot: str, backends: list[str]
) -> None:
    page = fit_page(qtbot, tmp_path, snapshot)
    assert keys(page.backend) == backends
    assert page.backend.isEnabled() == (len(backends) > 1)


def test_a_mac_snapshot_does_not_forget_the_chosen_backend(qtbot: QtBot, tmp_path: Path) -> None:
    page = fit_page(qtbot, tmp_path, "rtx4090-64gb.json")
    choose(page.backend, "vulkan")
    assert page.state.backend == "vulkan"
    window = page.window()
    assert window.open_snapshot(MACHINES / "m2-ultra-192gb.json")  # type: ignore[attr-defined]
    assert keys(page.backend) == ["", "metal"] and page.backend.currentData() == ""
    assert page.state.backend == "vulkan"
    assert window.open_snapshot(MACHINES / "rtx4090-64gb.json")  # type: ignore[attr-defined]
    assert page.backend.currentData() == "vulkan"


def test_the_multi_gpu_split_applies_only_with_two_gpus(qtbot: QtBot, tmp_path: Path) -> None:
    one = fit_page(qtbot, tmp_path, "rtx4090-64gb.json")
    assert not one.split.isEnabled() and one.gpu_layers.isEnabled()
    two = fit_page(qtbot, tmp_path, "two-gpus-128gb.json")
    assert two.split.isEnabled()
    two.workload.setCurrentIndex(two.workload.findData("lora"))  # a training run splits its own way
    assert not two.split.isEnabled() and not two.gpu_layers.isEnabled()
    none = fit_page(qtbot, tmp_path, "cpu-only-32gb.json")
    assert not none.split.isEnabled() and not none.gpu_layers.isEnabled()
