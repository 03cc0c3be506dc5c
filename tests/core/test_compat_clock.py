"""Lifecycles are judged as of a day: the snapshot's taken_at, else today by the clock; the day is named.

Facts: R535 LTSB "End of Life June 2026" (NVIDIA data-center driver table, 615 edition); R580 LTSB until June
2028 (620 edition); torch 2.12.0 2026-05-13, 2.13.0 2026-07-08, 2.14.0 2026-09-02, 2.15.0 2026-10-28 (PyPI).
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.compat import Finding, check_compat, summarize
from rigcheck.core.compat._base import Facts
from rigcheck.core.machine import CPU, GPU, Drivers, Host, Machine, Memory, Software

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def machine(driver: str, taken_at: str | None, torch: str | None = None, cc: str = "8.6") -> Machine:
    return Machine(
        cpu=CPU(logical_cores=16, arch="x86_64"),
        memory=Memory(total_bytes=64 * GIB),
        gpus=(GPU("nvidia", "NVIDIA GeForce RTX 3090", 24 * GIB, index=0, compute_capability=cc),),
        host=Host(os="linux", python="3.11.7"),
        drivers=Drivers(nvidia=driver, cuda_driver="12.2"),
        software=Software(python_packages={"torch": torch} if torch else {}),
        taken_at=taken_at,
    )


def driver_finding(findings: tuple[Finding, ...]) -> Finding:
    return next(f for f in findings if f.framework == "nvidia-driver")


def test_a_snapshot_without_a_date_is_judged_as_of_today(catalog: Catalog) -> None:
    """R535 is not 'supported until June 2026' on 2026-12-01: it is past its end of life, and the day is named."""
    finding = driver_finding(check_compat(machine("535.104.05", None), catalog, date(2026, 12, 1)))
    assert (finding.status, finding.cause) == ("warn", "driver-eol")
    assert "R535 reached its end of life in June 2026" in finding.reason
    assert "as of today, 2026-12-01 (the snapshot does not say when it was taken)" in finding.reason
    assert "supported until June 2026" not in finding.reason
    assert finding.actions == ("driver:580.65.06",) and finding.fix and "R580" in finding.fix


def test_a_dated_snapshot_is_judged_as_of_its_day(catalog: Catalog) -> None:
    finding = driver_finding(
        check_compat(machine("535.104.05", "2026-05-10T08:00:00Z"), catalog, date(2026, 12, 1))
    )
    assert finding.status == "ok"
    assert (
        "R535 is supported until June 2026, as of 2026-05-10, when the snapshot was taken" in finding.reason
    )


def test_without_a_date_the_clock_decides(catalog: Catalog) -> None:
    facts = Facts(machine("580.65.06", None), catalog)
    assert (facts.as_of, facts.as_of_source) == (datetime.now(UTC).date().isoformat(), "clock")
    assert Facts(machine("580.65.06", "garbage"), catalog, date(2026, 12, 1)).as_of == "2026-12-01"


def test_an_old_driver_is_never_sent_to_a_branch_that_has_ended(catalog: Catalog) -> None:
    """Driver 470 in December 2026: the advice is R580, not R535 (ended June 2026)."""
    findings = check_compat(machine("470.256.02", None), catalog, date(2026, 12, 1))
    for finding in findings:
        for action in finding.actions:
            if action.startswith("driver:"):
                assert not action.startswith("driver:535"), finding
        assert "R535 branch" not in (finding.fix or ""), finding


def test_the_torch_series_is_judged_as_of_the_day(catalog: Catalog) -> None:
    """torch 2.12 in June 2026 was the newest series; in December 2026 three series are newer."""
    early = machine("580.65.06", "2026-06-01T00:00:00Z", torch="2.12.1+cu130")
    late = dataclasses.replace(early, taken_at=None)
    reason_early = next(f for f in check_compat(early, catalog) if f.framework == "pytorch").reason
    reason_late = next(
        f for f in check_compat(late, catalog, date(2026, 12, 1)) if f.framework == "pytorch"
    ).reason
    assert "behind" not in reason_early
    assert "torch 2.12 (2026-05-13) is 3 releases behind 2.15.0 as of today, 2026-12-01" in reason_late


def test_the_summary_rechecks_as_of_the_same_day(catalog: Catalog) -> None:
    box = machine("535.104.05", None)
    today = date(2026, 12, 1)
    summary = summarize(box, catalog, check_compat(box, catalog, today), today)
    assert "driver:580.65.06" in summary.best_actions
