"""What-if upgrades: models before and after, power, costs, and what it would take (core/estimate/upgrade)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.fit import MEGATRAIN_HOST_BYTES, fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.estimate.recommend import recommend
from rigcheck.core.estimate.upgrade import (
    MAX_OPTIONS,
    POPULAR_MODELS,
    catalog_model,
    cheapest_gpus_for,
    compare,
    outcome,
    training_options,
)
from rigcheck.core.machine import Machine, load_machine
from rigcheck.core.report.upgrade import upgrade_json, upgrade_text
from rigcheck.core.whatif import simulate, upgrade

FIXTURES = Path(__file__).parent.parent / "fixtures" / "machines"
RTX_4090 = "nvidia-geforce-rtx-4090"
RTX_5090 = "nvidia-geforce-rtx-5090"
RTX_3090 = "nvidia-geforce-rtx-3090"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def box() -> Machine:
    """One GeForce RTX 4090, 64 GiB RAM."""
    return load_machine(FIXTURES / "rtx4090-64gb.json")


# -- whatif.upgrade -------------------------------------------------------------------------------


def test_upgrade_adds_replaces_and_sets_ram_and_psu(catalog: Catalog, box: Machine) -> None:
    spec_4090, spec_3090 = catalog.gpu(RTX_4090), catalog.gpu(RTX_3090)
    assert spec_4090 is not None and spec_3090 is not None
    added = upgrade(box, add_gpus=[spec_3090])
    assert [g.name for g in added.gpus] == ["GeForce RTX 4090", "GeForce RTX 3090"]
    assert added.gpus[0] == box.gpus[0]  # the probed GPU is kept as it was read
    assert [g.index for g in added.gpus] == [0, 1]
    assert added.gpus[1].catalog_id == RTX_3090
    assert added.memory == box.memory and added.psu == box.psu

    replaced = upgrade(box, gpus=[spec_3090, spec_3090], add_gpus=[spec_4090], ram_gb=128, psu_watts=1600)
    assert [g.catalog_id for g in replaced.gpus] == [RTX_3090, RTX_3090, RTX_4090]
    assert [g.index for g in replaced.gpus] == [0, 1, 2]
    assert replaced.memory.total_bytes == 128 * GIB
    assert replaced.psu.watts == 1600
    assert any("added GeForce RTX 4090" in n.message for n in replaced.notes)
    assert any("PSU set to 1600 W" in n.message for n in replaced.notes)

    assert upgrade(box) == box  # nothing asked, nothing changed
    assert upgrade(box, gpus=[]).gpus == ()
    # simulate still replaces, as fit's fewest_gpus uses it
    assert simulate(box, [spec_3090]).gpus[0].catalog_id == RTX_3090


# -- a model moving from does_not_fit to fits -----------------------------------------------------


def test_second_4090_moves_a_70b_q4_from_does_not_fit_to_fits(catalog: Catalog, box: Machine) -> None:
    spec = catalog.gpu(RTX_4090)
    assert spec is not None
    llama = catalog_model("llama-3.3-70b", catalog)
    req = Request(quant="q4_k_m", context=8192)
    small_ram = upgrade(box, ram_gb=4)  # too little RAM to offload the rest of the 70B
    two = upgrade(small_ram, add_gpus=[spec])
    before = fit(llama, small_ram, req, catalog, live=False, advise=False)
    after = fit(llama, two, req, catalog, live=False, advise=False)
    assert before.verdict == "does_not_fit"
    assert after.verdict == "fits"
    assert all(b > 0 for b in after.placement.gpu_bytes)  # layer split over both cards

    report = compare(small_ram, two, catalog, models=["llama-3.3-70b"], context=8192)
    (change,) = report.models
    assert change.before.verdict == "does_not_fit" and change.before.quant is None
    assert change.after.verdict == "fits" and change.after.quant == "Q4_K_M"
    assert change.after.decode_tokens_per_s == pytest.approx(after.speed.decode_tokens_per_s)
    assert change.newly_runnable
    assert "needs" in change.before.placement  # why it does not fit, in words
    assert any("does not fit before, runs on the GPUs after at Q4_K_M" in s for s in report.suggestions)


def test_newly_runnable_also_means_off_ram_onto_the_gpus(catalog: Catalog, box: Machine) -> None:
    spec = catalog.gpu(RTX_4090)
    assert spec is not None
    report = compare(
        box, upgrade(box, add_gpus=[spec]), catalog, models=["llama-3.2-1b", "llama-3.3-70b"], context=8192
    )
    big, small = report.models  # newly runnable first
    assert (big.model_id, small.model_id) == ("llama-3.3-70b", "llama-3.2-1b")
    assert small.before.verdict == small.after.verdict == "fits"
    assert not small.newly_runnable
    assert big.before.verdict == "fits_with_offload"  # 64 GiB of RAM holds what the one GPU cannot
    assert big.after.verdict == "fits"
    assert big.newly_runnable
    assert report.workload == "inference" and report.context == 8192


def test_inference_outcome_is_the_recommendation(catalog: Catalog, box: Machine) -> None:
    qwen = catalog_model("qwen3-32b", catalog)
    result = outcome(qwen, box, catalog, context=8192)
    rec = recommend(qwen, box, "inference", catalog, context=8192)
    assert rec.best is not None and rec.best.where == "gpu"
    assert (result.verdict, result.quant, result.where) == ("fits", rec.best.quant, "gpu")
    assert result.decode_tokens_per_s == rec.best.decode_tokens_per_s
    # nothing of Q4_K_M quality reaches 10 tokens/s: the fastest of those, with part of it in RAM
    huge = outcome(catalog_model("qwen3-235b-a22b", catalog), upgrade(box, ram_gb=128), catalog)
    assert huge.verdict == "fits_with_offload" and huge.where == "gpu+ram"
    assert huge.quant == "Q4_K_M" and huge.decode_tokens_per_s is not None


def test_training_workload_outcome(catalog: Catalog, box: Machine) -> None:
    h100 = catalog.gpu("nvidia-h100-sxm5")
    assert h100 is not None
    report = compare(
        box, upgrade(box, gpus=[h100]), catalog, models=["llama-3.3-70b"], workload="qlora", context=2048
    )
    (change,) = report.models
    assert change.before.verdict == "does_not_fit"
    assert change.after.verdict == "fits" and change.newly_runnable
    assert change.after.train_tokens_per_s is not None and change.after.decode_tokens_per_s is None
    assert change.after.quant is not None and "NF4" in change.after.quant


# -- power and costs ------------------------------------------------------------------------------


def test_adding_a_gpu_lowers_psu_headroom(catalog: Catalog, box: Machine) -> None:
    spec = catalog.gpu(RTX_4090)
    assert spec is not None
    before = box.with_psu(1600)
    report = compare(before, upgrade(before, add_gpus=[spec]), catalog, models=["llama-3.2-1b"])
    assert report.power_before.psu_watts == report.power_after.psu_watts == 1600
    assert report.power_before.headroom_watts is not None and report.power_after.headroom_watts is not None
    assert report.power_after.headroom_watts < report.power_before.headroom_watts
    assert report.power_after.sustained_watts == pytest.approx(report.power_before.sustained_watts + 450)
    # a bigger PSU in the same upgrade restores the headroom
    bigger = compare(
        before, upgrade(before, add_gpus=[spec], psu_watts=2000), catalog, models=["llama-3.2-1b"]
    )
    assert bigger.power_after.headroom_watts is not None
    assert bigger.power_after.headroom_watts > report.power_after.headroom_watts


def test_costs_are_the_gpus_bought(catalog: Catalog, box: Machine) -> None:
    spec_4090, spec_5090 = catalog.gpu(RTX_4090), catalog.gpu(RTX_5090)
    assert spec_4090 is not None and spec_5090 is not None
    second = compare(box, upgrade(box, add_gpus=[spec_4090]), catalog, models=["llama-3.2-1b"])
    assert [c.gpu_id for c in second.costs] == [RTX_4090]
    assert second.costs[0].purchase is not None
    assert second.purchase_usd == pytest.approx(second.costs[0].purchase.usd)

    two = compare(box, upgrade(box, gpus=[spec_5090, spec_5090]), catalog, models=["llama-3.2-1b"])
    assert [c.gpu_id for c in two.costs] == [RTX_5090]  # one record per kind
    assert two.costs[0].purchase is not None
    assert two.purchase_usd == pytest.approx(2 * two.costs[0].purchase.usd)

    same = compare(box, upgrade(box, gpus=[spec_4090]), catalog, models=["llama-3.2-1b"])
    assert same.costs == () and same.purchase_usd is None  # the fixture's GPU is this catalog 4090
    assert compare(box, upgrade(box, ram_gb=128), catalog, models=["llama-3.2-1b"]).costs == ()


# -- the 5090-or-rent-an-H100 question ------------------------------------------------------------


def test_5090_or_rent_for_a_70b_qlora(catalog: Catalog, box: Machine) -> None:
    spec = catalog.gpu(RTX_5090)
    assert spec is not None
    report = compare(box, upgrade(box, gpus=[spec]), catalog, models=["llama-3.3-70b"], workload="qlora")
    (change,) = report.models
    assert change.after.verdict == "does_not_fit"  # 32 GB is not enough for a 70B QLoRA
    ids = {o.gpu_id for o in report.alternatives}
    assert "nvidia-h100-sxm5" in ids and RTX_5090 not in ids
    h100 = next(o for o in report.alternatives if o.gpu_id == "nvidia-h100-sxm5")
    assert h100.count == 1 and h100.rent_usd_hour is not None and h100.tokens_per_s is not None
    assert any(s.startswith("Rent instead:") and "would pay for" in s for s in report.suggestions)
    text = upgrade_text(report)
    assert "does not fit" in text and "H100 SXM5" in text and "break-even" in text
    assert "h of rent for" in text  # the 5090's price in hours of each rentable option


# -- cheapest GPUs and training options -----------------------------------------------------------


def test_cheapest_gpus_for_is_sorted_by_price(catalog: Catalog) -> None:
    options = cheapest_gpus_for("llama-3.3-70b", catalog, context=8192)
    assert 0 < len(options) <= MAX_OPTIONS
    priced = [o.purchase_usd for o in options if o.purchase_usd is not None]
    assert priced == sorted(priced)
    known = [o.purchase_usd is not None for o in options]
    assert known == sorted(known, reverse=True)  # unknown prices last
    for option in options:
        assert option.verdict == "fits" and option.count >= 1
        assert option.tokens_per_s is None or option.tokens_per_s >= 10.0
        assert option.machine.gpus and len(option.machine.gpus) == option.count
        assert option.description == f"{option.count} × {option.machine.gpus[0].name}"
        assert any("Q4_K_M" in n for n in option.notes)
    assert any(o.rent_usd_hour is not None for o in options)  # the cheapest to rent is always kept
    faster = cheapest_gpus_for("llama-3.3-70b", catalog, context=8192, min_tokens_per_s=25.0)
    assert all(o.tokens_per_s is None or o.tokens_per_s >= 25.0 for o in faster)


def test_cheapest_gpus_for_training_is_one_gpu(catalog: Catalog) -> None:
    options = cheapest_gpus_for("llama-3.3-70b", catalog, workload="qlora", context=2048)
    assert options and all(o.count == 1 for o in options)
    assert RTX_5090 not in {o.gpu_id for o in options}


def test_training_options_for_a_70b_full_fine_tune_on_a_4090(catalog: Catalog, box: Machine) -> None:
    options = training_options("llama-3.3-70b", box, catalog, workload="full", context=2048)
    ram = [o for o in options if o.kind == "ram"]
    gpus = [o for o in options if o.kind == "gpu"]
    assert len(ram) == 1 and gpus
    (megatrain,) = ram
    assert megatrain.verdict == "fits_with_offload"
    assert "MegaTrain-style" in megatrain.description and "GeForce RTX 4090" in megatrain.description
    assert megatrain.ram_gib is not None and megatrain.ram_gib in (768, 1024, 1536, 2048)
    # at least MegaTrain's bytes per parameter of host RAM
    assert (
        megatrain.ram_gib * GIB
        >= MEGATRAIN_HOST_BYTES * catalog_model("llama-3.3-70b", catalog).arch.params_total
    )
    assert megatrain.machine.gpus == box.gpus
    assert megatrain.tokens_per_s is not None and megatrain.purchase_usd is None
    assert any("RAM price" in n for n in megatrain.notes)
    for option in gpus:
        assert option.count > 1  # no single GPU holds 16 bytes per parameter of a 70B
        assert any("ZeRO" in n for n in option.notes)
    h100 = next(o for o in gpus if o.gpu_id == "nvidia-h100-sxm5")
    assert h100.rent_usd_hour is not None and h100.cost is not None and h100.cost.rent_per_hour is not None
    assert h100.rent_usd_hour == pytest.approx(h100.count * h100.cost.rent_per_hour.usd)
    # the catalog has no followable purchase price for an H100: unknown, never a guess
    assert h100.purchase_usd is None and h100.cost.purchase is None


def test_training_options_on_a_small_model_need_no_sharding(catalog: Catalog, box: Machine) -> None:
    options = training_options("llama-3.2-1b", box, catalog, workload="full", context=2048)
    ram = next(o for o in options if o.kind == "ram")
    assert ram.ram_gib == 64 and "already installed" in ram.description
    assert all(o.count == 1 for o in options if o.kind == "gpu")
    with pytest.raises(InputError, match="training workload"):
        training_options("llama-3.2-1b", box, catalog, workload="inference")


# -- inputs and output ----------------------------------------------------------------------------


def test_popular_models_span_sizes_and_moe(catalog: Catalog) -> None:
    specs = [catalog.model(m) for m in POPULAR_MODELS]
    assert all(s is not None for s in specs)
    sizes = [s.params_b for s in specs if s is not None and s.params_b is not None]
    assert min(sizes) <= 1.5 and max(sizes) >= 200
    assert any(s.is_moe for s in specs if s is not None)
    assert 12 <= len(POPULAR_MODELS) <= 20


def test_unknown_names_are_input_errors(catalog: Catalog, box: Machine) -> None:
    with pytest.raises(InputError, match="not a catalog model id"):
        compare(box, box, catalog, models=["no-such-model"])
    with pytest.raises(InputError, match="unknown workload"):
        compare(box, box, catalog, models=["llama-3.2-1b"], workload="pretrain")
    with pytest.raises(InputError, match="not a catalog model id"):
        cheapest_gpus_for("nope", catalog)


def test_default_models_and_json(catalog: Catalog) -> None:
    two = load_machine(FIXTURES / "two-gpus-128gb.json")
    report = compare(two, upgrade(two, ram_gb=256), catalog)
    assert [m.model_id for m in report.models] == list(POPULAR_MODELS)
    data = upgrade_json(report)
    assert data["before"]["schema"] == "rigcheck.machine/1"
    assert data["after"]["memory"]["total_bytes"] == 256 * GIB
    assert set(data["models"][0]) == {"model_id", "name", "before", "after", "newly_runnable", "better"}
    assert data["costs"] == [] and data["purchase_usd"] is None
