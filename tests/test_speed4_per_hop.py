"""The cost of each further GPU in llama.cpp's layer split (benchmarks/per_hop_fit.py): the fit recovers a
known per-boundary cost from one-vs-N-GPU row pairs, and the shipped catalog's fitted cost makes one GPU and
eight give different speeds, as the measurements do.

The fit's rows are made from one real measurement row with numbers set by the test, so the test checks the
fitting, not the measurement set (what the fitted factors do to real rows is estimate_accuracy.py's job).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from measurements import load  # noqa: E402
from per_hop_fit import fit_per_hop, hop_samples  # noqa: E402
from rigcheck.core.catalog import load_catalog  # noqa: E402
from rigcheck.core.estimate.fit import fit  # noqa: E402
from rigcheck.core.estimate.memory import GIB, Request  # noqa: E402
from rigcheck.core.machine import CPU, Machine, Memory  # noqa: E402
from rigcheck.core.models.resolve import from_catalog  # noqa: E402
from rigcheck.core.whatif import simulate  # noqa: E402

TEMPLATE = next(r for r in load() if r.id == "xd-309024gb-8b-q4_k_m-tg512")


def _fit_id(stem: str) -> str:
    """An id in the fit split (the split is a hash of the id), so the fit may use the made-up row."""
    for n in range(100):
        candidate = f"{stem}-{n}"
        if dataclasses.replace(TEMPLATE, id=candidate).split == "fit":
            return candidate
    raise AssertionError("no fit-split id")


def _pair(tag: str, one_tps: float, gpus: int, hop_us: float, held_out: bool = False):  # type: ignore[no-untyped-def]
    base = dataclasses.replace(TEMPLATE, id=_fit_id(f"{tag}-1"), model_id=f"m-{tag}", value=one_tps)
    seconds = 1 / one_tps + (gpus - 1) * hop_us * 1e-6
    many = dataclasses.replace(base, id=_fit_id(f"{tag}-{gpus}"), gpu_count=gpus, value=1 / seconds)
    return [base, many]


def test_the_fit_recovers_a_known_cost_per_gpu_boundary() -> None:
    catalog = load_catalog(use_overlay=False)
    rows = [
        r
        for i, (tps, n) in enumerate([(120, 2), (60, 4), (130, 8), (45, 6)])
        for r in _pair(f"p{i}", tps, n, 200)
    ]
    samples = hop_samples(rows)
    assert len(samples) == 4 and all(us == pytest.approx(200, rel=1e-6) for _row, us in samples)
    fits = fit_per_hop(rows, catalog)
    assert fits[("nvidia-consumer", "cuda")].us == 200
    # a class without pairs of its own takes its vendor × backend pool's figure
    assert fits[("nvidia-datacenter", "cuda")].us == 200
    assert fits[("nvidia-datacenter", "cuda")].pooled == "nvidia cuda"
    # a vendor × backend with no pair of its own takes the median of every pair, and says so
    assert fits[("amd-consumer", "rocm")].us == 200
    assert fits[("amd-consumer", "rocm")].pooled == "every backend"
    # fewer pairs than the fit needs: no figure rather than a guess
    assert fit_per_hop(rows[:4], catalog) == {}


def test_pairs_never_use_held_out_rows() -> None:
    rows = _pair("h", 100, 4, 300)
    held_id = next(
        f"held-{n}" for n in range(100) if dataclasses.replace(TEMPLATE, id=f"held-{n}").split != "fit"
    )
    assert len(hop_samples(rows)) == 1
    assert hop_samples([rows[0], dataclasses.replace(rows[1], id=held_id)]) == []


def test_one_gpu_and_eight_give_different_speeds() -> None:
    catalog = load_catalog(use_overlay=False)
    spec, llama = catalog.gpu("nvidia-geforce-rtx-4090"), catalog.model("llama-3.1-8b")
    assert spec is not None and llama is not None
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())

    def decode(count: int) -> float:
        result = fit(
            from_catalog(llama), simulate(bare, [spec] * count), Request(quant="q4_k_m"), catalog, live=False
        )
        assert result.speed.decode_tokens_per_s is not None
        return result.speed.decode_tokens_per_s

    one, eight = decode(1), decode(8)
    # measured on this pair of rigs (XiongjieDai/GPU-Benchmarks-on-LLM-Inference): 130.58 and 118.09 t/s
    assert eight < 0.95 * one
    assert any("per GPU" in line for line in fit(from_catalog(llama), simulate(bare, [spec] * 8),
               Request(quant="q4_k_m"), catalog, live=False).speed.explanation)  # fmt: skip


def test_an_amd_instinct_box_without_pairs_of_its_own_still_pays_its_boundaries() -> None:
    # the MI300X class borrows the Radeon factors (no Instinct row of its own); its GPU boundaries are the
    # same ggml scheduler copies and syncs, so one GPU and eight must not decode at one speed
    catalog = load_catalog(use_overlay=False)
    spec, llama = catalog.gpu("amd-instinct-mi300x"), catalog.model("llama-3.1-8b")
    assert spec is not None and llama is not None
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=64 * GIB), gpus=())
    speeds = []
    for count in (1, 8):
        result = fit(
            from_catalog(llama), simulate(bare, [spec] * count), Request(quant="q4_0"), catalog, live=False
        )
        assert result.speed.decode_tokens_per_s is not None
        speeds.append(result.speed.decode_tokens_per_s)
    assert speeds[1] < 0.95 * speeds[0]
