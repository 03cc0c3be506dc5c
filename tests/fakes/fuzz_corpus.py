"""Replay the fuzz corpus (``tests/fuzz_corpus`` plus generated cases) with capped memory.

Run by tests/test_fuzz.py in a subprocess: ``python fuzz_corpus.py CORPUS_DIR SCRATCH_DIR``. The address
space is capped at :data:`MEMORY_CAP` first, so a case that reads without bound dies here (a
MemoryError, counted as a failure) instead of exhausting the machine. Writes one result per case to
``$RIGCHECK_CORPUS_REPORT`` as JSON and exits 0; the test asserts on the results.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from pathlib import Path

MEMORY_CAP = 3 * 1024**3
TESTS = Path(__file__).resolve().parent.parent
FIXTURES = TESTS / "fixtures" / "machines"


def _cap_memory() -> None:
    import resource

    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = MEMORY_CAP if hard == resource.RLIM_INFINITY else min(MEMORY_CAP, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _snapshot(**changes: object) -> dict[str, object]:
    data: dict[str, object] = json.loads((FIXTURES / "rtx4090-64gb.json").read_text())
    data.update(changes)
    return data


def generated(scratch: Path) -> dict[str, Path]:
    """Cases too big or too binary to commit, made afresh each run."""
    from fakes.gguf_files import write_gguf

    cases: dict[str, Path] = {}
    snapshot = _snapshot()
    gpu = snapshot["gpus"][0]  # type: ignore[index]
    path = scratch / "snapshot-1000-gpus.json"
    path.write_text(json.dumps(_snapshot(gpus=[dict(gpu, index=i) for i in range(1000)])))
    cases[path.name] = path
    path = scratch / "snapshot-20-MB.json"
    notes = [{"probe": "x", "level": "info", "message": "y" * 4000}] * 5000
    path.write_text(json.dumps(_snapshot(notes=notes)))
    cases[path.name] = path
    cases["snapshot-dev-zero"] = Path("/dev/zero")

    small = scratch / "small.gguf"
    write_gguf(small, layers=1)
    raw = small.read_bytes()
    bomb = scratch / "gguf-tensor-count-bomb.gguf"
    data = bytearray(raw)
    struct.pack_into("<Q", data, 8, 2**40)
    with bomb.open("wb") as handle:
        handle.write(data)
        handle.truncate(13 * 1024**4)  # 13 TB, sparse: no disk is used
    cases[bomb.name] = bomb
    for kind, heads in (("kv-above-heads", 1), ("no-heads", 0)):
        path = scratch / f"gguf-{kind}.gguf"
        write_gguf(path, heads=4, kv_heads=2)
        data = bytearray(path.read_bytes())
        key = b"llama.attention.head_count"
        at = data.index(struct.pack("<Q", len(key)) + key) + 8 + len(key)
        struct.pack_into("<I", data, at + 4, heads)
        path.write_bytes(bytes(data))
        cases[path.name] = path
    folder = scratch / "safetensors-overlap"
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text((TESTS / "fuzz_corpus" / "config-llama.json").read_text())
    header = json.dumps(
        {
            "a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
            "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]},
        }
    ).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + bytes(24))
    cases["safetensors-overlap"] = folder
    return cases


def commands(name: str, path: Path) -> list[tuple[str, list[str], list[str]]]:
    """(command label, argv, names an error must include) for one case."""
    f = str(path)
    if name.startswith(("snapshot-", "report-")):
        return [
            ("compat", ["compat", "--machine", f], [f]),
            (
                "audit --format",
                ["audit", "--machine", f, "--format", "markdown", "--models", "qwen3-4b"],
                [f],
            ),
            ("fit", ["fit", "qwen3-8b", "--machine", f, "--json"], [f]),
            ("fleet", ["fleet", f], [f]),
        ]
    if name.startswith("overlay-"):
        return [("gpus (overlay)", ["gpus", "--json"], [])]
    return [("estimate", ["estimate", f, "--json"], [f])]


def main() -> int:
    corpus, scratch = Path(sys.argv[1]), Path(sys.argv[2])
    sys.path.insert(0, str(TESTS))
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    cases = generated(scratch)  # before the cap: writing the fixtures needs gguf-py and numpy
    _cap_memory()
    from fakes import fuzz

    for path in sorted(corpus.iterdir()):
        if path.name != "README.md":
            cases[path.name] = path
    results: dict[str, dict[str, object]] = {}
    for name, path in sorted(cases.items()):
        if name.startswith("overlay-"):
            folder = scratch / f"overlay-{name}"
            folder.mkdir(exist_ok=True)
            (folder / path.name).write_bytes(path.read_bytes())
            os.environ["RIGCHECK_CATALOG_OVERLAY"] = str(folder)
        for label, argv, names in commands(name, path):
            key = f"{name}: {' '.join(argv[:1])}"
            try:
                outcome = fuzz.check(label, argv, names=names)
                kind = "valid answer (exit 0)" if outcome.code == 0 else "refused, one line (exit 2)"
                if name.startswith("overlay-"):
                    problems = json.loads(outcome.out)["problems"]
                    assert outcome.code == 0 and problems and path.name in problems[0], problems
                results[key] = {
                    "command": label,
                    "kind": kind,
                    "ok": True,
                    "seconds": round(outcome.seconds, 3),
                }
            except (AssertionError, fuzz.Hang, MemoryError) as exc:
                results[key] = {"command": label, "kind": f"{type(exc).__name__} (bug)", "ok": False,
                                "detail": str(exc)[:500]}  # fmt: skip
        os.environ.pop("RIGCHECK_CATALOG_OVERLAY", None)
    Path(os.environ["RIGCHECK_CORPUS_REPORT"]).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
