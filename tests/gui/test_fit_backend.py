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
from rigcheck.gui.pages.models import ModelsPage
from rigcheck.gui.pages.overview import OverviewPage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
STRIX = "amd-ryzen-ai-max-plus-395-radeon-8060s"


def open_window(qtbot: QtBot, tmp_path: Path) -> MainWindow:
    catalog = load_catalog(use_overlay=False)
    snapshot = tmp_path / "strix-halo.json"
    if not snapshot.exists():
        bare = Machine(cpu=CPU(logical_cores=32), memory=Memory(total_bytes=128 * 1024**3), gpus=())
        save_machine(simulate(bare, [catalog.gpu(STRIX)], 128), snapshot)  # type: ignore[list-item]
    state = AppState(catalog, QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    window = MainWindow(state, small_machine)
    qtbot.addWidget(window)
    window.open_snapshot(snapshot)
    answered(qtbot, window)
    return window


def answered(qtbot: QtBot, window: MainWindow) -> None:
    """The pages' answers worked out on the pool have been shown (the Overview's cards, Fit's table)."""
    qtbot.waitUntil(lambda: not window.busy(), timeout=20000)


def open_page(qtbot: QtBot, tmp_path: Path, model: str = "ministral-3-14b", quant: str = "bf16") -> FitPage:
    """The Fit page on the Strix Halo snapshot with ``model`` in ``quant``."""
    window = open_window(qtbot, tmp_path)
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    spec = page.state.catalog.model(model)
    assert spec is not None
    page.state.choose_model(from_catalog(spec))
    page.quant.setCurrentIndex(page.quant.findData(quant))
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


def test_overview_and_models_answer_with_the_same_backend(qtbot: QtBot, tmp_path: Path) -> None:
    """One answer on every page: the Overview's cards and the Models page's column are recomputed with the
    backend chosen on Fit, and give the speed Fit gives for the same model and format."""
    window = open_window(qtbot, tmp_path)
    state = window.state
    overview, models, fit = window.pages["overview"], window.pages["models"], window.pages["fit"]
    assert isinstance(overview, OverviewPage) and isinstance(models, ModelsPage) and isinstance(fit, FitPage)

    def card_speeds() -> dict[str, float | None]:
        return {card.spec.id: card.view.tokens_per_s for card in overview.cards}

    def column(model_id: str) -> float | None:
        spec = state.catalog.model(model_id)
        assert spec is not None
        qtbot.waitUntil(lambda: models.source.fit(spec) is not None, timeout=10000)
        found = models.source.fit(spec)
        assert found is not None
        return found.tokens_per_s

    before = card_speeds()
    assert "Speeds assume" not in overview.hint.text()  # the usual backend needs no word
    some = next(iter(before))
    rocm = column(some)
    fit.backend.setCurrentIndex(fit.backend.findData("vulkan"))
    assert state.backend == "vulkan"
    answered(qtbot, window)
    after = card_speeds()
    assert after.keys() == before.keys() and after != before  # Vulkan's factors, not ROCm's
    assert "Speeds assume llama.cpp on Vulkan, as chosen on the Fit page." in overview.hint.text()
    qtbot.waitUntil(lambda: column(some) != rocm, timeout=10000)
    # Fit on the card's model and format gives the card's speed
    card = next(c for c in overview.cards if c.spec.id == some)
    spec = state.catalog.model(some)
    assert spec is not None
    state.choose_model(from_catalog(spec), quant=card.quant, context=card.context)
    assert fit.result is not None
    assert fit.result.speed.decode_tokens_per_s == pytest.approx(card.view.tokens_per_s)
    assert column(some) == pytest.approx(card.view.tokens_per_s)
