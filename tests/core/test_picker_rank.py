"""The Upgrade GPU picker's default order (issue 26): better cards of the newest generation first, older or
no-better cards next, step downs last, for the owner of an RTX 4090 and for a machine without a GPU."""

from __future__ import annotations

from pathlib import Path

from rigcheck.core.catalog import load_catalog
from rigcheck.core.estimate.buying import (
    OTHERS,
    STEP_DOWNS,
    UPGRADES,
    best_owned,
    generation_years,
    picker_rank,
)
from rigcheck.core.machine import load_machine

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


def groups(snapshot: str) -> dict[str, int]:
    catalog = load_catalog(use_overlay=False)
    owned = best_owned(load_machine(FIXTURES / snapshot), catalog)
    generations = generation_years(catalog)
    return {spec.id: picker_rank(spec, owned, generations, None)[0] for spec in catalog.gpus}


def test_a_4090_owner() -> None:
    group = groups("rtx4090-64gb.json")
    assert group["nvidia-geforce-rtx-5090"] == UPGRADES  # more memory and bandwidth, newest generation
    assert group["nvidia-geforce-rtx-4090"] == OTHERS  # another of the same: listed, not first
    assert group["nvidia-geforce-rtx-3090-ti"] == OTHERS  # as much, not more, and older
    assert group["nvidia-a100-pcie-40gb"] == OTHERS  # Ampere (2020 in the catalog) beside Blackwell
    assert group["nvidia-geforce-gtx-1650"] == STEP_DOWNS
    assert group["nvidia-geforce-rtx-4080"] == STEP_DOWNS


def test_no_gpu_owned_nothing_is_a_step_down() -> None:
    group = groups("cpu-only-32gb.json")
    assert STEP_DOWNS not in group.values()
    assert group["nvidia-geforce-rtx-5060"] == UPGRADES and group["nvidia-geforce-gtx-1650"] == OTHERS


def test_within_a_group_cheapest_first_unpriced_last() -> None:
    catalog = load_catalog(use_overlay=False)
    spec = catalog.gpu("nvidia-geforce-rtx-5090")
    assert spec is not None
    generations = generation_years(catalog)
    keys = [picker_rank(spec, (24.0, 1008.0), generations, price) for price in (2500.0, None, 1999.0)]
    assert sorted(keys) == [keys[2], keys[0], keys[1]]
