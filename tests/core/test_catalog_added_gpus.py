"""GPUs and formats added so that measured rows can be estimated: what the catalog must say about them."""

from __future__ import annotations

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.memory import Request, estimate_memory
from rigcheck.core.models.resolve import from_catalog


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def test_mi50_is_a_gfx906_pcie_card_of_its_own_class(catalog: Catalog) -> None:
    mi50 = catalog.gpu("amd-instinct-mi50-32gb")
    assert mi50 is not None
    assert (mi50.gfx_target, mi50.memory_gb, mi50.form_factor) == ("gfx906", (32,), "pcie")
    assert mi50.bandwidth_gbs == 1024 and mi50.fp16_tflops == pytest.approx(2 * mi50.fp32_tflops)  # type: ignore[operator]
    assert "1002:66a1" in mi50.pci_ids
    assert speed.hardware_class(mi50.vendor, mi50.name, mi50) == "amd-gcn"


@pytest.mark.parametrize("gpu_id", ["nvidia-geforce-rtx-2070-max-q", "nvidia-geforce-rtx-4070-laptop"])
def test_laptop_gpus_mark_their_design_dependent_figures_uncertain(catalog: Catalog, gpu_id: str) -> None:
    gpu = catalog.gpu(gpu_id)
    assert gpu is not None
    assert gpu.segment == "laptop" and gpu.form_factor == "laptop"
    for field in ("bandwidth_gbs", "fp32_tflops", "fp16_tflops"):
        assert getattr(gpu, field), field
        assert gpu.field_confidence.get(field) == "uncertain", field
    assert gpu.sources and gpu.notes and "derived" in gpu.notes


def test_rtx_4090_d_has_fewer_sms_than_the_4090_and_the_same_memory(catalog: Catalog) -> None:
    d, full = catalog.gpu("nvidia-geforce-rtx-4090-d"), catalog.gpu("nvidia-geforce-rtx-4090")
    assert d is not None and full is not None
    assert d.bandwidth_gbs == full.bandwidth_gbs and d.memory_gb == full.memory_gb
    # 114 of 128 SMs at the same boost clock: the tensor figure scales with them
    assert d.fp16_tflops == pytest.approx(full.fp16_tflops * 114 / 128, rel=0.01)  # type: ignore[operator]
    assert d.pci_ids == ("10de:2685",)


@pytest.mark.parametrize(
    ("quant", "gib"),
    [("iq2_m", 2.74), ("iq3_xs", 3.27), ("iq3_m", 3.52), ("q2_k_s", 2.78)],
)
def test_new_mixes_size_llama_31_8b_as_the_quantize_readme_does(
    catalog: Catalog, quant: str, gib: float
) -> None:
    spec = catalog.model("llama-3.1-8b")
    assert spec is not None
    weights = estimate_memory(from_catalog(spec), Request(quant=quant, context=512), catalog).total("weights")
    assert weights / 1024**3 == pytest.approx(gib, abs=0.01)
