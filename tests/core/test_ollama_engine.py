"""Ollama as an engine (ollama/ollama@fb30760): llama.cpp's memory under its own defaults — the VRAM-based
default context (4k / 32k / 256k, capped at the trained context, stepped down when it does not fit) and one
GPU first, then all of them."""

from __future__ import annotations

import pytest

from fakes.archs import LLAMA_31_8B, LLAMA_31_70B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate import ollama
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.whatif import simulate


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def box(catalog: Catalog, *gpus: str, ram_gib: int = 64) -> Machine:
    specs = [catalog.gpu(g) for g in gpus]
    assert all(specs)
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=ram_gib * GIB), gpus=())
    return simulate(bare, specs)  # type: ignore[arg-type]


def test_default_context_follows_total_gpu_memory(catalog: Catalog) -> None:
    small = box(catalog, "nvidia-geforce-rtx-4060")
    mid = box(catalog, "nvidia-geforce-rtx-4090")
    big = box(catalog, "nvidia-geforce-rtx-4090", "nvidia-geforce-rtx-4090")
    eight_b = model(LLAMA_31_8B)  # trained on 131072 tokens
    assert ollama.default_context(small, eight_b) == 4096
    assert ollama.default_context(mid, eight_b) == 32768
    assert ollama.default_context(big, eight_b) == eight_b.arch.max_context == 131072  # 262144, capped
    assert [ollama.smaller_context(c) for c in (262144, 32768, 4096)] == [32768, 4096, None]


def test_ollama_fit_uses_its_context_and_says_why(catalog: Catalog) -> None:
    mid = box(catalog, "nvidia-geforce-rtx-4090")
    result = fit(model(LLAMA_31_8B), mid, Request(quant="q4_k_m", engine="ollama"), catalog, live=False)
    assert result.estimate.context == 32768
    assert any("Ollama's default context" in r and "32,768" in r for r in result.reasons)
    asked = fit(model(LLAMA_31_8B), mid, Request(quant="q4_k_m", engine="ollama", context=2048), catalog)
    assert asked.estimate.context == 2048
    assert not any("Ollama's default context" in r for r in asked.reasons)
    # llama.cpp's memory terms: the same bytes as llama.cpp at the same context
    same = fit(model(LLAMA_31_8B), mid, Request(quant="q4_k_m", context=32768), catalog, live=False)
    assert result.estimate.total_bytes == same.estimate.total_bytes
    assert result.speed.decode_tokens_per_s == pytest.approx(same.speed.decode_tokens_per_s)


def test_ollama_steps_the_context_down_until_it_loads(catalog: Catalog) -> None:
    # two 24 GB cards: 256k by default (capped at 131072), which with 70B Q4_K_M's 40 GiB cannot load even
    # with RAM; Ollama steps down to 32768
    pair = box(catalog, "nvidia-geforce-rtx-4090", "nvidia-geforce-rtx-4090", ram_gib=16)
    result = fit(model(LLAMA_31_70B), pair, Request(quant="q4_k_m", engine="ollama"), catalog, live=False)
    assert result.verdict != "does_not_fit"
    assert result.estimate.context < 131072


def test_ollama_puts_a_model_on_one_gpu_when_it_fits(catalog: Catalog) -> None:
    pair = box(catalog, "nvidia-geforce-rtx-3090", "nvidia-geforce-rtx-4090")
    req = Request(quant="q4_k_m", context=8192)
    on_ollama = fit(model(LLAMA_31_8B), pair, Request(quant="q4_k_m", context=8192, engine="ollama"), catalog)
    on_llama = fit(model(LLAMA_31_8B), pair, req, catalog, live=False)
    assert sum(1 for b in on_ollama.placement.gpu_bytes if b) == 1
    assert sum(1 for b in on_llama.placement.gpu_bytes if b) == 2  # llama.cpp spreads it over both
    # too big for one card: both
    big = fit(model(LLAMA_31_70B), pair, Request(quant="q4_k_m", context=8192, engine="ollama"), catalog)
    assert big.verdict == "fits" and all(big.placement.gpu_bytes)


def test_ollama_offloads_whole_layers_never_experts(catalog: Catalog) -> None:
    from rigcheck.core.models.resolve import from_catalog

    spec = catalog.model("qwen3-30b-a3b")
    assert spec is not None
    mixture = from_catalog(spec)
    small = box(catalog, "nvidia-geforce-rtx-4060")
    llama = fit(mixture, small, Request(quant="q4_k_m", context=4096), catalog, live=False)
    on_ollama = fit(
        mixture, small, Request(quant="q4_k_m", context=4096, engine="ollama"), catalog, live=False
    )
    assert llama.placement.offload == "experts"  # llama.cpp: --n-cpu-moe decodes faster here
    assert on_ollama.placement.offload == "layers"  # Ollama: num_gpu layers only
