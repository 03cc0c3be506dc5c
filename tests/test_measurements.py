"""The cited measurement set is whole: every row valid and cited, the number in the quoted text, the
composition the accuracy report needs, and a deterministic held-out quarter.

No test here runs the estimator against the measurements: accuracy targets live in
``benchmarks/estimate_accuracy.py``.
"""

from __future__ import annotations

import csv
import dataclasses
import importlib.util
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from rigcheck.core.catalog import load_catalog

ROOT = Path(__file__).resolve().parent.parent
GIB = 1024**3


def _load_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("measurements", ROOT / "benchmarks" / "measurements.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("measurements", module)
    spec.loader.exec_module(module)
    return module


M = _load_module()
ROWS = M.load()
NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def _numbers(text: str) -> set[float]:
    return {float(n.replace(",", "")) for n in NUMBER.findall(text)}


def test_at_least_150_rows_load_and_validate() -> None:
    assert len(ROWS) >= 150


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_row_is_cited_and_its_number_is_in_the_quoted_text(row: object) -> None:
    assert row.source_url.startswith("https://")
    assert "search-index" not in row.source_url and "id " not in row.locator
    assert row.locator.strip() and row.verbatim.strip()
    found = _numbers(row.verbatim)
    if row.metric == "file_bytes":
        shown = {round(row.value / GIB, 2), round(row.value / 1e9, 2), round(row.value / 1024**2, 2)}
        assert shown & found, f"{row.id}: {row.value} bytes is not what the quoted text shows: {row.verbatim}"
    else:
        assert row.value in found, f"{row.id}: {row.value:g} is not in the quoted text: {row.verbatim}"


def test_ids_name_catalog_entries_where_given() -> None:
    catalog = load_catalog(use_overlay=False)
    for row in ROWS:
        assert not row.gpu_id or catalog.gpu(row.gpu_id) is not None, f"{row.id}: unknown GPU {row.gpu_id}"
        assert not row.model_id or catalog.model(row.model_id) is not None, (
            f"{row.id}: unknown model {row.model_id}"
        )


def test_speed_rows_state_backend_offload_and_test() -> None:
    for row in (r for r in ROWS if r.speed):
        assert row.backend in M.BACKENDS
        assert row.offload and row.offload_kind in M.OFFLOAD_KINDS
        assert row.test.startswith(("pp", "tg")), f"{row.id}: test '{row.test}' is neither pp… nor tg…"
        assert (row.test[:2] == "pp") == (row.metric == "prefill_tokens_per_s"), row.id
        if row.device_class == "cpu":
            assert row.gpu_count == 0 and row.backend == "cpu"
        if row.offloaded:
            assert row.host, f"{row.id}: an offload row needs the host memory setup"


@pytest.mark.parametrize(
    ("subset", "minimum"),
    [
        ("MoE", 40),
        ("unified memory", 25),
        ("offload", 15),
        ("CPU-only", 10),
        ("AMD discrete", 10),
        ("NVIDIA discrete", 30),
    ],
)
def test_composition_minimums(subset: str, minimum: int) -> None:
    assert M.count_by(ROWS, subset) >= minimum


def test_offload_covers_layers_and_experts_and_unified_covers_each_platform() -> None:
    kinds = {r.offload_kind for r in ROWS if r.offloaded}
    assert kinds == {"layers", "experts"}
    platforms = {r.device_class for r in ROWS if r.unified and r.speed}
    assert platforms == {"apple", "strix-halo", "gb10", "intel-integrated"}


def test_data_centre_small_dense_rows_present() -> None:
    """The issue's case: small dense models on A100/H100-class GPUs, where fixed per-token costs dominate."""
    small = [
        r
        for r in ROWS
        if r.gpu_id.startswith(("nvidia-a100", "nvidia-h100", "amd-instinct"))
        and r.metric == "decode_tokens_per_s"
        and not r.moe
        and r.model_id in ("llama-3.1-8b", "qwen2.5-7b", "mistral-7b-v0.3")
    ]
    assert len(small) >= 3


def test_file_sizes_cover_the_common_quants() -> None:
    formats = {r.format for r in ROWS if r.metric == "file_bytes"}
    for wanted in ("Q2_K", "Q3_K_S", "Q4_K_M", "Q5_K_M", "Q6_K", "Q8_0", "IQ4_XS", "MXFP4", "F16"):
        assert wanted in formats


def test_split_is_deterministic_about_a_quarter_and_independent_of_order() -> None:
    first = {r.id: r.split for r in ROWS}
    again = {r.id: r.split for r in reversed(M.load())}
    assert first == again
    assert 0.18 <= M.holdout_share(ROWS) <= 0.32
    # fixed by the id alone: other fields, and the row's place in the file, do not move it
    changed = dataclasses.replace(ROWS[0], value=ROWS[0].value * 2, device="elsewhere", notes="x")
    assert changed.split == ROWS[0].split
    assert {r.split for r in ROWS} == {"fit", "holdout"}


def _write(tmp_path: Path, change: Callable[[dict[str, str]], None]) -> Path:
    with M.DATA.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
        header = reader.fieldnames
    assert header is not None
    change(rows[3])
    path = tmp_path / "measurements.csv"
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.update(device_class="tpu"), "unknown device_class 'tpu'"),
        (lambda r: r.update(source_url=""), "missing source_url"),
        (lambda r: r.update(source_url="search-index 1234"), "not an https address"),
        (lambda r: r.update(value="0"), "not a positive number"),
        (lambda r: r.update(value="-3.5"), "not a positive number"),
        (lambda r: r.update(value="fast"), "not a number"),
        (lambda r: r.update(verbatim=""), "missing verbatim"),
        (lambda r: r.update(metric="vibes"), "unknown metric 'vibes'"),
        (lambda r: r.update(backend="opencl"), "unknown backend 'opencl'"),
        (lambda r: r.update(offload_kind="some"), "unknown offload_kind 'some'"),
    ],
)
def test_a_bad_row_is_a_clear_error_naming_it(
    tmp_path: Path, change: Callable[[dict[str, str]], None], message: str
) -> None:
    path = _write(tmp_path, change)
    bad_id = ROWS[3].id
    with pytest.raises(M.MeasurementError) as err:
        M.load(path)
    text = str(err.value)
    assert message in text and f"row '{bad_id}'" in text and str(path) in text
    assert ":5:" in text  # header is line 1, the fourth row line 5


def test_duplicate_ids_and_unreadable_files_are_errors(tmp_path: Path) -> None:
    path = _write(tmp_path, lambda r: r.update(id=ROWS[0].id))
    with pytest.raises(M.MeasurementError, match="duplicate id"):
        M.load(path)
    with pytest.raises(M.MeasurementError, match="cannot read"):
        M.load(tmp_path / "missing.csv")


def test_cpu_host_facts_are_cited_and_each_describes_a_measured_host_whose_cpu_computes() -> None:
    """benchmarks/data/cpu_hosts.csv stands in for what the probe reads (cores, clock, flags) on the hosts
    whose CPU does the work: CPU-only rows and ktransformers rows (its CPU computes the routed experts).
    Every entry cites a page and is used by such a row, and every CPU-only prefill row is covered."""
    path = ROOT / "benchmarks" / "data" / "cpu_hosts.csv"
    with path.open(encoding="utf-8") as f:
        hosts = list(csv.DictReader(f))
    cpu_rows = [r for r in ROWS if r.device_class == "cpu" or r.engine.lower().startswith("ktransformers")]
    blind_cpu = [r for r in M.load_blind() if r.device_class == "cpu"]  # the blind set's hosts count as used
    for host in hosts:
        assert host["source_url"].startswith("https://"), host["match"]
        assert int(host["physical_cores"]) > 0 and 500 < float(host["max_mhz"]) < 7000
        used = cpu_rows + blind_cpu
        assert any(re.search(host["match"], r.host or "", re.IGNORECASE) for r in used), host["match"]
    for row in cpu_rows:
        if row.metric == "prefill_tokens_per_s" and row.device_class == "cpu":
            assert any(re.search(h["match"], row.host or "", re.IGNORECASE) for h in hosts), row.id


def _load_accuracy() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "estimate_accuracy", ROOT / "benchmarks" / "estimate_accuracy.py"
    )
    assert spec is not None and spec.loader is not None
    sys.path.insert(0, str(ROOT / "benchmarks"))
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("estimate_accuracy", module)
    spec.loader.exec_module(module)
    return module


def test_strix_halo_rows_state_the_gtt_their_runs_needed() -> None:
    """An APU row that ran a model larger than the default GTT (half the RAM) with every layer on the GPU
    states the carve-out and the raised GTT its source documents, and the accuracy script builds the GPU
    from them as the probe would (carve-out in memory_total_bytes, GTT in memory_shared_bytes)."""
    module = _load_accuracy()
    sizes = {r.id.removesuffix("-size"): r.value for r in ROWS if r.metric == "file_bytes"}
    big = [
        r
        for r in ROWS
        if r.device_class == "strix-halo"
        and r.speed
        and r.ram_gb
        and sizes.get(r.id.rsplit("-", 1)[0], 0) > r.ram_gb * GIB / 2
    ]
    assert big, "the set has Strix Halo runs of models above half the RAM"
    catalog = load_catalog(use_overlay=False)
    for row in big:
        assert module._apu_memory(row.host) is not None, row.id
        gpu = module.row_machine(row, catalog).gpus[0]
        assert gpu.memory_total_bytes == 512 * 1024**2 and gpu.memory_shared_bytes == 124 * GIB, row.id
    assert module._apu_memory("128 GB RAM; Fedora 42") is None


def test_llama_cpp_rows_include_ollama_but_not_forks_or_other_engines() -> None:
    """The engine × architecture maturity fit (fit_speed.py print_maturity) takes the rows of the engine the
    estimator models: llama.cpp and Ollama (which runs its GGUF models on llama.cpp's ggml), not ik_llama.cpp or
    ktransformers, whose kernels are their own."""
    by_engine = {row.engine: row.llama_cpp for row in ROWS}
    assert by_engine["Ollama 0.15.6 (CPU-only)"]
    assert by_engine["llama.cpp (llama-bench)"]
    assert not by_engine["ik_llama.cpp (llama-bench, 't/s (main)' column)"]
    assert not any(v for engine, v in by_engine.items() if engine.startswith(("ktransformers", "ik_llama")))
    ollama_rows = [row for row in ROWS if row.engine.startswith("Ollama")]
    assert ollama_rows and all(row.llama_cpp for row in ollama_rows)


def test_a_prompt_shorter_than_a_micro_batch_is_estimated_at_its_own_length() -> None:
    """llama.cpp runs a prompt shorter than its 512-token micro-batch as one micro-batch of that many tokens,
    which pays the whole per-micro-batch copy of host-resident weights; so a prefill row is sized at its
    prompt's tokens (pp85: 85), not at the 128-token floor a decode row's context keeps, and the accuracy
    script sizes it the same way."""
    short = [r for r in ROWS if r.metric == "prefill_tokens_per_s" and r.tokens and r.tokens < 128]
    assert short, "the set has prefill rows of prompts under 128 tokens"
    for row in short:
        assert M.row_context(row) == row.tokens, row.id
    decode = next(r for r in ROWS if r.metric == "decode_tokens_per_s" and r.tokens and r.tokens < 128)
    assert M.row_context(decode) == 128
    accuracy = _load_accuracy()
    catalog = load_catalog(use_overlay=False)
    offloaded = next(r for r in short if r.offload_kind == "experts")
    at_own = accuracy.estimate(offloaded, catalog).estimate
    at_floor = accuracy.estimate(dataclasses.replace(offloaded, test="pp128"), catalog).estimate
    # the same copy per micro-batch over 85 tokens instead of 128: slower per token
    assert at_own is not None and at_floor is not None
    assert at_own < at_floor * 0.85


def test_every_stated_llama_cpp_build_number_is_read() -> None:
    """A llama.cpp row whose build column names a release (``b7644``, ``9c142e3a2 (7670)``,
    ``b9174-g0253fb21f``) is estimated at that build, fit, held-out and blind rows alike, so a kernel
    milestone of catalog/engine_builds.toml applies to the rows that predate it (the AMD rows included).
    A run on a PR's branch counts as the build the PR shipped in, so those rows are left out here."""
    stated = re.compile(r"\(([0-9]{4,5})[;)]|\bb([0-9]{4,5})\b")
    rows = [
        r for r in (*ROWS, *M.load_blind()) if r.engine.startswith("llama.cpp") and "branch" not in r.build
    ]
    named = [(r, int(found.group(1) or found.group(2))) for r in rows if (found := stated.search(r.build))]
    assert any(r.gpu_id.startswith("amd-") for r, _ in named), "the set has AMD rows at stated builds"
    for row, number in named:
        assert row.engine_build == number, (row.id, row.build)


def test_a_host_that_states_its_memory_population_is_read_at_that_peak_not_the_platforms_ceiling() -> None:
    """A CPU platform's bandwidth is its ceiling: the fastest memory it supports in every channel (a laptop
    controller that takes LPDDR5X-7500 or DDR5-5600 is entered at the LPDDR5X figure). A host that says what
    it carries ("96 GB DDR5-5600 dual-channel", "DDR5-5600 in all 12 channels") is read at that peak, as a
    peak (the memory class's share applies), not as a measurement; a host that states no rate, or no
    channel count, keeps the platform's figure."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from cpu_hosts import host_memory

    dual = host_memory(
        "AMD Ryzen AI 9 HX PRO 370 (Zen 5, 12c/24t), 96 GB DDR5-5600 dual-channel (2×48 GB)", GIB
    )
    assert dual.bandwidth_bytes_per_s == 2 * 5600 * 10**6 * 8 and dual.bandwidth_source == "catalog"
    twelve = host_memory("AMD EPYC 9554 (64 cores), 196 GB DDR5-5600 in all 12 channels", GIB)
    assert twelve.bandwidth_bytes_per_s == 12 * 5600 * 10**6 * 8
    eight = host_memory("Threadripper PRO 3995WX, 8-channel DDR4-3200", GIB)
    assert eight.bandwidth_bytes_per_s == 8 * 3200 * 10**6 * 8
    for unstated in ("intel core i5 13400F, 64GB DDR5", "16 GB RAM (memory type and channels not published)"):
        assert host_memory(unstated, GIB).bandwidth_bytes_per_s is None
    measured = host_memory("EPYC 9654, 12×DDR5-4800, the author measured ~230 GB/s", GIB)
    assert measured.bandwidth_source == "measured" and measured.bandwidth_bytes_per_s == 230 * 10**9


def test_a_run_on_master_at_the_time_of_a_catalogued_pr_predates_that_pr() -> None:
    """A PR's own "t/s master" column ("master at the time of PR #16649 (Oct 2025)") was measured without
    the PR: where catalog/engine_builds.toml has the PR, the row is read at the build before its first
    build, so that milestone (and none it postdates) applies; a PR without a milestone leaves it unknown."""
    from rigcheck.core.engine_builds import load_milestones

    first = {m.pr: m.first_build for m in load_milestones()}
    assert M.row_build("master at the time of PR #16649 (Oct 2025)") == first[16649] - 1
    assert M.row_build("master at the time of PR #1 (May 2023)") is None
    row = next(r for r in ROWS if r.id == "llamacpp-pr16649-rtx4090-gptoss20b-tg128")
    assert row.engine_build is not None and row.engine_build < first[16649]


def test_the_ubatch_column_is_optional_and_reaches_the_estimate(tmp_path: Path) -> None:
    """A row measured at llama-bench -ub 2048 carries it in the optional ``ubatch`` column (empty = the
    default 512); a file without the column (blind.csv) still loads, and the accuracy script estimates the
    row at that micro-batch."""
    assert all(r.ubatch is None for r in M.load_blind())
    path = _write(tmp_path, lambda r: r.update(ubatch="x"))
    with pytest.raises(M.MeasurementError, match="ubatch"):
        M.load(path)
    path = _write(tmp_path, lambda r: r.update(ubatch="2048"))
    assert M.load(path)[3].ubatch == 2048
    assert M.row_micro_batch(dataclasses.replace(ROWS[3], ubatch=2048, test="pp512")) == 512
    accuracy = _load_accuracy()
    catalog = load_catalog(use_overlay=False)
    row = next(
        r
        for r in ROWS
        if r.metric == "prefill_tokens_per_s"
        and r.test == "pp2048"
        and r.gpu_count == 1
        and not r.moe
        and r.offload_kind == "none"
        and r.ubatch is None
    )
    default = accuracy.estimate(row, catalog).estimate
    assert default is not None
    assert accuracy.estimate(dataclasses.replace(row, ubatch=512), catalog).estimate == default
    large = accuracy.estimate(dataclasses.replace(row, ubatch=2048), catalog).estimate
    # one GPU, a dense model: one micro-batch of 2,048 pays each layer's fixed cost once instead of four
    # times, so it is faster
    assert large is not None and large > default
