"""The command line answers what was asked: every model, the environment named, the counts the text gives."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from fakes.cli import run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "machines"
BOX = str(FIXTURES / "rtx4090-64gb.json")
CPU_BOX = str(FIXTURES / "cpu-only-32gb.json")
BIG = ("llama-3.3-70b", "qwen2.5-72b", "llama-4-scout-17b-16e", "qwen3-235b-a22b", "gpt-oss-120b")


def test_upgrade_answers_every_model_asked() -> None:
    """Five models that do not fit a 4090: each gets its cheapest GPUs, the fourth and fifth included."""
    code, out = run_cli("upgrade", "--machine", BOX, "--models", *BIG, "--json")
    assert code == 0
    data = json.loads(out)
    answered = {o["model_id"] for o in data["alternatives"]}
    assert answered == set(BIG)
    code, text = run_cli("upgrade", "--machine", BOX, "--models", *BIG)
    assert "no catalog GPU found" not in text
    assert text.count("the cheapest catalog GPUs that hold it") == len(BIG)


def test_upgrade_alone_and_in_company_agree() -> None:
    """A model's options do not depend on the other models asked with it."""
    _code, alone = run_cli("upgrade", "--machine", BOX, "--models", "qwen3-235b-a22b", "--json")
    _code, many = run_cli("upgrade", "--machine", BOX, "--models", *BIG, "--json")

    def options(out: str) -> list[object]:
        return [o for o in json.loads(out)["alternatives"] if o["model_id"] == "qwen3-235b-a22b"]

    assert options(alone) and options(alone) == options(many)


def test_compat_python_checks_that_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`compat --python ENV` probes ENV's packages, as `audit --python` does."""
    from fakes.machines import full_machine
    from rigcheck.core import probe

    calls: list[tuple[str, ...]] = []

    def probe_machine(psu_watts: float | None = None, pythons: tuple[str, ...] = ()) -> object:
        calls.append(pythons)
        return full_machine()

    monkeypatch.setattr(probe, "probe_machine", probe_machine)
    code, _out = run_cli("compat", "--python", sys.executable, "--json")
    assert code == 0
    assert calls == [(sys.executable,)]


def test_compat_python_that_does_not_exist_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out = run_cli("compat", "--python", "/no/such/python")
    assert code == 2
    assert "/no/such/python: --python: no such interpreter" in capsys.readouterr().err


def test_html_badge_counts_what_the_text_counts() -> None:
    """A CPU-only box has CUDA software that cannot run here: n/a, never a red "fail" chip."""
    _code, text = run_cli("compat", "--machine", CPU_BOX)
    counts = text.splitlines()[0].removeprefix("RigCheck compatibility: ").split(", ")
    _code, page = run_cli("audit", "--machine", CPU_BOX, "--format", "html")
    chips = page.split("<ul class='chips'>")[1].split("</ul>")[0]
    assert "fail" not in chips
    for count in counts:
        assert count in chips
    _code, markdown = run_cli("audit", "--machine", CPU_BOX, "--format", "markdown")
    assert ", ".join(counts) in markdown


def test_one_problem_needs_attention() -> None:
    from rigcheck.core.compat import Finding
    from rigcheck.core.report.compat import counts_line

    broken = Finding("torch", "torch 2.5.1+cu124", None, "fail", "needs a newer driver", installed=True)
    assert counts_line([broken]) == "1 needs attention"
    assert counts_line([broken, broken]) == "2 need attention"
