"""Measured beats estimated: llama-bench JSON where it covers the asked model, format and machine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.measured import apply_measured, covers, load_llama_bench
from rigcheck.core.estimate.memory import Request
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.report.estimate import fit_json, fit_text
from rigcheck.core.whatif import simulate

GIB = 1024**3
BENCH = Path(__file__).resolve().parent.parent / "fixtures" / "llama-bench" / "rtx4090-llama3-8b-q4km.json"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def box(catalog: Catalog, gpu: str) -> Machine:
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    return simulate(bare, [catalog.gpu(gpu)], 64)  # type: ignore[list-item]


def test_reads_llama_bench_json() -> None:
    rows = load_llama_bench(BENCH)
    assert [(r.n_prompt, r.n_gen, r.tokens_per_s) for r in rows] == [(512, 0, 7138.99), (0, 512, 130.58)]
    assert {r.quant_id for r in rows} == {"q4_k_m"}


def test_a_covering_measurement_is_used_and_the_estimate_kept_beside_it(catalog: Catalog) -> None:
    machine = box(catalog, "nvidia-geforce-rtx-4090")
    result = fit(model(LLAMA_31_8B), machine, Request(quant="q4_k_m"), catalog, live=False)
    measured = apply_measured(result, load_llama_bench(BENCH), machine, "bench.json")
    assert measured.speed.decode_tokens_per_s == 130.58
    assert measured.speed.prefill_tokens_per_s == 7138.99
    assert measured.speed.estimated_decode_tokens_per_s == result.speed.decode_tokens_per_s
    data = fit_json(measured)["speed"]
    assert data["decode_tokens_per_s"] == 130.6 and data["measured_from"] == "bench.json"
    assert data["estimated_decode_tokens_per_s"] == round(result.speed.decode_tokens_per_s, 1)  # type: ignore[arg-type]
    text = fit_text(measured, machine)
    assert "decode measured 130.6 tokens/s (estimate" in text and "Speed (measured" in text


def test_other_formats_gpus_and_offloads_are_not_covered(catalog: Catalog) -> None:
    rows = load_llama_bench(BENCH)
    other_gpu = box(catalog, "nvidia-geforce-rtx-3090")
    on_3090 = fit(model(LLAMA_31_8B), other_gpu, Request(quant="q4_k_m"), catalog, live=False)
    assert not any(covers(r, on_3090, other_gpu) for r in rows)
    kept = apply_measured(on_3090, rows, other_gpu, "bench.json")
    assert kept.speed == on_3090.speed and "no llama-bench test there covers" in kept.reasons[-1]
    machine = box(catalog, "nvidia-geforce-rtx-4090")
    q8 = fit(model(LLAMA_31_8B), machine, Request(quant="q8_0"), catalog, live=False)
    assert not any(covers(r, q8, machine) for r in rows)
    offloaded = fit(model(LLAMA_31_8B), box(catalog, "nvidia-geforce-rtx-3060"), Request(quant="q4_k_m"), catalog,
                    offload="layers", live=False)  # fmt: skip
    assert not any(covers(r, offloaded, box(catalog, "nvidia-geforce-rtx-3060")) for r in rows)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("| model | size |\n", "not llama-bench JSON"),
        ('{"a": 1}', "needs avg_ts"),
        ("[1, 2]", "not an object"),
        ("[]", "no test results"),
        ('"text"', "expected a list"),
    ],
)
def test_bad_files_are_one_line_errors(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "bench.json"
    path.write_text(text)
    with pytest.raises(InputError, match=problem) as info:
        load_llama_bench(path)
    assert str(path) in str(info.value)


def test_cli_fit_measured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fakes.cli import run_cli
    from fakes.machines import small_machine
    from rigcheck.core import probe

    monkeypatch.setattr(probe, "probe_machine", lambda **_kw: small_machine())
    code, out = run_cli(
        "fit", "llama-3.1-8b", "--quant", "q4_k_m", "--gpu", "nvidia-geforce-rtx-4090", "--measured", str(BENCH),
        "--json",
    )  # fmt: skip
    assert code == 0
    assert json.loads(out)["speed"]["decode_tokens_per_s"] == 130.6
    bad = tmp_path / "bench.txt"
    bad.write_text("not json")
    code, _ = run_cli("fit", "llama-3.1-8b", "--gpu", "nvidia-geforce-rtx-4090", "--measured", str(bad))
    assert code == 2
