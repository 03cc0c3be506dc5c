"""What the probe would read on the measured CPU-only hosts: physical cores, maximum clock, ISA flags.

A user's snapshot carries these from lscpu/sysctl; the measurement rows only name the CPU, so
``data/cpu_hosts.csv`` records the vendor's figures for each CPU the CPU-only rows use (cited per row).
``host_cpu`` builds the ``CPU`` record the estimator sees for a row's host string.
"""

from __future__ import annotations

import csv
import re
from functools import cache
from pathlib import Path

from rigcheck.core.machine import CPU, Memory

DATA = Path(__file__).resolve().parent / "data" / "cpu_hosts.csv"


@cache
def _rows() -> tuple[dict[str, str], ...]:
    with DATA.open(encoding="utf-8") as f:
        rows = tuple(csv.DictReader(f))
    for row in rows:
        if not row["source_url"].startswith("https://"):
            raise ValueError(f"{DATA}: {row['match']}: source_url is not a URL")
        int(row["physical_cores"])
        float(row["max_mhz"])
    return rows


#: a host description that states a measured memory bandwidth: "the author measured ~230 GB/s"
_MEASURED = re.compile(r"measured ~?(\d+(?:\.\d+)?) GB/s", re.IGNORECASE)


#: DIMM memory a host states: "DDR5-5600" (not LPDDR, whose channel width varies by SoC)
_DIMM_RATE = re.compile(r"(?<![A-Z])DDR\d-(\d{4,5})\b", re.IGNORECASE)
#: how many 64-bit channels it populates: "dual-channel", "8-channel", "in all 12 channels", "12×DDR5"
_CHANNELS = (
    (re.compile(r"\bdual[- ]channel", re.IGNORECASE), 2),
    (re.compile(r"\bquad[- ]channel", re.IGNORECASE), 4),
    (re.compile(r"\bocta[- ]channel", re.IGNORECASE), 8),
)
_CHANNEL_COUNT = re.compile(
    r"\b(\d{1,2})[- ]channel|in all (\d{1,2}) channels|\b(\d{1,2}) ?[×x] ?DDR\d", re.IGNORECASE
)


def stated_peak(host: str | None) -> int | None:
    """The peak bandwidth of the DIMM population a host description states (channels × MT/s × 8 bytes), or
    None when it does not give both the rate and the channel count. The CPU platform's figure is a ceiling
    (the fastest memory it supports, in every channel): a laptop controller that takes LPDDR5X-7500 or
    DDR5-5600 is entered at the LPDDR5X rate, so a host that says it carries DDR5-5600 is read at that."""
    rate = _DIMM_RATE.search(host or "")
    if rate is None:
        return None
    channels = next((n for pattern, n in _CHANNELS if pattern.search(host or "")), None)
    if channels is None:
        count = _CHANNEL_COUNT.search(host or "")
        channels = int(next(g for g in count.groups() if g)) if count else None
    if not channels:
        return None
    return channels * int(rate.group(1)) * 10**6 * 8


def host_memory(host: str | None, total_bytes: int) -> Memory:
    """The host memory as the probe would record it: a bandwidth the source says its author measured is what
    ``rigcheck audit --measure`` records (``bandwidth_source = "measured"``); the DIMMs the source says it
    populated (``stated_peak``) are a peak, as the platform catalog's (``bandwidth_source = "catalog"``: the
    memory class's share applies, as a user who types in the memory's figure gets); otherwise none, and the
    estimator takes the CPU platform's peak or its default, as it does for a user's snapshot."""
    found = _MEASURED.search(host or "")
    if found is None:
        peak = stated_peak(host)
        if peak is None:
            return Memory(total_bytes=total_bytes)
        return Memory(total_bytes=total_bytes, bandwidth_bytes_per_s=peak, bandwidth_source="catalog")
    return Memory(
        total_bytes=total_bytes,
        bandwidth_bytes_per_s=int(float(found.group(1)) * 1e9),
        bandwidth_source="measured",
    )


def host_cpu(host: str | None, logical_cores: int = 16) -> CPU:
    """The CPU as the probe would describe it: with cores, clock and flags when the host is a listed CPU."""
    for row in _rows():
        if host and re.search(row["match"], host, re.IGNORECASE):
            cores = int(row["physical_cores"])
            return CPU(
                logical_cores=max(logical_cores, cores),
                model=host,
                physical_cores=cores,
                max_mhz=float(row["max_mhz"]),
                flags=tuple(row["flags"].split()),
            )
    return CPU(logical_cores=logical_cores, model=host or None)
