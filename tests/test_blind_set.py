"""The blind measurement set (benchmarks/data/blind.csv, issue 28): rows from sources no fitted number came
from. Every row is cited and its number is in the quoted text; no blind source is a source of the fitting set;
and each fitter drops a row once it is blind, whoever passes it in.

The fitter checks take real fit-split rows and mark copies of them blind, so each check can fail: the same
row unmarked is used by the fitter (asserted first).
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from fit_speed import fit_cpu, point, points_by_key  # noqa: E402
from measurements import load, load_blind, source_of  # noqa: E402
from per_hop_fit import hop_samples  # noqa: E402
from rigcheck.core.catalog import load_catalog  # noqa: E402

ROWS = load()
BLIND = load_blind()
#: a number as printed, thousands separators included ("3,713.75"); a comma followed by one or two digits
#: is a decimal comma ("132,75"), which no thousands separator can be
NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+,\d{1,2}(?!\d)|\d+(?:\.\d+)?")


def printed_value(text: str) -> float:
    """The value a printed number stands for: thousands separators dropped, a decimal comma read as a point."""
    return float(text.replace(",", ".") if re.fullmatch(r"\d+,\d{1,2}", text) else text.replace(",", ""))


def test_the_blind_set_loads_and_every_row_is_blind() -> None:
    assert len(BLIND) >= 30
    assert all(r.split == "blind" for r in BLIND)
    assert not any(r.split == "blind" for r in ROWS), "load() must never hand a blind row to a fitter"


@pytest.mark.parametrize("row", BLIND, ids=lambda r: r.id)
def test_blind_row_is_cited_and_its_number_is_in_the_quoted_text(row: object) -> None:
    assert row.source_url.startswith("https://") and row.locator.strip()
    found = {printed_value(n) for n in NUMBER.findall(row.verbatim)}
    assert row.value in found, f"{row.id}: {row.value:g} is not in the quoted text: {row.verbatim}"


def test_no_blind_source_or_id_is_in_the_fitting_set() -> None:
    fitted_sources = {source_of(r) for r in ROWS}
    shared = sorted({source_of(r) for r in BLIND} & fitted_sources)
    assert not shared, f"blind rows from sources the fit used: {shared}"
    assert not {r.id for r in BLIND} & {r.id for r in ROWS}


def test_a_decimal_comma_is_read_as_a_point_and_a_thousands_separator_is_dropped() -> None:
    assert [printed_value(n) for n in NUMBER.findall("| Vulkan | 1 | 132,75 | 3,713.75 | 4,472 |")] == [
        1.0,
        132.75,
        3713.75,
        4472.0,
    ]


def test_source_of_names_a_github_file_without_its_commit() -> None:
    row = next(r for r in ROWS if "/blob/" in r.source_url)
    assert "/blob/" not in source_of(row)
    assert source_of(row).startswith("https://github.com/") and "#" not in source_of(row)
    assert source_of(dataclasses.replace(row, source_url=row.source_url + "#L1")) == source_of(row)


def test_fit_points_skip_a_row_once_it_is_blind() -> None:
    catalog = load_catalog(use_overlay=False)
    row = next(r for r in ROWS if r.id == "xd-309024gb-8b-q4_k_m-tg512")
    assert row.split == "fit" and point(row, catalog) is not None
    blind = dataclasses.replace(row, blind=True)
    assert point(blind, catalog) is None
    decode, prefill = points_by_key([blind], catalog)
    assert not decode and not prefill


def test_per_gpu_hop_fit_skips_blind_pairs() -> None:
    pairs = hop_samples([r for r in ROWS if r.split == "fit"])
    assert pairs, "the fit split has one-vs-N pairs"
    n_gpu_row, _us = pairs[0]
    one = next(
        r
        for r in ROWS
        if r.gpu_count == 1
        and r.split == "fit"
        and r.source_url.split("#")[0] == n_gpu_row.source_url.split("#")[0]
        and (r.gpu_id, r.model_id, r.format, r.test, r.backend)
        == (n_gpu_row.gpu_id, n_gpu_row.model_id, n_gpu_row.format, n_gpu_row.test, n_gpu_row.backend)
    )
    assert hop_samples([one, n_gpu_row])
    assert (
        hop_samples([dataclasses.replace(one, blind=True), dataclasses.replace(n_gpu_row, blind=True)]) == []
    )


def test_cpu_share_fit_skips_blind_offload_rows() -> None:
    catalog = load_catalog(use_overlay=False)
    offload = [
        r
        for r in ROWS
        if r.split == "fit" and r.offloaded and r.metric == "decode_tokens_per_s" and r.llama_cpp
    ]
    assert offload
    seen = fit_cpu(offload, catalog, [])
    blind = fit_cpu([dataclasses.replace(r, blind=True) for r in offload], catalog, [])
    assert seen is not None and seen[1] > 0, "the offload rows feed the CPU share"
    assert blind is None or blind[1] == 0
