"""Fit at 1920×1080 on eight GPUs (issue 30, screenshots): the settings card widens with the window, so the
multi-GPU split's choice is shown whole ("Layers over every GPU (llama.cpp default)" was cut at "(llama");
at 1024×700 the card keeps its size and the verdict its room."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from fakes.windows import answered, snapshot_window
from rigcheck.gui import i18n

pytestmark = pytest.mark.gui


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_split_choice_is_whole_at_1920(qtbot: QtBot, tmp_path: Path, language: str) -> None:
    window = snapshot_window(qtbot, tmp_path, "hgx-h100x8-2tb.json", language=language)
    try:
        window.resize(1920, 1080)
        window.show()
        window.show_page("fit")
        answered(qtbot, window)
        page = window.pages["fit"]
        split = page.split  # type: ignore[attr-defined]
        text = split.fontMetrics().horizontalAdvance(split.currentText())
        arrow = 28  # the drop-down arrow and the box's margins
        assert split.width() >= text + arrow, (split.width(), text, split.currentText())
        card = split.parentWidget()
        window.resize(1024, 700)
        qtbot.wait(50)
        assert card.width() <= 360  # as it was at 1024 px: the verdict beside it keeps its room
    finally:
        i18n.set_language("en")
