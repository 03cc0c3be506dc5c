"""Ollama's engine × architecture maturity (catalog [[maturity]] engine "ollama", fitted by
benchmarks/fit_speed.py --maturity): applied to Ollama estimates only, on top of llama.cpp's, and said."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rigcheck.core.catalog import Catalog, Maturity, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def box(catalog: Catalog, gpu: str) -> Machine:
    spec = catalog.gpu(gpu)
    assert spec is not None
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=128 * GIB), gpus=())
    return simulate(bare, [spec])


UPSTREAM = Maturity(
    "llama.cpp-qwen3_next", "llama.cpp", "qwen3_next", "https://example.org/upstream", decode_factor=0.5
)
OWN = Maturity("ollama-qwen3_next", "ollama", "qwen3_next", "https://example.org/ollama", decode_factor=0.8)


def test_engine_maturity_multiplies_ollamas_own_onto_llama_cpps(catalog: Catalog) -> None:
    both = replace(catalog, maturities=(UPSTREAM, OWN))
    combined = speed.engine_maturity(both, "ollama", "qwen3_next")
    assert combined is not None
    assert combined.decode_factor == pytest.approx(0.4)
    assert "upstream" in combined.source and "ollama" in combined.source
    # llama.cpp's estimate never takes Ollama's lag; either alone stands as it is
    assert speed.engine_maturity(both, "llama.cpp", "qwen3_next") == UPSTREAM
    assert speed.engine_maturity(replace(catalog, maturities=(OWN,)), "ollama", "qwen3_next") == OWN
    assert speed.engine_maturity(replace(catalog, maturities=(OWN,)), "llama.cpp", "qwen3_next") is None


def test_an_ollama_maturity_slows_ollamas_estimate_alone_and_says_where_from(catalog: Catalog) -> None:
    bare = replace(catalog, maturities=())
    slow = replace(catalog, maturities=(OWN,))
    qwen3_next = from_catalog(catalog.model("qwen3-next-80b-a3b"))  # type: ignore[arg-type]
    machine = box(catalog, "nvidia-rtx-pro-6000-blackwell-workstation")
    for engine, share in (("ollama", 0.8), ("llama.cpp", 1.0)):
        request = Request(quant="q4_k_m", context=4096, engine=engine)  # type: ignore[arg-type]
        plain = fit(qwen3_next, machine, request, bare, live=False).speed
        scaled = fit(qwen3_next, machine, request, slow, live=False).speed
        assert plain.decode_tokens_per_s
        assert scaled.decode_tokens_per_s == pytest.approx(plain.decode_tokens_per_s * share)
        said = [line for line in scaled.explanation if "usual speed" in line]
        if share < 1:
            assert any("80% of its usual speed" in line and "example.org/ollama" in line for line in said), (
                said
            )
        else:
            assert not said
