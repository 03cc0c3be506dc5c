"""``rigcheck monitor``: human lines, JSON Lines, CSV, --duration, Ctrl-C and bad input.

The sampler is a fake injected through ``rigcheck.core.monitor.create_sampler``; its clock moves one
interval per sample, so the command never really sleeps. One test runs the real command in a
subprocess on this machine.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fakes.cli import one_error_line, run_cli
from rigcheck.core import monitor
from rigcheck.core.machine import Note
from rigcheck.core.monitor import GpuSample, ProcessMemory, Sample

GIB = 1024**3
ROOT = Path(__file__).resolve().parent.parent


class FakeSampler:
    """Samples of an RTX 4090 and a lost second GPU; ``interrupt_after`` ticks, then Ctrl-C."""

    def __init__(self, interval: float = 1.0, interrupt_after: int | None = None) -> None:
        self.now = 5000.0
        self.interval = interval
        self.interrupt_after = interrupt_after
        self.taken = 0
        self.closed = False
        self.notes: tuple[Note, ...] = (Note("nvidia", "info", "GPU 1 (Tesla T4): fan speed not available"),)

    def clock(self) -> float:
        return self.now

    def sample(self) -> Sample:
        if self.interrupt_after is not None and self.taken >= self.interrupt_after:
            raise KeyboardInterrupt
        if self.taken == 2:  # a note that turns up mid-run is told once too
            self.notes = (*self.notes, Note("nvidia", "error", "GPU 1 (Tesla T4) fell off the bus"))
        self.taken += 1
        taken = Sample(
            t=self.now,
            wall=1_795_000_000.0 + self.taken,
            gpus=(
                GpuSample(
                    0,
                    "NVIDIA GeForce RTX 4090",
                    utilization_percent=97.0,
                    memory_used_bytes=int(21.3 * GIB),
                    memory_total_bytes=24 * GIB,
                    power_watts=431.2,
                    power_limit_watts=450.0,
                    temperature_c=71.0,
                    throttle_reasons=("power_cap",),
                    processes=(ProcessMemory(4242, "python3", 20 * GIB),),
                ),
                GpuSample(1, "Tesla T4", lost=self.taken > 2),
            ),
            cpu_percent=12.0,
            ram_used_bytes=int(18.2 * GIB),
            ram_total_bytes=64 * GIB,
        )
        self.now += self.interval
        return taken

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeSampler:
    sampler = FakeSampler()
    monkeypatch.setattr(monitor, "create_sampler", lambda: sampler)
    return sampler


def test_human_lines_for_a_duration(fake: FakeSampler, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_cli("monitor", "--duration", "3")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 3 and fake.taken == 3 and fake.closed
    assert re.fullmatch(r"\d\d:\d\d:\d\d", lines[0][:8])
    assert lines[0][8:] == ("  GPU0 97% 21.3/24.0 GiB 431/450 W 71°C | GPU1 | CPU 12% RAM 18.2/64.0 GiB")
    assert lines[2][8:].startswith("  GPU0 97%") and "| GPU1 lost |" in lines[2]
    assert capsys.readouterr().err.splitlines() == [
        "rigcheck: note: nvidia: GPU 1 (Tesla T4): fan speed not available",
        "rigcheck: note: nvidia: GPU 1 (Tesla T4) fell off the bus",
    ]


def test_json_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(monitor, "create_sampler", lambda: FakeSampler(interval=0.5))
    code, out = run_cli("monitor", "--json", "--duration", "2.5", "--interval", "0.5")
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) == 5  # ceil(2.5 / 0.5)
    first = records[0]
    assert first["time"] == 5000.0 and first["wall"] == 1_795_000_001.0
    assert (first["cpu_percent"], first["ram_total_bytes"]) == (12.0, 64 * GIB)
    assert first["gpus"][0]["name"] == "NVIDIA GeForce RTX 4090"
    assert first["gpus"][0]["power_watts"] == 431.2
    assert first["gpus"][0]["throttle_reasons"] == ["power_cap"]
    assert first["gpus"][0]["processes"] == [{"pid": 4242, "name": "python3", "used_bytes": 20 * GIB}]
    assert first["gpus"][1]["lost"] is False and first["gpus"][1]["temperature_c"] is None
    assert records[4]["gpus"][1]["lost"] is True
    assert [r["time"] for r in records] == [5000.0, 5000.5, 5001.0, 5001.5, 5002.0]


def test_csv_has_the_stable_columns(fake: FakeSampler, tmp_path: Path) -> None:
    path = tmp_path / "run.csv"
    code, out = run_cli("monitor", "--duration", "4", "--csv", str(path))
    assert code == 0 and len(out.splitlines()) == 4  # the human lines still go to stdout
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header = rows[0]
    assert header[:6] == [
        "time",
        "wall",
        "cpu_percent",
        "ram_used_bytes",
        "gpu0_util_percent",
        "gpu0_mem_used_bytes",
    ]
    assert header[-1] == "gpu1_temp_slowdown_c" and len(header) == 4 + 2 * 12
    assert len(rows) == 1 + 4
    values = dict(zip(header, rows[1], strict=True))
    assert values["gpu0_power_w"] == "431.2" and values["gpu0_temp_c"] == "71.0"
    assert values["gpu1_power_w"] == "" and values["ram_used_bytes"] == str(int(18.2 * GIB))


def test_ctrl_c_keeps_every_row_written(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    sampler = FakeSampler(interrupt_after=7)
    monkeypatch.setattr(monitor, "create_sampler", lambda: sampler)
    path = tmp_path / "run.csv"
    code, out = run_cli("monitor", "--interval", "0.1", "--csv", str(path), "--json")
    assert code == 0  # Ctrl-C is the normal end of a run without --duration
    assert sampler.closed
    assert len(out.splitlines()) == 7
    with path.open(newline="", encoding="utf-8") as handle:
        assert len(list(csv.DictReader(handle))) == 7


def test_ctrl_c_before_the_first_sample(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    sampler = FakeSampler(interrupt_after=0)
    monkeypatch.setattr(monitor, "create_sampler", lambda: sampler)
    path = tmp_path / "run.csv"
    assert run_cli("monitor", "--csv", str(path)) == (0, "")
    assert path.read_text() == "" and sampler.closed


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--interval", "0.05"], "argument --interval: must be at least 0.1 seconds, got 0.05"),
        (["--interval", "0"], "argument --interval: must be at least 0.1 seconds, got 0"),
        (["--interval", "fast"], "argument --interval: not a number of seconds: 'fast'"),
        (["--duration", "-1"], "argument --duration: must be above 0, got -1"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    fake: FakeSampler, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out = run_cli("monitor", *args)
    assert (code, out) == (2, "")
    assert message in one_error_line(capsys)
    assert fake.taken == 0


def test_unwritable_csv_is_one_line_and_exit_2(
    fake: FakeSampler, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out = run_cli("monitor", "--csv", str(tmp_path / "no" / "such" / "dir.csv"), "--duration", "1")
    assert (code, out) == (2, "")
    line = one_error_line(capsys)
    assert "dir.csv" in line and "cannot write" in line
    assert fake.taken == 0  # nothing was sampled


@pytest.mark.slow
def test_real_monitor_in_a_subprocess_without_qt() -> None:
    """This machine, for real: a few JSON Lines, notes on stderr, and no Qt module loaded."""
    code = (
        "import sys, runpy\n"
        "sys.argv = ['rigcheck', 'monitor', '--json', '--interval', '0.1', '--duration', '0.3']\n"
        "try:\n"
        "    runpy.run_module('rigcheck', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    leaked = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph')]\n"
        "    print('EXIT', exc.code, 'QT', leaked, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )
    assert "EXIT 0 QT []" in done.stderr, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(records) == 3
    assert all(r["ram_total_bytes"] > 0 and r["cpu_percent"] is not None for r in records)
    assert [r["time"] for r in records] == sorted(r["time"] for r in records)
    for line in done.stderr.splitlines()[:-1]:
        assert line.startswith("rigcheck: note: "), done.stderr
