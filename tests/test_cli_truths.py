"""Small untruths: the context term names the backend that runs, the RAM sentence's arithmetic is right."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from fakes.cli import run_cli
from fakes.machines import small_machine
from rigcheck.core.estimate.placement.budget import budgets
from rigcheck.core.machine import Memory

FIXTURES = Path(__file__).parent / "fixtures" / "machines"
GIB = 1024**3


def _terms(machine: str) -> list[str]:
    code, out = run_cli(
        "fit", "qwen3-8b", "--machine", str(FIXTURES / machine), "--quant", "Q4_K_M", "--json"
    )
    assert code == 0
    data = json.loads(out)
    return [t["name"] for t in data["estimate"]["terms"]]


def test_cpu_only_estimate_counts_no_cuda_context() -> None:
    names = _terms("cpu-only-32gb.json")
    assert not any("CUDA" in n or "context" in n for n in names), names
    _code, text = run_cli("fit", "qwen3-8b", "--machine", str(FIXTURES / "cpu-only-32gb.json"))
    assert "CUDA context" not in text


@pytest.mark.parametrize(
    ("machine", "backend"), [("rtx4090-64gb.json", "CUDA"), ("m2-ultra-192gb.json", "Metal")]
)
def test_context_named_by_the_backend_that_runs(machine: str, backend: str) -> None:
    assert f"{backend} context and buffers" in _terms(machine)


def _numbers(sentence: str) -> list[float]:
    return [float(x) for x in re.findall(r"(\d+(?:\.\d+)?) GiB", sentence)]


@pytest.mark.parametrize("total_gib", [23.5, 32.0, 7.77, 250.3, 1023.96])
@pytest.mark.parametrize("available_gib", [None, 22.1, 3.0])
def test_ram_sentence_arithmetic_is_visibly_right(total_gib: float, available_gib: float | None) -> None:
    """'22.1 GiB available of 23.5 GiB, keeping 2.4 GiB for the system = 21.2 GiB' read as 23.5 - 2.4 = 21.2."""
    available = int(available_gib * GIB) if available_gib else None
    machine = replace(
        small_machine(), memory=Memory(total_bytes=int(total_gib * GIB), available_bytes=available)
    )
    budget = budgets(machine, live=True)
    sentence = next(r for r in budget.reasons if r.startswith("RAM:"))
    match = re.search(
        r"(\d+(?:\.\d+)?) GiB - (\d+(?:\.\d+)?) GiB kept for the system = (\d+(?:\.\d+)?) GiB", sentence
    )
    assert match, sentence
    total, reserve, rest = (float(g) for g in match.groups())
    assert round(total - reserve, 1) == rest, sentence
    shown_budget = _numbers(sentence)
    assert round(budget.cpu_bytes / GIB, 1) in shown_budget, sentence  # the RAM the estimate uses is stated


# -- audit --json (a snapshot) and audit --format json (a report): fleet reads both, judges them alike ---


def test_fleet_judges_a_snapshot_and_a_report_alike(tmp_path: Path) -> None:
    box = str(FIXTURES / "rtx4090-64gb.json")
    snap, report = tmp_path / "snap", tmp_path / "report"
    snap.mkdir()
    report.mkdir()
    assert run_cli("audit", "--machine", box, "--json", "-o", str(snap / "a.json"))[0] == 0
    assert run_cli("audit", "--machine", box, "--format", "json", "-o", str(report / "a.json"))[0] == 0
    assert json.loads((snap / "a.json").read_text())["schema"] == "rigcheck.machine/1"
    assert json.loads((report / "a.json").read_text())["schema"] == "rigcheck.report/1"
    answers = []
    for folder in (snap, report):
        code, out = run_cli("fleet", str(folder), "--models", "qwen3-32b", "llama-3.3-70b", "--json")
        assert code == 0
        data = json.loads(out)
        assert not data["problems"] and len(data["nodes"]) == 1
        answers.append([[(n["verdict"], n["quant"]) for n in m["nodes"]] for m in data["models"]])
    assert answers[0] == answers[1]
    assert all(v != "unknown" for m in answers[0] for v, _q in m)


def test_audit_help_says_which_json_is_which() -> None:
    import contextlib
    import io

    from rigcheck import cli

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        cli.main(["audit", "--help"])
    text = " ".join(out.getvalue().split())
    assert "rigcheck.machine/1" in text and "rigcheck.report/1" in text
    assert "fleet reads either" in text
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    assert "rigcheck.report/1" in readme and "rigcheck.machine/1" in readme


# -- errors point to the subcommand's help (every flag's help: test_cli_answers) -------------------------------------


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (("fit", "qwen3-8b", "--quant", "Q9"), "fit"),
        (("upgrade", "--models", "qwen3-8b", "--quant", "Q9"), "upgrade"),
        (("fit", "qwen3-8b", "--workload", "lora", "--lora-targets", "bogus"), "fit"),
    ],
)
def test_a_bad_flag_value_points_to_the_subcommands_help(
    argv: tuple[str, ...], command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out = run_cli(*argv, "--machine", str(FIXTURES / "rtx4090-64gb.json"))
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith(f"(see 'rigcheck {command} --help')"), err


# -- fleet takes the what-if flags fit and upgrade take ----------------------------------------------


@pytest.mark.parametrize(
    "whatif",
    [("--add-gpu", "nvidia-geforce-rtx-4090"), ("--gpu", "nvidia-h100-sxm5"), ("--ram-gb", "256")],
)
def test_fleet_whatif_is_fits_whatif(whatif: tuple[str, str]) -> None:
    """Each node of `fleet --add-gpu/--gpu/--ram-gb` reads as `fit` with the same flag on that machine."""
    boxes = [str(FIXTURES / "rtx4090-64gb.json"), str(FIXTURES / "cpu-only-32gb.json")]
    code, out = run_cli("fleet", *boxes, "--models", "llama-3.3-70b", *whatif, "--json")
    assert code == 0, out
    cells = {n["name"]: (n["verdict"], n["quant"]) for n in json.loads(out)["models"][0]["nodes"]}
    _code, plain = run_cli("fleet", *boxes, "--models", "llama-3.3-70b", "--json")
    assert cells != {n["name"]: (n["verdict"], n["quant"]) for n in json.loads(plain)["models"][0]["nodes"]}
    for box in boxes:
        _code, fitted = run_cli("fit", "llama-3.3-70b", "--machine", box, *whatif, "--json")
        data = json.loads(fitted)
        host = json.loads(Path(box).read_text())["host"]["hostname"]
        assert cells[host] == (data["verdict"], data["quant"]), (box, data["verdict"], data["quant"])


def test_fleet_flags_gpus_of_different_models_within_a_node() -> None:
    """lab-2 holds an RTX 3090 beside a 4090: drift by model within a node, in the text and the JSON."""
    _code, text = run_cli("fleet", str(FIXTURES))
    assert "gpu_mix: one GPU model per node on" in text
    assert "lab-2 (RTX 3090 + RTX 4090)" in text
    _code, out = run_cli("fleet", str(FIXTURES), "--json")
    mix = [d for d in json.loads(out)["drift"] if d["field"] == "gpu_mix"]
    assert [[n["name"] for n in d["nodes"]] for d in mix] == [["lab-2"]]
    _code, one = run_cli("fleet", str(FIXTURES / "rtx4090-64gb.json"), str(FIXTURES / "hgx-h100x8-2tb.json"))
    assert "gpu_mix" not in one  # one model per node everywhere: nothing to say


def test_no_drift_claims_no_majority() -> None:
    """A 4090 box and an H100 server share no majority: 'none' must not say every node has the majority's."""
    _code, text = run_cli("fleet", str(FIXTURES / "rtx4090-64gb.json"), str(FIXTURES / "hgx-h100x8-2tb.json"))
    line = next(x for x in text.splitlines() if x.startswith("Drift"))
    assert line.startswith("Drift: none") and "majority" not in line
