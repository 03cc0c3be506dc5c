"""The fleet's fast paths agree with the checks they stand in for (issue 30, fleet at lab scale).

``shallow_json`` (depth from the brackets) and ``json_strings_clean`` (strings from the text) may only
say True where the slow walks over the decoded data would pass; the fleet's count of failing findings
from the failing findings alone equals the count over all of them.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from rigcheck.core.errors import InputError
from rigcheck.core.fileio import check_depth, shallow_json
from rigcheck.core.text import json_strings_clean, text_problem

CHARS = [
    "a",
    "\n",
    "\t",
    "\x00",
    "\x1b",
    "\x7f",
    "\x85",
    "\u2028",
    "\u202a",
    "\u2066",
    "\\",
    '"',
    "é",
    "[",
    "{",
]


def _deep(rng: random.Random, depth: int) -> object:
    value: object = rng.choice(['s[\\"{', "plain", "]]}", 3])
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {rng.choice(["k", 'k"[', "k}"]): value}
    return value


@pytest.mark.parametrize("ascii_only", [True, False])
def test_shallow_json_says_true_only_where_the_walk_passes(ascii_only: bool) -> None:
    rng = random.Random(30)  # noqa: S311 - a reproducible test input, not a secret
    for _ in range(1500):
        data = _deep(rng, rng.randint(1, 40))
        text = json.dumps(data, ensure_ascii=ascii_only)
        try:
            check_depth(json.loads(text), "x")
            passes = True
        except InputError:
            passes = False
        assert shallow_json(text) is passes, text  # escaped quotes and backslashes too: exactly


def test_json_strings_clean_says_true_only_where_every_string_passes() -> None:
    rng = random.Random(9)  # noqa: S311 - a reproducible test input, not a secret
    for _ in range(20000):
        value = "".join(rng.choice(CHARS) for _ in range(rng.randint(0, 6)))
        for text in (json.dumps([value, "x"], ensure_ascii=False), json.dumps({value: value})):
            if json_strings_clean(text, 4096):
                assert text_problem(value, 4096) is None, repr(value)
    assert json_strings_clean(json.dumps(["x" * 4096], ensure_ascii=False), 4096)
    assert not json_strings_clean(json.dumps(["x" * 4097], ensure_ascii=False), 4096)
    assert not json_strings_clean(json.dumps(["line\nbreak"], ensure_ascii=False), 4096)
    assert not json_strings_clean(json.dumps(["bidi\u202e"], ensure_ascii=False), 4096)


def test_fleet_counts_failing_findings_as_the_whole_report_does(tmp_path: Path) -> None:
    from rigcheck.core.catalog import load_catalog
    from rigcheck.core.machine import Drivers, load_machine
    from rigcheck.core.report.fleet import _broken, load_fleet
    from rigcheck.core.report.report import build_report, load_report, render_json

    catalog = load_catalog(use_overlay=False)
    fixtures = Path(__file__).resolve().parent.parent / "fixtures" / "machines"
    for name in ("rtx4090-64gb.json", "two-gpus-128gb.json", "hgx-h100x8-2tb.json", "m2-ultra-192gb.json"):
        machine = load_machine(fixtures / name)
        if name == "rtx4090-64gb.json":  # a driver too old for its PyTorch: failing findings to count
            machine = replace(
                machine,
                drivers=Drivers(nvidia="450.51.06", cuda_driver="11.0"),
                software=replace(machine.software, python_packages={"torch": "2.5.1+cu124"}),
            )
        report = build_report(replace(machine, host=replace(machine.host, hostname=name)), catalog)
        (tmp_path / name).write_text(render_json(report), encoding="utf-8")
    fleet = load_fleet([tmp_path], catalog)
    assert len(fleet.nodes) == 4 and not fleet.problems
    for node in fleet.nodes:
        whole = load_report(node.path)
        assert node.failing == sum(1 for f in whole.findings if _broken(f)), node.name
    assert any(node.failing for node in fleet.nodes)  # the check sees failing findings at all


def test_the_fleet_judges_machines_alike_only_when_they_are() -> None:
    """The key that lets identical machines be judged once ignores the name, time and notes only."""
    from rigcheck.core.machine import GPU, load_machine
    from rigcheck.core.report.fleet import _machine_key

    box = load_machine(Path(__file__).resolve().parent.parent / "fixtures" / "machines" / "rtx4090-64gb.json")
    renamed = replace(
        box, host=replace(box.host, hostname="other"), taken_at="2027-01-01T00:00:00Z", notes=()
    )
    assert _machine_key(renamed) == _machine_key(box)
    gpu: GPU = box.gpus[0]
    for changed in (
        replace(box, gpus=(replace(gpu, memory_total_bytes=gpu.memory_total_bytes - 1),)),
        replace(box, memory=replace(box.memory, total_bytes=box.memory.total_bytes * 2)),
        replace(box, host=replace(box.host, os_version="Ubuntu 22.04")),
        replace(box, software=replace(box.software, python_packages={"torch": "2.3.0+cu121"})),
    ):
        assert _machine_key(changed) != _machine_key(box)


def test_the_fast_checks_read_utf8_bytes_as_they_read_text() -> None:
    """The fleet hands the file's bytes (no second encoding); the answers are the text's."""
    rng = random.Random(31)  # noqa: S311 - a reproducible test input, not a secret
    for _ in range(1500):
        data = _deep(rng, rng.randint(1, 40))
        for ascii_only in (True, False):
            text = json.dumps(data, ensure_ascii=ascii_only)
            assert shallow_json(text.encode("utf-8")) == shallow_json(text), text
    for _ in range(3000):
        value = "".join(rng.choice(CHARS) for _ in range(rng.randint(0, 6)))
        text = json.dumps({value: [value, "x"]}, ensure_ascii=False)
        assert json_strings_clean(text.encode("utf-8"), 4096) == json_strings_clean(text, 4096), repr(value)


@pytest.mark.parametrize("pad", [0, 1, 2047, 2048, 2049, 3000, 4095])
def test_a_long_string_is_seen_wherever_it_sits(pad: int) -> None:
    """Strings are probed by aligned chunks; one just over the limit is found at any offset, one at
    the limit passes (ASCII: one byte a character, so the answer is exact)."""
    for length, clean in ((4096, True), (4097, False), (9000, False)):
        text = json.dumps({"pad": "p" * pad, "items": ["a", "x" * length, "b"]})
        assert json_strings_clean(text, 4096) is clean, (pad, length)
        assert json_strings_clean(text.encode(), 4096) is clean, (pad, length)
    # structure alone (many short strings, long runs of numbers) is never taken for a long string...
    assert json_strings_clean(json.dumps([["ab"] * 3000, list(range(3000))]), 4096)
    # ...and a non-ASCII string near the limit in characters is judged by its decoded text instead
    assert not json_strings_clean(json.dumps(["é" * 3000], ensure_ascii=False).encode(), 4096)
    assert text_problem("é" * 3000, 4096) is None  # (which then passes it)


def test_reading_a_report_reads_it_whole_and_refuses_past_the_cap(tmp_path: Path) -> None:
    from rigcheck.core.fileio import read_bytes_limited

    path = tmp_path / "r.json"
    for size in (0, 1, 4096, 100_000):
        path.write_bytes(b"x" * size)
        assert read_bytes_limited(path, "report", limit=100_000) == b"x" * size
    path.write_bytes(b"x" * 100_001)
    with pytest.raises(InputError, match="larger than"):
        read_bytes_limited(path, "report", limit=100_000)


def test_reading_a_fleet_pauses_garbage_collection_and_restores_it(tmp_path: Path) -> None:
    import gc

    from rigcheck.core.report.fleet import load_fleet, paused_gc

    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    seen = []
    assert gc.isenabled()
    fleet = load_fleet([tmp_path], steps=lambda done, total: seen.append(gc.isenabled()))
    assert seen == [False] and fleet.problems and gc.isenabled()
    with pytest.raises(ZeroDivisionError), paused_gc():
        1 / 0  # noqa: B018 - an error inside: collection comes back all the same
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()


def test_a_large_fleet_is_kept_out_of_later_collections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read with collection paused, a lab's records are then frozen (the next collections would walk
    them all, holding the GIL for hundreds of ms); a small fleet is left to the collector."""
    import gc

    from rigcheck.core.catalog import load_catalog
    from rigcheck.core.machine import load_machine
    from rigcheck.core.report import fleet as fleet_module
    from rigcheck.core.report.report import build_report, render_json

    catalog = load_catalog(use_overlay=False)
    box = load_machine(Path(__file__).resolve().parent.parent / "fixtures" / "machines" / "rtx4090-64gb.json")
    text = render_json(build_report(box, catalog))
    for n in range(3):
        (tmp_path / f"n{n}.json").write_text(text, encoding="utf-8")
    before = gc.get_freeze_count()
    small = fleet_module.load_fleet([tmp_path], catalog)
    assert len(small.nodes) == 3 and gc.get_freeze_count() == before
    monkeypatch.setattr(fleet_module, "FREEZE_NODES", 3)
    try:
        large = fleet_module.load_fleet([tmp_path], catalog)
        assert len(large.nodes) == 3 and gc.get_freeze_count() > before
        assert not gc.is_tracked(large) or all(large is not o for o in gc.get_objects())
    finally:
        gc.unfreeze()


def test_quotes_and_backslashes_escaped_in_strings_keep_the_fast_path() -> None:
    """``pip install \"unsloth[amd]\"`` in a finding's command: still judged from the text, exactly."""
    from rigcheck.core.text import quotes_unescaped

    command = 'pip install "unsloth[amd] @ git+https://x/y" && C:\\Users\\{x}\\'
    text = json.dumps({"fix": command, "list": [command, "]}\\"]})
    assert "\\" in text and shallow_json(text) and json_strings_clean(text, 4096)
    assert quotes_unescaped(b'"a\\"b\\\\"') == b'"axbx"'  # \" is a quote's escape, \\ a backslash's
    assert not json_strings_clean(json.dumps(["tab\there"]), 4096)  # other escapes: the strings decide
    # an escaped quote is one character of its string: 4,096 pass, 4,097 do not
    assert json_strings_clean(json.dumps(["x" * 4094 + '""']), 4096)
    assert not json_strings_clean(json.dumps(["x" * 4095 + '""']), 4096)
