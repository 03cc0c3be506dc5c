"""MLX's own decode factors (catalog/speed_engines.toml): used on the Apple classes that have cited MLX rows,
llama.cpp's Metal factors elsewhere, physical, cited, and what benchmarks/engine_factors.py fits."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from fakes.archs import LLAMA_31_8B, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import GIB, Request
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.whatif import simulate

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def mac(catalog: Catalog, gpu: str) -> Machine:
    spec = catalog.gpu(gpu)
    assert spec is not None
    return simulate(Machine(cpu=CPU(logical_cores=12), memory=Memory(total_bytes=48 * GIB), gpus=()), [spec])


def decode(catalog: Catalog, gpu: str) -> tuple[float, tuple[str, ...]]:
    request = Request(quant="mlx-4bit", engine="mlx", context=4096)
    result = fit(model(LLAMA_31_8B), mac(catalog, gpu), request, catalog, live=False)
    assert result.speed is not None and result.speed.decode_tokens_per_s is not None
    return result.speed.decode_tokens_per_s, result.speed.explanation


def without_mlx(catalog: Catalog) -> Catalog:
    return replace(catalog, speed_factors=tuple(f for f in catalog.speed_factors if f.backend != speed.MLX))


def test_a_class_with_mlx_rows_decodes_with_its_own_factors(catalog: Catalog) -> None:
    own, why = decode(catalog, "apple-m4-pro")
    metal, metal_why = decode(without_mlx(catalog), "apple-m4-pro")
    assert any("mlx-lm's own factors for apple-pro" in line for line in why), why
    assert any("Metal factors stand in" in line for line in metal_why), metal_why
    # mlx-lm decodes faster than llama.cpp's Metal rate predicts (the cited rows read ~20-30% low before)
    assert own > metal * 1.1


def test_a_class_without_mlx_rows_keeps_llama_cpp_metal_factors(catalog: Catalog) -> None:
    assert speed.speed_factor(catalog, "apple-base", speed.MLX) is not None  # falls back to the class default
    assert speed.speed_factor(catalog, "apple-base", speed.MLX).backend == "metal"  # type: ignore[union-attr]
    own, why = decode(catalog, "apple-m4")
    metal, _ = decode(without_mlx(catalog), "apple-m4")
    assert own == metal
    assert any("no mlx-lm measurements for this chip class" in line for line in why), why


def test_llama_cpp_on_metal_never_picks_mlx_factors(catalog: Catalog) -> None:
    request = Request(quant="q4_k_m", context=4096)
    box = mac(catalog, "apple-m4-pro")
    shipped = fit(model(LLAMA_31_8B), box, request, catalog, live=False).speed
    bare = fit(model(LLAMA_31_8B), box, request, without_mlx(catalog), live=False).speed
    assert shipped is not None and bare is not None
    assert shipped.decode_tokens_per_s == bare.decode_tokens_per_s


def test_mlx_factors_are_physical_and_cited(catalog: Catalog) -> None:
    rows = [f for f in catalog.speed_factors if f.backend == speed.MLX]
    assert {f.hw_class for f in rows} >= {"apple-max", "apple-pro"}
    for f in rows:
        assert 0 < f.decode_bandwidth_efficiency <= 1.0, f.id  # a share of the peak bandwidth
        assert f.per_layer_us >= 0 and not f.default, f.id
        assert f.sources and all(s.startswith("https://") for s in f.sources), f.id
        assert f.measured and "fit rows" in f.measured, f.id


def test_the_shipped_factors_are_what_the_fit_split_gives(catalog: Catalog) -> None:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import engine_factors  # type: ignore[import-not-found]
        import measurements  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(BENCHMARKS))
    fitted = engine_factors.fit_mlx(measurements.load(), catalog)
    shipped = {f.hw_class: f for f in catalog.speed_factors if f.backend == speed.MLX}
    assert set(fitted) == set(shipped)
    for cls, got in fitted.items():
        assert got.factor.decode_bandwidth_efficiency == pytest.approx(
            shipped[cls].decode_bandwidth_efficiency
        )
        assert got.factor.per_layer_us == pytest.approx(shipped[cls].per_layer_us), cls


def test_ollama_rows_are_cited_and_kept_out_of_llama_cpp_fit() -> None:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import engine_factors  # type: ignore[import-not-found]
        import measurements  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(BENCHMARKS))
    ollama = measurements.load(engine_factors.OLLAMA_DATA)
    assert len(ollama) >= 10
    llama_cpp_ids = {r.id for r in measurements.load()}
    for row in ollama:
        assert row.engine.startswith("Ollama") and row.id not in llama_cpp_ids, row.id
        assert row.source_url.startswith("https://github.com/") and "/blob/" in row.source_url, row.id
        assert f"{row.value:g}" in row.verbatim or str(row.value) in row.verbatim, row.id
        assert row.format and row.model_id and row.gpu_id, row.id
