"""The command line as users and scripts meet it: output, exit statuses, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fakes.cli import one_error_line, run_cli
from fakes.machines import full_machine
from rigcheck import cli
from rigcheck.core import probe
from rigcheck.core.machine import SCHEMA, Machine, load_machine, save_machine


def test_audit_json_is_a_snapshot(fake_probe: list[dict[str, object]]) -> None:
    code, out = run_cli("audit", "--json", "--psu-watts", "850", "--python", sys.executable)
    assert code == 0
    data = json.loads(out)
    assert data["schema"] == SCHEMA
    assert data["psu"] == {"watts": 850.0, "source": "user"}
    assert fake_probe == [{"psu_watts": 850.0, "pythons": (sys.executable,)}]
    assert Machine.from_dict(data) == full_machine().with_psu(850.0)


def test_audit_summary_is_readable(fake_probe: list[dict[str, object]]) -> None:
    code, out = run_cli("audit")
    assert code == 0
    assert "RigCheck audit of lab-7" in out
    assert (
        "NVIDIA GeForce RTX 4090 · 24.0 GiB (22.5 GiB free) · CC 8.9 · 450 W limit (max 600 W) · PCIe 4.0 x16"
        in out
    )
    assert "NVIDIA 550.54.14 (supports CUDA 12.4)" in out
    assert "[info] nvidia: power draw not supported on GPU 1" in out


def test_audit_redact(fake_probe: list[dict[str, object]]) -> None:
    _code, out = run_cli("audit", "--json", "--redact")
    data = json.loads(out)
    assert data["host"]["hostname"] is None
    assert {g["uuid"] for g in data["gpus"]} == {None}
    assert "lab-7" not in out and "GPU-1a2b" not in out and "00000000:01:00.0" not in out


def test_audit_output_file(fake_probe: list[dict[str, object]], tmp_path: Path) -> None:
    target = tmp_path / "audit.json"
    code, out = run_cli("audit", "--json", "--output", str(target))
    assert code == 0 and out == ""
    assert load_machine(target) == full_machine()


def test_audit_output_to_missing_folder(
    fake_probe: list[dict[str, object]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out = run_cli("audit", "--output", str(tmp_path / "no" / "such" / "x.json"))
    assert code == 2
    assert "cannot write" in one_error_line(capsys)


def test_audit_of_a_saved_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "lab7.json"
    save_machine(full_machine(), path)
    code, out = run_cli("audit", "--machine", str(path), "--psu-watts", "1000")
    assert code == 0
    assert "RigCheck audit of lab-7" in out
    assert "PSU       1000 W (user)" in out


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{", "not valid JSON"),
        ('{"schema": "rigcheck.machine/9"}', "unsupported version"),
        (
            '{"schema": "rigcheck.machine/1", "cpu": {"logical_cores": -2}, "memory": {}, "gpus": []}',
            "cpu.logical_cores",
        ),
    ],
)
def test_bad_snapshot_is_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, expected: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out = run_cli("audit", "--machine", str(path))
    assert code == 2 and out == ""
    line = one_error_line(capsys)
    assert str(path) in line and expected in line


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("audit", "--psu-watts", "-5"), "PSU watts must be between"),
        (("audit", "--psu-watts", "lots"), "not a number of watts"),
        (("frobnicate",), "invalid choice"),
        (("audit", "--nope"), "unrecognized arguments"),
        (("audit", "--machine", "x.json", "--python", "/usr/bin/python3"), "cannot be combined"),
    ],
)
def test_usage_errors(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], expected: str) -> None:
    code, _out = run_cli(*argv)
    assert code == 2
    assert expected in one_error_line(capsys)


def test_internal_error_is_one_line_unless_debug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(**_kwargs: object) -> Machine:
        raise RuntimeError("probe exploded")

    monkeypatch.setattr(probe, "probe_machine", broken)
    code, _out = run_cli("audit")
    assert code == 1
    assert "internal error: RuntimeError: probe exploded" in one_error_line(capsys)
    with pytest.raises(RuntimeError):
        run_cli("--debug", "audit")


@pytest.mark.slow
def test_real_audit_json_in_a_subprocess() -> None:
    """The real probe on this machine: whatever it finds is a valid snapshot, and no GPU says why."""
    done = subprocess.run(
        [sys.executable, "-m", "rigcheck", "audit", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    machine = Machine.from_json(done.stdout, "<stdout>")
    assert machine.cpu.logical_cores >= 1
    assert machine.memory.total_bytes > 0
    assert any(d.purpose == "home" for d in machine.disks)
    if not machine.gpus:
        assert any(n.probe == "gpu" and "no GPU found" in n.message for n in machine.notes)
        assert any(n.probe == "nvidia" for n in machine.notes), "the NVML probe must say why it found nothing"


def test_gpus_json_lists_the_whole_catalog(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RIGCHECK_CATALOG_OVERLAY", str(tmp_path))  # no user overlay from this machine
    code, out = run_cli("gpus", "--json")
    assert code == 0
    data = json.loads(out)
    assert len(data["gpus"]) >= 70 and data["problems"] == []
    assert {"id", "vendor", "name", "memory_gb", "source", "confidence"} <= set(data["gpus"][0])
    code, out = run_cli("gpus", "--json", "--vendor", "apple")
    assert {g["vendor"] for g in json.loads(out)["gpus"]} == {"apple"}


def test_gpus_table(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RIGCHECK_CATALOG_OVERLAY", str(tmp_path))
    code, out = run_cli("gpus", "--vendor", "nvidia")
    assert code == 0
    assert out.splitlines()[0].split() == [
        "id",
        "name",
        "memory",
        "GB/s",
        "FP16",
        "TF",
        "arch",
        "W",
        "confidence",
    ]
    assert "GeForce RTX 4090" in out
    assert out.rstrip().endswith("? = not published.")


def test_models_json_and_search(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RIGCHECK_CATALOG_OVERLAY", str(tmp_path))
    code, out = run_cli("models", "--json")
    assert code == 0
    models = json.loads(out)["models"]
    assert len(models) >= 50
    assert all("config" in m and "model_type" in m["config"] for m in models)
    code, out = run_cli("models", "--search", "qwen3")
    assert code == 0
    lines = [line for line in out.splitlines()[2:] if line and not line[0].isdigit()]
    assert lines and all("qwen3" in line.lower() for line in lines)


def test_bad_overlay_file_is_a_warning_not_a_failure(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RIGCHECK_CATALOG_OVERLAY", str(tmp_path))
    (tmp_path / "mine.toml").write_text(
        '[[gpu]]\nid = "my-card"\nvendor = "nvidia"\nname = "X"\nsource = "me"\nmemory_gb = "lots"\n'
    )
    code, out = run_cli("gpus", "--json")
    assert code == 0
    assert json.loads(out)["problems"] == [
        f"{tmp_path / 'mine.toml'}: gpu 'my-card': memory_gb: expected a list, got the string 'lots'; file skipped"
    ]
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"rigcheck: warning: {tmp_path / 'mine.toml'}: gpu 'my-card': memory_gb: expected a list, got the string 'lots'; file skipped"
    ]


@pytest.mark.slow
def test_audit_python_lists_the_target_environments_packages(tmp_path: Path) -> None:
    """End to end: a real venv whose huggingface-hub is 0.20.0, while RigCheck's own is newer."""
    import venv

    target = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(target)
    python = target / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    info = Path(purelib) / "huggingface_hub-0.20.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: huggingface-hub\nVersion: 0.20.0\n")
    done = subprocess.run(
        [sys.executable, "-m", "rigcheck", "audit", "--json", "--python", str(python)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    packages = json.loads(done.stdout)["software"]["python_packages"]
    assert packages == {"huggingface-hub": "0.20.0"}


@pytest.mark.parametrize("bad", ["/no/such/python", "."])
def test_audit_python_that_does_not_exist_is_bad_input(
    bad: str, fake_probe: list[dict[str, object]], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out = run_cli("audit", "--python", bad)
    assert code == 2
    assert f"rigcheck: error: {bad}: --python:" in one_error_line(capsys)
    assert fake_probe == [], "nothing is probed for a bad --python"


def test_debug_works_after_the_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(_args: object, _out: object) -> int:
        raise RuntimeError("boom")

    monkeypatch.setattr(cli, "_cmd_compat", broken)
    code, _out = run_cli("compat")
    assert code == 1
    assert "run with --debug" in one_error_line(capsys)
    for argv in (["--debug", "compat"], ["compat", "--debug"]):
        with pytest.raises(RuntimeError, match="boom"):
            run_cli(*argv)
    assert cli.build_parser().parse_args(["monitor", "--debug", "--duration", "1"]).debug is True
    assert cli.build_parser().parse_args(["--debug", "monitor"]).debug is True
    assert cli.build_parser().parse_args(["monitor"]).debug is False


def test_debug_lets_the_hub_library_talk_for_that_call_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """--debug shows the hub library's retry warnings; a later in-process call without it hides them
    again (the fuzz hub's no-chatter check failed after an earlier test's --debug run)."""
    from rigcheck.core.models import hub

    def quiet(_args: object, _out: object) -> int:
        return 0

    monkeypatch.setattr(cli, "_cmd_compat", quiet)
    monkeypatch.setattr(hub, "SHOW_LIBRARY_LOG", False)
    run_cli("--debug", "compat")
    assert hub.SHOW_LIBRARY_LOG is True
    run_cli("compat")
    assert hub.SHOW_LIBRARY_LOG is False


@pytest.mark.parametrize("command", ["fit", "upgrade", "compat", "audit"])
def test_every_machine_option_reads_a_report(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rigcheck.core.catalog import load_catalog
    from rigcheck.core.report.report import build_report, render_json

    report = tmp_path / "lab-7.report.json"
    report.write_text(render_json(build_report(full_machine(), load_catalog(use_overlay=False), models=[])))
    extra = {"fit": ["llama-3.2-1b"], "upgrade": ["--models", "llama-3.2-1b"]}.get(command, [])
    code, out = run_cli(command, *extra, "--machine", str(report), "--json")
    assert code == 0, capsys.readouterr().err
    data = json.loads(out)
    if command == "audit":
        assert Machine.from_dict(data) == full_machine()
    else:
        assert data
    assert load_machine(report) == full_machine()
