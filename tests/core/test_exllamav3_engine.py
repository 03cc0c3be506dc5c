"""ExLlamaV3 as an engine: NVIDIA CUDA only (one line elsewhere), EXL3 formats by bits per weight, its fp16
cache in 256-token pages, its 0.5 GiB reserve per GPU, no CPU offload, and a command that converts and runs."""

from __future__ import annotations

import pytest

from fakes.archs import LLAMA_31_8B, LLAMA_31_70B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.commands import commands_for, exllamav3_command
from rigcheck.core.estimate.exllamav3 import CHUNK, RESERVE_BYTES, cache_tokens
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, MIB, Request
from rigcheck.core.estimate.recommend import recommend
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def box(catalog: Catalog, gpu: str, count: int = 1) -> Machine:
    spec = catalog.gpu(gpu)
    assert spec is not None
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    return simulate(bare, [spec] * count)


def test_refused_off_nvidia(catalog: Catalog) -> None:
    mac = box(catalog, "apple-m2-max")
    with pytest.raises(InputError) as err:
        fit(model(LLAMA_31_8B), mac, Request(quant="exl3-4.0bpw", engine="exllamav3"), catalog, live=False)
    assert "NVIDIA" in str(err.value) and "M2 Max" in str(err.value)


def test_cache_pages_and_memory_terms(catalog: Catalog) -> None:
    assert [cache_tokens(c) for c in (1, 256, 257, 8192)] == [256, 256, 512, 8192]
    assert cache_tokens(1000, batch=2) == 2048
    one = box(catalog, "nvidia-geforce-rtx-4090")
    arch = LLAMA_31_8B
    req = Request(quant="exl3-4.0bpw", engine="exllamav3", context=8192)
    result = fit(model(arch), one, req, catalog, live=False)
    est = result.estimate
    embed_head = arch.embed_params + arch.head_params
    assert est.total("weights") == pytest.approx(
        (arch.params_total - embed_head) * 4 / 8 + embed_head * 2, 1e-6
    )
    assert est.total("kv_cache") == 8192 * 2 * 8 * 128 * 32 * 2  # k and v in torch.half
    assert est.total("activations") == CHUNK * 14336 * 3 * 2
    assert est.total("overhead") == 300 * MIB
    # the budget leaves ExLlamaV3's reserve (the GPU's own margin is larger here)
    assert result.budget.gpu_bytes[0] <= 24 * GIB - RESERVE_BYTES
    assert any("reserves 512.0 MiB" in r for r in result.reasons)
    assert result.verdict == "fits" and result.placement.offload == "none"
    assert result.speed is not None and any("CUDA factors" in e for e in result.speed.explanation)


def test_no_cpu_offload(catalog: Catalog) -> None:
    one = box(catalog, "nvidia-geforce-rtx-4090")
    req = Request(quant="exl3-6.0bpw", engine="exllamav3", context=8192)
    result = fit(model(LLAMA_31_70B), one, req, catalog, live=False)
    assert result.verdict == "does_not_fit" and result.placement.cpu_bytes == 0


def test_ladder_and_command(catalog: Catalog) -> None:
    spec = catalog.model("qwen3-8b")
    assert spec is not None
    two = box(catalog, "nvidia-geforce-rtx-4090", 2)
    info = from_catalog(spec)
    rec = recommend(info, two, "inference", catalog, context=8000, engine="exllamav3", live=False)
    quants = [r.result.estimate.quant.id for r in rec.ladder if r.result.estimate.quant]
    assert quants == ["exl3-6.0bpw", "exl3-5.0bpw", "exl3-4.0bpw", "exl3-3.0bpw"]  # no bf16 rung
    assert rec.best is not None and rec.best.runs
    command = exllamav3_command(rec.best.result, catalog)
    assert command == (
        "hf download Qwen/Qwen3-8B --local-dir ./qwen3-8b && "
        "python convert.py -i ./qwen3-8b -o ./qwen3-8b-exl3-6.0bpw -w ./exl3-work -b 6.0 && "
        "python examples/chat.py -m ./qwen3-8b-exl3-6.0bpw -mode raw -cs 8192"
    )
    assert commands_for(rec, two, catalog).commands["exllamav3"] == command
    gpt = catalog.model("gpt-oss-20b")
    assert gpt is not None
    with pytest.raises(InputError, match="16-bit checkpoint"):
        recommend(from_catalog(gpt), two, "inference", catalog, engine="exllamav3", live=False)
