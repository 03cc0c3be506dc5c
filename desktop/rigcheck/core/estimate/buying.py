"""Rules a buyer can trust when GPUs are suggested: never a step down, honest prices, owned cards counted.

- **No step down**: a machine that has GPUs is never offered a GPU with less memory or less memory
  bandwidth than its best one (a GTX 1650 for an RTX 4090 owner is no upgrade, whatever it costs).
- **A price is current or it is not**: a dated market price (``street``) or the user's own is a current
  price and ranks a GPU among the cheapest. A launch price (MSRP) is not: it ranks a card only while the
  card is of its vendor's newest generation in the catalog (same vendor and segment, the latest
  ``release_year`` with a launch price), and is said to be a launch price. A card that a newer generation
  has replaced (and is likely discontinued) gets no price at all without a dated current one: its MSRP
  says nothing about what it costs today, so it is never called the cheapest.
- **Owned cards count**: "2 × RTX 4090" for someone who owns one is one more card to buy, not two.
"""

from __future__ import annotations

from typing import Literal

from rigcheck.core.catalog import Catalog, GpuSpec
from rigcheck.core.estimate.cost import GpuCost
from rigcheck.core.machine import Machine

#: how a GPU's purchase price may be used: "current" ranks it, "launch" ranks it with a caveat,
#: "superseded" and "unknown" give no price to rank by
Standing = Literal["current", "launch", "superseded", "unknown"]


def owned_specs(machine: Machine, catalog: Catalog) -> list[GpuSpec]:
    """The catalog entries of the machine's GPUs (those the catalog knows)."""
    found = []
    for gpu in machine.gpus:
        spec = catalog.spec_for(gpu)
        if spec is not None:
            found.append(spec)
    return found


def best_owned(machine: Machine, catalog: Catalog) -> tuple[float | None, float | None]:
    """The most memory (GiB) and the most bandwidth (GB/s) one of the machine's GPUs has; read sizes win
    over the catalog's, None when nothing is known."""
    memory: float | None = None
    bandwidth: float | None = None
    for gpu in machine.gpus:
        spec = catalog.spec_for(gpu)
        size = gpu.memory_total_bytes / 1024**3 if gpu.memory_total_bytes else None
        if size is None and spec is not None and spec.memory_gb:
            size = max(spec.memory_gb)
        if size is not None:
            memory = max(memory or 0.0, size)
        if spec is not None and spec.bandwidth_gbs:
            bandwidth = max(bandwidth or 0.0, spec.bandwidth_gbs)
    return memory, bandwidth


#: read sizes are a little under the marketed ones (24 GB cards report 23.99 GiB): a step down is a
#: card with less than this share of the owned memory
_READ_SLACK = 0.97


def is_step_down(spec: GpuSpec, owned: tuple[float | None, float | None]) -> bool:
    """``spec`` has less memory or less bandwidth than the best owned GPU (unknown figures never count)."""
    memory, bandwidth = owned
    if memory is not None and spec.memory_gb and max(spec.memory_gb) < memory * _READ_SLACK:
        return True
    return bandwidth is not None and spec.bandwidth_gbs is not None and spec.bandwidth_gbs < bandwidth


def newest_years(catalog: Catalog) -> dict[tuple[str, str | None], int]:
    """The latest ``release_year`` among the cards with a launch price, per (vendor, segment)."""
    years: dict[tuple[str, str | None], int] = {}
    for spec in catalog.gpus:
        if spec.launch_price_usd is not None and spec.release_year is not None:
            key = (spec.vendor, spec.segment)
            years[key] = max(years.get(key, 0), spec.release_year)
    return years


def standing(spec: GpuSpec, cost: GpuCost, newest: dict[tuple[str, str | None], int]) -> Standing:
    """How ``spec``'s purchase price may be used to rank it (see the module's rules)."""
    purchase = cost.purchase
    if purchase is None:
        return "unknown"
    if purchase.kind == "user" or (purchase.kind == "street" and purchase.date):
        return "current"
    if purchase.kind == "launch":
        latest = newest.get((spec.vendor, spec.segment))
        if spec.release_year is not None and latest is not None and spec.release_year < latest:
            return "superseded"
        return "launch"
    return "unknown"  # a street price without a date is not a current price


def owned_count(machine: Machine, catalog: Catalog, gpu_id: str) -> int:
    """How many of ``gpu_id`` the machine has."""
    return sum(1 for spec in owned_specs(machine, catalog) if spec.id == gpu_id)


#: picker_rank's groups, first to last
UPGRADES, OTHERS, STEP_DOWNS = 0, 1, 2
#: more memory or bandwidth than the owned card by at least this share is "better" (not a sidegrade)
_BETTER = 1.03


def generation_years(catalog: Catalog) -> tuple[dict[str, int], dict[tuple[str, str | None], int]]:
    """Each GPU's year (its own ``release_year``, else the earliest one the catalog gives for its vendor's
    architecture: an A100 without a year is Ampere, 2020) and the latest such year per (vendor, segment)."""
    first: dict[tuple[str, str | None], int] = {}
    for spec in catalog.gpus:
        if spec.release_year is not None and spec.architecture:
            key = (spec.vendor, spec.architecture)
            first[key] = min(first.get(key, spec.release_year), spec.release_year)
    years: dict[str, int] = {}
    newest: dict[tuple[str, str | None], int] = {}
    for spec in catalog.gpus:
        year = spec.release_year or first.get((spec.vendor, spec.architecture or ""))
        if year is not None:
            years[spec.id] = year
            segment = (spec.vendor, spec.segment)
            newest[segment] = max(newest.get(segment, 0), year)
    return years, newest


def picker_rank(
    spec: GpuSpec,
    owned: tuple[float | None, float | None],
    generations: tuple[dict[str, int], dict[tuple[str, str | None], int]],
    price_usd: float | None,
) -> tuple[int, bool, float, str]:
    """Where ``spec`` goes in a GPU picker for a machine whose best GPU is ``owned`` (best_owned), with
    ``generations`` from generation_years: UPGRADES first (more memory or bandwidth than the owned card,
    never less of either, of its vendor's newest generation in its segment or of no known year), then
    OTHERS (older generations, and cards no better than the owned one: another of the same), then
    STEP_DOWNS (less memory or bandwidth); cheapest first within a group, unpriced last, then by name.
    A GTX 1650 never heads the list for an RTX 4090 owner; with no GPU owned every card is an upgrade."""
    memory, bandwidth = owned
    if is_step_down(spec, owned):
        group = STEP_DOWNS
    else:
        more_memory = memory is None or (bool(spec.memory_gb) and max(spec.memory_gb) > memory * _BETTER)
        faster = bandwidth is None or (spec.bandwidth_gbs or 0.0) > bandwidth * _BETTER
        years, newest = generations
        year, latest = years.get(spec.id), newest.get((spec.vendor, spec.segment))
        older = year is not None and latest is not None and year < latest
        group = UPGRADES if (more_memory or faster) and not older else OTHERS
    return (group, price_usd is None, price_usd or 0.0, spec.name.casefold())


__all__ = [
    "OTHERS",
    "STEP_DOWNS",
    "UPGRADES",
    "Standing",
    "best_owned",
    "generation_years",
    "is_step_down",
    "newest_years",
    "owned_count",
    "owned_specs",
    "picker_rank",
    "standing",
]
