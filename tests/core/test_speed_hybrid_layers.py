"""Hybrid stacks in the llama.cpp speed estimate: the recurrent scans of Gated DeltaNet / Mamba-2 layers in a
prompt (core/estimate/speed/recurrent_scan.py, prefill_scan_efficiency in catalog/speed.toml) and the fixed
per-layer decode cost of blocks that hold a single mixer (speed/fixed.py block_layers)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.estimate.speed.factors import maturity
from rigcheck.core.estimate.speed.fixed import block_layers
from rigcheck.core.estimate.speed.recurrent_scan import (
    GDN_FLOPS_PER_STATE,
    scan_flops_per_token,
    scan_seconds_per_token,
)
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.whatif import simulate

R9700 = "amd-radeon-ai-pro-r9700"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def box(catalog: Catalog, gpu_id: str) -> Machine:
    spec = catalog.gpu(gpu_id)
    assert spec is not None
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=128 * GIB), gpus=())
    return simulate(bare, [spec])


def catalog_model(catalog: Catalog, model_id: str):  # type: ignore[no-untyped-def]
    spec = catalog.model(model_id)
    assert spec is not None
    return from_catalog(spec)


def without_scan(catalog: Catalog) -> Catalog:
    return replace(
        catalog,
        speed_factors=tuple(replace(f, prefill_scan_efficiency=None) for f in catalog.speed_factors),
    )


def test_gated_deltanet_scan_flops_follow_the_state(catalog: Catalog) -> None:
    arch = catalog_model(catalog, "qwen3.5-27b").arch
    m = arch.linear_mixer
    assert m is not None
    linear = arch.layer_kinds.count("linear")
    assert 0 < linear < arch.num_layers  # a hybrid: 3 Gated DeltaNet layers to 1 attention layer
    per_layer = GDN_FLOPS_PER_STATE * m.value_heads * m.key_head_dim * m.value_head_dim + 2 * m.conv_dim * (
        m.conv_kernel
    )
    assert scan_flops_per_token(arch) == linear * per_layer
    # twice the FP32 peak or twice the share halves the time
    one = scan_seconds_per_token(arch, 40.0, 0.03)
    assert one > 0
    assert scan_seconds_per_token(arch, 80.0, 0.03) == pytest.approx(one / 2)
    assert scan_seconds_per_token(arch, 40.0, 0.06) == pytest.approx(one / 2)
    assert scan_seconds_per_token(arch, 40.0, None) == 0.0


def test_a_model_without_recurrent_layers_has_no_scan(catalog: Catalog) -> None:
    assert scan_flops_per_token(LLAMA_31_8B) == 0.0


def test_mamba2_layers_scan_their_state(catalog: Catalog) -> None:
    arch = catalog_model(catalog, "nemotron-3-nano-30b-a3b").arch
    assert arch.linear_mixer is None and arch.linear_state_elements
    assert scan_flops_per_token(arch) == 5 * arch.linear_state_elements * arch.layer_kinds.count("linear")


def test_the_scan_share_is_fitted_and_pooled(catalog: Catalog) -> None:
    # one share for every GPU class × backend that estimates prompts
    shares = {
        f.prefill_scan_efficiency
        for f in catalog.speed_factors
        if not f.hw_class.startswith("cpu") and f.prefill_compute_efficiency is not None
    }
    assert len(shares) == 1
    share = shares.pop()
    assert share is not None and 0.005 < share < 0.2  # a token-sequential kernel: a few % of FP32


def test_a_hybrid_prompt_pays_its_scans_a_dense_one_does_not(catalog: Catalog) -> None:
    req = Request(quant="q4_k_m", context=512)
    hybrid = catalog_model(catalog, "qwen3.6-35b-a3b")
    with_scan = fit(hybrid, box(catalog, R9700), req, catalog, live=False).speed
    bare = without_scan(catalog)
    no_scan = fit(hybrid, box(bare, R9700), req, bare, live=False).speed
    assert with_scan.prefill_tokens_per_s and no_scan.prefill_tokens_per_s
    spec = catalog.gpu(R9700)
    assert spec is not None and spec.fp32_tflops
    factor = next(f for f in catalog.speed_factors if f.id == "amd-consumer-rocm")
    extra = scan_seconds_per_token(hybrid.arch, spec.fp32_tflops, factor.prefill_scan_efficiency)
    assert 1 / with_scan.prefill_tokens_per_s - 1 / no_scan.prefill_tokens_per_s == pytest.approx(extra)
    assert any("recurrent scans" in line for line in with_scan.explanation)
    # a dense transformer: the same either way
    dense = model(LLAMA_31_8B)
    a = fit(dense, box(catalog, R9700), req, catalog, live=False).speed
    b = fit(dense, box(bare, R9700), req, bare, live=False).speed
    assert a.prefill_tokens_per_s == b.prefill_tokens_per_s
    assert not any("recurrent scans" in line for line in a.explanation)


def test_nemotron_h_blocks_count_as_half_layers(catalog: Catalog) -> None:
    arch = catalog_model(catalog, "nemotron-3-nano-30b-a3b").arch
    assert len(arch.layer_mixers) == arch.num_layers == 52
    assert set(arch.layer_mixers) == {1}  # a norm and one mixer per block
    assert block_layers(arch.layer_mixers, 0, arch.num_layers) == 26
    assert block_layers(arch.layer_mixers, 0, 10) == 5
    # a transformer's layers hold attention and an MLP each
    assert catalog_model(catalog, "qwen3.6-35b-a3b").arch.layer_mixers == ()
    assert block_layers((), 4, 36) == 32


def _decode_maturity(catalog: Catalog, hybrid: ModelInfo) -> float:
    """llama.cpp's fitted decode maturity for the hybrid's architecture (1 where the fit shows none): it scales
    the whole decode time, the per-layer term included (core/estimate/speed/estimate.py)."""
    found = maturity(catalog, "llama.cpp", hybrid.arch.model_type)
    return found.decode_factor if found else 1.0


def test_nemotron_h_decode_pays_half_the_per_layer_cost(catalog: Catalog) -> None:
    hybrid = catalog_model(catalog, "nemotron-3-nano-30b-a3b")
    req = Request(quant="q4_k_m", context=512)
    speed = fit(hybrid, box(catalog, R9700), req, catalog, live=False).speed
    # the same stack counted as 52 full layers
    full = replace(hybrid, arch=replace(hybrid.arch, layer_mixers=()))
    as_full = fit(full, box(catalog, R9700), req, catalog, live=False).speed
    assert speed.decode_tokens_per_s and as_full.decode_tokens_per_s
    factor = next(f for f in catalog.speed_factors if f.id == "amd-consumer-rocm")
    saved = 1 / as_full.decode_tokens_per_s - 1 / speed.decode_tokens_per_s
    assert saved == pytest.approx(26 * factor.per_layer_us * 1e-6 / _decode_maturity(catalog, hybrid))
    assert any("count as 26 transformer layers" in line for line in speed.explanation)


def test_the_catalog_refuses_a_scan_share_above_the_peak(catalog: Catalog) -> None:
    from rigcheck.core.catalog import _check_format

    factor = next(f for f in catalog.speed_factors if f.id == "amd-consumer-rocm")
    assert _check_format("speed_factor", replace(factor, prefill_scan_efficiency=1.5))
    assert not _check_format("speed_factor", factor)


def test_the_overview_grid_counts_nemotron_h_blocks_as_half_layers(catalog: Catalog) -> None:
    from rigcheck.core.estimate.solvers import grid

    hybrid = catalog_model(catalog, "nemotron-3-nano-30b-a3b")
    full = replace(hybrid, arch=replace(hybrid.arch, layer_mixers=()))
    spec = catalog.gpu(R9700)
    assert spec is not None
    (cell,) = grid([hybrid], ["q4_k_m"], [spec], catalog)
    (as_full,) = grid([full], ["q4_k_m"], [spec], catalog)
    assert cell.verdict == "fits" and cell.decode_tokens_per_s and as_full.decode_tokens_per_s
    factor = next(f for f in catalog.speed_factors if f.id == "amd-consumer-rocm")
    saved = 1 / as_full.decode_tokens_per_s - 1 / cell.decode_tokens_per_s
    assert saved == pytest.approx(26 * factor.per_layer_us * 1e-6 / _decode_maturity(catalog, hybrid))


def test_a_gguf_file_tells_single_mixer_blocks_by_their_tensors(tmp_path: Path, catalog: Catalog) -> None:
    from fakes.gguf_files import write_gguf
    from rigcheck.core.models.files import read_gguf

    path = tmp_path / "nas.gguf"
    write_gguf(path, layers=3, kv_heads=[2, 0, 4])  # the middle block has no attention tensors: an MLP alone
    assert read_gguf(path, catalog=catalog).arch.layer_mixers == (2, 1, 2)
    plain = tmp_path / "plain.gguf"
    write_gguf(plain, layers=3)
    assert read_gguf(plain, catalog=catalog).arch.layer_mixers == ()
