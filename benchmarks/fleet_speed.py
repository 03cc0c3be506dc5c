"""How fast ``rigcheck fleet`` answers for 50 machines: which run Llama-3.1-70B at Q4_K_M, which drift.

Run: ``.venv/bin/python benchmarks/fleet_speed.py [--keep DIR]``. It writes 50 varied reports
(``build_report`` + ``report_to_dict``, as ``rigcheck audit --format json`` does) and one broken file into
a temporary folder, then times ``rigcheck fleet DIR --model llama-3.1-70b`` in-process and as a
subprocess. Target (from the fleet issue): under a second.

``--scale N`` is the lab-scale check (issue 30): N reports (the 50 above, renamed, repeated), timed as
subprocesses against just parsing the same files (read + ``json.loads``), with each run's peak memory.
Targets: 10,000 reports in at most 15 s on a 2-core machine and at most 300 MiB; the ratio to parsing
is the figure that travels between machines (``--scale 10000`` on the lead's box; ~370 MB of files).
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from rigcheck import cli
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.machine import CPU, Drivers, Host, Machine, Memory, Software
from rigcheck.core.report.report import build_report, report_to_dict
from rigcheck.core.whatif import simulate

GIB = 1024**3
#: (GPU catalog ids, RAM GiB, how many nodes): 50 in all
LAYOUT: tuple[tuple[tuple[str, ...], int, int], ...] = (
    (("nvidia-h100-sxm5",) * 8, 2048, 8),
    (("nvidia-a100-sxm4-80gb",) * 4, 1024, 8),
    (("nvidia-geforce-rtx-4090",) * 2, 128, 10),
    (("nvidia-geforce-rtx-4090",), 64, 10),
    (("nvidia-geforce-rtx-3060",), 32, 6),
    (("nvidia-h100-pcie",), 256, 4),
    (("amd-instinct-mi300x",) * 8, 2048, 2),
    (("apple-m2-ultra",), 192, 2),
)
MAJORITY_DRIVER = ("570.124.04", "12.8")
#: node index → (driver, CUDA): two behind, one ahead
ODD_DRIVERS = {7: ("550.54.14", "12.4"), 23: ("535.183.01", "12.2"), 31: ("575.51.02", "12.9")}


def machines(catalog: Catalog) -> list[Machine]:
    base = Machine(
        cpu=CPU(logical_cores=64, model="AMD EPYC 9354 32-Core Processor", arch="x86_64"),
        memory=Memory(total_bytes=64 * GIB),
        gpus=(),
        taken_at="2026-11-29T12:00:00Z",
    )
    result = []
    index = 0
    for gpu_ids, ram, count in LAYOUT:
        specs = [catalog.gpu(g) for g in gpu_ids]
        assert all(s is not None for s in specs), gpu_ids
        vendor = specs[0].vendor  # type: ignore[union-attr]
        for _ in range(count):
            index += 1
            machine = simulate(base, specs, ram)  # type: ignore[arg-type]
            if vendor == "nvidia":
                driver, cuda = ODD_DRIVERS.get(index, MAJORITY_DRIVER)
                drivers = Drivers(nvidia=driver, cuda_driver=cuda)
                torch = "2.5.1+cu124" if index != 12 else "2.3.0+cu121"
                os_name = ("linux", "Ubuntu 22.04.5 LTS")
            elif vendor == "amd":
                drivers, torch, os_name = (
                    Drivers(rocm="6.2.4"),
                    "2.5.1+rocm6.2",
                    ("linux", "Ubuntu 22.04.5 LTS"),
                )
            else:
                drivers, torch, os_name = Drivers(), "2.5.1", ("macos", "macOS 15.1")
            result.append(
                replace(
                    machine,
                    host=Host(hostname=f"node{index:02d}", os=os_name[0], os_version=os_name[1]),  # type: ignore[arg-type]
                    drivers=drivers,
                    software=Software(python_packages={"torch": torch}),
                )
            )
    return result


def write_fleet(folder: Path, catalog: Catalog) -> int:
    """50 reports and one broken file into ``folder``; returns how many reports."""
    folder.mkdir(parents=True, exist_ok=True)
    nodes = machines(catalog)
    for machine in nodes:
        data = report_to_dict(build_report(machine, catalog))
        (folder / f"{machine.host.hostname}.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    (folder / "node99.json").write_text('{"schema": "rigcheck.report/1", "machine": ', encoding="utf-8")
    return len(nodes)


def write_scaled(folder: Path, catalog: Catalog, count: int) -> None:
    """``count`` reports: the 50 varied ones, each copy with its own host name."""
    folder.mkdir(parents=True, exist_ok=True)
    texts = [report_to_dict(build_report(machine, catalog)) for machine in machines(catalog)]
    for index in range(count):
        data = texts[index % len(texts)]
        data["machine"]["host"]["hostname"] = f"lab{index:05d}"
        # as `audit --format json` writes it (report_json: indent 2, UTF-8 text, not \u escapes)
        (folder / f"lab{index:05d}.json").write_text(
            json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )


#: the baseline: every file read and parsed, nothing kept (as a streaming reader would)
_PARSE_ONLY = (
    "import json, pathlib, sys\n"
    "for p in sorted(pathlib.Path(sys.argv[1]).glob('*.json')):\n"
    "    json.loads(p.read_text(encoding='utf-8'))\n"
)


def timed_child(argv: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak resident MiB of one child process
    (Linux/macOS: ru_maxrss). CPU time is the figure to compare on a busy machine: wall time there
    includes the time other processes held the cores."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    assert done.returncode == 0, done.stderr[-2000:]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak = after.ru_maxrss  # the largest child so far
    return seconds, cpu, peak / (1024 * 1024 if sys.platform == "darwin" else 1024)


def scale(count: int, keep: Path | None, reuse: Path | None = None) -> None:
    catalog = load_catalog(use_overlay=False)
    with tempfile.TemporaryDirectory(prefix="rigcheck-fleet-") as tmp:
        folder = reuse or keep or Path(tmp) / "lab"
        if reuse is not None:
            count = len(list(reuse.glob("*.json")))
            print(f"timing the {count:,} reports already in {folder}")
        else:
            start = time.perf_counter()
            write_scaled(folder, catalog, count)
            print(f"wrote {count:,} reports in {time.perf_counter() - start:.1f} s to {folder}")
        parse_s, parse_cpu, parse_mib = timed_child([sys.executable, "-c", _PARSE_ONLY, str(folder)])
        print(
            f"parsing only (read + json.loads): {parse_s:.1f} s wall, {parse_cpu:.1f} s CPU, "
            f"peak {parse_mib:.0f} MiB"
        )
        for extra in ([], ["--model", "llama-3.1-70b"]):
            seconds, cpu, mib = timed_child([sys.executable, "-m", "rigcheck", "fleet", str(folder), *extra])
            ok = seconds <= 15 * count / 10_000 and mib <= 300
            print(
                f"rigcheck fleet {' '.join(extra) or '(table)'}: {seconds:.1f} s wall = "
                f"{seconds / parse_s:.1f}x parsing; {cpu:.1f} s CPU = {cpu / parse_cpu:.1f}x parsing, "
                f"{cpu / count * 1000:.2f} ms CPU per report; peak {mib:.0f} MiB (max so far) "
                f"[target at 10,000: <= 15 s, <= 300 MiB; scaled: {'ok' if ok else 'MISSED'}]"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keep", type=Path, help="write the reports here and keep them")
    parser.add_argument(
        "--reuse", type=Path, metavar="DIR", help="--scale: time the reports already in DIR (from --keep)"
    )
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--scale", type=int, metavar="N", help="the lab-scale check with N reports")
    args = parser.parse_args()
    if args.scale or args.reuse:
        scale(args.scale or 0, args.keep, args.reuse)
        return
    catalog = load_catalog(use_overlay=False)
    with tempfile.TemporaryDirectory(prefix="rigcheck-fleet-") as tmp:
        folder = args.keep or Path(tmp) / "audits"
        start = time.perf_counter()
        count = write_fleet(folder, catalog)
        print(f"wrote {count} reports + 1 broken file in {time.perf_counter() - start:.1f} s to {folder}")
        argv = ["fleet", str(folder), "--model", "llama-3.1-70b"]

        inproc = []
        for _ in range(args.runs):
            out = io.StringIO()
            start = time.perf_counter()
            code = cli.main(argv, out=out)
            inproc.append((time.perf_counter() - start) * 1000)
            assert code == 0, code
        text = out.getvalue()

        sub = []
        for _ in range(args.runs):
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "rigcheck", *argv], capture_output=True, text=True, check=False
            )
            sub.append((time.perf_counter() - start) * 1000)
            assert done.returncode == 0, done.stderr
        for label, times in (("in-process", inproc), ("subprocess", sub)):
            median = statistics.median(times)
            print(
                f"rigcheck fleet ({count} reports + 1 broken) --model llama-3.1-70b, {label}: "
                f"{median:.0f} ms median of {len(times)} (min {min(times):.0f}, max {max(times):.0f}; "
                f"target < 1000 ms: {'ok' if median < 1000 else 'MISSED'})"
            )
        print()
        print(text)


if __name__ == "__main__":
    main()
