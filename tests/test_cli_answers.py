"""The command line answers what was asked: every model, the environment named, the counts the text gives."""

from __future__ import annotations

import json
import re
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
    compat_chips = [c for c in chips.split("<li") if "models</li>" not in c]
    assert not any("fail" in c for c in compat_chips)
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


# -- one set of flags ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ("upgrade", "--machine", BOX, "--models", "llama-3.3-70b,qwen3-32b", "--json"),
        ("upgrade", "--machine", BOX, "--models", "llama-3.3-70b", "qwen3-32b", "--json"),
    ],
)
def test_models_space_or_comma_separated(argv: tuple[str, ...]) -> None:
    code, out = run_cli(*argv)
    assert code == 0
    assert [m["model_id"] for m in json.loads(out)["models"]] == ["llama-3.3-70b", "qwen3-32b"]


def test_fleet_models_and_model_alias_agree() -> None:
    _code, a = run_cli("fleet", str(FIXTURES), "--models", "qwen3-32b", "gemma-3-27b", "--json")
    _code, b = run_cli("fleet", str(FIXTURES), "--model", "qwen3-32b", "--model", "gemma-3-27b", "--json")
    _code, c = run_cli("fleet", str(FIXTURES), "--model", "qwen3-32b,gemma-3-27b", "--json")
    assert json.loads(a)["models"] == json.loads(b)["models"] == json.loads(c)["models"]
    assert len(json.loads(a)["models"]) == 2


def test_fit_add_gpu_is_the_upgrade_what_if() -> None:
    """`fit --add-gpu` adds to the machine's GPUs, as `upgrade --add-gpu` does: two 4090s hold a 70B."""
    _code, one = run_cli("fit", "llama-3.3-70b", "--machine", BOX, "--quant", "Q4_K_M", "--json")
    code, two = run_cli(
        "fit", "llama-3.3-70b", "--machine", BOX, "--quant", "Q4_K_M", "--json",
        "--add-gpu", "nvidia-geforce-rtx-4090",
    )  # fmt: skip
    assert code == 0
    assert json.loads(one)["verdict"] == "fits_with_offload"
    assert json.loads(two)["verdict"] == "fits"


def test_upgrade_quant_and_batch_are_used() -> None:
    code, out = run_cli("upgrade", "--machine", BOX, "--models", "qwen3-32b", "--quant", "Q8_0", "--json")
    assert code == 0
    change = json.loads(out)["models"][0]
    assert change["before"]["quant"] == "Q8_0" and change["after"]["quant"] == "Q8_0"
    _code, one = run_cli("upgrade", "--machine", BOX, "--models", "qwen3-8b", "--json")
    _code, many = run_cli("upgrade", "--machine", BOX, "--models", "qwen3-8b", "--batch", "16", "--json")
    tps = [json.loads(o)["models"][0]["before"]["decode_tokens_per_s"] for o in (one, many)]
    assert tps[0] != tps[1]


def test_ram_gb_keeps_a_typed_bandwidth(tmp_path: Path) -> None:
    """`--ram-gb` changes how much RAM, not how fast it is: a bandwidth in the snapshot is kept."""
    from dataclasses import replace

    from rigcheck.core.machine import load_machine, save_machine
    from rigcheck.core.whatif import simulate

    machine = load_machine(BOX)
    fast = replace(machine, memory=replace(machine.memory, bandwidth_bytes_per_s=123 * 10**9))
    after = simulate(fast, None, 128)
    assert after.memory.bandwidth_bytes_per_s == 123 * 10**9
    assert after.memory.total_bytes == 128 * 1024**3
    save_machine(after, tmp_path / "x.json")


def test_every_flag_and_subcommand_has_help() -> None:
    import argparse

    from rigcheck.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helped = {c.dest: c.help for c in sub._choices_actions}
    for name, command in sub.choices.items():
        assert helped.get(name), f"{name} has no help"
        for action in command._actions:
            if action.option_strings or action.dest not in ("help",):
                assert action.help, f"rigcheck {name} {action.option_strings or action.dest} has no help"


def test_unknown_flag_points_to_the_subcommands_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out = run_cli("fit", "qwen3-8b", "--no-such-flag")
    assert code == 2
    err = capsys.readouterr().err
    assert "--no-such-flag" in err and "(see 'rigcheck fit --help')" in err


def test_fleet_of_snapshots_and_of_reports_judge_alike(tmp_path: Path) -> None:
    """Plain `audit --json` snapshots get the models matrix without --models, the same cells a fleet of
    `audit --format json` reports of the same machines shows."""
    reports, snapshots = tmp_path / "reports", tmp_path / "snapshots"
    reports.mkdir()
    snapshots.mkdir()
    for snapshot in sorted(FIXTURES.glob("*.json")):  # the top-level machines (fleet reads sub-folders too)
        code, out = run_cli("audit", "--machine", str(snapshot), "--format", "json")
        assert code == 0
        (reports / snapshot.name).write_text(out)
        (snapshots / snapshot.name).write_bytes(snapshot.read_bytes())
    _code, snaps = run_cli("fleet", str(snapshots), "--json")
    _code, reps = run_cli("fleet", str(reports), "--json")

    def cells(out: str) -> dict[tuple[str, str], tuple[str, str | None]]:
        return {
            (m["model_id"], n["name"]): (n["verdict"], n["quant"])
            for m in json.loads(out)["models"]
            for n in m["nodes"]
        }

    from_snapshots = cells(snaps)
    assert from_snapshots and all(v != "unknown" for v, _q in from_snapshots.values())
    assert from_snapshots == cells(reps)


# -- one vocabulary --------------------------------------------------------------------------------


def test_the_same_placement_reads_the_same_everywhere(tmp_path: Path) -> None:
    """A 70B on a GPU-less box: fit, the Markdown and HTML reports, fleet and upgrade say the same words
    and the same (once rounded) speed; no surface calls it "offload"."""
    from rigcheck.core.verdict_words import speed_text

    _code, fit = run_cli("fit", "llama-3.3-70b", "--machine", CPU_BOX, "--json")
    data = json.loads(fit)
    words, speed = data["words"], speed_text(data["speed"]["decode_tokens_per_s"])
    assert words == "runs, too slow to chat (on the CPU)"
    _code, fit_text = run_cli("fit", "llama-3.3-70b", "--machine", CPU_BOX)
    assert f"{words}, {speed}" in fit_text.splitlines()[0]
    for form in ("markdown", "html"):
        _code, page = run_cli("audit", "--machine", CPU_BOX, "--format", form, "--models", "llama-3.3-70b")
        assert f"◔ {words}" in page and speed in page
        body = page.split("</style>")[-1].split("Compatibility")[0].lower()
        assert "with offload" not in body and "offloaded" not in body
    _code, fleet = run_cli("fleet", CPU_BOX, "--models", "llama-3.3-70b")
    assert f"  {words}: 1 of 1: office-pc" in fleet
    _code, upgrade = run_cli("upgrade", "--machine", CPU_BOX, "--models", "llama-3.3-70b", "--ram-gb", "64")
    assert "offload" not in upgrade.split("Suggestions")[0].lower()


def test_tiers_and_speed_text() -> None:
    from rigcheck.core.verdict_words import placement_words, speed_text

    assert placement_words("cpu", 1.04).speed == "~1 token/s"
    assert placement_words("cpu", 1.04).tier == "slow" and placement_words("cpu", 5.2).tier == "cpu"
    assert placement_words("gpu", 1436.4, workload="qlora").speed == "~1,400 training tokens/s"
    assert placement_words("gpu", 1436.4, workload="qlora").tier == "gpu"  # training is never "chat"
    assert speed_text(None, unknown_why="the GPU has no bandwidth in the catalog") == (
        "speed unknown: the GPU has no bandwidth in the catalog"
    )
    assert placement_words(None, None).label == "✗ does not fit"
    assert placement_words("gpu+ram", 7.44, gpus=2).sentence == "runs on the GPUs + RAM, ~7.4 tokens/s"


# -- advice as a next step -------------------------------------------------------------------------


def test_deepseek_r1_on_a_4090_names_the_distill_and_the_ram() -> None:
    code, out = run_cli("fit", "deepseek-r1", "--machine", BOX, "--json")
    assert code == 0
    advice = json.loads(out)["advice"]
    assert not any("would help" in a for a in advice)  # no generic advice when a step is computed
    sibling = next(a for a in advice if a.startswith("the smaller "))
    assert "DeepSeek-R1-Distill" in sibling and "runs on the GPU" in sibling and "tokens/s" in sibling
    ram = next(a for a in advice if a.startswith("with "))
    assert "GiB of RAM it would run: " in ram and "tokens/s" in ram


def test_qlora_that_does_not_fit_names_the_offload_that_would() -> None:
    # 2,048 tokens: at the default 8,192 the step's logits alone (18 GiB) outgrow the 4090 and 64 GB whatever
    # is offloaded, and the advice rightly names no --offload
    asked = ("fit", "llama-3.3-70b", "--workload", "qlora", "--context", "2048", "--machine", BOX, "--json")
    _code, out = run_cli(*asked)
    advice = json.loads(out)["advice"]
    hint = next(a for a in advice if a.startswith("--offload "))
    mode = hint.split()[1]
    _code, pinned = run_cli(*asked, "--offload", mode)
    assert json.loads(pinned)["verdict"] == "fits_with_offload"  # the hint is what fit then says


# -- exit codes for scripts ------------------------------------------------------------------------


def test_fit_check_exits_1_when_the_model_does_not_run() -> None:
    code, out = run_cli("fit", "deepseek-r1", "--machine", BOX, "--check")
    assert code == 1 and out.startswith("DOES NOT FIT")  # the answer is still printed
    assert run_cli("fit", "deepseek-r1", "--machine", BOX)[0] == 0  # without --check, an answer is 0
    assert run_cli("fit", "qwen3-8b", "--machine", BOX, "--check")[0] == 0


def test_an_unreachable_hub_is_not_bad_input(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from huggingface_hub import close_session

    from core.test_model_hub import free_port, point_client_at

    point_client_at(monkeypatch, f"http://127.0.0.1:{free_port()}", tmp_path / "hf")  # nothing listens
    close_session()
    code, _out = run_cli("estimate", "org/not-cached-anywhere")
    assert code == 3
    assert "cannot reach the hub" in capsys.readouterr().err
    assert run_cli("estimate", "org/bad id!")[0] == 2  # bad input stays 2


# -- units and small untruths ----------------------------------------------------------------------


def test_a_local_gguf_is_on_disk_with_its_own_name_and_size(tmp_path: Path) -> None:
    from fakes.gguf_files import write_gguf

    path = tmp_path / "tiny-test-q8_0.gguf"
    write_gguf(path)
    code, out = run_cli("fit", str(path), "--machine", BOX)
    assert code == 0
    assert "on disk):" in out and "download" not in out.split("Run it")[1].splitlines()[0]
    assert "-q8_0-q8_0" not in out
    _code, text = run_cli("estimate", str(path))
    first = text.splitlines()[0]
    assert "0.00B" not in first and re.search(r"\d(\.\d)?[KM] parameters", first), first


def test_params_text() -> None:
    from rigcheck.core.report.estimate import params_text

    assert params_text(3.4e6) == "3.4M" and params_text(8.03e9) == "8.03B" and params_text(950e3) == "950K"


def test_plurals_and_gib() -> None:
    _code, out = run_cli("fleet", BOX)
    assert out.startswith("Fleet: 1 machine from 1 file\n")
    _code, table = run_cli("gpus", "--vendor", "nvidia")
    assert " GB " not in table and "24 GiB" in table
    _code, upgrade = run_cli(
        "upgrade", "--machine", BOX, "--gpu", "nvidia-geforce-rtx-5090", "--models", "qwen3-8b"
    )
    assert "/GB" not in upgrade and "$/GiB VRAM" in upgrade


def test_fleet_flags_a_server_with_7_of_its_8_gpus(tmp_path: Path) -> None:
    """Three 8 × H100 servers, one with 7 left, and four 4090 boxes: too mixed for the GPU field to have a
    majority, yet the 7-GPU server is flagged by its count."""
    from dataclasses import replace

    from rigcheck.core.machine import load_machine, save_machine

    hgx = load_machine(FIXTURES / "hgx-h100x8-2tb.json")
    box = load_machine(BOX)
    for i in range(3):
        save_machine(replace(hgx, host=replace(hgx.host, hostname=f"hgx-{i}")), tmp_path / f"hgx-{i}.json")
    save_machine(
        replace(hgx, host=replace(hgx.host, hostname="hgx-7"), gpus=hgx.gpus[:7]), tmp_path / "hgx-7.json"
    )
    for i in range(4):
        save_machine(replace(box, host=replace(box.host, hostname=f"ws-{i}")), tmp_path / f"ws-{i}.json")
    _code, out = run_cli("fleet", str(tmp_path))
    assert "gpu_count: 8 × H100 SXM5 80GB on 3 of 4 nodes; smaller: hgx-7 (7 × H100 SXM5 80GB)" in out


def test_a_plurality_is_the_most_common_value_not_the_majority(tmp_path: Path) -> None:
    """torch 2.5.1 on 3 of 8 nodes (one has 2.4.0, four none): "most common", never "majority"."""
    from dataclasses import replace

    from rigcheck.core.machine import load_machine, save_machine

    box = load_machine(BOX)
    torches = ["2.5.1+cu124"] * 3 + ["2.4.0+cu121"] + [None] * 4
    for i, torch in enumerate(torches):
        packages = {"torch": torch} if torch else {}
        machine = replace(
            box,
            host=replace(box.host, hostname=f"n{i}"),
            software=replace(box.software, python_packages=packages),
        )
        save_machine(machine, tmp_path / f"n{i}.json")
    _code, out = run_cli("fleet", str(tmp_path))
    assert "torch: 2.5.1 on 3 of 8 nodes; older: n3 (2.4.0)" in out
    assert "Drift from the fleet's most common values:" in out and "majority" not in out


def test_models_lists_each_release_and_counts_the_newest_year() -> None:
    """`rigcheck models` says when each model came out, so this year's models can be told apart."""
    from rigcheck.core.catalog import load_catalog

    catalog = load_catalog(use_overlay=False)
    code, out = run_cli("models")
    assert code == 0
    header = out.splitlines()[0].split()
    assert "released" in header
    years = [int((m.released or "")[:4] or m.release_year or 0) for m in catalog.models]
    newest = max(years)
    assert f"{years.count(newest)} released in {newest}." in out
    assert years.count(newest) >= 25  # the models of 2026 are in the catalog (issue 24)
