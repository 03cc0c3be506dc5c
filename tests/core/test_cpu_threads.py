"""CPU prompt processing by threads (llama.cpp -t) and by the quant's kernel: AMX only for the types llama.cpp
has AMX kernels for (ggml/src/ggml-cpu/amx/common.h qtype_has_amx_kernels)."""

from __future__ import annotations

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.commands import llama_cpp_command
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.estimate.recommend import Rung, where_of
from rigcheck.core.machine import CPU, Machine, Memory

SAPPHIRE = CPU(
    logical_cores=64,
    model="Intel Xeon Gold 6454S",
    physical_cores=32,
    max_mhz=3400,
    flags=("avx", "avx2", "fma", "avx512f", "amx_tile"),
)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def host(cpu: CPU) -> Machine:
    return Machine(cpu=cpu, memory=Memory(total_bytes=256 * GIB), gpus=())


def test_threads_set_the_cores_that_compute() -> None:
    full = speed.cpu_compute(SAPPHIRE)
    half = speed.cpu_compute(SAPPHIRE, threads=16)
    more = speed.cpu_compute(SAPPHIRE, threads=64)  # hyper-threads share their core's FMA units
    assert full is not None and half is not None and more is not None
    assert half.flops_per_s == pytest.approx(full.flops_per_s / 2)
    assert half.cores == 16 and more.cores == 32


def test_amx_counts_only_for_types_with_amx_kernels() -> None:
    amx = speed.cpu_compute(SAPPHIRE, quant_id="q4_k_m")
    plain = speed.cpu_compute(SAPPHIRE, quant_id="q3_k_m")
    bf16 = speed.cpu_compute(SAPPHIRE, quant_id="bf16")
    assert amx is not None and plain is not None and bf16 is not None
    assert amx.flops_per_cycle == 64 and plain.flops_per_cycle == 32 == bf16.flops_per_cycle
    assert "no AMX kernel for q3_k_m" in plain.why and "amx/common.h" in plain.why
    assert speed.cpu_compute(SAPPHIRE) is not None  # without a type, as before: AMX counted


def test_cpu_prefill_follows_threads_and_the_command_says_so(catalog: Catalog) -> None:
    machine = host(SAPPHIRE)
    default = fit(model(LLAMA_31_8B), machine, Request(quant="q4_k_m"), catalog, live=False)
    eight = fit(model(LLAMA_31_8B), machine, Request(quant="q4_k_m", threads=8), catalog, live=False)
    assert default.speed.prefill_tokens_per_s and eight.speed.prefill_tokens_per_s
    assert eight.speed.prefill_tokens_per_s < default.speed.prefill_tokens_per_s
    assert any("8 cores ×" in line for line in eight.speed.explanation)
    rung = Rung("Q4_K_M", "q4_k_m", eight, where_of(eight))
    assert " -t 8" in llama_cpp_command(rung, catalog)
    assert " -t " not in llama_cpp_command(Rung("Q4_K_M", "q4_k_m", default, where_of(default)), catalog)
