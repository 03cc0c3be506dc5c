"""Training tokens/s follow FLOPs per token: 6N full, 4N + 6N_adapters for LoRA, attention by each layer's
kind, +2N when checkpointing recomputes, at the framework's efficiency fitted on cited rows."""

from __future__ import annotations

import importlib
import statistics
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from fakes.archs import LLAMA_31_8B, dense, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import FitResult, fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.speed import training
from rigcheck.core.estimate.speed.training import attending_width, training_flops
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.whatif import simulate

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def test_full_fine_tuning_is_six_flops_per_weight_plus_attention() -> None:
    arch = LLAMA_31_8B
    weights = arch.params_total - arch.embed_params  # the input embedding is a lookup
    flops = training_flops(arch, "full", 2048, recompute=False)
    assert flops.matmul == 6 * weights
    assert flops.attention == 12 * arch.num_layers * arch.num_heads * arch.head_dim * 2048  # PaLM App. B
    recomputed = training_flops(arch, "full", 2048, recompute=True)
    assert recomputed.matmul == 8 * weights and recomputed.attention == flops.attention * 16 / 12


def test_lora_skips_the_weight_gradients_but_trains_its_adapters() -> None:
    arch = LLAMA_31_8B
    weights = arch.params_total - arch.embed_params
    flops = training_flops(arch, "lora", 1024, recompute=False, adapters=1000)
    assert flops.matmul == 4 * weights + 6 * 1000
    assert flops.total < training_flops(arch, "full", 1024, recompute=False).total


def test_attention_follows_each_layers_kind() -> None:
    full = dense(hidden=2048, layers=4, heads=16, kv_heads=4, intermediate=8192, vocab=32000)
    sliding = dense(hidden=2048, layers=4, heads=16, kv_heads=4, intermediate=8192, vocab=32000,
                    kinds=("sliding", "full", "sliding", "full"), window=512)  # fmt: skip
    hybrid = dense(hidden=2048, layers=4, heads=16, kv_heads=4, intermediate=8192, vocab=32000,
                   kinds=("linear", "linear", "linear", "full"))  # fmt: skip
    width = 16 * 128
    assert attending_width(full, 8192) == 4 * width * 8192
    assert attending_width(sliding, 8192) == 2 * width * 8192 + 2 * width * 512
    assert attending_width(hybrid, 8192) == width * 8192


def _fit(catalog: Catalog, req: Request) -> FitResult:
    spec = catalog.gpu("nvidia-a100-sxm4-80gb")
    assert spec is not None
    bare = Machine(cpu=CPU(logical_cores=32), memory=Memory(total_bytes=256 * GIB), gpus=())
    return fit(model(LLAMA_31_8B), simulate(bare, [spec], 256), req, catalog, live=False, advise=False)


def _speed(catalog: Catalog, req: Request) -> tuple[float, tuple[str, ...]]:
    result = _fit(catalog, req)
    assert result.speed.train_tokens_per_s is not None
    return result.speed.train_tokens_per_s, result.speed.explanation


def test_tokens_per_second_are_flops_at_the_frameworks_efficiency(catalog: Catalog) -> None:
    req = Request(workload="lora", context=2048, batch=1, framework="torchtune")
    result = _fit(catalog, req)
    adapters = result.estimate.trainable_params
    flops = training_flops(LLAMA_31_8B, "lora", 2048, recompute=True, adapters=adapters)
    tps = result.speed.train_tokens_per_s
    assert tps == pytest.approx(training.TRAIN_EFFICIENCY["torchtune"] * 312e12 / flops.total)
    # no checkpointing: no recompute, so faster by the forward pass saved
    faster, _ = _speed(catalog, replace(req, checkpointing="none"))
    assert faster > tps * 1.2
    assert not any("no cited speed measurement" in line for line in result.speed.explanation)


def test_a_framework_without_cited_speed_rows_says_it_borrows_the_median(catalog: Catalog) -> None:
    assert "unsloth" not in training.TRAIN_EFFICIENCY
    _, why = _speed(catalog, Request(workload="lora", context=2048, framework="unsloth"))
    assert any("no cited speed measurement of unsloth" in line for line in why)


def test_the_efficiencies_are_the_fit_of_the_cited_rows(catalog: Catalog) -> None:
    """The constants are what benchmarks/training_speed_fit.py fits on the rows outside the held-out quarter."""
    module = importlib.import_module("training_speed_fit")
    found = module.fit_rows(catalog)
    assert found and all(i.row.split == "fit" for i in found)
    per, fallback = module.fitted(found)
    assert per == training.TRAIN_EFFICIENCY and fallback == training.FALLBACK_EFFICIENCY


def test_megatrains_efficiency_is_the_fit_of_its_two_runs(catalog: Catalog) -> None:
    """Qwen2.5-7B and Qwen2.5-32B on one H100 imply nearly the same efficiency (within 0.05, with the CPU
    optimizer at the default host bandwidth): it is its kernels', not one run's constant."""
    module = importlib.import_module("training_speed_fit")
    found = module.megatrain_rows(catalog)
    assert len(found) == 2 and {i.row.model_id for i in found} == {"qwen2.5-7b", "qwen2.5-32b"}
    assert max(i.efficiency for i in found) - min(i.efficiency for i in found) < 0.05
    assert round(statistics.median(i.efficiency for i in found), 2) == training.MEGATRAIN_MFU
