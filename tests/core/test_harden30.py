"""Issue 30 (30-harden): today's additions as a hostile user tries them — each bad value is one line naming
the flag or file and the problem, exit 2, never a traceback, a hang or a silently wrong reading."""

from __future__ import annotations

from pathlib import Path

import pytest

from rigcheck.cli import main
from rigcheck.core.engine_builds import parse_build


@pytest.mark.parametrize(
    "text", ["\u0663\u0663", "b\u0668\u0660\u0660\u0660", "\uff18\uff10\uff10\uff10", "b8000\u0663"]
)
def test_a_build_in_other_scripts_digits_is_no_build(text: str) -> None:
    # llama.cpp's release tags are b + ASCII digits; Python's \d also matches Arabic-Indic and full-width
    # digits, which int() then reads as a number: Arabic-Indic 33 became build 33, an estimate for a 2023 build
    with pytest.raises(ValueError, match=r"is not a llama\.cpp build"):
        parse_build(text)


def test_the_cli_says_so_in_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fit", "qwen3-8b", "--machine", "tests/fixtures/machines/rtx4090-64gb.json",
                 "--engine-build", "\u0663\u0663"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--engine-build" in err and "not a llama.cpp build" in err


@pytest.mark.parametrize(
    ("text", "build"), [("b8000", 8000), ("B8000", 8000), (" b8000 ", 8000), ("6096", 6096)]
)
def test_ascii_tags_still_read(text: str, build: int) -> None:
    assert parse_build(text) == build


@pytest.mark.parametrize("text", ["this is [not toml\n", None])
def test_an_overlay_engine_builds_file_is_said_not_overlaid(tmp_path: Path, text: str | None) -> None:
    # engine_builds.toml is read by its own loader and not overlaid (docs/catalog.md): a user's copy, good
    # or broken, used to be parsed as catalog records and skipped as "unknown table [[milestone]]" (or
    # "not valid TOML"), which reads as though RigCheck wanted it fixed; it is skipped, saying why
    from rigcheck.core.catalog import load_catalog

    shipped = Path("catalog/engine_builds.toml").read_text(encoding="utf-8")
    (tmp_path / "engine_builds.toml").write_text(text if text is not None else shipped, encoding="utf-8")
    catalog = load_catalog(tmp_path, use_cache=False)
    (problem,) = catalog.problems
    assert "engine_builds.toml" in problem and "not read from the overlay" in problem
    assert "milestone" not in problem and "TOML" not in problem
    assert "\n" not in problem


def test_lora_targets_a_model_lacks_are_said_in_italian() -> None:
    # the Fit page's "LoRA targets" choice on a model without such modules (Qwen3-30B-A3B's MLPs are all
    # fused routed experts): the page shows the fit's InputError through in_language, which labelled this
    # sentence "(messaggio in inglese)" because it was no known template
    from rigcheck.core import i18n
    from rigcheck.core.catalog import load_catalog
    from rigcheck.core.errors import InputError
    from rigcheck.core.estimate.fit import fit
    from rigcheck.core.estimate.memory import Request
    from rigcheck.core.known_text import in_language
    from rigcheck.core.machine import load_machine
    from rigcheck.core.models.resolve import from_catalog

    catalog = load_catalog(use_overlay=False)
    spec = catalog.model("qwen3-30b-a3b")
    assert spec is not None
    machine = load_machine(Path("tests/fixtures/machines/rtx4090-64gb.json"))
    request = Request(workload="lora", lora_targets=("gate", "up", "down"))
    with pytest.raises(InputError) as caught:
        fit(from_catalog(spec), machine, request, catalog)
    i18n.set_language("it")
    try:
        shown = in_language(str(caught.value))
    finally:
        i18n.set_language("en")
    assert "gate,up,down" in shown and "nessun modulo" in shown
    assert "(messaggio in inglese)" not in shown and "match no module" not in shown


def test_a_qat_ud_format_on_a_model_without_a_qat_repository_names_no_other_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # --quant UD-Q4_K_XL-QAT on Qwen3-8B (no QAT release): the estimate is the QAT layout (Q4_0 throughout),
    # but "Run it" downloaded unsloth/Qwen3-8B-GGUF:UD-Q4_K_XL, Unsloth's ordinary dynamic file, another
    # layout and size than the one estimated; with no QAT repository it names a local file instead
    argv = ["fit", "qwen3-8b", "--machine", "tests/fixtures/machines/rtx4090-64gb.json"]
    assert main([*argv, "--quant", "UD-Q4_K_XL-QAT"]) == 0
    out = capsys.readouterr().out
    (llama,) = [line for line in out.splitlines() if line.strip().startswith("llama.cpp:")]
    assert "-hf" not in llama and "UD-Q4_K_XL-QAT" in llama
    assert main([*argv, "--quant", "UD-Q4_K_XL"]) == 0  # the ordinary UD file still downloads
    out = capsys.readouterr().out
    assert "-hf unsloth/Qwen3-8B-GGUF:UD-Q4_K_XL " in out
