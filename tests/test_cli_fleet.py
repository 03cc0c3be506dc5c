"""`rigcheck fleet`: formats, one-line errors, and the recipes that collect the reports (docs/fleet.md)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from fakes.cli import one_error_line, run_cli
from fakes.machines import full_machine
from rigcheck.core import probe
from rigcheck.core.machine import load_machine
from rigcheck.core.report.fleet import load_fleet

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "machines"
DOCS = ROOT / "docs" / "fleet.md"
PLAYBOOK = ROOT / "packaging" / "ansible" / "audit.yml"
SLURM = ROOT / "packaging" / "slurm" / "audit-array.sh"


@pytest.fixture
def audits(tmp_path: Path) -> Path:
    """Three reports made by `rigcheck audit --format json` from the fixture snapshots, one broken file."""
    folder = tmp_path / "audits"
    folder.mkdir()
    for fixture in ("rtx4090-64gb", "two-gpus-128gb", "m2-ultra-192gb"):
        code, _ = run_cli(
            "audit",
            "--machine",
            str(FIXTURES / f"{fixture}.json"),
            "--format",
            "json",
            "--models",
            "llama-3.2-1b",
            "--output",
            str(folder / f"{fixture}.json"),
        )
        assert code == 0
    (folder / "broken.json").write_text("{", encoding="utf-8")
    return folder


def test_table_answers_which_nodes_run_a_70b(audits: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_cli("fleet", str(audits), "--model", "llama-3.1-70b")
    assert code == 0
    assert out.startswith("Fleet: 3 machines from 4 files (1 skipped)")
    assert "node" in out and "failing" in out and "RTX 3090 + RTX 4090" in out
    assert "Llama 3.1 70B at each machine's recommended format:" in out
    assert "(Q4_K_M)" in out  # each cell names its format
    assert "runs on the GPUs: 2 of 3:" in out
    assert "runs, too slow to chat (on the GPU + RAM): 1 of 3: workstation" in out
    assert "broken.json: not valid JSON" in out
    err = capsys.readouterr().err
    assert err.count("rigcheck: warning: skipped ") == 1 and "broken.json" in err


def test_without_model_the_reports_verdicts_are_counted(audits: Path) -> None:
    code, out = run_cli("fleet", str(audits / "rtx4090-64gb.json"), str(audits / "two-gpus-128gb.json"))
    assert code == 0
    assert out.startswith("Fleet: 2 machines from 2 files")
    assert "Models judged on every machine" in out and "llama-3.2-1b" in out


def test_json_and_html_and_output_file(audits: Path, tmp_path: Path) -> None:
    code, out = run_cli("fleet", str(audits), "--format", "json", "--model", "llama-3.1-70b,llama-3.2-1b")
    assert code == 0
    data = json.loads(out)
    assert data["schema"] == "rigcheck.fleet/1" and len(data["nodes"]) == 3
    assert [m["model_id"] for m in data["models"]] == ["llama-3.1-70b", "llama-3.2-1b"]
    assert {n["verdict"] for n in data["models"][1]["nodes"]} == {"fits"}
    assert run_cli("fleet", str(audits), "--json")[1] == run_cli("fleet", str(audits), "--format", "json")[1]

    page = tmp_path / "fleet.html"
    code, out = run_cli(
        "fleet",
        str(audits),
        "--format",
        "html",
        "--model",
        "llama-3.1-70b",
        "--quant",
        "q8_0",
        "-o",
        str(page),
    )
    assert code == 0 and out == ""
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "llama-3.1-70b Q8_0" in text


def test_no_path_exists_is_one_line_and_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_cli("fleet", str(tmp_path / "nope"))
    assert code == 2 and out == ""
    line = one_error_line(capsys)
    assert str(tmp_path / "nope") in line and "no such file or folder" in line


def test_nothing_readable_is_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.json").write_text("nope", encoding="utf-8")
    code, _ = run_cli("fleet", str(tmp_path))
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("rigcheck: warning: skipped ") and "bad.json" in err[0]
    assert err[1].startswith("rigcheck: error: ") and "no readable reports (1 files, all skipped)" in err[1]
    assert len(err) == 2


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--model", "llama-9-1t"], "not a catalog model id"),
        (["--model", "llama-3.1-70b", "--quant", "q0_banana"], "unknown quantization"),
        (["--format", "pdf"], "invalid choice"),
        (["--context", "0"], "--context"),
    ],
)
def test_bad_arguments_are_one_line(
    audits: Path, capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    code, _ = run_cli("fleet", str(audits), *args)
    assert code == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if not line.startswith("rigcheck: warning: ")]
    assert len(lines) == 1 and lines[0].startswith("rigcheck: error: ") and expected in lines[0], err


def test_fleet_needs_a_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("fleet")[0] == 2
    assert "PATH" in one_error_line(capsys)


# -- recipes --------------------------------------------------------------------------------------


def test_ssh_recipe_output_feeds_the_fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`ssh host rigcheck audit --format json > host.json`, with the remote side run here."""
    monkeypatch.setattr(probe, "probe_machine", lambda **_kw: full_machine())
    folder = tmp_path / "audits"
    folder.mkdir()
    for host in ("gpu01", "gpu02"):
        code, out = run_cli("audit", "--format", "json")
        assert code == 0
        (folder / f"{host}.json").write_text(out, encoding="utf-8")
    (folder / "gpu03.json").write_text("", encoding="utf-8")  # the host was down
    fleet = load_fleet([folder])
    assert [n.name for n in fleet.nodes] == ["lab-7 (gpu01)", "lab-7 (gpu02)"]
    assert all(n.report is not None and n.report.fits for n in fleet.nodes)
    assert fleet.problems == (f"{folder / 'gpu03.json'}: empty file",)
    assert 'ssh "$host" rigcheck audit --format json > "audits/$host.json"' in DOCS.read_text(
        encoding="utf-8"
    )


def test_docs_show_every_recipe() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for needle in (
        "pdsh -w 'node[01-50]' 'rigcheck audit --format json --output /shared/audits/$(hostname).json'",
        "| dshbak",
        "parallel-ssh -h hosts -o audits/",
        "rigcheck fleet audits/*",
        "ansible-playbook -i inventory.ini packaging/ansible/audit.yml",
        "packaging/slurm/audit-array.sh --submit",
        "sbatch --nodes=8",
    ):
        assert needle in text, needle


def test_ansible_playbook_runs_the_audit_and_fetches_per_host() -> None:
    yaml = pytest.importorskip("yaml")
    (play,) = yaml.safe_load(PLAYBOOK.read_text(encoding="utf-8"))
    assert play["hosts"] == "all"
    tasks = {next(k for k in t if k.startswith("ansible.builtin.")): t for t in play["tasks"]}
    command = tasks["ansible.builtin.command"]["ansible.builtin.command"]
    rendered = command.replace("{{ rigcheck }}", play["vars"]["rigcheck"]).replace(
        "{{ remote_report }}", play["vars"]["remote_report"]
    )
    assert rendered.startswith("rigcheck audit --format json --output /tmp/rigcheck-audit.json")
    fetch = tasks["ansible.builtin.fetch"]["ansible.builtin.fetch"]
    assert fetch["src"] == "{{ remote_report }}" and fetch["flat"] is True
    assert fetch["dest"] == "{{ audit_dir }}/{{ inventory_hostname }}.json"
    assert play["vars"]["audit_dir"].endswith("/audits")


# -- shell recipes run against stand-ins for rigcheck, srun, sbatch, sinfo and pdsh -----------------


def _tool(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/bash\n" + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def fake_bin(tmp_path: Path) -> Path:
    """A PATH folder whose `rigcheck` audits the 4090 fixture snapshot instead of probing."""
    folder = tmp_path / "bin"
    folder.mkdir()
    snapshot = FIXTURES / "rtx4090-64gb.json"
    _tool(
        folder,
        "rigcheck",
        f'exec "{sys.executable}" -m rigcheck "$@" --machine "{snapshot}" --models llama-3.2-1b\n',
    )
    return folder


def _env(fake_bin: Path, **extra: str) -> dict[str, str]:
    return dict(os.environ, PATH=f"{fake_bin}{os.pathsep}{os.environ['PATH']}", **extra)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_slurm_script_is_valid_bash() -> None:
    done = subprocess.run(["bash", "-n", str(SLURM)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    text = SLURM.read_text(encoding="utf-8")
    assert "#SBATCH --ntasks-per-node=1" in text
    assert '--output "$AUDIT_DIR/$(hostname).json"' in text
    assert os.access(SLURM, os.X_OK)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_slurm_script_submits_one_task_per_node_and_each_task_writes_its_report(
    tmp_path: Path, fake_bin: Path
) -> None:
    log = tmp_path / "sbatch.log"
    _tool(fake_bin, "sinfo", 'printf "gpu02\\ngpu01\\ngpu02\\n"\n')
    _tool(fake_bin, "sbatch", f'echo "$*" >> "{log}"; echo 42\n')
    # srun's options dropped; the command runs here, once (a one-node job)
    _tool(fake_bin, "srun", 'while [[ $1 == -* ]]; do shift; done; exec "$@"\n')
    audits = tmp_path / "audits"
    env = _env(fake_bin, AUDIT_DIR=str(audits))

    done = subprocess.run(
        ["bash", str(SLURM), "--submit", "gpu"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "submitted 2 audits (--array=0-1)" in done.stdout
    calls = log.read_text(encoding="utf-8").splitlines()
    assert calls == [
        f"--array=0 --nodelist=gpu01 --nodes=1 --parsable {SLURM}",
        f"--array=1 --nodelist=gpu02 --nodes=1 --parsable {SLURM}",
    ]

    done = subprocess.run(
        ["bash", str(SLURM)], capture_output=True, text=True, env=env | {"SLURM_JOB_NUM_NODES": "1"},
        check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (report,) = audits.glob("*.json")
    assert (
        report.stem == subprocess.run(["hostname"], capture_output=True, text=True, check=True).stdout.strip()
    )
    fleet = load_fleet([audits])
    assert [n.machine for n in fleet.nodes] == [load_machine(FIXTURES / "rtx4090-64gb.json")]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_pdsh_one_line_recipe_splits_into_files_per_host(tmp_path: Path, fake_bin: Path) -> None:
    # pdsh runs the command on each host and prefixes every output line with "host: "
    _tool(fake_bin, "pdsh", 'shift 2; for h in gpu01 gpu02; do bash -c "$1" | sed "s/^/$h: /"; done\n')
    text = DOCS.read_text(encoding="utf-8")
    start = text.index("pdsh -w 'node[01-50]' \"rigcheck audit")
    recipe = text[start : text.index("\n", text.index("done", start))]
    (tmp_path / "audits").mkdir()
    done = subprocess.run(
        ["bash", "-c", recipe], capture_output=True, text=True, env=_env(fake_bin), cwd=tmp_path,
        check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    fleet = load_fleet([tmp_path / "audits"])
    assert sorted(Path(n.path).name for n in fleet.nodes) == ["gpu01.json", "gpu02.json"]
    assert fleet.problems == ()


@pytest.mark.slow
def test_fleet_as_a_subprocess(audits: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rigcheck", "fleet", str(audits), "--model", "llama-3.1-70b"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Llama 3.1 70B at each machine's recommended format:" in done.stdout
    assert done.stderr.count("rigcheck: warning: skipped") == 1
