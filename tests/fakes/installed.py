"""Checks shared by the installed-wheel test and the bundle smoke test: every command, every page.

Each check takes ``run(*args)``, which runs one ``rigcheck`` executable (a venv's or a bundle's) from a
throw-away folder and fails the test on a non-zero exit or a traceback.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

from fakes.gguf_files import write_gguf
from rigcheck.cli import GUI_PAGES

Run = Callable[..., CompletedProcess[str]]


def png_text(path: Path) -> dict[str, str]:
    """The tEXt/zTXt chunks of a PNG: the page key the app wrote into each screenshot."""
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n"), f"{path} is not a PNG"
    found, at = {}, 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        if kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            found[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"zTXt":
            key, _, rest = body.partition(b"\0")
            found[key.decode("latin-1")] = zlib.decompress(rest[1:]).decode("latin-1")
        at += 12 + length
    return found


def check_headless_commands(run: Run, work: Path) -> None:
    """--version, audit, fit on a catalog model, estimate on a generated GGUF, monitor, a report reopened."""
    assert run("--version").stdout.startswith("rigcheck ")
    snapshot = json.loads(run("audit", "--json").stdout)
    assert snapshot["schema"] == "rigcheck.machine/1"
    assert json.loads(run("fit", "llama-3.2-1b", "--json").stdout)["verdict"]
    gguf = work / "tiny.gguf"
    model = write_gguf(gguf)
    estimate = json.loads(run("estimate", str(gguf), "--json").stdout)
    weights = [t for t in estimate["terms"] if t["category"] == "weights"]
    assert sum(t["bytes"] for t in weights) == model.total_bytes()
    lines = run("monitor", "--duration", "1", "--interval", "0.5", "--json").stdout.splitlines()
    assert lines and all("cpu_percent" in json.loads(line) for line in lines)
    report = work / "report.json"
    run("audit", "--format", "json", "--models", "llama-3.2-1b", "-o", str(report))
    assert json.loads(run("compat", "--machine", str(report), "--json").stdout)["findings"]
    assert json.loads(run("models", "--json").stdout)["models"]


def check_every_page(run: Run, shots: Path) -> None:
    """``gui --screenshot``: each page written, showing that page (its PNG says so), none blank."""
    done = run("gui", "--screenshot", str(shots))
    written = [Path(line) for line in done.stdout.splitlines()]
    assert [p.stem for p in written] == list(GUI_PAGES)
    assert sorted(p.name for p in shots.iterdir()) == sorted(f"{k}.png" for k in GUI_PAGES), (
        "nothing but the PNGs is left in the folder"
    )
    pictures = set()
    for path in written:
        assert png_text(path).get("rigcheck-page") == path.stem, f"{path.name} shows another page"
        data = path.read_bytes()
        assert len(data) > 20_000, f"{path.name} looks blank"
        pictures.add(data)
    assert len(pictures) == len(written), "two pages rendered the same picture"
    help_text = run("gui", "--help").stdout
    assert all(page in help_text for page in GUI_PAGES)
