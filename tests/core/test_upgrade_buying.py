"""Suggestions a buyer can trust (issue 26): no step down, honest prices, owned cards counted, and what
can change on a machine whose GPU is built in."""

from __future__ import annotations

from pathlib import Path

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.buying import is_step_down, newest_years, standing
from rigcheck.core.estimate.cost import gpu_cost
from rigcheck.core.estimate.soldered import is_built_in, machine_choices
from rigcheck.core.estimate.upgrade import cheapest_gpus_for
from rigcheck.core.machine import Machine, load_machine
from rigcheck.core.whatif import simulate

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def _machine(name: str) -> Machine:
    return load_machine(FIXTURES / name)


def test_a_4090_owner_is_never_offered_a_smaller_or_slower_gpu(catalog: Catalog) -> None:
    owner = _machine("rtx4090-64gb.json")
    own = catalog.gpu("nvidia-geforce-rtx-4090")
    assert own is not None and own.memory_gb and own.bandwidth_gbs
    for model in ("llama-3.1-8b", "llama-3.3-70b", "qwen3-235b-a22b"):
        for option in cheapest_gpus_for(model, catalog, base=owner, max_count=8):
            spec = catalog.gpu(option.gpu_id or "")
            assert spec is not None
            assert max(spec.memory_gb) >= max(own.memory_gb) * 0.97, (model, option.description)
            assert spec.bandwidth_gbs is None or spec.bandwidth_gbs >= own.bandwidth_gbs, option.description
    gtx = catalog.gpu("nvidia-geforce-gtx-1650")
    assert gtx is not None and is_step_down(gtx, (24.0, 1008.0))


def test_without_a_base_small_gpus_stay_offered(catalog: Catalog) -> None:
    ids = {o.gpu_id for o in cheapest_gpus_for("llama-3.2-1b", catalog, min_tokens_per_s=1)}
    assert any(catalog.gpu(i or "") and max(catalog.gpu(i or "").memory_gb) <= 12 for i in ids)  # type: ignore[union-attr]


def test_a_superseded_card_is_never_priced_by_its_launch_price(catalog: Catalog) -> None:
    newest = newest_years(catalog)
    old = catalog.gpu("nvidia-titan-rtx")
    new = catalog.gpu("nvidia-geforce-rtx-5090")
    assert old is not None and new is not None
    assert old.launch_price_usd is not None and old.street_price_usd is None
    assert standing(old, gpu_cost(old), newest) == "superseded"
    assert standing(new, gpu_cost(new), newest) == "launch"
    # a dated price the user types is a current price, even for an old card
    assert standing(old, gpu_cost(old, purchase_usd=900.0), newest) == "current"
    options = cheapest_gpus_for("llama-3.3-70b", catalog, max_count=8)
    priced = [o for o in options if o.purchase_usd is not None]
    assert priced and all(o.price_standing in ("current", "launch") for o in priced)
    for option in options:
        if option.price_standing == "superseded":
            assert option.purchase_usd is None
            assert any("says nothing about what it costs today" in n for n in option.notes)
    launch = [o for o in priced if o.price_standing == "launch"]
    assert launch and all(any("launch price (MSRP)" in n for n in o.notes) for o in launch)


def test_another_card_like_the_one_owned_is_priced_as_one_more(catalog: Catalog) -> None:
    owner = _machine("rtx4090-64gb.json")
    spec = catalog.gpu("nvidia-geforce-rtx-4090")
    assert spec is not None
    ours = [o for o in cheapest_gpus_for("llama-3.3-70b", catalog, base=owner) if o.gpu_id == spec.id]
    assert ours, "two RTX 4090s hold a 70B at Q4_K_M: one more is an option"
    option = ours[0]
    assert option.count == 2 and option.owned == 1
    assert option.description.startswith("1 more")
    if option.purchase_usd is not None:  # only with a current price: one card's, never two
        assert spec.launch_price_usd is not None and option.purchase_usd <= spec.launch_price_usd


def test_built_in_machines_get_other_machines_not_gpus(catalog: Catalog) -> None:
    mac = _machine("m2-ultra-192gb.json")
    assert is_built_in(mac, catalog)
    assert not is_built_in(_machine("rtx4090-64gb.json"), catalog)
    assert not is_built_in(_machine("cpu-only-32gb.json"), catalog)
    choices = machine_choices(mac, catalog, model_id="qwen3-235b-a22b")
    assert choices and all(c.memory_gib > 192 for c in choices)
    assert getattr(choices[0].outcome, "verdict", None) != "does_not_fit"
    laptop = simulate(_machine("cpu-only-32gb.json"), gpus=[catalog.gpu("nvidia-geforce-rtx-4060-laptop")])  # type: ignore[list-item]
    assert is_built_in(laptop, catalog)
    tiers = [c for c in machine_choices(laptop, catalog, model_id="llama-3.1-8b") if c.kind == "tier"]
    assert tiers and tiers[0].gpu_id == "nvidia-geforce-rtx-4090-laptop" and tiers[0].memory_gib == 16
