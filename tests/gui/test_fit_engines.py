"""Fit offers the engines that can run on this machine's GPUs: MLX on Apple silicon only, ExLlamaV3 on NVIDIA
only, the others everywhere (each engine's own refusals still apply)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.core.catalog import load_catalog
from rigcheck.core.models.resolve import from_catalog
from rigcheck.gui.fitchoices import ENGINES, engine_choices
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.fit import FitPage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
MACHINES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


def fit_page(qtbot: QtBot, tmp_path: Path, snapshot: str) -> tuple[MainWindow, FitPage]:
    state = AppState(
        load_catalog(use_overlay=False), QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    window = MainWindow(state, small_machine)
    qtbot.addWidget(window)
    assert window.open_snapshot(MACHINES / snapshot)
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    spec = state.catalog.model("llama-3.1-8b")
    assert spec is not None
    state.choose_model(from_catalog(spec))
    return window, page


def engines(page: FitPage) -> list[str]:
    return [page.engine.itemData(i) for i in range(page.engine.count())]


def test_the_rule() -> None:
    assert engine_choices(["apple"]) == (*ENGINES, "mlx")
    assert engine_choices(["nvidia", "nvidia"]) == (*ENGINES, "exllamav3")
    # a mixed box: neither vendor-bound engine runs on all its GPUs; no GPU: neither runs at all
    assert engine_choices(["nvidia", "amd"]) == ENGINES
    assert engine_choices([]) == ENGINES
    assert engine_choices(["amd"]) == engine_choices(["intel"]) == ENGINES


@pytest.mark.parametrize(
    ("snapshot", "offered", "absent"),
    [
        ("m2-ultra-192gb.json", "mlx", "exllamav3"),
        ("rtx4090-64gb.json", "exllamav3", "mlx"),
        ("two-gpus-128gb.json", "exllamav3", "mlx"),
    ],
)
def test_each_machine_is_offered_its_engines(
    qtbot: QtBot, tmp_path: Path, snapshot: str, offered: str, absent: str
) -> None:
    _window, page = fit_page(qtbot, tmp_path, snapshot)
    assert offered in engines(page) and absent not in engines(page)
    assert set(ENGINES) <= set(engines(page))


def test_a_cpu_only_machine_gets_neither(qtbot: QtBot, tmp_path: Path) -> None:
    _window, page = fit_page(qtbot, tmp_path, "cpu-only-32gb.json")
    assert "mlx" not in engines(page) and "exllamav3" not in engines(page)


def test_mlx_on_apple_answers_with_mlx(qtbot: QtBot, tmp_path: Path) -> None:
    _window, page = fit_page(qtbot, tmp_path, "m2-ultra-192gb.json")
    page.engine.setCurrentIndex(page.engine.findData("mlx"))
    qtbot.waitUntil(lambda: page.result is not None and page.result.estimate.engine == "mlx", timeout=10000)
    assert page.result is not None and page.result.speed is not None
    assert any("MLX" in line for line in page.result.speed.explanation)


def test_switching_to_a_machine_without_the_engine_falls_back(qtbot: QtBot, tmp_path: Path) -> None:
    window, page = fit_page(qtbot, tmp_path, "rtx4090-64gb.json")
    page.engine.setCurrentIndex(page.engine.findData("exllamav3"))
    assert page.engine.currentData() == "exllamav3"
    assert window.open_snapshot(MACHINES / "m2-ultra-192gb.json")
    assert "exllamav3" not in engines(page) and page.engine.currentData() == "llama.cpp"


def quants(page: FitPage) -> list[str]:
    return [page.quant.itemData(i) for i in range(page.quant.count())]


def test_the_formats_follow_the_engine(qtbot: QtBot, tmp_path: Path) -> None:
    _window, page = fit_page(qtbot, tmp_path, "m2-ultra-192gb.json")
    assert "q4_k_m" in quants(page) and "mlx-4bit" not in quants(page)
    page.engine.setCurrentIndex(page.engine.findData("mlx"))
    assert quants(page) == ["bf16", "mlx-8bit", "mlx-6bit", "mlx-4bit"]
    page.quant.setCurrentIndex(page.quant.findData("mlx-4bit"))
    qtbot.waitUntil(lambda: page.result is not None and page.result.estimate.quant is not None, timeout=10000)
    assert page.result is not None and page.result.estimate.quant.id == "mlx-4bit"  # type: ignore[union-attr]
    page.engine.setCurrentIndex(page.engine.findData("llama.cpp"))
    assert "q4_k_m" in quants(page) and "mlx-4bit" not in quants(page)


def test_exllamav3_offers_exl3(qtbot: QtBot, tmp_path: Path) -> None:
    _window, page = fit_page(qtbot, tmp_path, "rtx4090-64gb.json")
    page.engine.setCurrentIndex(page.engine.findData("exllamav3"))
    assert quants(page) and all(q.startswith("exl3-") for q in quants(page))
    qtbot.waitUntil(
        lambda: page.result is not None and page.result.estimate.engine == "exllamav3", timeout=10000
    )
