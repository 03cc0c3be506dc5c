"""The Fit page's llama.cpp build (`rigcheck fit --engine-build`): an older build is slower where a later
kernel milestone applies, and the advice says which; "Current" is a current build."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot
from test_fit_backend import open_page as open_fit_page

from rigcheck.gui.pages.fit import FitPage

pytestmark = pytest.mark.gui


def open_page(qtbot: QtBot, tmp_path: Path) -> FitPage:
    return open_fit_page(qtbot, tmp_path, "qwen3-next-80b-a3b", "q4_k_m")


def test_an_old_build_is_slower_and_advised(qtbot: QtBot, tmp_path: Path) -> None:
    page = open_page(qtbot, tmp_path)
    assert page.engine_build.value() == 0 and page.request().engine_build is None  # "Current"
    assert page.result is not None
    current = page.result.speed.decode_tokens_per_s
    page.engine_build.setValue(7189)
    assert page.request().engine_build == 7189
    assert page.result.speed.decode_tokens_per_s == pytest.approx(current / 1.33)  # type: ignore[operator]
    assert any("older than PR #19375" in a for a in page.result.advice)


def test_only_llama_cpp_takes_a_build(qtbot: QtBot, tmp_path: Path) -> None:
    page = open_page(qtbot, tmp_path)
    page.engine_build.setValue(7189)
    page.engine.setCurrentIndex(page.engine.findData("ollama"))
    assert not page.engine_build.isEnabled() and page.request().engine_build is None
    page.engine.setCurrentIndex(page.engine.findData("llama.cpp"))
    assert page.engine_build.isEnabled() and page.request().engine_build == 7189
