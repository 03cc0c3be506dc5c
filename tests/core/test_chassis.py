"""Upgrade suggestions fit the machine: PCIe cards for a desktop, SXM for an HGX server, none for a Mac;
multi-GPU options respect the slots and say what else they need (core/estimate/chassis)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.chassis import DESKTOP_GPUS, chassis, needs
from rigcheck.core.estimate.upgrade import cheapest_gpus_for
from rigcheck.core.machine import Machine, load_machine
from rigcheck.core.whatif import upgrade

FIXTURES = Path(__file__).parent.parent / "fixtures" / "machines"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def machine(name: str) -> Machine:
    return load_machine(FIXTURES / name)


@pytest.mark.parametrize(
    ("snapshot", "kind", "accepts", "most"),
    [
        ("rtx4090-64gb.json", "desktop", ("pcie",), DESKTOP_GPUS),
        ("cpu-only-32gb.json", "desktop", ("pcie",), DESKTOP_GPUS),
        ("two-gpus-128gb.json", "desktop", ("pcie",), DESKTOP_GPUS),
        ("hgx-h100x8-2tb.json", "sxm_server", ("sxm",), 8),
        ("m2-ultra-192gb.json", "built_in", (), 0),
    ],
)
def test_what_each_machine_takes(
    catalog: Catalog, snapshot: str, kind: str, accepts: tuple[str, ...], most: int
) -> None:
    box = chassis(machine(snapshot), catalog)
    assert (box.kind, box.accepts, box.max_gpus) == (kind, accepts, most)
    assert box.why


def test_a_desktop_is_offered_pcie_cards_and_sxm_only_to_rent(catalog: Catalog) -> None:
    desktop = machine("rtx4090-64gb.json").with_psu(1000)
    options = cheapest_gpus_for("llama-3.3-70b", catalog, context=8192, base=desktop)
    assert options
    for option in options:
        spec = catalog.gpu(option.gpu_id or "")
        assert spec is not None
        if option.rent_only:
            assert spec.form_factor != "pcie" and option.purchase_usd is None
            assert any("to rent only" in n for n in option.notes)
        else:
            assert spec.form_factor == "pcie", option.description  # never an SXM5 H100 as a drop-in
            assert option.count <= DESKTOP_GPUS  # never "5 × RTX 5090" for a desktop
    bought = [o for o in options if not o.rent_only]
    assert bought and all(o.count <= 2 for o in bought)
    two = next(o for o in bought if o.count == 2)
    notes = " ".join(two.notes)
    assert "2 PCIe x16 slots" in notes and "power cables" in notes


def test_an_hgx_server_is_offered_sxm_modules(catalog: Catalog) -> None:
    server = machine("hgx-h100x8-2tb.json")
    options = cheapest_gpus_for("llama-3.1-405b", catalog, context=8192, base=server)
    bought = [o for o in options if not o.rent_only]
    assert bought
    for option in bought:
        spec = catalog.gpu(option.gpu_id or "")
        assert spec is not None and spec.form_factor == "sxm", option.description
        assert option.count <= 8


def test_a_mac_is_offered_nothing_to_buy(catalog: Catalog) -> None:
    options = cheapest_gpus_for("llama-3.3-70b", catalog, context=8192, base=machine("m2-ultra-192gb.json"))
    assert all(o.rent_only for o in options)


def test_needs_a_bigger_psu_for_two_big_cards(catalog: Catalog) -> None:
    desktop = machine("rtx4090-64gb.json").with_psu(850)
    rtx5090 = catalog.gpu("nvidia-geforce-rtx-5090")
    assert rtx5090 is not None
    after = upgrade(desktop, gpus=[rtx5090, rtx5090])
    found = needs(desktop, after, catalog, 2)
    assert any(n.startswith("a PSU of at least") and "850 W" in n for n in found), found
    unknown = needs(
        machine("rtx4090-64gb.json"), upgrade(machine("rtx4090-64gb.json"), gpus=[rtx5090]), catalog, 1
    )
    assert unknown == ["a PSU rating to check the power against (enter it on the Overview page)"]
