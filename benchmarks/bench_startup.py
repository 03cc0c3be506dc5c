"""Start-up figures for the headless path: importing the core, and a whole ``rigcheck audit --json``.

Run: ``.venv/bin/python benchmarks/bench_startup.py [--runs N]``. Prints medians and spreads in
milliseconds, each against its target, and the bare interpreter start for reference. Nothing here is
asserted in the test suite: timings belong to this script and BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

CASES = {
    "python -c pass (interpreter alone)": [sys.executable, "-c", "pass"],
    "import rigcheck.core (machine, probe, report)": [
        sys.executable,
        "-c",
        "import rigcheck.core.machine, rigcheck.core.probe, rigcheck.core.report.summary",
    ],
    "import rigcheck.cli": [sys.executable, "-c", "import rigcheck.cli"],
    "rigcheck audit --json": [sys.executable, "-m", "rigcheck", "audit", "--json"],
}

#: targets from the issue: the audit "well under 3 s"
TARGETS_MS = {"rigcheck audit --json": 3000.0}


def measure(command: list[str], runs: int) -> list[float]:
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        timings.append((time.perf_counter() - start) * 1000)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    measure(CASES["rigcheck audit --json"], 1)  # warm the page cache and bytecode
    print(f"{'case':<48}{'median ms':>10}{'min':>8}{'max':>8}  target")
    for name, command in CASES.items():
        timings = measure(command, args.runs)
        target = TARGETS_MS.get(name)
        verdict = (
            f"< {target:.0f} ms: {'ok' if statistics.median(timings) < target else 'MISSED'}"
            if target
            else ""
        )
        median = statistics.median(timings)
        print(f"{name:<48}{median:>10.0f}{min(timings):>8.0f}{max(timings):>8.0f}  {verdict}")


if __name__ == "__main__":
    main()
