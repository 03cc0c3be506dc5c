"""The engine build as an input: an older llama.cpp is slower by each later milestone that applies, and only
there (catalog/engine_builds.toml, core/engine_builds.py, core/estimate/speed/engine_build.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from fakes.cli import one_error_line, run_cli
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.engine_builds import Milestone, load_milestones, parse_build, parse_milestones
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.fit import FitResult, fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.speed.engine_build import build_correction
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate

GIB = 1024**3
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def _machine(catalog: Catalog, gpu: str, count: int = 1) -> Machine:
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=128 * GIB), gpus=())
    return simulate(bare, [catalog.gpu(gpu)] * count, 128)  # type: ignore[list-item]


def _fit(catalog: Catalog, model_id: str, machine: Machine, build: int | None, **req: object) -> FitResult:
    model = from_catalog(catalog.model(model_id))  # type: ignore[arg-type]
    request = Request(quant="q4_k_m", context=4096, engine_build=build, **req)  # type: ignore[arg-type]
    return fit(model, machine, request, catalog, live=False)


def _milestone(pr: int) -> Milestone:
    return next(m for m in load_milestones() if m.pr == pr)


def test_an_old_build_is_slower_by_the_milestone_ratio(catalog: Catalog) -> None:
    """Qwen3-Next on llama.cpp b7189 predates PR #19375 (b8053): decode ÷ 1.33, prefill ÷ 1.21, each a term."""
    machine = _machine(catalog, "nvidia-geforce-rtx-3090", 2)
    current = _fit(catalog, "qwen3-next-80b-a3b", machine, None).speed
    old = _fit(catalog, "qwen3-next-80b-a3b", machine, 7189).speed
    graph = _milestone(19375)
    assert graph.decode_ratio == 1.33 and graph.prefill_ratio == 1.21
    assert old.decode_tokens_per_s == pytest.approx(current.decode_tokens_per_s / 1.33)  # type: ignore[operator]
    assert old.prefill_tokens_per_s == pytest.approx(current.prefill_tokens_per_s / 1.21)  # type: ignore[operator]
    assert {(t.milestone, t.metric, t.value) for t in old.build_terms} == {
        ("qwen3next-graph", "decode", 1.33),
        ("qwen3next-graph", "prefill", 1.21),
    }
    assert all(graph.url in t.source for t in old.build_terms)


def test_the_advice_names_the_pr_its_build_and_the_gain(catalog: Catalog) -> None:
    result = _fit(catalog, "qwen3-next-80b-a3b", _machine(catalog, "nvidia-geforce-rtx-3090", 2), 7189)
    assert "llama.cpp b7189 is older than PR #19375 (b8053); update for ~×1.33 decode, ~×1.21 prefill" in (
        result.advice
    )
    # PR #19504 (CUDA, Gated DeltaNet layers) has no published ratio: advice only, no term
    assert any("PR #19504 (b8233" in a for a in result.advice)
    assert not any(t.milestone == "gated-delta-net-op" for t in result.speed.build_terms)


def test_a_build_with_the_milestone_is_a_current_one(catalog: Catalog) -> None:
    machine = _machine(catalog, "nvidia-geforce-rtx-3090", 2)
    current = _fit(catalog, "qwen3-next-80b-a3b", machine, None).speed
    for build in (8053, 8233, 11042):
        at = _fit(catalog, "qwen3-next-80b-a3b", machine, build).speed
        assert at.decode_tokens_per_s == current.decode_tokens_per_s
        assert at.prefill_tokens_per_s == current.prefill_tokens_per_s
        assert at.build_terms == ()


def test_other_models_are_unchanged_by_an_old_build(catalog: Catalog) -> None:
    """The Qwen3-Next graph milestone is that model type's alone: a dense transformer and a Qwen3.5 hybrid
    (Gated DeltaNet, but not the qwen3next graph) keep their speed on the same old build."""
    machine = _machine(catalog, "nvidia-geforce-rtx-3090")
    for model_id in ("llama-3.1-8b", "qwen3.5-9b"):
        current = _fit(catalog, model_id, machine, None).speed
        old = _fit(catalog, model_id, machine, 7189).speed
        assert old.decode_tokens_per_s == current.decode_tokens_per_s
        assert old.prefill_tokens_per_s == current.prefill_tokens_per_s
        assert old.build_terms == ()


def test_a_milestone_applies_only_to_its_backends_and_hardware(catalog: Catalog) -> None:
    arch = from_catalog(catalog.model("qwen3-next-80b-a3b")).arch  # type: ignore[arg-type]
    vulkan_only = replace(_milestone(19375), id="vulkan-only", backends=("vulkan",))
    on_cuda = build_correction("llama.cpp", 7000, arch, "cuda", None, milestones=[vulkan_only])
    on_vulkan = build_correction("llama.cpp", 7000, arch, "vulkan", None, milestones=[vulkan_only])
    assert (on_cuda.decode_divisor, on_cuda.terms) == (1.0, ())
    assert on_vulkan.decode_divisor == 1.33
    amd_only = replace(vulkan_only, backends=(), vendors=("amd",))
    nvidia = catalog.gpu("nvidia-geforce-rtx-3090")
    assert build_correction("llama.cpp", 7000, arch, "cuda", nvidia, milestones=[amd_only]).terms == ()
    # another engine's build is not llama.cpp's
    assert build_correction("ollama", 7000, arch, "cuda", nvidia, milestones=[vulkan_only]).terms == ()


def test_a_milestone_another_step_models_is_not_applied_twice(catalog: Catalog) -> None:
    """Intel Xe2 cooperative matrices (PR #14001, b5589) are speed/coopmat.py's: an older build loses them
    there, with no build term dividing again."""
    machine = _machine(catalog, "intel-arc-b580")
    before = _fit(catalog, "llama-3.1-8b", machine, 5583, backend="vulkan").speed
    after = _fit(catalog, "llama-3.1-8b", machine, 5589, backend="vulkan").speed
    assert before.build_terms == () and after.build_terms == ()
    assert before.decode_tokens_per_s == after.decode_tokens_per_s
    assert before.prefill_tokens_per_s < after.prefill_tokens_per_s  # type: ignore[operator]


def test_an_unknown_build_is_a_current_one_said_as_an_assumption(catalog: Catalog) -> None:
    machine = _machine(catalog, "nvidia-geforce-rtx-3090", 2)
    model = from_catalog(catalog.model("qwen3-next-80b-a3b"))  # type: ignore[arg-type]
    plain = fit(model, machine, Request(quant="q4_k_m", context=4096), catalog, live=False)
    unknown = _fit(catalog, "qwen3-next-80b-a3b", machine, parse_build("unknown"))
    assert unknown.speed.decode_tokens_per_s == plain.speed.decode_tokens_per_s
    assert unknown.speed.prefill_tokens_per_s == plain.speed.prefill_tokens_per_s
    assert unknown.speed.build_terms == ()
    assert any("build not given: a current one is assumed" in e for e in unknown.speed.explanation)


@pytest.mark.parametrize(
    ("text", "build"), [("b6096", 6096), ("6096", 6096), ("B8053", 8053), ("unknown", None)]
)
def test_build_names(text: str, build: int | None) -> None:
    assert parse_build(text) == build


@pytest.mark.parametrize("text", ["bxyz", "b0", "b-5", "6096.1", "master"])
def test_bad_build_names(text: str) -> None:
    with pytest.raises(ValueError, match=r"not a llama\.cpp build"):
        parse_build(text)


def test_every_shipped_milestone_is_cited() -> None:
    found = load_milestones()
    assert {m.pr for m in found} >= {19375, 19504, 14001}
    for m in found:
        assert m.url == f"https://github.com/ggml-org/llama.cpp/pull/{m.pr}"
        assert m.build_source and m.ratio_source
        assert m.first_build > 0
        if m.decode_ratio is not None or m.prefill_ratio is not None:
            assert "table" in m.ratio_source  # read from the PR's own before/after table


def test_a_bad_milestone_names_file_entry_and_field() -> None:
    text = '[[milestone]]\nid = "x"\nengine = "llama.cpp"\npr = 1\nurl = "https://e"\nfirst_build = -3\n'
    text += 'build_source = "s"\nratio_source = "r"\n'
    with pytest.raises(InputError, match=r"engine_builds.toml: milestone 'x': first_build"):
        parse_milestones("catalog/engine_builds.toml", text)
    with pytest.raises(InputError, match="unknown table"):
        parse_milestones("catalog/engine_builds.toml", "[[stone]]\n")


@pytest.mark.parametrize("value", ["bxyz", "b0", "latest-ish"])
def test_cli_bad_engine_build_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], value: str) -> None:
    machine = FIXTURES / "cpu-only-32gb.json"
    code, out = run_cli("fit", "llama-3.1-8b", "--machine", str(machine), "--engine-build", value)
    assert code == 2 and out == ""
    assert "--engine-build" in one_error_line(capsys)


def test_cdna_builds_before_rocblas_on_mfma_are_advised_not_rescaled(catalog: Catalog) -> None:
    """PR #10498 (b4201) moved CDNA prompt GEMMs off MFMA-less MMQ and 16-bit-accumulating rocBLAS onto
    rocBLAS with 32-bit compute (MFMA). Its before table was not read, so an older build on an Instinct
    GPU is advised, with no term; a build with it, and a Radeon GPU, are not."""
    cdna = _milestone(10498)
    assert (cdna.first_build, cdna.decode_ratio, cdna.prefill_ratio) == (4201, None, None)
    instinct = _machine(catalog, "amd-instinct-mi300x")
    current = _fit(catalog, "llama-3.1-8b", instinct, None, backend="rocm")
    old = _fit(catalog, "llama-3.1-8b", instinct, 3000, backend="rocm")
    assert any("llama.cpp b3000 is older than PR #10498 (b4201" in a for a in old.advice)
    assert old.speed.build_terms == ()
    assert old.speed.prefill_tokens_per_s == current.speed.prefill_tokens_per_s
    with_it = _fit(catalog, "llama-3.1-8b", instinct, 4201, backend="rocm")
    assert not any("PR #10498" in a for a in with_it.advice)
    radeon = _fit(catalog, "llama-3.1-8b", _machine(catalog, "amd-radeon-rx-7900-xtx"), 3000, backend="rocm")
    assert not any("PR #10498" in a for a in radeon.advice)


def test_a_moe_only_milestone_applies_to_mixture_of_experts_models_alone(catalog: Catalog) -> None:
    """A kernel that only an MoE graph runs (fused top-k routing, the expert mat-vec): ``moe_only = true``
    divides a mixture-of-experts model's old-build decode and leaves a dense model's alone."""
    text = (
        '[[milestone]]\nid = "moe-kernel"\nengine = "llama.cpp"\npr = 1\nurl = "https://e"\nfirst_build = 6000\n'
        'build_source = "s"\nratio_source = "table r"\nbackends = ["cuda"]\nmoe_only = true\ndecode_ratio = 1.07\n'
    )
    (moe_kernel,) = parse_milestones("catalog/engine_builds.toml", text)
    assert moe_kernel.moe_only
    moe = from_catalog(catalog.model("qwen3-30b-a3b")).arch  # type: ignore[arg-type]
    dense = from_catalog(catalog.model("llama-3.1-8b")).arch  # type: ignore[arg-type]
    gpu = catalog.gpu("nvidia-geforce-rtx-3090")
    old_moe = build_correction("llama.cpp", 5999, moe, "cuda", gpu, milestones=[moe_kernel])
    assert (old_moe.decode_divisor, old_moe.prefill_divisor) == (1.07, 1.0)
    assert [t.milestone for t in old_moe.terms] == ["moe-kernel"]
    assert build_correction("llama.cpp", 5999, dense, "cuda", gpu, milestones=[moe_kernel]).terms == ()
    assert build_correction("llama.cpp", 6000, moe, "cuda", gpu, milestones=[moe_kernel]).terms == ()
    # a milestone without the flag is every model's, as before
    assert not parse_milestones("f", text.replace("moe_only = true\n", ""))[0].moe_only
    with pytest.raises(InputError, match=r"milestone 'moe-kernel': moe_only"):
        parse_milestones("catalog/engine_builds.toml", text.replace("moe_only = true", 'moe_only = "yes"'))
