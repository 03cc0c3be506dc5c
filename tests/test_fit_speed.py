"""benchmarks/fit_speed.py's prefill fit: the efficiency and the board-power cap it recovers from rows.

The rows here are made from one real measurement row with numbers set by the test (the model the fit
assumes, with known factors), so the test checks the fitting, not the measurement set; what the fitted
catalog does to real rows is benchmarks/estimate_accuracy.py's and benchmarks/prefill_analysis.py's job.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import fit_speed  # noqa: E402
from measurements import load  # noqa: E402

TEMPLATE = next(r for r in load() if r.id == "xd-309024gb-8b-q4_k_m-pp512")
FLOPS = 14e9  # per token, for every made-up row


def point(
    gpu: str, peak_tflops: float, watts: float, tflops: float, *, cls: str = "nvidia-consumer"
) -> fit_speed.Point:
    """A dense Q4 row on ``gpu`` measured at ``tflops``."""
    row = dataclasses.replace(TEMPLATE, id=f"{gpu}-{tflops}", gpu_id=gpu, value=tflops * 1e12 / FLOPS)
    return fit_speed.Point(row, cls, "cuda", 4e9, 1e12, 32, FLOPS, peak_tflops * 1e12, watts=watts)


def truth(peak: float, watts: float, e: float = 0.4, k: float = 0.25) -> float:
    return min(peak * e, watts * k)


CARDS = [("a", 80, 220), ("b", 140, 350), ("c", 160, 285), ("d", 330, 450), ("e", 364, 300), ("f", 260, 250)]


def test_the_fit_recovers_the_share_and_the_power_cap() -> None:
    """Three cards below the cap (their peak × 40% binds), three at it (their watts × 0.25 do)."""
    points = [point(g, peak, w, truth(peak, w)) for g, peak, w in CARDS]
    fits = fit_speed.fit_prefill({("nvidia-consumer", "cuda"): points}, {("nvidia-consumer", "cuda"): 0.9})
    found = fits[("nvidia-consumer", "cuda")]
    assert found.efficiency == pytest.approx(0.4, rel=0.01)
    assert found.tflops_per_watt == pytest.approx(0.25, rel=0.01)
    assert "power cap" in found.said
    # the same rows with the cap switched off: the median share, which no card's watts explain
    plain = fit_speed.fit_prefill({("nvidia-consumer", "cuda"): points}, {}, power="none")
    assert plain[("nvidia-consumer", "cuda")].tflops_per_watt is None


def test_one_stray_row_moves_the_fit_no_more_than_a_median() -> None:
    points = [point(g, peak, w, truth(peak, w)) for g, peak, w in CARDS]
    points.append(point("e", 364, 300, truth(364, 300) / 3.5))  # a published outlier, far below its card
    found = fit_speed.fit_prefill({("nvidia-consumer", "cuda"): points}, {})[("nvidia-consumer", "cuda")]
    assert found.efficiency == pytest.approx(0.4, rel=0.02)
    assert found.tflops_per_watt == pytest.approx(0.25, rel=0.02)


def test_no_cap_when_a_single_card_would_set_it() -> None:
    """Only one card at the cap: its watts would be a per-chip factor, so the class keeps the plain share."""
    cards = [("a", 80, 220), ("b", 140, 350), ("c", 160, 285), ("e", 364, 300)]
    points = [point(g, peak, w, truth(peak, w)) for g, peak, w in cards]
    found = fit_speed.fit_prefill({("nvidia-consumer", "cuda"): points}, {})[("nvidia-consumer", "cuda")]
    assert found.tflops_per_watt is None


def test_the_watts_figure_is_pooled_over_a_vendors_classes() -> None:
    """Two classes of one vendor and backend share one TFLOPS per watt and keep their own shares."""
    consumer = [point(g, peak, w, truth(peak, w)) for g, peak, w in CARDS[:4]]
    datacenter = [
        point(g, peak, w, truth(peak, w, e=0.3), cls="nvidia-datacenter")
        for g, peak, w in (("x", 312, 300), ("y", 150, 300), ("z", 756, 350), ("w", 362, 350))
    ]
    fits = fit_speed.fit_prefill(
        {("nvidia-consumer", "cuda"): consumer, ("nvidia-datacenter", "cuda"): datacenter}, {}
    )
    a, b = fits[("nvidia-consumer", "cuda")], fits[("nvidia-datacenter", "cuda")]
    assert a.tflops_per_watt == b.tflops_per_watt == pytest.approx(0.25, rel=0.01)
    assert a.efficiency == pytest.approx(0.4, rel=0.01) and b.efficiency == pytest.approx(0.3, rel=0.01)
    assert "pooled over nvidia cuda" in b.said


def decode_point(
    name: str, gbytes: float, layers: int, moe_layers: int, eff: float, tau: float, moe_us: float
) -> fit_speed.Point:
    """A decode row made by the decode model itself at known factors (fit_speed.decode_seconds)."""
    p = fit_speed.Point(
        TEMPLATE, "amd-apu", "vulkan", gbytes * 1e9, 256e9, layers, FLOPS, None, moe_layers=moe_layers
    )
    value = 1 / fit_speed.decode_seconds(p, eff, tau, moe_us)
    return dataclasses.replace(p, row=dataclasses.replace(TEMPLATE, id=name, value=value))


def test_fit_moe_cost_recovers_the_cost_of_a_moe_layer_from_dense_and_moe_rows() -> None:
    """Dense rows set the efficiency and the per-layer cost; the MoE rows the extra per MoE layer."""
    dense = [decode_point(f"d{i}", gb, n, 0, 0.85, 40, 60) for i, (gb, n) in enumerate(
        [(1.0, 16), (2.5, 28), (5.0, 32), (9.0, 48), (20.0, 64)])]  # fmt: skip
    moe = [
        decode_point(f"m{i}", gb, n, n, 0.85, 40, 60)
        for i, (gb, n) in enumerate([(2.7, 24), (2.3, 48), (3.7, 36)])
    ]
    points = dense + moe
    assert fit_speed.separates_moe(points)
    assert not fit_speed.separates_moe(dense + moe[: fit_speed.MIN_MOE_COST_ROWS - 1])
    assert not fit_speed.separates_moe(dense[: fit_speed.MIN_ROWS_FOR_FIXED_COST - 1] + moe)
    eff, tau, moe_us = fit_speed.fit_moe_cost(points)
    assert (eff, tau, moe_us) == (0.85, 40.0, 60.0)
    assert fit_speed.keeps_median(points, (eff, tau, moe_us), fit_speed.fit_decode(points))


def test_a_moe_cost_the_rows_do_not_bear_out_is_not_kept() -> None:
    """MoE rows that cost no more than dense ones: the plain fit is at least as good, so no cost is kept."""
    points = [decode_point(f"d{i}", gb, n, 0, 0.85, 40, 0) for i, (gb, n) in enumerate(
        [(1.0, 16), (2.5, 28), (5.0, 32), (9.0, 48)])]  # fmt: skip
    points += [
        decode_point(f"m{i}", gb, n, n, 0.85, 40, 0)
        for i, (gb, n) in enumerate([(2.7, 24), (2.3, 48), (3.7, 36)])
    ]
    found = fit_speed.fit_moe_cost(points)
    assert found[2] == 0.0
    assert fit_speed.keeps_median(points, (0.85, 40.0, 30.0), fit_speed.fit_decode(points)) is False


def test_a_borrowing_class_takes_its_neighbours_factors_on_the_same_backend(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """amd-datacenter (ROCm) borrows amd-consumer's ROCm factors, not those of another amd-consumer backend."""
    fit_speed.print_borrowed(
        {("amd-consumer", "rocm"): (0.95, 106.0), ("amd-consumer", "vulkan"): (0.80, 2.0)}, {}, {}
    )
    out = capsys.readouterr().out
    block = out.split('id = "amd-datacenter-rocm"')[1].split("[[speed_factor]]")[0]
    assert "decode_bandwidth_efficiency = 0.95" in block and "per_layer_us = 106" in block


def test_a_borrowing_class_without_prompt_rows_takes_its_backends_generic_prefill_rule(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No decode and no prompt rows: the neighbour's decode factors and the backend's generic prefill share,
    with the rule in words (prefill_fallback), never no prefill at all."""
    from prefill_fallback import GenericPrefill

    generic = {"rocm": GenericPrefill("rocm", 0.5, (("amd-apu", 0.67), ("amd-consumer", 0.34)), 20)}
    fit_speed.print_borrowed({("amd-consumer", "rocm"): (0.95, 106.0)}, {}, generic)
    block = capsys.readouterr().out.split('id = "amd-datacenter-rocm"')[1].split("[[speed_factor]]")[0]
    assert "prefill_compute_efficiency = 0.50" in block
    assert 'prefill_rule = "the median share of the rocm classes with prompt measurements' in block


def test_ollamas_gpu_rows_fit_ollamas_maturity_and_never_llama_cpps() -> None:
    """Ollama's GPU rows (its own graphs on llama.cpp's kernels) stay out of llama.cpp's class factors and
    maturity, and are the only rows Ollama's engine × architecture maturity is fitted from."""
    from rigcheck.core.catalog import load_catalog

    catalog = load_catalog(use_overlay=False)
    rows = [r for r in load() if r.split == "fit" and r.speed]
    on_gpu = {r.source_url for r in rows if r.ollama and r.gpu_count}
    elsewhere = {r.source_url for r in rows if not (r.ollama and r.gpu_count)}
    assert on_gpu - elsewhere, "some Ollama GPU rows' pages hold no other row"
    decode, prefill = fit_speed.points_by_key(rows, catalog)
    pooled = [p.row for points in (*decode.values(), *prefill.values()) for p in points]
    assert pooled and not any(r.ollama and r.gpu_count for r in pooled)
    _fitted, upstream_urls, _builds = fit_speed.fit_maturity(rows, catalog)
    _own, own_urls, _own_builds = fit_speed.fit_maturity(rows, catalog, "ollama")
    upstream = set().union(*upstream_urls.values())
    own = set().union(*own_urls.values())
    assert own and own <= on_gpu
    assert not upstream & (on_gpu - elsewhere)


def test_the_fit_separates_the_matrix_engine_factor_from_the_shader_core_share() -> None:
    """Rows on cooperative matrices (Point.coopmat) at 3 × the shader-core share of rows without: the share
    is the shader-core rows', the factor 3 (speed/coopmat.py)."""
    key = ("intel", "vulkan")
    plain = [
        dataclasses.replace(point(g, 20, 200, 20 * 0.3), hw_class="intel", backend="vulkan") for g in "abc"
    ]
    coop = [
        dataclasses.replace(point(g, 20, 200, 20 * 0.9), hw_class="intel", backend="vulkan", coopmat=True)
        for g in "def"
    ]
    found = fit_speed.fit_prefill({key: plain + coop}, {}, power="none")[key]
    assert found.efficiency == pytest.approx(0.3, rel=0.01)
    assert found.coopmat_factor == pytest.approx(3.0, rel=0.01)
    assert "matrix-engine factor" in found.said
    # one row on cooperative matrices is not enough to fit a factor on: the share covers both
    lone = fit_speed.fit_prefill({key: [*plain, coop[0]]}, {}, power="none")[key]
    assert lone.coopmat_factor == 1.0


def test_the_build_column_names_the_llama_cpp_build() -> None:
    assert fit_speed.llama_cpp_build("a0dd7795 (5589)") == 5589
    assert fit_speed.llama_cpp_build("b8840-12-gec6f7a6a5 (2026-04-21)") == 8840
    assert fit_speed.llama_cpp_build("74d6248f7 (9039); SYCL toolbox") == 9039
    assert fit_speed.llama_cpp_build("not stated (snapshot May 2024)") is None


def test_the_build_column_reads_leading_numbers_and_pr_branches() -> None:
    assert fit_speed.llama_cpp_build("6792; AMDVLK 2025.Q2.1-1, -ub 512") == 6792
    assert fit_speed.llama_cpp_build("6194 (3007baf), ROCm 6.4.1") == 6194
    assert fit_speed.llama_cpp_build("982e3472, ROCm 6.4.1") is None  # a commit hash, no build number
    # a run on PR #19375's branch has that PR's change: the build it shipped in (catalog/engine_builds.toml)
    assert fit_speed.llama_cpp_build("PR #19375 branch gg/qwen3-next-opt on b7946 (Feb 2026)") == 8053


def test_a_fit_row_on_an_old_build_is_scaled_to_a_current_one() -> None:
    """A Qwen3-Next row measured before PR #19375 (b8053) is fitted as the current build would run it: ×
    the PR's ratio (decode 1.33); the same row on a later build, and another engine's, stay as measured."""
    from rigcheck.core.catalog import load_catalog
    from rigcheck.core.models.resolve import from_catalog

    catalog = load_catalog(use_overlay=False)
    row = next(r for r in load() if r.id.startswith("llamacpp") and r.model_id == "qwen3-next-80b-a3b")
    arch = from_catalog(catalog.model("qwen3-next-80b-a3b")).arch  # type: ignore[arg-type]
    gpu = catalog.gpu("nvidia-geforce-rtx-3090")
    decode = dataclasses.replace(
        row,
        engine="llama.cpp",
        build="c6f7a423c (7189)",
        backend="cuda",
        metric="decode_tokens_per_s",
        value=30.0,
    )
    assert fit_speed.current_build_row(decode, arch, gpu).value == pytest.approx(30.0 * 1.33)
    assert fit_speed.current_build_row(dataclasses.replace(decode, build="b8084"), arch, gpu).value == 30.0
    assert (
        fit_speed.current_build_row(dataclasses.replace(decode, build="not stated"), arch, gpu).value == 30.0
    )
    ollama = dataclasses.replace(decode, engine="Ollama 0.13")
    assert fit_speed.current_build_row(ollama, arch, gpu).value == 30.0


def test_a_hybrids_scan_time_is_taken_off_before_its_gemm_share_is_fitted() -> None:
    """Rows whose time is GEMMs at 40% of the peak plus a recurrent scan: with the scan's share known, the
    fitted efficiency is the GEMMs' 40%, not the slower share the whole time would give."""
    scan_flops, fp32, share = 2e8, 40e12, 0.03
    scan_s = scan_flops / (fp32 * share)
    points = []
    for g, peak, _w in CARDS:
        gemm_s = FLOPS / (peak * 1e12 * 0.4)
        p = point(g, peak, 1000, FLOPS / (gemm_s + scan_s) / 1e12)
        points.append(dataclasses.replace(p, scan_flops=scan_flops, fp32_flops=fp32, scan_efficiency=share))
    assert fit_speed.gemm_rate(points[0]) == pytest.approx(CARDS[0][1] * 1e12 * 0.4)
    found = fit_speed.fit_prefill({("nvidia-consumer", "cuda"): points}, {}, power="none")
    assert found[("nvidia-consumer", "cuda")].efficiency == pytest.approx(0.4)
    bare = [dataclasses.replace(p, scan_efficiency=None) for p in points]
    slower = fit_speed.fit_prefill({("nvidia-consumer", "cuda"): bare}, {}, power="none")
    assert slower[("nvidia-consumer", "cuda")].efficiency < 0.39


def test_sycls_expert_loop_fits_its_own_moe_factor_apart_from_the_classs_tiled_kernels() -> None:
    """SYCL runs a prompt's MUL_MAT_ID as a host-synchronised loop of one GEMM per expert
    (fit_speed.OWN_MOE_BACKENDS), Vulkan as one tiled matmul_id dispatch: on one class, MoE rows at 0.2 of
    the dense rate on SYCL and 0.6 on Vulkan fit 0.2 and 0.6, not one pooled figure for both."""
    rows: dict[tuple[str, str], list[fit_speed.Point]] = {}
    for backend, share in (("sycl", 0.2), ("vulkan", 0.6)):
        dense = [
            dataclasses.replace(point(f"{backend}{g}", 20, 200, 20 * 0.4), hw_class="intel", backend=backend)
            for g in "abc"
        ]
        moe = [
            dataclasses.replace(
                point(f"{backend}m{g}", 20, 200, 20 * 0.4 * share),
                hw_class="intel",
                backend=backend,
                moe=True,
            )
            for g in "ab"
        ]
        rows[("intel", backend)] = dense + moe
    found = fit_speed.fit_prefill(rows, {}, power="none")
    assert found[("intel", "sycl")].moe_factor == pytest.approx(0.2, rel=0.01)
    assert found[("intel", "vulkan")].moe_factor == pytest.approx(0.6, rel=0.01)
    assert "its own MUL_MAT_ID loop" in found[("intel", "sycl")].said
    assert fit_speed.moe_group(("intel", "vulkan")) == fit_speed.moe_group(("intel", "rocm")) == "intel"


def _intel_vulkan_rows(moe_shares: dict[bool, float], moe_n: dict[bool, int]) -> list[fit_speed.Point]:
    """Intel Vulkan rows at 0.4 of the peak on shader cores, × 2.5 on cooperative matrices (dense: 3 a side),
    and ``moe_n[coopmat]`` MoE rows at ``moe_shares[coopmat]`` of that path's dense rate."""
    found = []
    for coopmat in (False, True):
        rate = 20 * 0.4 * (2.5 if coopmat else 1.0)
        tag = "x" if coopmat else "s"
        made = [(f"{tag}{g}", rate, False) for g in "abc"]
        made += [(f"{tag}m{g}", rate * moe_shares[coopmat], True) for g in "abc"[: moe_n[coopmat]]]
        for gpu, tflops, moe in made:
            p = point(gpu, 20, 200, tflops)
            found.append(dataclasses.replace(p, hw_class="intel", backend="vulkan", coopmat=coopmat, moe=moe))
    return found


def test_moe_rows_on_cooperative_matrices_fit_their_own_moe_factor() -> None:
    """Vulkan's expert GEMMs take the kernel family of the dense ones: on Intel Xe2 the cooperative-matrix
    matmul_id shaders (generic 128-invocation tiles) beside the Xe2-tuned dense tiles, on Alchemist the
    shader-core ones. MoE rows at 0.2 of the dense rate on shader cores and 0.5 on cooperative matrices fit
    0.2 and 0.5, not one figure for both; the matrix-engine factor stays the dense rows' 2.5."""
    rows = {("intel", "vulkan"): _intel_vulkan_rows({False: 0.2, True: 0.5}, {False: 2, True: 2})}
    found = fit_speed.fit_prefill(rows, {}, power="none")[("intel", "vulkan")]
    assert found.moe_factor == pytest.approx(0.2, rel=0.01)
    assert found.coopmat_moe_factor == pytest.approx(0.5, rel=0.01)
    assert found.coopmat_factor == pytest.approx(2.5, rel=0.01)
    assert "cooperative matrices" in found.said


def test_without_coopmat_moe_rows_the_factor_comes_from_the_same_vulkan_shaders_elsewhere() -> None:
    """With no MoE row of its own on cooperative matrices, Intel's cooperative-matrix MoE factor is not the
    shader-core rows' 0.2 but the one fitted on the class whose Vulkan MoE rows run the same KHR_coopmat
    matmul_id shaders (fit_speed.BORROWED_COOPMAT_MOE)."""
    rows = {("intel", "vulkan"): _intel_vulkan_rows({False: 0.2, True: 0.5}, {False: 2, True: 0})}
    source = fit_speed.BORROWED_COOPMAT_MOE["intel"]
    rows[(source, "vulkan")] = [
        dataclasses.replace(
            point(f"o{g}", 20, 200, 20 * 0.5 * (0.6 if moe else 1.0)),
            hw_class=source,
            backend="vulkan",
            moe=moe,
        )
        for g, moe in (("a", False), ("b", False), ("c", False), ("d", True), ("e", True))
    ]
    found = fit_speed.fit_prefill(rows, {}, power="none")
    assert found[("intel", "vulkan")].moe_factor == pytest.approx(0.2, rel=0.01)
    assert found[("intel", "vulkan")].coopmat_moe_factor == pytest.approx(0.6, rel=0.01)
    assert found[(source, "vulkan")].coopmat_moe_factor == 1.0  # its catalog peak is already the matrix rate


def test_the_micro_batchs_fixed_cost_is_taken_off_before_the_gemm_share_is_fitted() -> None:
    """Rows whose time is GEMMs at 40% of the peak plus each layer's fixed cost once per 512-token micro-batch
    (speed/fixed.py prompt_fixed_seconds): with the class's per-layer cost known, the fitted share is the
    GEMMs' 40% for small and large models alike."""
    tau, layers = 150.0, 16
    points = []
    for g, peak, _w in CARDS:
        gemm_s = FLOPS / (peak * 1e12 * 0.4)
        p = point(g, peak, 1000, FLOPS / (gemm_s + layers * tau * 1e-6 / 512) / 1e12)
        points.append(dataclasses.replace(p, layers=layers, prompt_layer_us=tau))
    assert fit_speed.gemm_rate(points[0]) == pytest.approx(CARDS[0][1] * 1e12 * 0.4)
    found = fit_speed.fit_prefill({("nvidia-consumer", "cuda"): points}, {}, power="none")
    assert found[("nvidia-consumer", "cuda")].efficiency == pytest.approx(0.4)
    bare = [dataclasses.replace(p, prompt_layer_us=0.0) for p in points]
    slower = fit_speed.fit_prefill({("nvidia-consumer", "cuda"): bare}, {}, power="none")
    assert slower[("nvidia-consumer", "cuda")].efficiency < 0.39


def test_the_cpu_decode_compute_ceiling_is_consistent_with_every_cpu_row() -> None:
    """The CPU classes' decode compute share is the highest any CPU-only fit row reached, Arm rows (whose peak
    carries speed/cpu_kernel.py's dot-product/i8mm factor) included, so no fit row decodes faster than the
    ceiling its own arithmetic allows."""
    import cpu_fit
    from rigcheck.core.catalog import load_catalog

    catalog = load_catalog(use_overlay=False)
    rows = load()
    placed = cpu_fit.cpu_rows(rows, catalog)
    assert any(p.kernel_factor != 1.0 for p in placed), "the fit split has CPU-only rows on Arm kernels"
    fits = cpu_fit.fit_cpu_classes(rows, catalog)
    envelope = max(s for p in placed if (s := p.compute_share) is not None)
    assert fits and all(f.compute == pytest.approx(min(envelope, 1.0)) for f in fits)


def test_a_layer_splits_hand_offs_are_taken_off_before_the_gemm_share_is_fitted() -> None:
    """Multi-GPU prompt rows whose time is GEMMs at 40% of the peak plus each boundary's hidden-state copy and
    hand-off latency once per micro-batch (speed/stage_copy.py): the fitted share is the GEMMs' 40%."""
    copy_s, hops, hop_us = 2e-6, 3, 200.0
    points = []
    for g, peak, _w in CARDS:
        gemm_s = FLOPS / (peak * 1e12 * 0.4)
        p = point(g, peak, 1000, FLOPS / (gemm_s + copy_s + hops * hop_us * 1e-6 / 512) / 1e12)
        points.append(dataclasses.replace(p, hops=hops, per_hop_us=hop_us, prompt_copy_s=copy_s))
    assert fit_speed.gemm_rate(points[0]) == pytest.approx(CARDS[0][1] * 1e12 * 0.4)
    found = fit_speed.fit_prefill({("nvidia-consumer", "cuda"): points}, {}, power="none")
    assert found[("nvidia-consumer", "cuda")].efficiency == pytest.approx(0.4)
