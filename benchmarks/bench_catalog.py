"""How long loading the whole shipped catalog takes (target: under 100 ms here).

Run: ``.venv/bin/python benchmarks/bench_catalog.py [--runs N]``. "parse" reads every TOML
file without the cache (what the first start after an install or an edit pays, once); "first load"
is a fresh interpreter loading once with the cache in place; "warm" repeats the load in one process.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from rigcheck.core.catalog import load_catalog

COLD = (
    "import time; t0=time.perf_counter(); from rigcheck.core.catalog import load_catalog; "
    "t1=time.perf_counter(); load_catalog(use_overlay=False); t2=time.perf_counter(); "
    "print((t1-t0)*1000, (t2-t1)*1000)"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    catalog = load_catalog(use_overlay=False)
    counts = {
        "gpus": len(catalog.gpus),
        "models": len(catalog.models),
        "quants": len(catalog.quants) + len(catalog.kv_caches),
        "compat rows": sum(
            len(x)
            for x in (
                catalog.cuda_releases, catalog.cuda_majors, catalog.archs, catalog.torch_releases,
                catalog.torch_variants, catalog.rocm_releases, catalog.frameworks,
            )
        ),
    }  # fmt: skip
    print("entries:", ", ".join(f"{v} {k}" for k, v in counts.items()))
    parse = []
    for _ in range(args.runs):
        start = time.perf_counter()
        load_catalog(use_overlay=False, use_cache=False)
        parse.append((time.perf_counter() - start) * 1000)
    warm = []
    for _ in range(args.runs):
        start = time.perf_counter()
        load_catalog(use_overlay=False)
        warm.append((time.perf_counter() - start) * 1000)
    imports, first = [], []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, "-c", COLD], capture_output=True, text=True, check=True).stdout
        import_ms, load_ms = map(float, out.split())
        imports.append(import_ms)
        first.append(load_ms)
    rows = (
        ("parse every file (no cache)", parse, False),
        ("first load in a new process", first, True),
        ("load again (warm)", warm, True),
        ("importing the loader", imports, False),
    )
    for name, timings, has_target in rows:
        median = statistics.median(timings)
        verdict = ("< 100 ms: " + ("ok" if median < 100 else "MISSED")) if has_target else ""
        print(
            f"{name:<30} median {median:6.1f} ms  min {min(timings):6.1f}  max {max(timings):6.1f}  {verdict}"
        )


if __name__ == "__main__":
    main()
