"""MLX as an engine (mlx-lm on Apple silicon): refused elsewhere in one line, its group-64 formats counted
with their scales and biases, a 16-bit KV cache, one prompt step's activations, no CPU offload, and a
command naming the catalog's MLX repository."""

from __future__ import annotations

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.commands import commands_for, mlx_command
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, MIB, Request
from rigcheck.core.estimate.mlx import PREFILL_STEP, mlx_repo
from rigcheck.core.estimate.recommend import recommend
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def box(catalog: Catalog, gpu: str, ram_gib: int) -> Machine:
    spec = catalog.gpu(gpu)
    assert spec is not None
    bare = Machine(cpu=CPU(logical_cores=12), memory=Memory(total_bytes=ram_gib * GIB), gpus=())
    return simulate(bare, [spec])


def test_refused_off_apple_in_one_line(catalog: Catalog) -> None:
    pc = box(catalog, "nvidia-geforce-rtx-4090", 64)
    with pytest.raises(InputError) as err:
        fit(
            model(LLAMA_31_8B), pc, Request(quant="mlx-4bit", engine="mlx", context=4096), catalog, live=False
        )
    assert "Apple silicon" in str(err.value) and "RTX 4090" in str(err.value) and "\n" not in str(err.value)
    bare = Machine(cpu=CPU(logical_cores=8), memory=Memory(total_bytes=32 * GIB), gpus=())
    with pytest.raises(InputError, match="no GPU"):
        fit(model(LLAMA_31_8B), bare, Request(quant="mlx-4bit", engine="mlx"), catalog, live=False)


def test_memory_terms(catalog: Catalog) -> None:
    mac = box(catalog, "apple-m2-max", 64)
    arch = LLAMA_31_8B
    result = fit(model(arch), mac, Request(quant="mlx-4bit", engine="mlx", context=8192), catalog, live=False)
    est = result.estimate
    # every weight at 4 + 2 × 16 / 64 = 4.5 bits (a 16-bit scale and bias per group of 64)
    assert est.total("weights") == pytest.approx(arch.params_total * 4.5 / 8, rel=1e-6)
    # fp16 cache: 2 (K and V) × 8 kv heads × 128 × 32 layers × 2 B per token
    assert est.total("kv_cache") == 8192 * 2 * 8 * 128 * 32 * 2
    # one 2,048-token prompt step through the 14,336-wide MLP, three 16-bit tensors
    assert est.total("activations") == PREFILL_STEP * 14336 * 3 * 2 == 168 * MIB
    assert est.total("overhead") == 0
    assert result.verdict == "fits" and result.placement.offload == "none"
    assert any("max_recommended_working_set_size" in r for r in result.reasons)
    assert result.speed is not None and any(
        "mlx-lm's own factors for apple-max" in e for e in result.speed.explanation
    )


def test_no_cpu_offload_when_too_big(catalog: Catalog) -> None:
    # 16 GiB of a 24 GiB M2's 2/3 share cannot hold 15 GiB of bf16 weights, the cache and the step: MLX
    # does not put layers in RAM, so it does not run (llama.cpp would offload)
    mac = box(catalog, "apple-m2", 24)
    result = fit(
        model(LLAMA_31_8B), mac, Request(quant="bf16", engine="mlx", context=8192), catalog, live=False
    )
    assert result.verdict == "does_not_fit"
    assert result.placement is not None and result.placement.cpu_bytes == 0
    assert result.placement.offload == "none"


def test_command_names_the_catalog_mlx_repo(catalog: Catalog) -> None:
    assert mlx_repo(("mlx-community/Qwen3-8B-4bit", "mlx-community/Qwen3-8B-8bit"), "mlx-8bit") == (
        "mlx-community/Qwen3-8B-8bit"
    )
    assert mlx_repo(("mlx-community/Qwen3-8B-4bit",), "mlx-6bit") is None
    spec = catalog.model("qwen3-8b")
    assert spec is not None and "mlx-community/Qwen3-8B-4bit" in spec.mlx_repos
    mac = box(catalog, "apple-m2-max", 64)
    info = from_catalog(spec)
    four = fit(info, mac, Request(quant="mlx-4bit", engine="mlx", context=8192), catalog, live=False)
    assert mlx_command(four, catalog) == "mlx_lm.server --model mlx-community/Qwen3-8B-4bit"
    six = fit(info, mac, Request(quant="mlx-6bit", engine="mlx", context=8192), catalog, live=False)
    assert mlx_command(six, catalog) == (
        "mlx_lm.convert --hf-path Qwen/Qwen3-8B -q --q-bits 6 --mlx-path ./qwen3-8b-6bit-mlx && "
        "mlx_lm.server --model ./qwen3-8b-6bit-mlx"
    )
    rec = recommend(info, mac, "inference", catalog, context=8192, engine="mlx", live=False)
    assert rec.best is not None and rec.best.runs
    assert {r.result.estimate.quant.id for r in rec.ladder if r.result.estimate.quant} >= {
        "mlx-4bit",
        "mlx-8bit",
    }
    assert commands_for(rec, mac, catalog).commands["mlx"].startswith("mlx_lm.")


def test_gguf_formats_are_refused_in_one_line(catalog: Catalog) -> None:
    mac = box(catalog, "apple-m2-max", 64)
    with pytest.raises(InputError, match="not GGUF") as err:
        fit(model(LLAMA_31_8B), mac, Request(quant="q4_k_m", engine="mlx"), catalog, live=False)
    assert "\n" not in str(err.value)
