"""Issue 17: hostile reports, files and outputs — nothing crashes, nothing is clobbered, nothing runs.

Each test names the defect of issue 17 it pins down; every one failed before the fix.
"""

from __future__ import annotations

import io
import json
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from fakes.cli import one_error_line, run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "machines"
BOX = FIXTURES / "rtx4090-64gb.json"
GIB = 1024**3


def snapshot(tmp_path: Path, name: str, change: Any = None, raw: str | None = None) -> Path:
    data = json.loads(BOX.read_text())
    if change is not None:
        change(data)
    path = tmp_path / f"{name}.json"
    path.write_text(raw if raw is not None else json.dumps(data), encoding="utf-8")
    return path


def report_of(tmp_path: Path, name: str, change: Any) -> Path:
    """A rigcheck.report/1 file from the fixture, with ``change`` applied to its machine."""
    code, _ = run_cli(
        "audit",
        "--machine",
        str(BOX),
        "--format",
        "json",
        "--models",
        "qwen3-4b",
        "-o",
        str(tmp_path / "r.json"),
    )
    assert code == 0
    data = json.loads((tmp_path / "r.json").read_text())
    change(data["machine"])
    data["machine"]["host"]["hostname"] = data["machine"]["host"].get("hostname") or name
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    (tmp_path / "r.json").unlink()
    return path


def set_in(path: str, value: Any) -> Any:
    def change(data: dict[str, Any]) -> None:
        *parents, leaf = path.split(".")
        target: Any = data
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(leaf) if leaf.isdigit() else leaf] = value

    return change


HOSTILE = {
    "5000-digit version": (set_in("drivers.nvidia", "5" * 5000), "drivers.nvidia"),
    "1e400 bytes": (set_in("memory.total_bytes", 10**400), "memory.total_bytes"),
    "lone surrogate hostname": (set_in("host.hostname", "node\ud800"), "host.hostname"),
    "escape in a GPU name": (set_in("gpus.0.name", "\x1b]0;pwned\x07RTX\r\nforged row"), "gpus[0].name"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
@pytest.mark.parametrize("command", ["compat", "audit-md", "fit"])
def test_hostile_snapshot_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, command: str
) -> None:
    """#1: the strings that aborted compat and audit --format are one line naming file and field."""
    change, field = HOSTILE[case]
    path = snapshot(tmp_path, "bad", change)
    argv = {
        "compat": ("compat", "--machine", str(path)),
        "audit-md": ("audit", "--machine", str(path), "--format", "markdown", "--models", "qwen3-4b"),
        "fit": ("fit", "qwen3-4b", "--machine", str(path)),
    }[command]
    code, out = run_cli(*argv)
    line = one_error_line(capsys)
    assert code == 2 and out == ""
    assert str(path) in line and field in line


def test_deeply_nested_snapshot_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """#1: a deeply nested JSON was a RecursionError (exit 1)."""
    path = snapshot(
        tmp_path, "deep", raw='{"schema": "rigcheck.machine/1", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    )
    code, _ = run_cli("compat", "--machine", str(path))
    assert code == 2 and "nested" in one_error_line(capsys)
    path = snapshot(
        tmp_path, "deep2", raw='{"schema": "rigcheck.machine/1", "x": ' + "[" * 200 + "]" * 200 + "}"
    )
    code, _ = run_cli("compat", "--machine", str(path))
    assert code == 2 and "nested more than" in one_error_line(capsys)


def test_one_bad_report_never_aborts_a_fleet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """#1: docs/fleet.md promises bad files are listed and skipped; each of these aborted the fleet."""
    folder = tmp_path / "fleet"
    folder.mkdir()
    good = report_of(folder, "good-node", lambda m: None)
    bad = [report_of(folder, f"bad{i}", change) for i, (change, _field) in enumerate(HOSTILE.values())]
    (folder / "deep.json").write_text(
        '{"schema": "rigcheck.report/1", "x": ' + "[" * 50_000 + "]" * 50_000 + "}"
    )
    code, out = run_cli("fleet", str(folder))
    err = capsys.readouterr().err
    assert code == 0, err
    assert "1 machine from 6 files (5 skipped)" in out
    skipped = [line for line in err.splitlines() if line.startswith("rigcheck: warning: skipped ")]
    assert len(skipped) == len(bad) + 1, err
    assert str(good) not in err
    assert "Traceback" not in err and "\x1b" not in err + out and "\ud800" not in err + out


@pytest.mark.parametrize(
    "argv",
    [("fleet", "/dev/zero"), ("audit", "--machine", "/dev/zero"), ("compat", "--machine", "/dev/zero")],
)
def test_endless_files_are_refused_quickly(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    """#1: `fleet /dev/zero` read until MemoryError and `audit --machine /dev/zero` hung."""
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero here")
    code, _ = run_cli(*argv)
    err = capsys.readouterr().err
    assert code == 2 and "/dev/zero: larger than 8 MiB" in err and "Traceback" not in err


def test_oversized_snapshot_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """#10: snapshots had no size cap (150 MB accepted)."""
    data = json.loads(BOX.read_text())
    data["notes"] = [{"probe": "x", "level": "info", "message": "y" * 4000}] * 2500  # ~10 MB
    path = tmp_path / "big.json"
    path.write_text(json.dumps(data))
    code, _ = run_cli("compat", "--machine", str(path))
    assert code == 2 and "larger than 8 MiB" in one_error_line(capsys)


# -- #9: sanity bounds --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (set_in("memory.total_bytes", 0), "memory.total_bytes"),
        (set_in("memory.total_bytes", 10**30), "memory.total_bytes"),
        (set_in("memory.available_bytes", 128 * GIB), "memory.available_bytes"),
        (set_in("cpu.logical_cores", 0), "cpu.logical_cores"),
        (set_in("cpu.logical_cores", 5000), "cpu.logical_cores"),
        (set_in("gpus.0.memory_free_bytes", 48 * GIB), "gpus[0].memory_free_bytes"),
        (set_in("gpus.0.memory_total_bytes", 10**30), "gpus[0].memory_total_bytes"),
        (lambda d: d.__setitem__("gpus", d["gpus"] * 65), "gpus (count)"),
        (set_in("psu", {"watts": 1e-300}), "psu.watts"),
    ],
)
def test_nonsense_machines_are_refused_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any, field: str
) -> None:
    """#9: RAM of 0 bytes got FITS ("keeping 2.0 GiB for the system = -2.0 GiB"); 1e30-byte memories."""
    path = snapshot(tmp_path, "nonsense", change)
    code, out = run_cli("fit", "qwen3-4b", "--machine", str(path))
    line = one_error_line(capsys)
    assert code == 2 and out == ""
    assert str(path) in line and field in line


# -- #8: exit 2 for bad input -------------------------------------------------------------------


def test_unreadable_model_folder_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """#8: a model folder that cannot be read was an internal error (PermissionError, exit 1)."""
    folder = tmp_path / "model"
    folder.mkdir()
    real_is_file = Path.is_file

    def refuse(self: Path) -> bool:
        if self.parent == folder:
            raise PermissionError(13, "Permission denied", str(self))
        return real_is_file(self)

    monkeypatch.setattr(Path, "is_file", refuse)  # as root, chmod 000 would not stop us
    code, _ = run_cli("estimate", str(folder))
    line = one_error_line(capsys)
    assert code == 2 and str(folder) in line and "Permission denied" in line


class _FailingSampler:
    """Samples forever; used to write CSV rows to a file that fails."""

    notes = ()

    def __init__(self) -> None:
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def sample(self) -> Any:
        from rigcheck.core.monitor import Sample

        self.now += 1.0
        return Sample(self.now, 1_795_000_000.0 + self.now, (), 5.0, GIB, 2 * GIB)

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def close(self) -> None:
        pass


def test_monitor_csv_write_failure_is_exit_2_without_half_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """#8: EIO (`--csv /proc/version`) or ENOSPC mid-row was exit 1 and left half a row."""
    from rigcheck.core import fileio, monitor

    monkeypatch.setattr(monitor, "create_sampler", _FailingSampler)
    target = tmp_path / "rows.csv"
    calls = {"n": 0}
    real_write = io.FileIO.write

    class FullDisk(io.FileIO):
        def write(self, data: Any) -> int:
            calls["n"] += 1
            if calls["n"] == 3:  # the third row: half of it goes, then the disk is full
                real_write(self, bytes(data)[: len(data) // 2])
                raise OSError(28, "No space left on device")
            return real_write(self, data)

    real_open = Path.open

    def open_(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        return FullDisk(str(self), "wb") if self == target else real_open(self, mode, *args, **kwargs)

    monkeypatch.setattr(fileio.Path, "open", open_)
    code, _ = run_cli("monitor", "--interval", "1", "--duration", "10", "--csv", str(target))
    line = one_error_line(capsys)
    assert code == 2 and str(target) in line and "No space left" in line
    monkeypatch.undo()
    data = target.read_bytes()
    assert data.endswith(b"\r\n") and data.count(b"\r\n") == 3  # header + 2 whole rows, no half row


@pytest.mark.skipif(not Path("/proc/version").exists(), reason="needs /proc")
def test_monitor_csv_to_proc_is_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """#8: `monitor --csv /proc/version` (EIO or EACCES) was exit 1."""
    from rigcheck.core import monitor

    monkeypatch.setattr(monitor, "create_sampler", _FailingSampler)
    code, _ = run_cli("monitor", "--duration", "3", "--csv", "/proc/version")
    assert code == 2 and "/proc/version" in one_error_line(capsys)


# -- #2: -o writes to what the path names -------------------------------------------------------


def _report_args(output: str) -> tuple[str, ...]:
    return ("audit", "--machine", str(BOX), "--format", "markdown", "--models", "qwen3-4b", "-o", output)


def test_output_keeps_mode_and_hard_links(tmp_path: Path) -> None:
    """#2: a 0600 file became 0644 and hard links broke."""
    target = tmp_path / "report.md"
    target.write_text("old")
    target.chmod(0o600)
    link = tmp_path / "link.md"
    os.link(target, link)
    assert run_cli(*_report_args(str(target)))[0] == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.read_text().startswith("#") and link.read_text() == target.read_text()
    assert target.stat().st_ino == link.stat().st_ino
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.md", "report.md"]


def test_output_through_a_symlink_writes_the_target(tmp_path: Path) -> None:
    """#2: a symlink became a regular file."""
    real = tmp_path / "real.md"
    real.write_text("old")
    link = tmp_path / "via.md"
    link.symlink_to(real)
    assert run_cli(*_report_args(str(link)))[0] == 0
    assert link.is_symlink() and real.read_text().startswith("#")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_output_to_a_fifo_writes_through(tmp_path: Path) -> None:
    """#2: a FIFO (and a device such as /dev/stdout) became a regular file."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    assert run_cli(*_report_args(str(fifo)))[0] == 0
    reader.join(10)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert got and got[0].startswith(b"#")


@pytest.mark.parametrize("name", ["", "  "])
def test_output_empty_name_is_exit_2(capsys: pytest.CaptureFixture[str], name: str) -> None:
    """#2: `-o ""` was an internal error."""
    code, _ = run_cli(*_report_args(name))
    assert code == 2 and "empty file name" in one_error_line(capsys)


def test_output_stays_atomic_for_regular_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """#2: a failure while writing leaves the old file whole and no temporary file behind."""
    target = tmp_path / "report.md"
    target.write_text("precious")

    def crash(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    code, _ = run_cli(*_report_args(str(target)))
    assert code == 2
    assert target.read_text() == "precious" and [p.name for p in tmp_path.iterdir()] == ["report.md"]


# -- #5: the terminal -------------------------------------------------------------------------


def test_terminal_output_escapes_control_characters() -> None:
    """#5: ESC/OSC/BEL/CR and C1 controls from any string were printed raw; JSON stays valid JSON."""
    out = io.StringIO()
    from rigcheck.core.text import SafeStream, one_line, terminal_safe

    stream = SafeStream(out)
    stream.write("name \x1b]0;pwned\x07 \r\x9b2J\u202e\n")
    assert out.getvalue() == "name \\x1b]0;pwned\\x07 \\x0d\\u009b2J\\u202e\n"
    hostile = {"name": "\x9bX\u202e\ud800\x7f"}
    text = terminal_safe(json.dumps(hostile, ensure_ascii=False))
    assert json.loads(text) == hostile and all(ord(c) < 0x7F or ord(c) > 0x9F for c in text)
    assert one_line("a\nb\rc") == "a\\x0ab\\x0dc"


def test_error_lines_stay_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """#5: a newline in a file name or problem never makes a second, forged line on stderr."""
    path = tmp_path / "evil\nrigcheck: error: forged.json"
    path.write_text("{")
    code, _ = run_cli("compat", "--machine", str(path))
    assert code == 2 and "\\x0a" in one_error_line(capsys)


@pytest.mark.skipif(not Path("/dev/stdout").exists(), reason="needs /dev/stdout")
def test_output_to_dev_stdout_on_a_pipe() -> None:
    """#2: `-o /dev/stdout` (a symlink to the pipe the caller reads) is written through, not replaced."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "rigcheck", "audit", "--machine", str(BOX), "-o", "/dev/stdout"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("RigCheck audit of workstation")


@pytest.mark.parametrize("command", ["estimate", "fleet"])
def test_a_name_too_long_for_a_path_is_not_a_crash(capsys: pytest.CaptureFixture[str], command: str) -> None:
    """Found by the fuzz suite: ENAMETOOLONG from Path.exists/is_dir was an internal error (exit 1)."""
    name = "9" * 5000
    argv = ("estimate", name) if command == "estimate" else ("fleet", name, str(FIXTURES))
    code, _ = run_cli(*argv)
    err = capsys.readouterr().err
    assert code in (0, 2) and "internal error" not in err and "Traceback" not in err
    if command == "fleet":
        assert code == 0 and "cannot look at it (File name too long)" in err


def test_a_tilde_name_for_no_such_user_is_not_an_internal_error(capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the fuzz suite: ``estimate '~0'`` raised RuntimeError from Path.expanduser (exit 1)."""
    from fakes.cli import one_error_line, run_cli

    code, _out = run_cli("estimate", "~0")
    assert code == 2
    assert "~0" in one_error_line(capsys)


# -- issue 30 #6: local model files under the caps never cost gigabytes ----------------------------


def test_a_large_config_json_is_refused_at_its_own_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 6 MB config.json was parsed (60 MB took 2.9 GB and 36 s); config.json is capped at 4 MiB."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama", "pad": [' + "0," * 3_000_000 + "0]}")
    code, _ = run_cli("fit", str(folder / "config.json"), "--machine", str(BOX))
    line = one_error_line(capsys)
    assert code == 2 and "config.json: over 4 MiB: not a model's JSON file RigCheck reads" in line


def test_many_safetensors_headers_share_one_cap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Six shards with 30 MB headers took 4.5 GB and 110 s; all the headers of a folder share 64 MiB."""
    import struct

    folder = tmp_path / "model"
    folder.mkdir()
    config = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2}
    config |= {"num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100}
    (folder / "config.json").write_text(json.dumps(config))
    for n in range(1, 4):
        header = json.dumps({"__metadata__": {"pad": "x" * (30 * 2**20)}}).encode()
        (folder / f"model-0000{n}-of-00003.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    code, _ = run_cli("fit", str(folder), "--machine", str(BOX))
    line = one_error_line(capsys)
    assert code == 2 and "the safetensors headers total over 64 MiB (3 shards)" in line, line


# -- issue 30 #4: --measured has the caps every other reader has --------------------------------

BENCH_ROW = (
    '{"model_type": "llama 8B Q4_K - Medium", "model_n_params": 8030261248, "gpu_info": "NVIDIA GeForce '
    'RTX 4090", "backends": "CUDA", "n_gpu_layers": 99, "n_prompt": 0, "n_gen": 128, "avg_ts": AVG}'
)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested more than"),
        ("[" * 40 + BENCH_ROW.replace("AVG", "1") + "]" * 40, "nested more than 32"),
        (BENCH_ROW.replace("AVG", "1" + "0" * 5000), "digits"),
        (BENCH_ROW.replace("AVG", "1e400"), "out of range"),
        (BENCH_ROW.replace("AVG", "NaN"), "NaN is not a number JSON allows"),
        (BENCH_ROW.replace("AVG", "Infinity"), "Infinity is not a number JSON allows"),
        (BENCH_ROW.replace("AVG", "-5"), "avg_ts (a number, 0 or more)"),
    ],
)
def test_measured_file_caps(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    problem: str,
) -> None:
    """Were RecursionError/ValueError/OverflowError internal errors, or NaN/-5 used as the speed (and
    ``fit --json`` printed NaN, which is not JSON)."""
    from fakes.machines import small_machine
    from rigcheck.core import probe

    monkeypatch.setattr(probe, "probe_machine", lambda **_kw: small_machine())
    bench = tmp_path / "bench.json"
    bench.write_text(text)
    code, out = run_cli(
        "fit", "llama-3.1-8b", "--quant", "q4_k_m", "--gpu", "nvidia-geforce-rtx-4090", "--measured", str(bench),
        "--json",
    )  # fmt: skip
    line = one_error_line(capsys)
    assert code == 2 and str(bench) in line and problem in line, line
    assert out == ""


def test_json_output_never_prints_nan() -> None:
    import io

    from rigcheck.cli import _emit_json

    out = io.StringIO()
    _emit_json({"a": float("nan"), "b": [float("inf"), 1.5]}, out)
    assert json.loads(out.getvalue()) == {"a": None, "b": [None, 1.5]}


# -- issue 30 #5 (was #8): redaction that redacts ----------------------------------------------

PLANTED = {
    "uuid": "GPU-5a6b7c8d-1111-2222-3333-444455556666",
    "mig": "MIG-GPU-5a6b7c8d-1111-2222-3333-444455557777/1/0",
    "other_uuid": "gpu-0f0f0f0f-aaaa-bbbb-cccc-ddddeeeeffff",
    "serial": "1652923456789",
    "bus": "00000000:41:00.0",
    "short_bus": "0000:42:00.0",
    "host": "secret-lab-box",
    "HOST": "SECRET-LAB-BOX",
    "home": "/home/ana-secret",
    "mac": "/Users/ana-secret",
    "win": "c:\\users\\ana-secret",
}
#: what must not survive anywhere (the user's name, the ids, the host in any case)
SURVIVORS = ("5a6b7c8d", "0f0f0f0f", "1652923456789", "41:00.0", "42:00.0", "secret-lab-box", "ana-secret")


def planted_machine(tmp_path: Path) -> Path:
    """A snapshot with every kind of identifier in every free-text field (notes, sources, kernel, ...)."""
    text = " ".join(PLANTED.values())
    data = json.loads(BOX.read_text())
    data["host"] |= {"hostname": PLANTED["host"], "kernel": f"Linux {PLANTED['HOST']} 6.8.0 {text}"}
    data["host"]["os_version"] = f"Ubuntu on {PLANTED['HOST']} {text}"
    gpu = data["gpus"][0]
    gpu |= {"uuid": PLANTED["uuid"], "serial": PLANTED["serial"], "pci_bus_id": PLANTED["bus"]}
    gpu["source"] = f"nvml {text}"
    data["notes"] = [{"probe": "gpu", "level": "info", "message": f"note {text}"}]
    for disk in data.get("disks", []):
        disk["path"] = PLANTED["win"] + "\\models"
    data["disks"] = [*data.get("disks", []), {"path": PLANTED["home"] + "/models", "total_bytes": 10**12}]
    data["software"]["executables"] = {"llama-server": {"path": PLANTED["mac"] + "/bin/llama-server"}}
    path = tmp_path / "planted.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ("audit", "--json", "--redact"),
        ("audit", "--format", "json", "--redact"),
        ("audit", "--format", "markdown", "--redact"),
        ("audit", "--format", "html", "--redact"),
    ],
)
def test_redaction_removes_every_planted_identifier(tmp_path: Path, argv: tuple[str, ...]) -> None:
    """22 values survived --json --redact (notes, GPU source, kernel/OS strings); the report form left
    MIG-GPU-<uuid>, an upper-case host name and c:\\users\\<name>."""
    code, out = run_cli(*argv, "--machine", str(planted_machine(tmp_path)))
    assert code == 0
    lowered = out.lower().replace("\\\\", "\\")
    for secret in SURVIVORS:
        assert secret not in lowered, (secret, [line for line in out.splitlines() if secret in line.lower()])
    assert "nvidia" in lowered  # what is not identifying is still there


def test_a_long_gpu_name_round_trips_from_audit_to_fleet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 4096-character GPU name was taken by the snapshot loader, but fleet refused the report that
    `audit --format json` wrote from it (its findings quote the name), and --redact named "<redacted
    report>" instead of the file."""
    data = json.loads(BOX.read_text())
    data["gpus"][0]["name"] = "N" * 4096
    snap = tmp_path / "long.json"
    snap.write_text(json.dumps(data))
    for extra in ((), ("--redact",)):
        report = tmp_path / f"report{len(extra)}.json"
        code, _ = run_cli("audit", "--format", "json", "--machine", str(snap), "-o", str(report), *extra)
        assert code == 0, capsys.readouterr().err
        code, _ = run_cli("fleet", str(report))
        err = capsys.readouterr().err
        assert code == 0 and "skipped" not in err.lower(), err


# -- issue 30 #8 (was #12): catalog overlays ------------------------------------------------------

PLATFORM = """
[[cpu_platform]]
id = "{id}"
name = "Evil"
match = ['{pattern}']
channels = 2
mt_per_s = 3200
source = "https://example.com/evil"
"""


def test_a_catastrophic_cpu_pattern_is_refused(tmp_path: Path) -> None:
    """``^(a+)+$`` ran for minutes against a CPU name; the pattern form is refused, file skipped."""
    from rigcheck.core.catalog import load_catalog
    from rigcheck.core.estimate.speed import cpu_platform

    (tmp_path / "evil.toml").write_text(PLATFORM.format(id="evil", pattern="^(a+)+$"))
    catalog = load_catalog(tmp_path, use_cache=False)
    assert any("a repeated group" in problem for problem in catalog.problems), catalog.problems
    assert "evil" not in {p.id for p in catalog.cpu_platforms}
    assert cpu_platform(catalog, "a" * 5000 + "!") is None  # and answers at once


def test_overlay_size_and_entry_caps(tmp_path: Path) -> None:
    """A 1 GB overlay took 1.9 GB of memory; 40k entries cost 4 s on every command."""
    from rigcheck.core import catalog as catalog_module

    (tmp_path / "a-big.toml").write_text("# " + "x" * (catalog_module.MAX_OVERLAY_FILE_BYTES + 10))
    many = "".join(PLATFORM.format(id=f"p{n}", pattern=f"CPU {n}") for n in range(3000))
    (tmp_path / "b-many.toml").write_text(many)
    (tmp_path / "c-many.toml").write_text(many.replace('id = "p', 'id = "q'))
    catalog = catalog_module.load_catalog(tmp_path, use_cache=False)
    problems = " | ".join(catalog.problems)
    assert "a-big.toml: larger than 1 MiB" in problems, problems
    assert "c-many.toml: the overlay files pass 5,000 entries in all; file skipped" in problems, problems
    ids = {p.id for p in catalog.cpu_platforms}
    assert "p2999" in ids and "q0" not in ids


# -- issue 30 #6 (was #9): a line break in an untrusted string never forges a terminal line -------

FORGED = "\nFORGED verdict: fits\u2028FORGED\x85FORGED\rFORGED"


def _no_forged_line(text: str) -> None:
    for line in text.replace("\r", "\n").replace("\u2028", "\n").replace("\x85", "\n").split("\n"):
        assert not line.startswith("FORGED"), text


def test_untrusted_strings_stay_on_their_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """GGUF architecture, config model_type, file and folder names, fleet file names, snapshot notes,
    overlay GPU names: 13 of 32 cases forged whole lines of output."""
    from fakes.gguf_files import write_gguf

    cases: list[tuple[str, ...]] = []
    gguf = tmp_path / f"model{FORGED}.gguf"
    write_gguf(gguf, arch="llama")
    cases.append(("fit", str(gguf), "--machine", str(BOX)))
    arch_gguf = tmp_path / "arch.gguf"
    write_gguf(arch_gguf, arch=f"llama{FORGED}")
    cases.append(("fit", str(arch_gguf), "--machine", str(BOX)))
    folder = tmp_path / f"folder{FORGED}"
    folder.mkdir()
    config = {"model_type": f"llama{FORGED}", "hidden_size": 64, "intermediate_size": 128}
    config |= {"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100}
    (folder / "config.json").write_text(json.dumps(config))
    cases.append(("fit", str(folder / "config.json"), "--machine", str(BOX)))
    data = json.loads(BOX.read_text())
    data["notes"] = [{"probe": "gpu", "level": "info", "message": f"hello{FORGED}"}]
    noted = tmp_path / "noted.json"
    noted.write_text(json.dumps(data))
    cases.append(("audit", "--machine", str(noted)))
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    data = json.loads(BOX.read_text())
    data["host"]["hostname"] = None
    (fleet / f"node{FORGED}.json").write_text(json.dumps(data))
    cases.append(("fleet", str(fleet)))
    for argv in cases:
        _, out = run_cli(*argv)
        captured = capsys.readouterr()
        _no_forged_line(out)
        _no_forged_line(captured.err)


def test_an_overlay_gpu_name_with_a_line_break_is_refused(tmp_path: Path) -> None:
    from rigcheck.core.catalog import load_catalog

    shipped = (Path(__file__).resolve().parent.parent / "catalog" / "cpu_platforms.toml").read_text()
    (tmp_path / "evil.toml").write_text(
        shipped.replace('name = "AMD EPYC 9004 (Genoa)"', 'name = "A\\nFORGED"')
    )
    catalog = load_catalog(tmp_path, use_cache=False)
    assert any("name: contains the control character \\x0a" in p for p in catalog.problems), catalog.problems


# -- issue 30 #7 (was #11): one writer for -o and the GUI's Save; monitor --csv ----------------------


def test_output_refuses_a_read_only_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`-o` onto a 0444 file in a writable folder replaced it and exited 0, where a shell's > refuses."""
    target = tmp_path / "report.md"
    target.write_text("keep me")
    target.chmod(0o444)
    code, _ = run_cli(*_report_args(str(target)))
    line = one_error_line(capsys)
    assert code == 2 and "a read-only file, not replaced" in line, line
    assert target.read_text() == "keep me" and sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]


def test_gui_save_uses_the_same_writer(tmp_path: Path) -> None:
    """The GUI's Save audit (save_machine) replaced a symlink with a file, widened 0600 to 0644 and
    detached hard links; it now goes through write_output as -o does."""
    from rigcheck.core.machine import load_machine, save_machine

    machine = load_machine(BOX)
    real = tmp_path / "real.json"
    real.write_text("old")
    real.chmod(0o600)
    hard = tmp_path / "hard.json"
    os.link(real, hard)
    link = tmp_path / "via.json"
    link.symlink_to(real)
    save_machine(machine, link)
    assert link.is_symlink() and stat.S_IMODE(real.stat().st_mode) == 0o600
    assert real.stat().st_ino == hard.stat().st_ino and load_machine(hard) == machine
    real.chmod(0o400)
    with pytest.raises(PermissionError):
        save_machine(machine, real)


def test_a_crash_in_a_hard_linked_rewrite_never_mixes_old_and_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kill -9 during the in-place write of a hard-linked -o file left new text over old; now the file
    is emptied first, and the whole new text waits beside it until the write is done."""
    from rigcheck.core import fileio

    target = tmp_path / "out.txt"
    target.write_text("OLD " * 1000)
    os.link(target, tmp_path / "other.txt")
    real_fsync = os.fsync
    calls = {"n": 0}

    def killed(fd: int) -> None:  # the third fsync: after truncating, before the new text is synced
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt  # as close to kill -9 as a test gets: nothing after runs
        real_fsync(fd)

    monkeypatch.setattr(fileio.os, "fsync", killed)
    with pytest.raises(KeyboardInterrupt):
        fileio.write_output(target, "NEW\n")
    left = target.read_text()
    assert "OLD" not in left and "NEW\n".startswith(left)
    spares = [p for p in tmp_path.iterdir() if p.name.endswith(".new")]
    assert len(spares) == 1 and spares[0].read_text() == "NEW\n"


def test_monitor_csv_refuses_to_overwrite_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`monitor --csv` truncated an existing recording without a word."""
    from rigcheck.core import monitor

    monkeypatch.setattr(monitor, "create_sampler", _FailingSampler)
    target = tmp_path / "rows.csv"
    target.write_bytes(b"time,gpu\r\n1,2\r\n")
    code, _ = run_cli("monitor", "--duration", "1", "--csv", str(target))
    assert code == 2 and "already exists: not overwritten (give --force" in one_error_line(capsys)
    assert target.read_bytes() == b"time,gpu\r\n1,2\r\n"
    run_cli("monitor", "--duration", "1", "--csv", str(target), "--force")
    assert target.read_bytes() != b"time,gpu\r\n1,2\r\n"


@pytest.mark.skipif(os.name == "nt", reason="flock")
def test_two_monitors_never_share_a_csv(tmp_path: Path) -> None:
    """Two monitors on one file interleaved rows into a CSV that replay refuses; the second is refused."""
    from rigcheck.core.errors import InputError
    from rigcheck.core.fileio import LineFile

    target = tmp_path / "rows.csv"
    first = LineFile(target)
    first.write("a,b\r\n")
    try:
        with pytest.raises(InputError, match="another rigcheck monitor is writing this file"):
            LineFile(target, force=True)
        assert target.read_bytes() == b"a,b\r\n"
    finally:
        first.close()


# -- issue 30 #8 (was #13): GGUF metadata arrays ----------------------------------------------------


def _raw_gguf(key: bytes, item_type: int, items: bytes, count: int) -> bytes:
    """A GGUF v3 header with no tensors and one metadata array ``key`` of ``count`` items."""
    import struct

    entry = struct.pack("<Q", len(key)) + key + struct.pack("<IIQ", 9, item_type, count) + items
    return b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + entry


def test_nested_gguf_arrays_are_capped(tmp_path: Path) -> None:
    """4M empty nested arrays (48 MB) took 15 s; nested arrays have a cap of their own."""
    import struct

    from rigcheck.core.errors import InputError
    from rigcheck.core.models.files import read_gguf

    path = tmp_path / "nested.gguf"
    path.write_bytes(_raw_gguf(b"evil", 9, struct.pack("<IQ", 4, 0) * 70_000, 70_000))
    with pytest.raises(InputError, match="over 65,536 nested arrays"):
        read_gguf(path)


def test_gguf_array_items_are_capped_across_split_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The item cap was per file, so a split model multiplied it by its part count."""
    import struct

    from rigcheck.core.errors import InputError
    from rigcheck.core.models import files

    monkeypatch.setattr(files.gguf_header, "_MAX_ARRAY_STRINGS", 1000)
    for n in (1, 2):
        part = tmp_path / f"evil-0000{n}-of-00002.gguf"
        part.write_bytes(_raw_gguf(b"tokens", 8, struct.pack("<Q", 0) * 600, 600))
    with pytest.raises(InputError, match=r"over 1,000 items \(the parts of the split model together\)"):
        files.read_gguf(tmp_path / "evil-00001-of-00002.gguf")


# -- issue 30 #8 (was #14): CSV replay --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("time,cpu_percent\n-1e308,1\n1e308,2\n", "is out of range"),
        ('time,cpu_percent\n0,"1\n' + "x\n" * 1000 + '"\n', "a quoted value runs over several lines"),
    ],
)
def test_replay_times_and_multiline_fields_are_bounded(tmp_path: Path, text: str, problem: str) -> None:
    """Times from -1e308 to 1e308 raised OverflowError on the Monitor page; 100 MB of quoted
    multi-line fields took 1.4 GB."""
    from rigcheck.core.errors import InputError
    from rigcheck.core.replay import read_recording

    path = tmp_path / "rec.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=problem) as caught:
        read_recording(path)
    assert str(path) in str(caught.value)
