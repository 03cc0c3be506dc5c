"""The Fit page's Engine combo offers ktransformers: a mixture of experts runs with its routed experts in RAM
and the page shows its command; a dense model gets the one-line reason, in the user's language."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.core.catalog import load_catalog
from rigcheck.core.models.resolve import from_catalog
from rigcheck.gui import i18n
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.fit import FitPage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


@pytest.fixture
def page(qtbot: QtBot, tmp_path: Path) -> FitPage:
    state = AppState(
        load_catalog(use_overlay=False), QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    )
    window = MainWindow(state, small_machine)
    qtbot.addWidget(window)
    window.open_snapshot(FIXTURES / "rtx4090-64gb.json")
    fit = window.pages["fit"]
    assert isinstance(fit, FitPage)
    return fit


def choose(page: FitPage, model_id: str) -> None:
    spec = page.state.catalog.model(model_id)
    assert spec is not None
    page.state.choose_model(from_catalog(spec))


def test_a_mixture_of_experts_runs_under_ktransformers_with_its_command(qtbot: QtBot, page: FitPage) -> None:
    choose(page, "qwen3-30b-a3b")
    page.engine.setCurrentIndex(page.engine.findData("ktransformers"))
    page.quant.setCurrentIndex(page.quant.findData("q4_k_m"))
    assert page.result is not None
    assert page.result.placement.offload == "experts"
    assert page.result.estimate.engine == "ktransformers"
    qtbot.waitUntil(lambda: not page.busy(), timeout=20000)  # the table and commands come from the pool
    assert page.command_engine.findText("ktransformers") >= 0
    page.command_engine.setCurrentIndex(page.command_engine.findText("ktransformers"))
    assert page.command.text().startswith("python -m ktransformers.local_chat --model_path Qwen/")
    page.fit_max_context()  # runs with the experts in RAM; nothing is "entirely on the GPU" under it
    assert "entirely on the GPU: not even 512 tokens" in page.solver_text.text()


def test_a_dense_model_under_ktransformers_says_why_in_italian(page: FitPage) -> None:
    choose(page, "llama-3.1-8b")
    page.engine.setCurrentIndex(page.engine.findData("ktransformers"))
    assert page.result is None
    assert "ktransformers runs mixture-of-experts models" in page.verdict.text()
    page.fit_max_context()  # the solver says the same, never a traceback
    assert "ktransformers runs mixture-of-experts models" in page.solver_text.text()
    i18n.set_language("it")
    try:
        page.recompute()
        assert "ktransformers esegue modelli a miscela di esperti" in page.verdict.text()
    finally:
        i18n.set_language("en")
