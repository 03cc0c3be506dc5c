"""Reports: building, the rigcheck.report/1 round trip, redaction, escaping, atomic writes, rendering."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from fakes.machines import full_machine, small_machine
from rigcheck.core import fileio
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.compat import Finding, check_compat
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.upgrade import POPULAR_MODELS
from rigcheck.core.fileio import write_atomic
from rigcheck.core.machine import GPU, Machine, Note
from rigcheck.core.report.markdown import md
from rigcheck.core.report.report import (
    REPORT_SCHEMA,
    ModelFit,
    Report,
    build_report,
    load_report,
    redact_report,
    redact_text,
    render_html,
    render_json,
    render_markdown,
    report_from_dict,
    report_to_dict,
)
from rigcheck.core.units import fmt_bytes

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(2)>'
RENDERERS = {"json": render_json, "markdown": render_markdown, "html": render_html}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def report(catalog: Catalog) -> Report:
    return build_report(full_machine(), catalog)


def leaky_machine() -> Machine:
    """full_machine with its identifying values repeated in free text, where only a text scrub finds them."""
    machine = full_machine()
    note = Note(
        "nvidia",
        "warning",
        "GPU 00000000:01:00.0 (GPU-1a2b3c4d-0000-0000-0000-000000000000, serial 1322322000000) on lab-7 "
        "logged to /home/ana/.nv/log; MIG-9f3e0c1a-2b4d-4e6f-8a9b-0c1d2e3f4a5b; C:\\Users\\ana\\AppData",
    )
    gpus = (replace(machine.gpus[0], source="sysfs /sys/bus/pci/devices/0000:03:00.0"), machine.gpus[1])
    return replace(machine, gpus=gpus, notes=(*machine.notes, note))


def hostile_report(catalog: Catalog) -> Report:
    machine = full_machine()
    gpu = replace(machine.gpus[0], name=f"RTX {SCRIPT} {IMG} | x")
    machine = replace(
        machine,
        gpus=(gpu, machine.gpus[1]),
        notes=(Note("gpu", "warning", f"{SCRIPT}{IMG}"),),
        host=replace(machine.host, hostname=f"{IMG}host"),
    )
    built = build_report(machine, catalog, models=["llama-3.1-8b"])
    fit = replace(built.fits[0], name=f"Evil {SCRIPT} | [x](javascript:alert(3))", model_id=f"id{IMG}")
    finding = Finding(
        "pytorch", f"torch {SCRIPT}", 0, "fail", f"reason {IMG}", f"fix {SCRIPT}", None, "pip | x"
    )
    return replace(built, fits=(fit,), findings=(finding, *built.findings))


# -- building ------------------------------------------------------------------------------------


def test_build_report_has_findings_and_popular_model_fits(catalog: Catalog, report: Report) -> None:
    assert report.machine == full_machine()
    assert report.findings == check_compat(full_machine(), catalog)
    assert [f.model_id for f in report.fits] == [m for m in POPULAR_MODELS if catalog.model(m)]
    assert {f.workload for f in report.fits} == {"inference"}
    assert {f.verdict for f in report.fits} <= {"fits", "fits_with_offload", "does_not_fit"}
    llama = next(f for f in report.fits if f.model_id == "llama-3.3-70b")
    assert llama.verdict == "fits" and llama.quant == "Q4_K_M" and llama.decode_tokens_per_s
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", report.created_at)
    assert report.app_version


def test_build_report_with_chosen_models(catalog: Catalog) -> None:
    built = build_report(small_machine(), catalog, models=["LLAMA-3.1-8B", "llama-3.1-8b", "qwen3-4b"])
    assert [f.model_id for f in built.fits] == ["llama-3.1-8b", "qwen3-4b"]
    assert all(f.verdict != "fits" for f in built.fits)  # no GPU: at best offloaded to RAM
    with pytest.raises(InputError, match="nope-9b: not a catalog model id"):
        build_report(small_machine(), catalog, models=["nope-9b"])


# -- JSON ----------------------------------------------------------------------------------------


def test_json_round_trip(report: Report, tmp_path: Path) -> None:
    data = json.loads(render_json(report))
    assert data["schema"] == REPORT_SCHEMA
    assert list(data) == ["schema", "app_version", "created_at", "machine", "findings", "fits"]
    assert data["machine"]["schema"] == "rigcheck.machine/1"
    assert report_from_dict(data, "x.json") == report
    assert report_from_dict(report_to_dict(report), "x") == report
    path = tmp_path / "report.json"
    write_atomic(path, render_json(report))
    assert load_report(path) == report


def _valid() -> dict[str, object]:
    fit = ModelFit("m", "M", "inference", "Q4_K_M", "fits", 12.5, None)
    finding = Finding("bf16", "bf16", 0, "ok", "yes")
    return report_to_dict(Report(small_machine(), (finding,), (fit,), "0.1.0", "2026-11-29T19:00:00Z"))


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d.pop("schema"), 'schema: missing; expected "rigcheck.report/1"'),
        (lambda d: d.update(schema="rigcheck.report/7"), "unsupported version 'rigcheck.report/7'"),
        (lambda d: d.update(schema="rigcheck.machine/1"), "is a machine snapshot, not a report"),
        (lambda d: d.pop("app_version"), "app_version: required field missing"),
        (lambda d: d.update(created_at=5), "created_at: expected a string"),
        (lambda d: d.pop("machine"), "machine: required field missing"),
        (lambda d: d["machine"].update(schema="rigcheck.machine/2"), "machine.schema: expected"),
        (
            lambda d: d["machine"]["cpu"].update(logical_cores=-1),
            "machine.cpu.logical_cores: must not be negative",
        ),
        (lambda d: d["machine"].pop("gpus"), "machine.gpus: required field missing"),
        (lambda d: d.update(findings={}), "findings: expected a list"),
        (lambda d: d["findings"][0].update(status="great"), "findings[0].status: expected one of"),
        (lambda d: d["fits"][0].pop("verdict"), "fits[0].verdict: required field missing"),
        (lambda d: d["fits"][0].update(verdict="maybe"), "fits[0].verdict: expected one of fits"),
        (lambda d: d["fits"][0].update(decode_tokens_per_s="fast"), "fits[0].decode_tokens_per_s: expected"),
    ],
)
def test_from_dict_names_source_and_field(change: object, expected: str) -> None:
    data = _valid()
    assert callable(change)
    change(data)
    with pytest.raises(InputError) as info:
        report_from_dict(data, "lab.json")
    assert str(info.value).startswith("lab.json: ")
    assert expected in str(info.value)


def test_from_dict_refuses_non_objects() -> None:
    with pytest.raises(InputError, match="not a RigCheck report"):
        report_from_dict([1, 2], "list.json")


@pytest.mark.parametrize(
    ("content", "expected"),
    [(None, "no such file"), ("", "empty file"), ("{", "not valid JSON"), ("[]", "not a RigCheck report")],
)
def test_load_report_errors(tmp_path: Path, content: str | None, expected: str) -> None:
    path = tmp_path / "r.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(InputError, match=re.escape(expected)) as info:
        load_report(path)
    assert str(path) in str(info.value)


# -- redaction -----------------------------------------------------------------------------------

SECRETS = (
    "lab-7",
    "1a2b3c4d",
    "GPU-1a2b",
    "1322322000000",
    "00000000:01:00.0",
    "01:00.0",
    "0000:03:00.0",
    "9f3e0c1a",
    "/home/ana",
    "Users\\ana",
    "Users\\\\ana",  # as JSON escapes it
)


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
def test_redaction_leaves_no_identifier_in_any_format(catalog: Catalog, fmt: str) -> None:
    machine = leaky_machine()
    redacted = redact_report(build_report(machine, catalog, models=["llama-3.1-8b"]))
    text = RENDERERS[fmt](redacted)
    for secret in SECRETS:
        assert secret not in text, secret
    assert str(Path.home()) not in text or str(Path.home()) in ("/", "")
    # What is left is still useful, and still a valid report.
    assert "NVIDIA GeForce RTX 4090" in text and "~/.cache/huggingface/hub" in text.replace("\\", "")
    assert "~/.nv/log" in text
    assert redacted.machine.host.hostname is None
    assert {g.uuid for g in redacted.machine.gpus} == {None}
    assert len(redacted.findings) == len(check_compat(machine, catalog))
    assert report_from_dict(json.loads(render_json(redacted)), "r") == redacted


def test_redact_text_keeps_times_and_versions() -> None:
    text = "taken 2026-11-29T19:00:00Z, driver 550.54.14, CUDA 12.4, CC 8.9, 1:00.5 elapsed, /home"
    assert redact_text(text) == text
    assert redact_text("at /root/.cache and /home/bob/x", ()) == "at ~/.cache and ~/x"
    assert redact_text("on lab-7 and lab-70", ("lab-7",)) == "on (redacted) and lab-70"
    # a host name as one part of a hyphenated string (a custom kernel's version) goes too
    assert redact_text("6.8.0-lab7-custom", ("lab7",)) == "6.8.0-(redacted)-custom"


# -- escaping ------------------------------------------------------------------------------------


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [name for name, _value in attrs]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(page: str) -> _Tags:
    parser = _Tags()
    parser.feed(page)
    parser.close()
    return parser


def test_html_escapes_hostile_strings(catalog: Catalog) -> None:
    page = render_html(hostile_report(catalog))
    assert "<script" not in page.lower()
    assert "<img" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&quot;&gt;&lt;img src=x onerror=alert(2)&gt;" in page
    tags = parse(page)
    assert "script" not in tags.tags and "img" not in tags.tags
    assert not any(a.startswith("on") for a in tags.attrs)
    assert "src" not in tags.attrs
    # The text itself survives, as text.
    assert any(SCRIPT in t for t in tags.text)
    assert any(f"Evil {SCRIPT}" in t for t in tags.text)


def test_markdown_escapes_hostile_strings_and_pipes(catalog: Catalog) -> None:
    text = render_markdown(hostile_report(catalog))
    assert "<script" not in text and "<img" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "Evil &lt;script&gt;alert(1)&lt;/script&gt; \\| \\[x\\](javascript:alert(3))" in text
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    models = next(i for i, line in enumerate(rows) if line.startswith("| Model |"))
    for row in rows[models : models + 2]:
        # Six cells: seven pipes that are not escaped.
        assert len(re.findall(r"(?<!\\)\|", row)) == 7, row
    gpus = next(line for line in rows if line.startswith("| 0 |"))
    assert len(re.findall(r"(?<!\\)\|", gpus)) == 8, gpus


def test_md_cell_escaping() -> None:
    assert md("a|b") == "a\\|b"
    assert md("Q4_K_M") == "Q4_K_M"
    assert md("_x_ *y* `z` \\") == "\\_x\\_ \\*y\\* \\`z\\` \\\\"
    assert md("line\nbreak\t<b>&") == "line break &lt;b&gt;&amp;"


# -- HTML ----------------------------------------------------------------------------------------


def test_html_is_self_contained_and_shows_everything(report: Report) -> None:
    page = render_html(report)
    assert page.startswith("<!DOCTYPE html>")
    tags = parse(page)
    assert "script" not in tags.tags and "link" not in tags.tags and "iframe" not in tags.tags
    assert "src" not in tags.attrs
    assert "@import" not in page and "url(" not in page
    assert tags.tags.count("svg") == 2 and "style" in tags.tags
    assert "Content-Security-Policy" in page and "default-src &#x27;none&#x27;" in page
    assert "NVIDIA GeForce RTX 4090" in page and "AMD Radeon RX 7900 XTX" in page
    assert "1.5 GiB used of 24.0 GiB" in page  # the memory bar's words
    assert "✓ runs on the GPU" in page and "◐ runs on the GPU + RAM" in page  # glyph and words, not colour
    assert "llama-server " in page and "-fa on" in page  # the command that runs each
    from rigcheck.core.report.compat import bucket_counts

    counts = bucket_counts(report.findings)
    assert counts and all(words in page for _b, _n, words in counts)  # the text report's counts
    assert "Llama 3.3 70B Instruct" in page and "Q4_K_M" in page
    assert "power draw not supported on GPU 1" in page
    assert "@media print" in page


def test_html_of_a_bare_machine(catalog: Catalog) -> None:
    built = build_report(small_machine(), catalog, models=["qwen3-4b"])
    page = render_html(built)
    assert "No GPU found." in page and "test-box" in page
    assert "No GPU found." in render_markdown(built)
    empty = replace(built, fits=(), findings=())
    assert "No models were checked." in render_html(empty)
    assert "Nothing to check." in render_markdown(empty)


def test_markdown_shows_the_report(report: Report) -> None:
    text = render_markdown(report)
    assert text.startswith("# RigCheck report: lab-7\n")
    for heading in ("## Machine", "## GPUs", "## Models", "## Compatibility", "## Disks", "## Notes"):
        assert f"\n{heading}\n" in text
    assert "| Llama 3.3 70B Instruct | llama-3.3-70b | ✓ runs on the GPU | Q4_K_M |" in text


# -- atomic writes -------------------------------------------------------------------------------


def test_write_atomic_replaces_the_file(tmp_path: Path) -> None:
    target = tmp_path / "r.html"
    target.write_text("old")
    write_atomic(target, "new ✓")
    assert target.read_text(encoding="utf-8") == "new ✓"
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]


@pytest.mark.parametrize("fail_at", ["fsync", "replace"])
def test_write_atomic_failure_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_at: str
) -> None:
    target = tmp_path / "r.json"
    target.write_text("old report")
    seen: list[bytes] = []

    def broken(*args: object) -> None:
        # Midway: the new text is in the temporary file, not yet in place.
        temps = [p for p in tmp_path.iterdir() if p.name != "r.json"]
        seen.extend(p.read_bytes() for p in temps)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fileio.os, fail_at, broken)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, "x" * 100_000)
    monkeypatch.undo()
    assert target.read_text() == "old report"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]
    assert len(seen) == 1 and seen[0].startswith(b"xxx")


def test_write_atomic_interrupted_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "r.md"
    target.write_text("old")
    real_fdopen = os.fdopen

    class Half:
        def __init__(self, fd: int, mode: str) -> None:
            self.file = real_fdopen(fd, mode)

        def __enter__(self) -> Half:
            return self

        def __exit__(self, *exc: object) -> None:
            self.file.close()

        def write(self, data: bytes) -> int:
            self.file.write(data[: len(data) // 2])
            raise KeyboardInterrupt  # even an interrupt leaves no half file behind

    monkeypatch.setattr(fileio.os, "fdopen", Half)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, "new text")
    monkeypatch.undo()
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.md"]


def test_write_atomic_into_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "no" / "r.json", "{}")
    assert [p.name for p in tmp_path.iterdir()] == []


# -- a real browser ------------------------------------------------------------------------------


@pytest.mark.slow
def test_chromium_renders_the_page(report: Report, tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not on PATH (apt-get install chromium; .ci/run installs it as root)")
    page = tmp_path / "report.html"
    write_atomic(page, render_html(report))
    png = tmp_path / "report.png"
    common = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    shot = subprocess.run(
        [*common, f"--screenshot={png}", "--window-size=1280,2000", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert png.exists(), shot.stderr[-2000:]
    assert png.read_bytes().startswith(b"\x89PNG")
    assert png.stat().st_size > 10_000
    dom = subprocess.run(
        [*common, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120, check=False
    )
    assert "NVIDIA GeForce RTX 4090" in dom.stdout, dom.stderr[-2000:]
    assert "<script" not in dom.stdout


def test_renderers_end_with_a_newline(report: Report) -> None:
    for render in RENDERERS.values():
        assert render(report).endswith("\n")


def test_gpu_without_memory_figures(catalog: Catalog) -> None:
    machine = replace(
        small_machine(), gpus=(GPU("apple", "Apple M2 Ultra", None, index=0, unified_memory=True),)
    )
    built = build_report(machine, catalog, models=["qwen3-4b"])
    # a unified GPU of unknown size: its platform's rule on the machine's RAM, the figure the estimates use
    ram = fmt_bytes(machine.memory.total_bytes)
    for text in (render_html(built), render_markdown(built)):
        assert f"of {ram} unified for the GPU (by rule; use unknown)" in text
    # a discrete GPU of unknown size stays unknown
    discrete = replace(machine, gpus=(GPU("nvidia", "NVIDIA GeForce RTX 4090", None, index=0),))
    built = build_report(discrete, catalog, models=["qwen3-4b"])
    assert "by rule" not in render_markdown(built)
