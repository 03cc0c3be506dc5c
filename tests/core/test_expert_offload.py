"""Expert offload (llama.cpp --n-cpu-moe): attention, shared weights and KV on the GPU, routed experts in RAM."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.report.estimate import fit_json
from rigcheck.core.whatif import simulate

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def box(catalog: Catalog, gpu: str, ram_gib: int = 64, cpu: str | None = None) -> Machine:
    bare = Machine(cpu=CPU(logical_cores=16, model=cpu), memory=Memory(total_bytes=ram_gib * GIB), gpus=())
    spec = catalog.gpu(gpu)
    assert spec is not None
    return simulate(bare, [spec], ram_gib)


def test_auto_offloads_the_experts_of_a_big_moe_when_that_is_faster(catalog: Catalog) -> None:
    gpt = from_catalog(catalog.model("gpt-oss-120b"))  # type: ignore[arg-type]
    machine = box(catalog, "nvidia-geforce-rtx-3090")
    auto = fit(gpt, machine, Request(), catalog, live=False)
    layers = fit(gpt, machine, Request(), catalog, offload="layers", live=False)
    assert auto.verdict == "fits_with_offload"
    assert auto.placement.offload == "experts"
    assert auto.placement.gpu_layers == auto.placement.total_layers == 36
    assert 0 < auto.placement.cpu_expert_layers < 36
    assert auto.speed.decode_tokens_per_s > layers.speed.decode_tokens_per_s  # type: ignore[operator]
    assert "--n-cpu-moe" in auto.reasons[0]
    data = fit_json(auto)
    assert data["placement"]["offload"] == "experts"
    assert data["placement"]["cpu_expert_layers"] == auto.placement.cpu_expert_layers
    # the fewest layers: one fewer would not fit the GPU
    fewer = fit(
        gpt, machine, Request(), catalog, offload="experts", live=False,
        cpu_expert_layers=auto.placement.cpu_expert_layers - 1,
    )  # fmt: skip
    assert fewer.verdict == "does_not_fit"


def test_n_cpu_moe_fixes_how_many_layers_keep_experts_in_ram(catalog: Catalog) -> None:
    gpt = from_catalog(catalog.model("gpt-oss-20b"))  # type: ignore[arg-type]
    machine = box(catalog, "amd-radeon-rx-7900-xt", ram_gib=32)
    all_moe = fit(gpt, machine, Request(), catalog, offload="experts", live=False, cpu_expert_layers=24)
    some = fit(gpt, machine, Request(), catalog, offload="experts", live=False, cpu_expert_layers=6)
    assert all_moe.placement.cpu_expert_layers == 24 and some.placement.cpu_expert_layers == 6
    assert all_moe.placement.cpu_bytes > some.placement.cpu_bytes > 0
    assert sum(all_moe.placement.gpu_bytes) < sum(some.placement.gpu_bytes)
    # experts read from RAM make decode slower
    assert all_moe.speed.decode_tokens_per_s < some.speed.decode_tokens_per_s  # type: ignore[operator]
    assert any("routed experts read per token" in line for line in all_moe.speed.explanation)


def test_expert_offload_reads_at_the_host_bandwidth(catalog: Catalog) -> None:
    """A 12-channel EPYC reads offloaded experts far faster than a default dual-channel desktop."""
    gpt = from_catalog(catalog.model("gpt-oss-120b"))  # type: ignore[arg-type]
    desktop = fit(
        gpt, box(catalog, "nvidia-geforce-rtx-3090"), Request(), catalog, offload="experts", live=False
    )
    epyc_box = box(catalog, "nvidia-geforce-rtx-3090", cpu="AMD EPYC 9654 96-Core Processor")
    epyc = fit(gpt, epyc_box, Request(), catalog, offload="experts", live=False)
    assert epyc.speed.decode_tokens_per_s > 2 * desktop.speed.decode_tokens_per_s  # type: ignore[operator]
    assert any("AMD EPYC 9004" in line for line in epyc.speed.explanation)


def test_a_dense_model_has_no_experts_to_offload(catalog: Catalog) -> None:
    result = fit(
        model(replace(LLAMA_31_8B)), box(catalog, "nvidia-geforce-rtx-3060"), Request(quant="bf16"), catalog,
        offload="experts", live=False,
    )  # fmt: skip
    assert result.verdict == "does_not_fit"
