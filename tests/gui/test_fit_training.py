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


def test_optimizer_precision_targets_and_kernels_as_the_cli_takes_them(qtbot: QtBot, tmp_path: Path) -> None:
    """rigcheck fit's --optimizer, --precision, --lora-targets and --linear-kernels on the page: each
    changes the answer as the flag does, and each is shown only where it means something."""
    from rigcheck.core.models.resolve import from_catalog

    page = open_page(qtbot, tmp_path)
    extras = page.extras
    assert not any(w.isEnabled() for w in extras.widgets())  # inference: none applies
    page.workload.setCurrentIndex(page.workload.findData("full"))
    assert extras.optimizer.isEnabled() and extras.precision.isEnabled()
    assert not extras.targets.isEnabled()  # LoRA targets for LoRA and QLoRA only
    assert not extras.kernels.isEnabled()  # Ministral 3 has no Gated DeltaNet layers
    assert page.form.isRowVisible(extras.optimizer) and not page.form.isRowVisible(extras.kernels)
    assert page.result is not None
    adamw = page.result.estimate.total_bytes
    assert page.request().optimizer is None  # framework default
    extras.optimizer.setCurrentIndex(extras.optimizer.findData("adamw-8bit"))
    assert page.request().optimizer == "adamw-8bit"
    assert page.result.estimate.total_bytes < adamw  # 8-bit states: 2 B per parameter, not 8
    extras.precision.setCurrentIndex(extras.precision.findData("fp32"))
    assert page.request().precision == "fp32" and page.result.estimate.total_bytes > adamw

    page.workload.setCurrentIndex(page.workload.findData("lora"))
    assert extras.targets.isEnabled()
    extras.targets.setCurrentIndex(extras.targets.findData("all"))
    every = page.result.estimate.total_bytes
    extras.targets.setCurrentIndex(extras.targets.findData("q,v"))
    assert page.request().lora_targets == ("q", "v")
    assert page.result.estimate.total_bytes < every

    spec = page.state.catalog.model("qwen3.5-27b")
    assert spec is not None
    page.state.choose_model(from_catalog(spec))
    assert extras.kernels.isEnabled() and page.form.isRowVisible(extras.kernels)
    fla = page.result.estimate.total_bytes
    extras.kernels.setCurrentIndex(extras.kernels.findData("torch"))
    assert page.request().linear_kernels == "torch"
    assert page.result.estimate.total_bytes > fla  # the fallback saves more for the backward
    page.workload.setCurrentIndex(page.workload.findData("inference"))
    assert page.request().optimizer is None and page.request().linear_kernels == "fla"
