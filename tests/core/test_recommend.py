"""recommend(): the documented rule (docs/recommendation.md), the ladder, the words, the context limit;
commands built from the placement."""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

import pytest

from fakes.cli import one_error_line, run_cli
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.commands import ALL_LAYERS, commands_for, llama_cpp_command
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.recommend import (
    USABLE_DECODE_TOKENS_PER_S,
    Rung,
    candidates,
    check_context,
    choose,
    recommend,
    verdict_words,
    where_of,
)
from rigcheck.core.machine import CPU, Machine, Memory, load_machine
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.whatif import simulate

FIXTURES = Path(__file__).parent.parent / "fixtures" / "machines"
GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


@pytest.fixture(scope="module")
def rtx4090() -> Machine:
    return load_machine(FIXTURES / "rtx4090-64gb.json")


def model(catalog: Catalog, model_id: str) -> ModelInfo:
    spec = catalog.model(model_id)
    assert spec is not None
    return from_catalog(spec)


def cpu_box(ram_gib: int = 64) -> Machine:
    return Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=ram_gib * GIB), gpus=())


# -- the rule --------------------------------------------------------------------------------------


def test_quality_first_on_the_gpu(catalog: Catalog, rtx4090: Machine) -> None:
    rec = recommend(model(catalog, "llama-3.1-8b"), rtx4090, "inference", catalog)
    assert rec.best is rec.ladder[0]  # BF16, released, fits the 24 GB card at > 10 tokens/s
    assert rec.best.quant == "BF16" and rec.best.native and rec.best.where == "gpu"
    assert "highest-quality" in rec.why[0]
    fast = recommend(model(catalog, "llama-3.1-8b"), rtx4090, "inference", catalog, prefer="speed")
    assert fast.best is not None and fast.best.quant == "Q4_K_M"  # fastest at Q4_K_M or better
    assert any("--prefer speed would pick Q4_K_M" in w for w in rec.why)


def test_a_70b_on_24_gb_names_the_format_not_a_vague_hint(catalog: Catalog, rtx4090: Machine) -> None:
    rec = recommend(model(catalog, "llama-3.1-70b"), rtx4090, "inference", catalog)
    assert rec.best is not None and rec.best.where == "gpu+ram"
    assert rec.ladder[0].where is None  # BF16: 134 GiB does not fit 24 GB + 64 GB
    # nothing of Q4_K_M quality reaches the floor: the fastest of those, i.e. Q4_K_M itself
    usable = [r for r in rec.ladder if r.runs and (r.tokens_per_s or 0) >= USABLE_DECODE_TOKENS_PER_S]
    assert not usable or all(r.quant in ("Q3_K_M", "IQ3_XXS", "Q2_K") for r in usable)
    assert rec.best.quant == "Q4_K_M"
    assert "no format of Q4_K_M quality or better reaches" in rec.why[0]


def test_cpu_only_says_runs_on_the_cpu(catalog: Catalog) -> None:
    rec = recommend(model(catalog, "llama-3.1-8b"), cpu_box(), "inference", catalog)
    assert rec.best is not None and rec.best.where == "cpu"
    assert rec.best.words == "runs on the CPU"
    assert all("offload" not in r.words for r in rec.ladder)


def test_choose_prefers_the_gpu_over_offload_then_quality(catalog: Catalog, rtx4090: Machine) -> None:
    qwen = model(catalog, "qwen3-30b-a3b")
    rec = recommend(qwen, rtx4090, "inference", catalog)
    assert rec.best is not None
    better = rec.ladder[: rec.ladder.index(rec.best)]
    # every higher-quality rung either does not run entirely on the GPU or is below the floor
    assert all(r.where != "gpu" or (r.tokens_per_s or 0) < USABLE_DECODE_TOKENS_PER_S for r in better)
    assert rec.best.where == "gpu"
    # a ladder where nothing runs: no answer, and why
    nothing = [replace(r, where=None) for r in rec.ladder]
    assert choose(nothing, "quality", catalog) is None


def test_native_format_first_and_no_wider_upcasts(catalog: Catalog) -> None:
    oss = model(catalog, "gpt-oss-120b")
    ladder = candidates(oss, "llama.cpp", catalog)
    assert ladder[0] == ("mxfp4", True)
    assert all(q not in ("bf16", "q8_0", "q6_k-mix", "q5_k_m", "q4_k_m") for q, _ in ladder[1:])
    dense = candidates(model(catalog, "llama-3.1-8b"), "llama.cpp", catalog)
    assert dense[0] == ("bf16", True) and ("q4_k_m", False) in dense
    assert [q for q, _ in candidates(model(catalog, "llama-3.1-8b"), "vllm", catalog)] == ["bf16", "fp8-e4m3"]


def test_quality_notes_only_where_a_measurement_is_cited(catalog: Catalog, rtx4090: Machine) -> None:
    rec = recommend(model(catalog, "llama-3.1-8b"), rtx4090, "inference", catalog)
    notes = {r.quant: r.quality for r in rec.ladder}
    q4 = notes["Q4_K_M"]
    assert q4 is not None and q4.ppl_delta == pytest.approx(0.1754) and "quantize.cpp@" in q4.source
    assert notes["IQ3_XXS"] is None  # llama.cpp publishes no perplexity for it: no note
    assert all(q.source for q in catalog.qualities)


def test_training_has_one_rung_and_a_trl_command(catalog: Catalog) -> None:
    h100 = catalog.gpu("nvidia-h100-sxm5")
    assert h100 is not None
    box = simulate(cpu_box(128), [h100])
    rec = recommend(model(catalog, "llama-3.1-8b"), box, "qlora", catalog, context=2048)
    assert len(rec.ladder) == 1 and rec.engine == "transformers"
    cmd = commands_for(rec, box, catalog).commands["transformers"]
    args = shlex.split(cmd)
    assert args[:2] == ["trl", "sft"] and "--load_in_4bit" in args and "--use_peft" in args
    assert args[args.index("--max_length") + 1] == "2048"


# -- words and context -----------------------------------------------------------------------------


def test_where_and_words_follow_the_placement(catalog: Catalog, rtx4090: Machine) -> None:
    oss = model(catalog, "gpt-oss-120b")
    result = fit(oss, rtx4090, Request(), catalog, live=False, advise=False)
    assert where_of(result) == "gpu+ram" and verdict_words(result) == "runs on the GPU + RAM (experts in RAM)"
    huge = fit(model(catalog, "deepseek-v3"), rtx4090, Request(quant="q2_k"), catalog, live=False)
    assert where_of(huge) is None and verdict_words(huge) == "does not fit"


def test_context_beyond_the_trained_maximum_is_refused(catalog: Catalog, rtx4090: Machine) -> None:
    llama = model(catalog, "llama-3.1-8b")
    with pytest.raises(InputError, match="trained maximum of 131,072"):
        check_context(llama, 1_000_000)
    check_context(llama, 1_000_000, rope_scaling=True)
    with pytest.raises(InputError, match="--rope-scaling"):
        recommend(llama, rtx4090, "inference", catalog, context=1_000_000)


def test_cli_refuses_a_context_beyond_the_maximum(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("fit", "llama-3.1-8b", "--machine", str(FIXTURES / "rtx4090-64gb.json"), "--context", "1000000")
    code, _ = run_cli(*args)
    assert code == 2
    assert "trained maximum" in one_error_line(capsys)
    code, _ = run_cli(*args, "--rope-scaling")
    assert code == 0


# -- commands from the placement --------------------------------------------------------------------


def _flag(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


@pytest.mark.parametrize(
    ("machine", "model_id", "context"),
    [
        ("rtx4090-64gb.json", "llama-3.1-70b", 8192),  # layer offload
        ("rtx4090-64gb.json", "gpt-oss-120b", 16384),  # expert offload
        ("two-gpus-128gb.json", "llama-3.3-70b", 8192),  # two GPUs
        ("rtx4090-64gb.json", "llama-3.1-8b", 4096),  # all on one GPU
        ("cpu", "llama-3.1-8b", 8192),  # no GPU
    ],
)
def test_command_flags_match_the_placement(
    catalog: Catalog, machine: str, model_id: str, context: int
) -> None:
    box = cpu_box() if machine == "cpu" else load_machine(FIXTURES / machine)
    rec = recommend(model(catalog, model_id), box, "inference", catalog, context=context)
    assert rec.best is not None
    p = rec.best.result.placement
    cmds = commands_for(rec, box, catalog)
    llama = shlex.split(cmds.commands["llama.cpp"])
    used = [b for b in p.gpu_bytes if b]
    ngl = _flag(llama, "-ngl")
    if not used:
        assert ngl == "0"
    elif p.gpu_layers == p.total_layers:
        assert ngl == str(ALL_LAYERS)
    else:
        assert ngl == str(p.gpu_layers)
    assert _flag(llama, "--n-cpu-moe") == (str(p.cpu_expert_layers) if p.offload == "experts" else None)
    assert _flag(llama, "-c") == str(context)
    assert _flag(llama, "-fa") == "on"
    if len(used) > 1:
        split = _flag(llama, "-ts")
        assert split is not None and len(split.split(",")) == len(p.gpu_bytes)
    else:
        assert "-ts" not in llama
    assert cmds.download_bytes == rec.best.result.estimate.total("weights")
    if "ollama" in cmds.commands:
        ollama = shlex.split(cmds.commands["ollama"])
        fmt, _source, ctx, gpu_layers = ollama[1:5]  # printf FORMAT SOURCE CTX LAYERS > Modelfile
        assert "PARAMETER num_ctx %d" in fmt and "PARAMETER num_gpu %d" in fmt
        layers = 0 if not used else (p.total_layers + 1 if p.gpu_layers == p.total_layers else p.gpu_layers)
        assert (ctx, gpu_layers) == (str(context), str(layers))
    else:
        assert p.offload == "experts" and "ollama" in cmds.notes
    if not used:
        assert "vllm" not in cmds.commands and "vllm" in cmds.notes
    else:
        vllm = shlex.split(cmds.commands["vllm"])
        assert _flag(vllm, "--max-model-len") == str(context)
        tp = _flag(vllm, "--tensor-parallel-size")
        assert tp is None or int(tp) == sum(1 for b in p.gpu_bytes if b) or int(tp) > 1


def test_commands_for_a_gguf_file_and_hostile_paths(
    catalog: Catalog, rtx4090: Machine, tmp_path: Path
) -> None:
    from fakes.gguf_files import write_gguf
    from rigcheck.core.models.resolve import resolve_model

    path = tmp_path / "it's here.gguf"
    write_gguf(path)
    rec = recommend(resolve_model(str(path), catalog), rtx4090, "inference", catalog)
    assert rec.best is not None and [r.quant for r in rec.ladder] == ["Q8_0"]  # the file's own format
    cmds = commands_for(rec, rtx4090, catalog)
    assert shlex.split(cmds.commands["llama.cpp"])[2] == str(path)  # quoted for the shell
    assert shlex.split(cmds.commands["ollama"])[2] == str(path)
    assert "vllm" not in cmds.commands and "vllm" in cmds.notes
    odd = tmp_path / "bad\x1bname.gguf"
    write_gguf(odd)
    rec = recommend(resolve_model(str(odd), catalog), rtx4090, "inference", catalog)
    cmds = commands_for(rec, rtx4090, catalog)
    assert "llama.cpp" not in cmds.commands and "control characters" in cmds.notes["llama.cpp"]


def test_llama_cpp_command_uses_the_catalogs_gguf_repo(catalog: Catalog, rtx4090: Machine) -> None:
    rec = recommend(model(catalog, "qwen3-30b-a3b"), rtx4090, "inference", catalog)
    assert rec.best is not None
    spec = catalog.model("qwen3-30b-a3b")
    assert spec is not None and spec.gguf_repos
    command = llama_cpp_command(rec.best, catalog)
    assert f"-hf {spec.gguf_repos[0]}:{rec.best.quant}" in command
    pinned = Rung("Q4_K_M", "q4_k_m", rec.ladder[-1].result, "gpu")
    assert "-hf" in llama_cpp_command(pinned, catalog)
    # gpt-oss's released MXFP4 GGUF (ggml-org's) is one file: the repository alone, as its guide runs it,
    # however the rung was made (the CLI rebuilds it from the result)
    oss = recommend(model(catalog, "gpt-oss-20b"), rtx4090, "inference", catalog)
    assert oss.best is not None and oss.best.quant_id == "mxfp4"
    rebuilt = Rung(oss.best.quant, None, oss.best.result, oss.best.where)
    for rung in (oss.best, rebuilt):
        assert "-hf ggml-org/gpt-oss-20b-GGUF " in llama_cpp_command(rung, catalog)


def test_the_vllm_command_serves_the_format_asked_for_where_vllm_can(catalog: Catalog) -> None:
    """On a Strix Halo, Ministral 3 14B in BF16 is under 10 tokens/s, so vLLM's own rule picks FP8; asked for
    BF16 (a format vLLM serves, and it fits), the vLLM line serves BF16 like the llama.cpp line beside it.
    Asked for Q4_K_M, which vLLM does not serve, the vLLM line keeps vLLM's own choice."""
    bare = Machine(cpu=CPU(logical_cores=32), memory=Memory(total_bytes=128 * GIB), gpus=())
    strix = simulate(bare, [catalog.gpu("amd-ryzen-ai-max-plus-395-radeon-8060s")], 128)  # type: ignore[list-item]
    ministral = model(catalog, "ministral-3-14b")
    rec = recommend(ministral, strix, "inference", catalog)

    def vllm_for(quant: str) -> list[str]:
        result = fit(ministral, strix, Request(quant=quant), catalog)
        rung = Rung(quant.upper(), quant, result, where_of(result))
        return shlex.split(commands_for(rec, strix, catalog, rung=rung).commands["vllm"])

    assert _flag(vllm_for("bf16"), "--quantization") is None
    assert _flag(vllm_for("q4_k_m"), "--quantization") == "fp8"
    assert _flag(shlex.split(commands_for(rec, strix, catalog).commands["vllm"]), "--quantization") == "fp8"


def test_the_ladder_speaks_speeds_as_the_headline_rounds_them(catalog: Catalog, rtx4090: Machine) -> None:
    """The reasons quote a rung's speed to two significant figures, as the verdict above them does: a
    five-digit training speed reads "~28,000 tokens/s", never "~28,159.3"."""
    import re

    seen = []
    for model_id, workload in (
        ("llama-3.1-8b", "inference"),
        ("qwen3-0.6b", "training"),
        ("llama-3.1-70b", "inference"),
    ):
        rec = recommend(model(catalog, model_id), rtx4090, workload, catalog)
        for sentence in rec.why:
            for figure in re.findall(r"~([\d,.]+) tokens/s", sentence):
                digits = figure.replace(",", "").replace(".", "").strip("0")
                seen.append(figure)
                assert len(digits) <= 2, (model_id, sentence)
    assert seen


def test_quality_notes_use_the_locale_decimal_mark(catalog: Catalog, rtx4090: Machine) -> None:
    """Issue 30 (screenshots): the Fit page's quality column read "-0.0050 di perplessità" in Italian."""
    from rigcheck.core import i18n

    rec = recommend(model(catalog, "llama-3.1-8b"), rtx4090, "inference", catalog)
    q4 = next(r for r in rec.ladder if r.quant == "Q4_K_M")
    assert q4.quality_note().startswith("+0.1754 ")
    i18n.set_language("it")
    try:
        assert q4.quality_note().startswith("+0,1754 di perplessità")
        negative = [r.quality_note() for r in rec.ladder if r.quality and r.quality.ppl_delta < 0]
        assert all(n.startswith("-0,") for n in negative)
    finally:
        i18n.set_language("en")
