"""An AMD APU at the driver's default GTT (half of RAM): the advice says what raising the limit would do,
worked out by fitting again, and never suggests a second APU."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.gtt_advice import PAGE_BYTES, raised_gtt_machine
from rigcheck.core.estimate.memory import Request
from rigcheck.core.machine import CPU, GPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.said import render

GIB = 1024**3
STRIX = GPU(
    vendor="amd", name="AMD Radeon 8060S Graphics", memory_total_bytes=None, index=0, unified_memory=True,
    catalog_id="amd-ryzen-ai-max-plus-395-radeon-8060s",
)  # fmt: skip


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def box(gpu: GPU, ram_gib: int = 128) -> Machine:
    return Machine(cpu=CPU(logical_cores=32), memory=Memory(total_bytes=ram_gib * GIB), gpus=(gpu,))


def _advice(catalog: Catalog, machine: Machine) -> list[str]:
    qwen = from_catalog(catalog.model("qwen3-235b-a22b"))  # type: ignore[arg-type]
    result = fit(qwen, machine, Request(quant="q3_k_m"), catalog, live=False)
    assert result.verdict == "fits_with_offload"  # 107 GiB: half of 128 GiB holds 55 of its 94 layers
    return [render(line) for line in result.advice]


def test_a_model_that_needs_more_than_half_of_ram_is_told_the_kernel_parameter(catalog: Catalog) -> None:
    lines = _advice(catalog, box(STRIX))
    raised = [line for line in lines if "ttm.pages_limit" in line]
    assert len(raised) == 1
    gtt = 128 * GIB - 128 * GIB // 10  # all but the 12.8 GiB the system keeps
    assert f"ttm.pages_limit={gtt // PAGE_BYTES}" in raised[0]
    assert "runs on the GPU" in raised[0] and "tokens/s" in raised[0]  # the verdict of the trial fit
    assert not any("would hold it entirely" in line for line in lines), "a second APU cannot be added"


def test_a_gtt_the_probe_read_is_the_owners_choice_and_gets_no_such_advice(catalog: Catalog) -> None:
    probed = replace(STRIX, memory_total_bytes=512 * 1024**2, memory_shared_bytes=64 * GIB)
    assert raised_gtt_machine(box(probed)) is None
    assert not any("ttm.pages_limit" in line for line in _advice(catalog, box(probed)))


def test_the_raised_machine_lets_the_gpu_map_all_but_the_reserve() -> None:
    raised = raised_gtt_machine(box(STRIX))
    assert raised is not None
    machine, gtt = raised
    assert gtt == machine.gpus[0].memory_shared_bytes == 128 * GIB - 128 * GIB // 10
    discrete = GPU(vendor="amd", name="Radeon RX 7900 XTX", memory_total_bytes=24 * GIB, index=0)
    assert raised_gtt_machine(box(discrete)) is None
    assert raised_gtt_machine(replace(box(STRIX), gpus=(STRIX, replace(STRIX, index=1)))) is None
