"""ktransformers as an engine, through fit(): routed experts in RAM computed on the CPU, the rest on the GPU;
decode bound by the host's bandwidth, prefill by the CPU's compute; reachable from the CLI with one-line
errors where it does not apply."""

from __future__ import annotations

import json
import tomllib
from dataclasses import replace
from importlib.resources import files
from pathlib import Path

import pytest

from fakes.cli import one_error_line, run_cli
from rigcheck.core import i18n
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import _active_bytes, fit, ktransformers_parts
from rigcheck.core.estimate.memory import Request
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.whatif import simulate

GIB = 1024**3
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"
#: the ktransformers tutorial's host: two Xeon Gold 6454S (32 cores each, AVX-512 and AMX), an RTX 4090
XEON = CPU(
    logical_cores=128,
    model="Intel(R) Xeon(R) Gold 6454S",
    physical_cores=64,
    max_mhz=3400,
    flags=("avx", "avx2", "fma", "avx512f", "amx_tile"),
)
REQ = Request(quant="q4_k_m", context=4096, engine="ktransformers")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


@pytest.fixture(scope="module")
def deepseek(catalog: Catalog) -> ModelInfo:
    spec = catalog.model("deepseek-v3")
    assert spec is not None
    return from_catalog(spec)


def xeon_box(catalog: Catalog, cpu: CPU = XEON, bandwidth: int | None = None) -> Machine:
    gpu = catalog.gpu("nvidia-geforce-rtx-4090")
    assert gpu is not None
    machine = simulate(Machine(cpu=cpu, memory=Memory(total_bytes=512 * GIB), gpus=()), [gpu], 512)
    if bandwidth:
        memory = replace(machine.memory, bandwidth_bytes_per_s=bandwidth, bandwidth_source="measured")
        machine = replace(machine, memory=memory)
    return machine


def kt_factor(catalog: Catalog) -> speed.SpeedFactor:
    factor = speed.engine_cpu_factor(catalog, speed.KTRANSFORMERS)
    assert factor is not None and factor.prefill_compute_efficiency is not None
    return factor


def test_every_routed_expert_is_in_ram_and_the_rest_on_the_gpu(catalog: Catalog, deepseek: ModelInfo) -> None:
    result = fit(deepseek, xeon_box(catalog), REQ, catalog, live=False)
    est, placement = result.estimate, result.placement
    assert result.verdict == "fits_with_offload"
    assert placement.offload == "experts"
    assert placement.gpu_layers == placement.total_layers == deepseek.arch.num_layers
    assert placement.cpu_expert_layers == deepseek.arch.num_layers
    # RAM holds exactly the routed experts; the GPU the attention, shared experts, KV cache and runtime
    assert placement.cpu_bytes == sum(est.layer_expert_bytes)
    on_gpu = sum(est.layer_weight_bytes) - sum(est.layer_expert_bytes) + sum(est.layer_kv_bytes)
    assert on_gpu < placement.gpu_bytes[0] < on_gpu + 2 * GIB
    assert "computed on the CPU by ktransformers" in result.reasons[0]


def test_decode_is_the_gpu_part_plus_routed_experts_at_host_bandwidth(
    catalog: Catalog, deepseek: ModelInfo
) -> None:
    factor = kt_factor(catalog)
    slow = fit(deepseek, xeon_box(catalog, bandwidth=200 * 10**9), REQ, catalog, live=False, advise=False)
    fast = fit(deepseek, xeon_box(catalog, bandwidth=400 * 10**9), REQ, catalog, live=False, advise=False)
    _per_layer, routed, _head = _active_bytes(slow.estimate)
    read = sum(routed)
    assert slow.speed.bound_by == "ram_bandwidth"
    assert any(line.startswith("decode bound by host memory bandwidth") for line in slow.speed.explanation)
    assert slow.speed.decode_tokens_per_s and fast.speed.decode_tokens_per_s
    # the GPU part is the same on both: the difference in seconds per token is the experts' read time
    gained = 1 / slow.speed.decode_tokens_per_s - 1 / fast.speed.decode_tokens_per_s
    expected = read / (200e9 * factor.decode_bandwidth_efficiency) - read / (
        400e9 * factor.decode_bandwidth_efficiency
    )
    assert gained == pytest.approx(expected, rel=1e-6)


def test_prefill_is_bound_by_the_cpus_compute(catalog: Catalog, deepseek: ModelInfo) -> None:
    factor = kt_factor(catalog)
    half = replace(XEON, physical_cores=32)
    two = fit(deepseek, xeon_box(catalog), REQ, catalog, live=False, advise=False)
    one = fit(deepseek, xeon_box(catalog, half), REQ, catalog, live=False, advise=False)
    assert any(line.startswith("prefill bound by the CPU's compute") for line in two.speed.explanation)
    assert two.speed.prefill_tokens_per_s and one.speed.prefill_tokens_per_s
    parts = ktransformers_parts(two.estimate, two.placement, xeon_box(catalog), catalog)
    assert parts is not None and parts.cpu_compute is not None
    # 2 FLOPs per routed weight a token uses: DeepSeek-V3's 8 of 256 experts × 58 layers ≈ 20 B parameters
    assert parts.cpu_flops_per_token == pytest.approx(2 * 58 * 8 * 3 * 7168 * 2048, rel=1e-3)
    peak = parts.cpu_compute.flops_per_s
    assert peak == pytest.approx(64 * 3.4e9 * 64)
    # halving the cores adds exactly the CPU part's time once more
    lost = 1 / one.speed.prefill_tokens_per_s - 1 / two.speed.prefill_tokens_per_s
    per_token = parts.cpu_flops_per_token / (peak * factor.prefill_compute_efficiency)
    assert lost == pytest.approx(per_token, rel=1e-6)


def test_a_short_prompt_is_bound_by_reading_the_experts_it_touches(
    catalog: Catalog, deepseek: ModelInfo
) -> None:
    result = fit(deepseek, xeon_box(catalog), replace(REQ, context=4), catalog, live=False, advise=False)
    assert any(line.startswith("prefill bound by host memory") for line in result.speed.explanation)


def test_without_a_clock_or_fitted_factors_there_is_no_number_and_the_reason_is_said(
    catalog: Catalog, deepseek: ModelInfo
) -> None:
    no_clock = replace(XEON, max_mhz=None)
    result = fit(deepseek, xeon_box(catalog, no_clock), REQ, catalog, live=False, advise=False)
    assert result.speed.prefill_tokens_per_s is None and result.speed.decode_tokens_per_s
    assert "prefill: CPU clock not known; not estimated" in result.speed.explanation
    bare = replace(
        catalog, speed_factors=tuple(f for f in catalog.speed_factors if f.backend != "ktransformers")
    )
    result = fit(deepseek, xeon_box(bare), REQ, bare, live=False, advise=False)
    assert result.speed.decode_tokens_per_s is None
    assert any("no fitted CPU factors" in line for line in result.speed.explanation)


def test_a_dense_model_no_gpu_or_another_offload_is_an_input_error(
    catalog: Catalog, deepseek: ModelInfo
) -> None:
    dense_spec = catalog.model("llama-3.1-8b")
    assert dense_spec is not None
    with pytest.raises(InputError, match="is dense"):
        fit(from_catalog(dense_spec), xeon_box(catalog), REQ, catalog, live=False)
    cpu_only = simulate(xeon_box(catalog), [], 512)
    with pytest.raises(InputError, match="needs a GPU"):
        fit(deepseek, cpu_only, REQ, catalog, live=False)
    with pytest.raises(InputError, match="--offload auto or experts"):
        fit(deepseek, xeon_box(catalog), REQ, catalog, offload="layers", live=False)


def test_the_cli_offers_the_engine_with_its_command_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    machine = str(FIXTURES / "rtx4090-64gb.json")
    args = ("fit", "deepseek-v3", "--quant", "q4_k_m", "--engine", "ktransformers", "--machine", machine)
    status, out = run_cli(*args, "--ram-gb", "512")
    assert status == 0
    assert "computed on the CPU by ktransformers" in out
    assert "python -m ktransformers.local_chat --model_path deepseek-ai/DeepSeek-V3 --gguf_path" in out
    status, out = run_cli(*args, "--ram-gb", "512", "--json")
    doc = json.loads(out)
    assert doc["placement"]["offload"] == "experts"
    assert doc["commands"]["ktransformers"].startswith("python -m ktransformers.local_chat")


def test_the_cli_says_in_one_line_why_a_dense_model_or_a_gpu_less_machine_cannot(
    capsys: pytest.CaptureFixture[str],
) -> None:
    machine = str(FIXTURES / "rtx4090-64gb.json")
    status, _ = run_cli("fit", "llama-3.1-8b", "--engine", "ktransformers", "--machine", machine)
    assert status == 2
    assert "ktransformers runs mixture-of-experts models" in one_error_line(capsys)
    cpu_only = str(FIXTURES / "cpu-only-32gb.json")
    status, _ = run_cli("fit", "qwen3-30b-a3b", "--engine", "ktransformers", "--machine", cpu_only)
    assert status == 2
    assert "ktransformers needs a GPU" in one_error_line(capsys)


def test_every_ktransformers_sentence_has_an_italian_entry(catalog: Catalog, deepseek: ModelInfo) -> None:
    i18n.seen.clear()
    i18n.set_language("it")
    try:
        fit(deepseek, xeon_box(catalog), REQ, catalog, live=False)
        fit(deepseek, xeon_box(catalog), replace(REQ, context=4), catalog, live=False, advise=False)
        for machine in (simulate(xeon_box(catalog), [], 512),):
            with pytest.raises(InputError, match="richiede una GPU"):
                fit(deepseek, machine, REQ, catalog, live=False)
        result = fit(deepseek, xeon_box(catalog), REQ, catalog, live=False, advise=False)
        assert "calcolati sulla CPU da ktransformers" in result.reasons[0]
    finally:
        i18n.set_language("en")
    table = tomllib.loads(
        files("rigcheck.resources").joinpath("translations/it.toml").read_text(encoding="utf-8")
    )
    shown = [s for s in i18n.seen if "ktransformers" in s or "routed experts" in s or "bound by" in s]
    assert len(shown) >= 5, shown
    missing = sorted(s for s in shown if s not in table)
    assert not missing, missing
