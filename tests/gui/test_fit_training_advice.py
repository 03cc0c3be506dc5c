"""The Fit page shows what would let a fine-tune that does not fit run, as `rigcheck fit` says it."""

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
SNAPSHOT = Path(__file__).resolve().parents[1] / "fixtures" / "machines" / "rtx4090-64gb.json"


def test_a_qlora_run_that_does_not_fit_shows_the_stack_that_would(qtbot: QtBot, tmp_path: Path) -> None:
    catalog = load_catalog(use_overlay=False)
    state = AppState(catalog, QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    window = MainWindow(state, small_machine)
    qtbot.addWidget(window)
    window.open_snapshot(SNAPSHOT)
    page = window.pages["fit"]
    assert isinstance(page, FitPage)
    page.state.choose_model(from_catalog(catalog.model("qwen3-32b")))  # type: ignore[arg-type]
    page.workload.setCurrentIndex(page.workload.findData("qlora"))
    assert page.result is not None and page.result.verdict == "does_not_fit"
    assert any(a.startswith("--framework unsloth fits at context 8,192") for a in page.result.advice)
    assert "→ --framework unsloth fits" in page.reasons.text()
    page.workload.setCurrentIndex(page.workload.findData("inference"))
    assert "→ --framework" not in page.reasons.text()
