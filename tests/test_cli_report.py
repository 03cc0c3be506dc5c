"""``rigcheck audit --format json|markdown|html``: reports from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.cli import one_error_line, run_cli
from fakes.machines import full_machine
from rigcheck.core.machine import SCHEMA, Machine, save_machine
from rigcheck.core.report.report import REPORT_SCHEMA, load_report


def test_json_report_to_a_file(fake_probe: list[dict[str, object]], tmp_path: Path) -> None:
    target = tmp_path / "lab7.json"
    code, out = run_cli("audit", "--format", "json", "--output", str(target), "--models", "llama-3.1-8b")
    assert code == 0 and out == ""
    report = load_report(target)
    assert report.machine == full_machine()
    assert [f.model_id for f in report.fits] == ["llama-3.1-8b"]
    assert report.findings
    assert json.loads(target.read_text())["schema"] == REPORT_SCHEMA
    assert [p.name for p in tmp_path.iterdir()] == ["lab7.json"]


@pytest.mark.parametrize(
    ("fmt", "start"), [("markdown", "# RigCheck report: lab-7\n"), ("html", "<!DOCTYPE html>")]
)
def test_markdown_and_html_reports(
    fake_probe: list[dict[str, object]], tmp_path: Path, fmt: str, start: str
) -> None:
    target = tmp_path / f"report.{fmt}"
    target.write_text("an older report")
    code, out = run_cli("audit", "--format", fmt, "-o", str(target), "--models", "qwen3-4b", "llama-3.3-70b")
    assert code == 0 and out == ""
    text = target.read_text(encoding="utf-8")
    assert text.startswith(start)
    assert "Qwen3 4B" in text and "Llama 3.3 70B Instruct" in text and "Llama 3.1 8B" not in text
    assert "NVIDIA GeForce RTX 4090" in text


def test_report_to_stdout_with_the_default_models(fake_probe: list[dict[str, object]]) -> None:
    code, out = run_cli("audit", "--format", "markdown", "--psu-watts", "1000")
    assert code == 0
    assert "| Qwen3 235B-A22B | qwen3-235b-a22b |" in out
    assert "1000 W (user)" in out
    assert fake_probe == [{"psu_watts": 1000.0, "pythons": ()}]


def test_report_of_a_saved_snapshot(tmp_path: Path) -> None:
    snapshot = tmp_path / "box.json"
    save_machine(full_machine(), snapshot)
    code, out = run_cli("audit", "--machine", str(snapshot), "--format", "json", "--models", "qwen3-4b")
    assert code == 0
    data = json.loads(out)
    assert data["schema"] == REPORT_SCHEMA and data["machine"]["schema"] == SCHEMA
    assert data["machine"]["host"]["hostname"] == "lab-7"


@pytest.mark.parametrize("fmt", ["json", "markdown", "html"])
def test_redacted_reports(fake_probe: list[dict[str, object]], fmt: str) -> None:
    code, out = run_cli("audit", "--format", fmt, "--redact", "--models", "qwen3-4b")
    assert code == 0
    for secret in ("lab-7", "GPU-1a2b", "1322322000000", "00000000:01:00.0", "/home/ana"):
        assert secret not in out, secret
    assert "NVIDIA GeForce RTX 4090" in out


def test_audit_json_is_still_the_bare_snapshot(fake_probe: list[dict[str, object]]) -> None:
    code, out = run_cli("audit", "--json")
    assert code == 0
    assert Machine.from_json(out) == full_machine()


def test_unknown_model_is_one_line_and_exit_2(
    fake_probe: list[dict[str, object]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "r.html"
    code, out = run_cli("audit", "--format", "html", "-o", str(target), "--models", "qwen3-4b", "llama-9z")
    assert code == 2 and out == ""
    line = one_error_line(capsys)
    assert "llama-9z: not a catalog model id" in line
    assert fake_probe == []  # refused before probing
    assert not target.exists()


@pytest.mark.parametrize("where", ["missing folder", "a folder"])
def test_unwritable_output_is_one_line_and_exit_2(
    fake_probe: list[dict[str, object]], capsys: pytest.CaptureFixture[str], tmp_path: Path, where: str
) -> None:
    target = tmp_path / "no" / "such" / "r.html" if where == "missing folder" else tmp_path
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out = run_cli("audit", "--format", "html", "--output", str(target), "--models", "qwen3-4b")
    assert code == 2 and out == ""
    line = one_error_line(capsys)
    assert str(target) in line and "cannot write" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no temporary file left behind


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("audit", "--format", "pdf"), "invalid choice: 'pdf'"),
        (("audit", "--format", "json", "--json"), "--json and --format cannot be combined"),
        (("audit", "--models", "qwen3-4b"), "--models needs --format"),
        (("audit", "--format", "html", "--models"), "expected at least one argument"),
        (
            ("audit", "--format", "html", "--machine", "x.json", "--python", "/usr/bin/python3"),
            "cannot be combined",
        ),
    ],
)
def test_report_usage_errors(
    fake_probe: list[dict[str, object]],
    capsys: pytest.CaptureFixture[str],
    argv: tuple[str, ...],
    expected: str,
) -> None:
    code, _out = run_cli(*argv)
    assert code == 2
    assert expected in one_error_line(capsys)
    assert fake_probe == []


def test_bad_snapshot_for_a_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"schema": "rigcheck.report/1"}')
    code, _out = run_cli("audit", "--machine", str(path), "--format", "html")
    assert code == 2
    line = one_error_line(capsys)
    assert str(path) in line and "machine: expected the report's machine snapshot" in line
