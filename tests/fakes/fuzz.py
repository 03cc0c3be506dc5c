"""The fuzz suite's harness: run ``rigcheck`` in-process on hostile input and hold it to the contract.

The contract (docs/snapshot.md, the brief): every run ends either with a valid answer (exit 0, output
that parses when it is JSON, no raw control character on the terminal) or with exit status 2 and one
``rigcheck: error:`` line that names the file at fault; never a traceback (exit 1), never a hang past
:data:`HANG_S` seconds. Each run is counted per command and outcome in :data:`TALLY`; the suite writes
the counts where ``RIGCHECK_FUZZ_REPORT`` says (the closing note of issue 17 quotes them).

``RIGCHECK_FUZZ_SCALE`` multiplies every strategy's example count (default 1: ~30 s in the normal test
run; 20 is the long profile).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from rigcheck import cli

#: a run longer than this is a hang
HANG_S = 10.0
SCALE = max(1, int(os.environ.get("RIGCHECK_FUZZ_SCALE", "1") or 1))
#: command -> outcome -> count, over the whole session
TALLY: defaultdict[str, Counter[str]] = defaultdict(Counter)
#: what no terminal output may hold raw: C0 controls but newline and tab, DEL, C1, bidi controls
_RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def examples(count: int) -> int:
    return count * SCALE


class Hang(BaseException):
    """Raised by the alarm; a BaseException so that the CLI's catch-all cannot turn it into exit 1."""


@contextlib.contextmanager
def deadline(seconds: float = HANG_S) -> Iterator[None]:
    def ring(_signum: int, _frame: object) -> None:
        raise Hang(f"still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str
    seconds: float


def run(argv: Sequence[str]) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    with deadline(), contextlib.redirect_stderr(err):
        code = cli.main(list(argv), out=out)
    return Outcome(code, out.getvalue(), err.getvalue(), time.monotonic() - started)


def check(command: str, argv: Sequence[str], names: Sequence[str] = ()) -> Outcome:
    """Run ``argv`` and assert the contract; ``names`` are the input files an error must name."""
    try:
        outcome = run(argv)
    except Hang:
        TALLY[command]["hang (bug)"] += 1
        raise
    lines = outcome.err.splitlines()
    problem = None
    if "Traceback" in outcome.err:
        problem = "a traceback"
    elif outcome.code == 0:
        if _RAW_CONTROL.search(outcome.out):
            problem = "a raw control character on the terminal"
        elif _is_json(argv):
            try:
                json.loads(outcome.out)
            except ValueError as exc:
                problem = f"output that is not JSON ({exc})"
        bad = [line for line in lines if not line.startswith(("rigcheck: warning: ", "rigcheck: note: "))]
        if bad and problem is None:
            problem = f"stray stderr {bad[:2]}"
    elif outcome.code in (2, 3):  # bad input, or (3) a hub that cannot be reached: one line either way
        errors = [line for line in lines if line.startswith("rigcheck: error: ")]
        others = [line for line in lines if not line.startswith(("rigcheck: warning: ", "rigcheck: note: "))]
        if len(errors) != 1 or others != errors:
            problem = f"not one error line: {lines[:3]}"
        elif _RAW_CONTROL.search(outcome.err):
            problem = "a raw control character on stderr"
        elif names and not any(name in outcome.err for name in names):
            problem = f"an error that does not name {names[0]}: {errors[0]}"
    else:
        problem = f"exit status {outcome.code}"
    kind = "valid answer (exit 0)" if outcome.code == 0 else "refused, one line (exit 2)"
    TALLY[command][kind if problem is None else f"{problem} (bug)"] += 1
    assert problem is None, (
        f"rigcheck {' '.join(map(repr, argv))[:300]}: {problem}\nstderr: {outcome.err[:500]}"
    )
    return outcome


def _is_json(argv: Sequence[str]) -> bool:
    if "-o" in argv or "--output" in argv:
        return False  # the answer went to a file
    formats = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--format"]
    return "--json" in argv or (bool(formats) and formats[-1] == "json")  # the last --format wins


def write_report(path: str) -> None:
    summary = {command: dict(sorted(kinds.items())) for command, kinds in sorted(TALLY.items())}
    with open(path, "w", encoding="utf-8") as handle:  # noqa: PTH123 - a plain report file
        json.dump({"scale": SCALE, "runs": summary}, handle, indent=2, ensure_ascii=False)


# -- hostile values -------------------------------------------------------------------------------

#: placeholders replaced after json.dumps (which cannot write these itself)
_DEEP, _DIGITS = "\x00deep:", "\x00digits:"

HOSTILE_STRINGS = st.sampled_from(
    [
        "",
        " ",
        "\ud800",
        "node\udfff",
        "\x1b]0;pwned\x07",
        "\x1b[2J\x1b[H",
        "a\r\nforged row",
        "\u202egnp.exe",
        "\x9b31m",
        "<img src='/etc/hostname'><a href='https://evil.example/'>x</a>",
        "5" * 5000,
        "x" * 5000,
        "550.54.15" + "9" * 300,
        "../../../../etc/passwd",
        "NVIDIA GeForce RTX 4090",
        "12.4",
    ]
)
HOSTILE_NUMBERS = st.one_of(
    st.sampled_from([0, -1, 1, 2**31, 2**53 + 1, 2**63, 2**64, -(2**63), 64 * 1024**2, 64 * 1024**4 + 1]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e-300, 1e300, 1e308, 0.5, -0.0]),
    st.integers(min_value=300, max_value=6000).map(lambda n: f"{_DIGITS}{n}"),
)
HOSTILE_STRUCTURES = st.one_of(
    st.none(),
    st.booleans(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=3),
    st.integers(min_value=2, max_value=200_000).map(lambda n: f"{_DEEP}{n}"),
)
HOSTILE = st.one_of(HOSTILE_STRINGS, HOSTILE_NUMBERS, HOSTILE_STRUCTURES, st.text(max_size=30))


def dumps(data: Any) -> str:
    """JSON text, with the deep-nesting and many-digit placeholders expanded."""
    text = json.dumps(data, allow_nan=True)

    def expand(match: re.Match[str]) -> str:
        kind, count = match.group(1), int(match.group(2))
        return "[" * count + "]" * count if kind == "deep" else "9" * count

    return re.sub(r'"\\u0000(deep|digits):(\d+)"', expand, text)


def paths_of(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a JSON value: keys and indexes, the root excluded."""
    found = []
    if isinstance(data, dict):
        for key, value in data.items():
            found.append((*prefix, key))
            found.extend(paths_of(value, (*prefix, key)))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found.append((*prefix, index))
            found.extend(paths_of(value, (*prefix, index)))
    return found


@st.composite
def mutated(draw: st.DrawFn, base: Any, max_edits: int = 3) -> Any:
    """``base`` with one to ``max_edits`` values replaced by hostile ones, or keys deleted."""
    import copy

    data = copy.deepcopy(base)
    paths = paths_of(base)
    for _ in range(draw(st.integers(min_value=1, max_value=max_edits))):
        path = draw(st.sampled_from(paths))
        parent: Any = data
        try:
            for step in path[:-1]:
                parent = parent[step]
            if draw(st.integers(0, 9)) == 0 and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = draw(HOSTILE)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit replaced a parent
    return data
