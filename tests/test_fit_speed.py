"""benchmarks/fit_speed.py's prefill fit: the efficiency and the board-power cap it recovers from rows.

The rows here are made from one real measurement row with numbers set by the test (the model the fit
assumes, with known factors), so the test checks the fitting, not the measurement set; what the fitted
catalog does to real rows is benchmarks/estimate_accuracy.py's and benchmarks/prefill_analysis.py's job.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import fit_speed  # noqa: E402
from measurements import load  # noqa: E402

TEMPLATE = next(r for r in load() if r.id == "xd-309024gb-8b-q4_k_m-pp512")
FLOPS = 14e9  # per token, for every made-up row


def point(
    gpu: str, peak_tflops: float, watts: float, tflops: float, *, cls: str = "nvidia-consumer"
) -> fit_speed.Point:
    """A dense Q4 row on ``gpu`` measured at ``tflops``."""
    row = dataclasses.replace(TEMPLATE, id=f"{gpu}-{tflops}", gpu_id=gpu, value=tflops * 1e12 / FLOPS)
    return fit_speed.Point(row, cls, "cuda", 4e9, 1e12, 32, FLOPS, peak_tflops * 1e12, watts=watts)


def truth(peak: float, watts: float, e: float = 0.4, k: float = 0.25) -> float:
    return min(peak * e, watts * k)


CARDS = [("a", 80, 220), ("b", 140, 350), ("c", 160, 285), ("d", 330, 450), ("e", 364, 300), ("f", 260, 250)]


def test_the_fit_recovers_the_share_and_the_power_cap() -> None:
    """Three cards below the cap (their peak × 40% binds), three at it (their watts × 0.25 do)."""
    points = [point(g, peak, w, truth(peak, w)) for g, peak, w in CARDS]
    fits = fit_speed.fit_prefill({("nvidia-consumer", "cuda"): points}, {("nvidia-consumer", "cuda"): 0.9})
    found = fits[("nvidia-consumer", "cuda")]
    assert found.efficiency == pytest.approx(0.4, rel=0.01)
    assert found.tflops_per_watt == pytest.approx(0.25, rel=0.01)
    assert "power cap" in found.said
    # the same rows with the cap switched off: the median share, which no card's watts explain
    plain = fit_speed.fit_prefill({("nvidia-consumer", "cuda"): points}, {}, power="none")
    assert plain[("nvidia-consumer", "cuda")].tflops_per_watt is None


def test_one_stray_row_moves_the_fit_no_more_than_a_median() -> None:
    points = [point(g, peak, w, truth(peak, w)) for g, peak, w in CARDS]
    points.append(point("e", 364, 300, truth(364, 300) / 3.5))  # a published outlier, far below its card
    found = fit_speed.fit_prefill({("nvidia-consumer", "cuda"): points}, {})[("nvidia-consumer", "cuda")]
    assert found.efficiency == pytest.approx(0.4, rel=0.02)
    assert found.tflops_per_watt == pytest.approx(0.25, rel=0.02)


def test_no_cap_when_a_single_card_would_set_it() -> None:
    """Only one card at the cap: its watts would be a per-chip factor, so the class keeps the plain share."""
    cards = [("a", 80, 220), ("b", 140, 350), ("c", 160, 285), ("e", 364, 300)]
    points = [point(g, peak, w, truth(peak, w)) for g, peak, w in cards]
    found = fit_speed.fit_prefill({("nvidia-consumer", "cuda"): points}, {})[("nvidia-consumer", "cuda")]
    assert found.tflops_per_watt is None


def test_the_watts_figure_is_pooled_over_a_vendors_classes() -> None:
    """Two classes of one vendor and backend share one TFLOPS per watt and keep their own shares."""
    consumer = [point(g, peak, w, truth(peak, w)) for g, peak, w in CARDS[:4]]
    datacenter = [
        point(g, peak, w, truth(peak, w, e=0.3), cls="nvidia-datacenter")
        for g, peak, w in (("x", 312, 300), ("y", 150, 300), ("z", 756, 350), ("w", 362, 350))
    ]
    fits = fit_speed.fit_prefill(
        {("nvidia-consumer", "cuda"): consumer, ("nvidia-datacenter", "cuda"): datacenter}, {}
    )
    a, b = fits[("nvidia-consumer", "cuda")], fits[("nvidia-datacenter", "cuda")]
    assert a.tflops_per_watt == b.tflops_per_watt == pytest.approx(0.25, rel=0.01)
    assert a.efficiency == pytest.approx(0.4, rel=0.01) and b.efficiency == pytest.approx(0.3, rel=0.01)
    assert "pooled over nvidia cuda" in b.said
