"""The Fit page's training controls: a training run names its framework, LoRA rank and checkpointing, and
the inference engine, its GPU backend and KV cache type do not apply to it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from gui.test_fit_backend import open_page

pytestmark = pytest.mark.gui


def test_training_run_uses_a_framework_not_an_inference_engine(qtbot: QtBot, tmp_path: Path) -> None:
    page = open_page(qtbot, tmp_path)
    assert page.engine.isEnabled() and not page.framework.isEnabled()
    page.workload.setCurrentIndex(page.workload.findData("qlora"))
    assert not page.engine.isEnabled() and not page.backend.isEnabled() and not page.kv.isEnabled()
    assert page.framework.isEnabled() and page.lora_rank.isEnabled()
    # the default is named: TRL + PEFT on transformers, the usual stack, not an unnamed generic estimate
    assert page.framework.currentData() == "transformers" and page.framework.currentText().startswith("TRL")
    assert page.request().framework == "transformers"
    page.framework.setCurrentIndex(page.framework.findData("unsloth"))
    page.lora_rank.setValue(32)
    page.checkpointing.setCurrentIndex(page.checkpointing.findData("offloaded"))
    req = page.request()
    assert (req.framework, req.lora_rank, req.checkpointing) == ("unsloth", 32, "offloaded")
    page.workload.setCurrentIndex(page.workload.findData("full"))
    assert not page.lora_rank.isEnabled()
    page.workload.setCurrentIndex(page.workload.findData("inference"))
    assert page.request().framework is None and page.engine.isEnabled()
