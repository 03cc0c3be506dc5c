"""The Fit page trains on the machine's GPUs the way `rigcheck fit` does: every GPU for the frameworks that
shard by default (LitGPT, torchtune), one for the data-parallel stacks, a chosen count as --gpus N; so a
two-GPU machine's page gives the CLI's training verdict and placement for the same settings."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from gui.test_fit_multi_gpu import open_page
from rigcheck.cli import main
from rigcheck.gui.pages.fit import FitPage
from rigcheck.gui.pages.fit_training import FRAMEWORK_DEFAULT

pytestmark = pytest.mark.gui
CONTEXT = 2048


def _train(page: FitPage, workload: str, framework: str, gpus: int = FRAMEWORK_DEFAULT) -> None:
    page.workload.setCurrentIndex(page.workload.findData(workload))
    page.framework.setCurrentIndex(page.framework.findData(framework))
    page.context_value.setValue(CONTEXT)
    page.training_gpus.setValue(gpus)
    page.recompute()


def _cli(tmp_path: Path, workload: str, framework: str, *extra: str) -> dict[str, object]:
    out = io.StringIO()
    snapshot = tmp_path / "two-4090.json"
    argv = ["fit", "llama-3.1-8b", "--machine", str(snapshot), "--workload", workload]
    argv += ["--framework", framework, "--context", str(CONTEXT), *extra, "--json"]
    main(argv, out=out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize(
    ("workload", "framework", "gpus"),
    [("full", "litgpt", 2), ("lora", "torchtune", 2), ("full", "transformers", 1), ("qlora", "unsloth", 1)],
)
def test_the_default_is_the_clis_gpus_and_gives_its_verdict(
    qtbot: QtBot, tmp_path: Path, workload: str, framework: str, gpus: int
) -> None:
    page = open_page(qtbot, tmp_path)
    _train(page, workload, framework)
    assert page.request().gpus == gpus
    assert page.training_gpus.isEnabled() and page.training_gpus.maximum() == 2
    assert page.training_gpus.specialValueText().endswith(f"({gpus})")
    cli = _cli(tmp_path, workload, framework)
    assert page.result is not None
    placement = cli["placement"]
    assert isinstance(placement, dict)
    assert page.result.verdict == cli["verdict"]
    assert list(page.result.placement.gpu_bytes) == placement["gpu_bytes"]


def test_a_chosen_count_is_the_clis_gpus_flag(qtbot: QtBot, tmp_path: Path) -> None:
    page = open_page(qtbot, tmp_path)
    _train(page, "full", "litgpt")
    sharded = page.result
    _train(page, "full", "litgpt", gpus=1)
    assert page.request().gpus == 1
    cli = _cli(tmp_path, "full", "litgpt", "--gpus", "1")
    assert page.result is not None and sharded is not None
    assert page.result.verdict == cli["verdict"]
    assert list(page.result.placement.gpu_bytes) == cli["placement"]["gpu_bytes"]  # type: ignore[index]
    # one GPU holds the whole step: more per GPU than each of the two shards
    assert page.result.estimate.gpu_peak_bytes > sharded.estimate.gpu_peak_bytes


def test_inference_hides_the_choice_and_uses_no_training_gpus(qtbot: QtBot, tmp_path: Path) -> None:
    page = open_page(qtbot, tmp_path)
    assert not page.training_gpus.isEnabled()
    assert not page.form.isRowVisible(page.training_gpus)
    assert page.request().gpus == 1
    _train(page, "lora", "litgpt")
    assert page.form.isRowVisible(page.training_gpus)
