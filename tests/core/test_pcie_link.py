"""The host link a GPU copies offloaded weights over: the PCIe generation's x16 rate × the lanes the card runs
on (an RTX 5060 Ti is PCIe 5.0 x8), from the probe where it reports them, else from the catalog card."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes.machines import one_catalog_gpu
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import PCIE_GBS, fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.speed.prefill import offloaded_copy_bytes
from rigcheck.core.estimate.speed.reads import pcie_gbs
from rigcheck.core.models.resolve import from_catalog

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def test_an_x8_card_moves_half_its_generations_x16_rate(catalog: Catalog) -> None:
    spec = catalog.gpu("nvidia-geforce-rtx-5060-ti")
    assert spec is not None and spec.pcie_gen == 5 and spec.pcie_lanes == 8
    gpu = one_catalog_gpu(catalog, "nvidia-geforce-rtx-5060-ti").gpus[0]
    assert pcie_gbs(gpu, spec) == pytest.approx(PCIE_GBS[5] / 2)


def test_the_probed_link_width_wins_over_the_catalog(catalog: Catalog) -> None:
    spec = catalog.gpu("nvidia-geforce-rtx-4090")
    assert spec is not None
    gpu = one_catalog_gpu(catalog, "nvidia-geforce-rtx-4090").gpus[0]
    assert pcie_gbs(gpu, spec) == pytest.approx(PCIE_GBS[4])
    # a x16 card in a slot wired for four lanes
    assert pcie_gbs(replace(gpu, pcie_max_width=4), spec) == pytest.approx(PCIE_GBS[4] / 4)


def test_expert_offload_prefill_copies_over_the_narrower_link(catalog: Catalog) -> None:
    spec = catalog.model("qwen3-30b-a3b")
    assert spec is not None
    m = from_catalog(spec)
    machine = one_catalog_gpu(catalog, "nvidia-geforce-rtx-5060-ti")
    request = Request(quant="q4_k_m", context=512)
    result = fit(m, machine, request, catalog, offload="experts", live=False, cpu_expert_layers=20)
    assert result.placement.cpu_expert_layers == 20
    line = next(line for line in result.speed.explanation if line.startswith("prefill adds PCIe"))
    assert "(26 GB/s)" in line
    wide = replace(machine, gpus=(replace(machine.gpus[0], pcie_max_width=16),))
    wider = fit(m, wide, request, catalog, offload="experts", live=False, cpu_expert_layers=20).speed
    assert result.speed.prefill_tokens_per_s and wider.prefill_tokens_per_s
    assert wider.prefill_tokens_per_s > result.speed.prefill_tokens_per_s


def test_a_short_micro_batch_copies_only_the_experts_its_tokens_use(catalog: Catalog) -> None:
    """llama.cpp PR #15346: the scheduler copies the used experts of a host-resident MUL_MAT_ID only; 32
    tokens × 8 of 128 experts touch 1 - (15/16)^32 = 87% of them."""
    spec = catalog.model("qwen3-30b-a3b")
    assert spec is not None
    m = from_catalog(spec)
    machine = one_catalog_gpu(catalog, "nvidia-geforce-rtx-5060-ti")
    request = Request(quant="q4_k_m", context=32)
    result = fit(m, machine, request, catalog, offload="experts", live=False, cpu_expert_layers=20)
    est = result.estimate
    assert est.layer_expert_bytes
    touched = 1 - (1 - 8 / 128) ** 32
    every = sum(est.layer_expert_bytes[:20])
    assert offloaded_copy_bytes(est, len(est.layer_weight_bytes), 20, touched) == pytest.approx(
        every * touched
    )
    line = next(line for line in result.speed.explanation if line.startswith("prefill adds PCIe"))
    assert f"copying {every * touched / GIB:.1f} GiB" in line
    assert f"{every * touched / GIB:.1f}" != f"{every / GIB:.1f}"


def test_a_layer_both_offloaded_and_named_by_n_cpu_moe_is_copied_once(catalog: Catalog) -> None:
    spec = catalog.model("qwen3-30b-a3b")
    assert spec is not None
    machine = one_catalog_gpu(catalog, "nvidia-geforce-rtx-5060-ti")
    result = fit(from_catalog(spec), machine, Request(quant="q4_k_m", context=512), catalog, live=False)
    est = result.estimate
    n = len(est.layer_weight_bytes)
    # the last 8 layers on the host, --n-cpu-moe naming every layer: each expert byte once, plus the
    # host layers' other weights
    assert offloaded_copy_bytes(est, n - 8, n, 1.0) == pytest.approx(
        sum(est.layer_expert_bytes)
        + sum(est.layer_weight_bytes[n - 8 :])
        - sum(est.layer_expert_bytes[n - 8 :])
    )
