"""The README's headless examples run as written (all but those needing a model file or the network)."""

from __future__ import annotations

import io
import re
import shlex
from pathlib import Path

import pytest

from rigcheck import cli

ROOT = Path(__file__).resolve().parent.parent
NEEDS_OUTSIDE = (
    "./model.gguf",
    "Qwen/",
    "unsloth/",
    "/opt/conda",
    "audits/",
    "--hub ",
)  # other files, the hub, other machines

pytestmark = pytest.mark.slow


def examples() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
    lines = [line.split("#", 1)[0].strip() for block in blocks for line in block.splitlines()]
    return [
        line for line in lines if line.startswith("rigcheck ") and not any(n in line for n in NEEDS_OUTSIDE)
    ]


def test_there_are_examples() -> None:
    assert len(examples()) >= 10


def test_readme_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # `audit -o lab-7.json` writes here, `--machine lab-7.json` reads it back
    for line in examples():
        out = io.StringIO()
        code = cli.main(shlex.split(line)[1:], out=out)
        assert code == 0, line
        assert out.getvalue() or "-o" in line, line
