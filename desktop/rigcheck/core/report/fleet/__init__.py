"""A fleet: many machines' reports read together (``rigcheck fleet``).

:func:`load_fleet` reads ``rigcheck.report/1`` files and bare ``rigcheck.machine/1`` snapshots from files
and folders (``*.json``, recursively). A file that cannot be read — not JSON, another schema, an old
version, a broken record — becomes one line in :attr:`Fleet.problems` and is skipped; only a run in which
no path exists at all is an error.

A :class:`Fleet` gives one table row per machine (GPUs, VRAM, driver, CUDA, ROCm, torch, failing compat
findings), the drift from the fleet's majority (:meth:`Fleet.drift`: one node on an older driver, another
torch, less RAM) and, per model, which nodes run it and how fast (:meth:`Fleet.can_run`): the report's
own verdict when it holds one for that format, else :func:`rigcheck.core.estimate.fit.fit` on the
report's machine (capacities, not the free memory of the moment the audit ran).

Rendered as a plain-text table, JSON (``rigcheck.fleet/1``) or one self-contained HTML page.

Reading is here; ``records`` holds the records and constants, ``values`` how one node's fields compare,
``judge`` the :class:`Fleet` and its per-model answers, ``render`` the three renderings. Every name is
importable from this package as before.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rigcheck.core.compat import Finding, bucket
from rigcheck.core.errors import InputError
from rigcheck.core.fileio import decode_text, load_json, read_bytes_limited
from rigcheck.core.machine import MAX_STRING, REPORT_SCHEMA, Machine
from rigcheck.core.machine import SCHEMA as MACHINE_SCHEMA
from rigcheck.core.report.fleet.judge import Fleet, _once
from rigcheck.core.report.fleet.judge import _machine_key as _machine_key  # re-exported for the tests
from rigcheck.core.report.fleet.records import (
    DEFAULT_QUANT,
    DRIFT_FIELDS,
    FLEET_SCHEMA,
    GIB,
    MISSING,
    RECOMMENDED,
    SPREAD_NAMES,
    VERSION_FIELDS,
    Drift,
    FleetCell,
    ModelColumn,
    Node,
    Relation,
    Spread,
    _node,
    paused_gc,
)
from rigcheck.core.report.fleet.render import (
    HEADERS,
    drift_heading,
    fleet_json,
    render_fleet_html,
    render_fleet_json,
    render_table,
)
from rigcheck.core.report.fleet.values import _natural, gpu_summary, version_key, vram_summary
from rigcheck.core.report.report import Report, report_from_dict
from rigcheck.core.steps import no_steps
from rigcheck.core.text import json_strings_clean

if TYPE_CHECKING:
    from rigcheck.core.catalog import Catalog

__all__ = [
    "DEFAULT_QUANT",
    "DRIFT_FIELDS",
    "FLEET_SCHEMA",
    "FREEZE_NODES",
    "GIB",
    "HEADERS",
    "MISSING",
    "RECOMMENDED",
    "SPREAD_NAMES",
    "VERSION_FIELDS",
    "Drift",
    "Fleet",
    "FleetCell",
    "ModelColumn",
    "Node",
    "Relation",
    "Spread",
    "drift_heading",
    "fleet_json",
    "gpu_summary",
    "load_fleet",
    "paused_gc",
    "render_fleet_html",
    "render_fleet_json",
    "render_table",
    "version_key",
    "vram_summary",
]

#: from this many nodes a fleet's records are frozen out of garbage collection once read (below it a
#: collection walking them costs a few milliseconds)
FREEZE_NODES = 500


def load_fleet(
    paths: Sequence[Path | str],
    catalog: Catalog | None = None,
    steps: Callable[[float, float], None] = no_steps,
) -> Fleet:
    """Every report and snapshot under ``paths`` (files, or folders searched for ``*.json``).

    A file named directly is read whatever its name (``parallel-ssh -o`` writes files without an
    extension); in folders, hidden files (half-written ``.name.tmp``) are left out. Bad files become
    :attr:`Fleet.problems`. Raises :class:`InputError` only when none of ``paths`` exists. ``catalog``
    is loaded only if a file holds no compat findings and one is not given. ``steps(done, total)`` is
    called per file (progress, and :class:`rigcheck.core.steps.Cancelled` to stop).
    """
    roots = [Path(p) for p in paths]
    if not roots:
        raise InputError("fleet", "no paths given")
    problems: list[str] = []
    files: list[Path] = []
    existing = 0
    for path in roots:
        try:
            kind = "folder" if path.is_dir() else "file" if path.exists() else None
        except OSError as exc:  # ENAMETOOLONG, EACCES on a parent, …
            problems.append(f"{path}: cannot look at it ({exc.strerror or exc})")
            continue
        if kind == "folder":
            existing += 1
            try:
                found = [
                    p
                    for p in path.rglob("*.json")
                    if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
                ]
            except OSError as exc:
                problems.append(f"{path}: cannot read the folder ({exc.strerror or exc})")
                continue
            files.extend(sorted(found, key=lambda p: _natural(str(p))))
        elif kind == "file":
            existing += 1
            files.append(path)
        else:
            problems.append(f"{path}: no such file or folder")
    if not existing:
        raise InputError(str(roots[0]), "no such file or folder")
    seen: set[Path] = set()
    unique = []
    for path in files:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(path)
    catalogs: list[Catalog] = [catalog] if catalog is not None else []
    judged: dict[str, Any] = {}
    nodes: list[Node] = []
    with paused_gc():
        for done, path in enumerate(unique):
            steps(done, len(unique))
            try:
                nodes.append(_read_node(path, catalogs, judged))
            except InputError as exc:
                problems.append(f"{path}: {exc.problem}" if exc.source == str(path) else f"{path}: {exc}")
            except (ValueError, TypeError, KeyError, AttributeError, ArithmeticError, RecursionError) as exc:
                problems.append(f"{path}: not a readable report ({type(exc).__name__}: {exc})")
        fleet = Fleet(_unique_names(nodes), tuple(problems), len(unique))
        if len(nodes) >= FREEZE_NODES:
            # Kept out of every later collection too: collected afterwards, 5,000 reports' records
            # cost the next two collections ~270 and ~170 ms holding the GIL (on the GUI thread when
            # they come there). They hold no cycles, so dropping the fleet still frees them.
            gc.freeze()
        return fleet


def _broken(finding: Any) -> bool:
    """A failing finding about something on the machine (reports written before findings said whether the
    software is installed mark it "(not installed)" in the subject)."""
    if getattr(finding, "status", None) != "fail":
        return False
    if isinstance(finding, Finding) and (finding.installed is not None or finding.cause is not None):
        return bucket(finding) == "problem"
    return "(not installed)" not in str(getattr(finding, "subject", ""))


def _read_node(path: Path, catalogs: list[Catalog], judged: dict[str, Any]) -> Node:
    """One file as a node; ``judged`` holds check_compat's findings per identical machine (a lab's
    snapshots of one build are checked once)."""
    source = str(path)
    raw = read_bytes_limited(path, "report")
    data = load_json(decode_text(raw, path), source, utf8=raw)
    if not isinstance(data, Mapping):
        raise InputError(source, "not a RigCheck report (expected a JSON object)")
    schema = data.get("schema")
    report: Report | None = None
    if schema == REPORT_SCHEMA:
        # Streaming aggregation: of a report's ~80 findings only the failing ones are decoded (they are
        # all the fleet counts), and strings the text shows clean are not walked again (issue 30, fleet
        # at lab scale). A report that lists no findings at all is checked afresh below.
        listed = isinstance(data.get("findings"), list) and bool(data["findings"])
        clean = json_strings_clean(raw, MAX_STRING)
        report = report_from_dict(data, source, strings_checked=clean, failing_only=listed)
        machine = report.machine
        findings: Sequence[Any] = report.findings
        if listed:
            failing = sum(1 for f in findings if _broken(f))
            return _node(path, machine, report, failing)
    elif schema == MACHINE_SCHEMA:
        machine = Machine.from_dict(data, source)
        findings = ()
    elif isinstance(schema, str) and schema.startswith(("rigcheck.report/", "rigcheck.machine/")):
        raise InputError(
            source,
            f"schema {schema!r} is not supported (this version reads {REPORT_SCHEMA!r} and "
            f"{MACHINE_SCHEMA!r}); audit that machine again with this version",
        )
    elif schema is None:
        raise InputError(source, "not a RigCheck report (no schema field)")
    else:
        raise InputError(source, f"not a RigCheck report (schema {schema!r})")
    if not findings:
        from rigcheck.core.compat import check_compat

        if not catalogs:
            from rigcheck.core.catalog import load_catalog

            catalogs.append(load_catalog())
        catalog = catalogs[0]
        findings = _once(judged, machine, lambda m: check_compat(m, catalog))
    failing = sum(1 for f in findings if _broken(f))
    return _node(path, machine, report, failing)


def _unique_names(nodes: list[Node]) -> tuple[Node, ...]:
    """Sorted naturally by name; a name seen twice (the same host audited twice) gets its file's stem."""
    from dataclasses import replace

    counts = Counter(n.name for n in nodes)
    named = [
        replace(n, name=f"{n.name} ({Path(n.path).stem})")
        if counts[n.name] > 1 and Path(n.path).stem != n.name
        else n
        for n in nodes
    ]
    seen: Counter[str] = Counter()
    result = []
    for n in sorted(named, key=lambda n: (_natural(n.name), n.path)):
        seen[n.name] += 1
        result.append(n if seen[n.name] == 1 else replace(n, name=f"{n.name} #{seen[n.name]}"))
    return tuple(result)
