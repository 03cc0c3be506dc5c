"""Issue 30 (30-harden): today's additions as a hostile user tries them — each bad value is one line naming
the flag or file and the problem, exit 2, never a traceback, a hang or a silently wrong reading."""

from __future__ import annotations

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
