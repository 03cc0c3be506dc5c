"""SGLang as an engine: its static share of each GPU (--mem-fraction-static by SGLang's own rule), tensor
parallel when one GPU cannot hold the model, and its launch command."""

from __future__ import annotations

import pytest

from fakes.archs import LLAMA_31_8B, LLAMA_31_70B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.commands import sglang_command
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.estimate.placement.sglang import mem_fraction_static
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.whatif import simulate


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def box(catalog: Catalog, gpu: str, count: int = 1) -> Machine:
    spec = catalog.gpu(gpu)
    assert spec is not None
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    return simulate(bare, [spec] * count)


def test_mem_fraction_static_follows_sglang_rule() -> None:
    # 24 GiB (a 4090): reserved 512 + 2048 × 1.5 + 24 × 2 + 128 = 3760 MiB of 24576
    assert mem_fraction_static(24 * GIB) == round((24576 - 3760) / 24576, 3) == 0.847
    # 80 GiB (an H100): 512 + 8192 × 1.5 + 256 × 2 + 128 = 13440 MiB (above the 10 GiB floor)
    assert mem_fraction_static(80 * GIB) == round((81920 - 13440) / 81920, 3) == 0.836
    # 16 GiB: 512 + 3072 + 16 + 128 = 3728 MiB
    assert mem_fraction_static(16 * GIB) == round((16384 - 3728) / 16384, 3)


def test_sglang_budget_and_command(catalog: Catalog) -> None:
    one = box(catalog, "nvidia-geforce-rtx-4090")
    result = fit(
        model(LLAMA_31_8B), one, Request(quant="bf16", engine="sglang", context=8192), catalog, live=False
    )
    assert result.budget.gpu_bytes[0] == int(24 * GIB * 0.847)
    assert any("--mem-fraction-static" in r for r in result.reasons)
    # weights and KV cache only: activations and CUDA graphs are in SGLang's reserve
    assert result.estimate.total("activations") == 0 == result.estimate.total("overhead")
    assert result.verdict == "fits"
    command = sglang_command(result, catalog)
    assert command.startswith("python -m sglang.launch_server --model-path ")
    assert "--context-length 8192" in command and "--tp" not in command
    four = box(catalog, "nvidia-geforce-rtx-4090", 4)
    big = fit(
        model(LLAMA_31_70B), four, Request(quant="fp8", engine="sglang", context=8192), catalog, live=False
    )
    assert big.placement.split == "tensor" and all(big.placement.gpu_bytes)
    assert "--tp 4" in sglang_command(big, catalog) and "--quantization fp8" in sglang_command(big, catalog)
