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
"""

from __future__ import annotations

import gc
import html
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from rigcheck.core.compat import Finding, bucket
from rigcheck.core.errors import InputError
from rigcheck.core.fileio import decode_text, load_json, read_bytes_limited
from rigcheck.core.i18n import tr
from rigcheck.core.machine import MAX_STRING, REPORT_SCHEMA, Machine
from rigcheck.core.machine import SCHEMA as MACHINE_SCHEMA
from rigcheck.core.report.report import Report, report_from_dict
from rigcheck.core.report.tables import render
from rigcheck.core.steps import no_steps
from rigcheck.core.text import json_strings_clean, one_line
from rigcheck.core.unified import unified_share
from rigcheck.core.verdict_words import Words, placement_words, verdict_where

if TYPE_CHECKING:
    from rigcheck.core.catalog import Catalog
    from rigcheck.core.estimate.memory import Request
    from rigcheck.core.models.spec import ModelInfo

FLEET_SCHEMA = "rigcheck.fleet/1"
GIB = 1024**3
#: the weight format a fleet is asked about when none is named (llama.cpp's usual choice)
DEFAULT_QUANT = "q4_k_m"
#: a column's quant when each node has its own recommended format (docs/recommendation.md)
RECOMMENDED = "recommended"
#: the fields :meth:`Fleet.drift` compares, in the order it reports them
DRIFT_FIELDS = ("driver", "cuda_driver", "amdgpu", "rocm", "torch", "gpu", "ram_gib", "os")
#: fields whose values are versions: a differing node is "older" or "newer" than the majority
VERSION_FIELDS = frozenset({"driver", "cuda_driver", "amdgpu", "rocm", "torch"})
MISSING = "—"
#: from this many nodes a fleet's records are frozen out of garbage collection once read (below it a
#: collection walking them costs a few milliseconds)
FREEZE_NODES = 500
Relation = Literal["older", "newer", "smaller", "larger", "different", "missing"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection while a fleet is read or judged. Its records hold no cycles (refcounts
    free them), but each is a few hundred tracked objects, and every full collection walks all of them:
    on 10,000 reports that was a fifth of the time (``rigcheck fleet`` pauses it for the whole command).
    Restored on the way out, also after an error; a caller that had it off keeps it off."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# -- records --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    """One machine of the fleet, as read from one file."""

    #: the hostname, else the file's stem (redacted reports have no hostname); unique within a fleet
    name: str
    path: str
    machine: Machine
    #: None when the file was a bare rigcheck.machine/1 snapshot
    report: Report | None
    #: failing compat findings of what is on the machine (software that is not installed and would not
    #: work here does not count): the report's, or check_compat's when the file holds none
    failing: int
    #: "report" or "snapshot"
    kind: str = "report"


@dataclass(frozen=True)
class Spread:
    """The values one version field takes across the fleet, oldest first, each with its node count."""

    #: "driver", "cuda_driver", "amdgpu", "rocm" or "torch"
    field: str
    values: tuple[tuple[str, int], ...]

    def sentence(self) -> str:
        """``drivers differ: 470.82.01 (1), 550.54.14 (2), 580.65.06 (3)``"""
        listed = ", ".join(f"{value} ({count})" for value, count in self.values)
        return f"{SPREAD_NAMES.get(self.field, self.field)} differ: {listed}"


#: how a version field is named in a sentence about its spread
SPREAD_NAMES = {
    "driver": "drivers",
    "cuda_driver": "CUDA driver versions",
    "amdgpu": "amdgpu driver versions",
    "rocm": "ROCm versions",
    "torch": "PyTorch versions",
}


@dataclass(frozen=True)
class Drift:
    """One field on which some nodes differ from the fleet's majority."""

    #: "driver", "cuda_driver", "amdgpu", "rocm", "torch", "gpu", "gpu_count", "gpu_mix", "ram_gib" or "os"
    field: str
    majority: str
    #: node names that differ
    nodes: tuple[str, ...]
    #: their values, same order ("—" when a node that should have one has none)
    values: tuple[str, ...]
    #: per node, same order: "older"/"newer" (versions), "smaller"/"larger" (RAM), "missing", "different"
    relations: tuple[str, ...] = ()
    #: how many nodes have the majority value, and how many were compared
    majority_count: int = 0
    compared: int = 0

    def older(self) -> tuple[str, ...]:
        return tuple(n for n, r in zip(self.nodes, self.relations, strict=True) if r == "older")

    def newer(self) -> tuple[str, ...]:
        return tuple(n for n, r in zip(self.nodes, self.relations, strict=True) if r == "newer")

    def sentence(self) -> str:
        """``driver: 570.124.04 on 47 of 50 nodes; older: node07 (550.54.14); newer: …``"""
        groups: dict[str, list[str]] = {}
        for node, value, relation in zip(self.nodes, self.values, self.relations, strict=True):
            groups.setdefault(relation, []).append(f"{node} ({value})" if relation != "missing" else node)
        parts = [f"{self.field}: {self.majority} on {self.majority_count} of {self.compared} nodes"]
        for relation in ("older", "newer", "smaller", "larger", "different", "missing"):
            if relation in groups:
                parts.append(f"{relation}: {', '.join(groups[relation])}")
        return "; ".join(parts)


@dataclass(frozen=True)
class FleetCell:
    """One model on one node."""

    node: str
    #: "fits", "fits_with_offload" or "does_not_fit"
    verdict: str
    decode_tokens_per_s: float | None
    #: the format the verdict is for ("Q4_K_M")
    quant: str | None
    #: "report" when the node's report held the verdict, "estimate" when it was worked out here
    source: str
    #: gpu, gpu+ram or cpu (recommend.where_of); None when it does not run or was not recorded
    where: str | None = None

    @property
    def words(self) -> Words | None:
        """The shared placement vocabulary for this cell; None for an unknown verdict."""
        if self.verdict not in ("fits", "fits_with_offload", "does_not_fit"):
            return None
        # "the GPUs": said of many nodes at once, each with its own GPUs
        return placement_words(verdict_where(self.verdict, self.where), self.decode_tokens_per_s, gpus=2)


@dataclass(frozen=True)
class ModelColumn:
    """One model across the fleet: a column of the machine × model matrix."""

    model_id: str
    name: str
    #: the format asked for ("Q4_K_M")
    quant: str
    context: int | None
    #: one per node, in the fleet's node order
    cells: tuple[FleetCell, ...]

    @property
    def label(self) -> str:
        return f"{self.model_id} {self.quant}"

    def nodes_with(self, verdict: str) -> tuple[str, ...]:
        return tuple(c.node for c in self.cells if c.verdict == verdict)


@dataclass(frozen=True)
class Fleet:
    nodes: tuple[Node, ...]
    #: one line per skipped file: "path: reason"
    problems: tuple[str, ...] = ()
    #: files read, good and bad
    files: int = 0

    def node(self, name: str) -> Node | None:
        return next((n for n in self.nodes if n.name == name), None)

    def row(self, node: Node) -> dict[str, str]:
        """The table's columns: name, gpus, vram, driver, cuda, rocm, torch, failing."""
        m = node.machine
        return {
            "name": node.name,
            "gpus": gpu_summary(m),
            "vram": vram_summary(m),
            "driver": m.drivers.nvidia or m.drivers.amdgpu or MISSING,
            "cuda": m.drivers.cuda_driver or MISSING,
            "rocm": m.drivers.rocm or MISSING,
            "torch": m.software.python_packages.get("torch") or MISSING,
            "failing": str(node.failing),
        }

    def spread(self) -> tuple[Spread, ...]:
        """Per version field (driver, CUDA, amdgpu, ROCm, PyTorch), every value the fleet has, with how
        many nodes have it, oldest first; only fields where nodes differ. Unlike :meth:`drift` this
        includes fields with no majority: drivers 470 (1), 550 (2), 580 (3) are not "agreement"."""
        found = []
        for name in DRIFT_FIELDS:
            if name not in VERSION_FIELDS:
                continue
            counts = Counter(v for n in self.nodes if isinstance(v := _field_value(name, n.machine), str))
            if len(counts) > 1:
                ordered = sorted(counts, key=lambda v: (version_key(v), v))
                found.append(Spread(name, tuple((v, counts[v]) for v in ordered)))
        return tuple(found)

    def _count_drift(self) -> list[Drift]:
        """Nodes with fewer (or more) of the same GPU than most nodes with that GPU: a server with 7 of
        its 8 H100s is flagged even in a fleet too mixed for the "gpu" field to have a majority."""
        groups: dict[str, list[tuple[str, int]]] = {}
        for node in self.nodes:
            names = {_short_gpu_name(g.name) for g in node.machine.gpus}
            if len(names) == 1:
                groups.setdefault(names.pop(), []).append((node.name, len(node.machine.gpus)))
        found = []
        for gpu, members in groups.items():
            counts = Counter(n for _node, n in members)
            usual = max(counts, key=lambda n: (counts[n], n))
            if len(members) < 3 or counts[usual] * 2 <= len(members):
                continue  # too few to say what is usual, or no count most of them share
            odd = [(node, n) for node, n in members if n != usual]
            if odd:
                found.append(
                    Drift(
                        "gpu_count",
                        f"{usual} × {gpu}",
                        tuple(node for node, _n in odd),
                        tuple(f"{n} × {gpu}" for _node, n in odd),
                        tuple("smaller" if n < usual else "larger" for _node, n in odd),
                        counts[usual],
                        len(members),
                    )
                )
        return found

    def _mix_drift(self) -> list[Drift]:
        """Nodes whose GPUs are not all one model (an RTX 3090 beside a 4090: layers split by memory run at
        the slower card's pace), where most nodes with GPUs have a single model."""
        with_gpus = [n for n in self.nodes if n.machine.gpus]
        mixed = []
        for node in with_gpus:
            names = sorted({_short_gpu_name(g.name) for g in node.machine.gpus})
            if len(names) > 1:
                mixed.append((node.name, " + ".join(names)))
        uniform = len(with_gpus) - len(mixed)
        if not mixed or uniform * 2 <= len(with_gpus):
            return []
        return [
            Drift(
                "gpu_mix",
                tr("one GPU model per node"),
                tuple(n for n, _v in mixed),
                tuple(v for _n, v in mixed),
                tuple("different" for _ in mixed),
                uniform,
                len(with_gpus),
            )
        ]

    def drift(self) -> tuple[Drift, ...]:
        """Per field, the nodes whose value differs from the majority's (fields without drift left out).

        ``driver``/``cuda_driver`` compare nodes with an NVIDIA GPU, ``amdgpu``/``rocm`` nodes with an
        AMD GPU, the rest every node; ``torch`` by its public version (2.5.1+cu124 and 2.5.1+rocm6.2
        are the same release). The majority is the value more than half of the nodes have; a field
        where none does is a mixed fleet, not drift, and is left out (one 4090 box among H100 servers
        is not news; one server with 7 of its 8 GPUs is). A node that should have a value and has none
        is "missing", unless most nodes have none either.
        """
        found = []
        for name in DRIFT_FIELDS:
            values = [(n.name, _field_value(name, n.machine)) for n in self.nodes]
            compared = [(n, v) for n, v in values if v is not _NOT_APPLICABLE]
            present = [(n, v) for n, v in compared if isinstance(v, str)]
            if not present:
                continue
            counts = Counter(v for _, v in present)
            majority = max(counts, key=lambda v: (counts[v], _order_key(name, v)))
            if counts[majority] * 2 <= len(present):
                continue  # no value holds a majority: a mixed fleet, not drift
            missing = [n for n, v in compared if v is None]
            report_missing = len(missing) * 2 < len(compared)
            nodes, shown, relations = [], [], []
            for node, value in compared:
                if value is None:
                    if report_missing:
                        nodes.append(node)
                        shown.append(MISSING)
                        relations.append("missing")
                elif value != majority:
                    nodes.append(node)
                    shown.append(str(value))
                    relations.append(_relation(name, str(value), majority))
            if nodes:
                found.append(
                    Drift(
                        name,
                        majority,
                        tuple(nodes),
                        tuple(shown),
                        tuple(relations),
                        counts[majority],
                        len(compared),
                    )
                )
        # the same GPU in a different number: flagged even where the "gpu" field is too mixed to be
        flagged = {n for d in found if d.field == "gpu" for n in d.nodes}
        for count in self._count_drift():
            keep = [k for k, n in enumerate(count.nodes) if n not in flagged]
            if keep:
                found.append(
                    replace(
                        count,
                        nodes=tuple(count.nodes[k] for k in keep),
                        values=tuple(count.values[k] for k in keep),
                        relations=tuple(count.relations[k] for k in keep),
                    )
                )
        found.extend(self._mix_drift())  # GPUs of different models within one node
        return tuple(found)

    @paused_gc()
    def column(
        self,
        model: ModelInfo | str,
        catalog: Catalog,
        *,
        quant: str | None = DEFAULT_QUANT,
        context: int | None = None,
        request: Request | None = None,
        steps: Callable[[float, float], None] = no_steps,
    ) -> ModelColumn:
        """``model`` (a catalog id or a resolved model) on every node at ``quant``; with ``quant`` None,
        each node's recommendation (:func:`rigcheck.core.estimate.recommend.recommend`). ``request``
        carries batch and engine (as ``fit`` takes them). ``steps(done, total)`` is called per node
        (progress, and :class:`rigcheck.core.steps.Cancelled` to stop)."""
        from rigcheck.core.estimate.fit import fit
        from rigcheck.core.estimate.memory import Request, estimate_memory
        from rigcheck.core.estimate.recommend import where_of
        from rigcheck.core.estimate.upgrade import catalog_model, outcome

        info = catalog_model(model, catalog) if isinstance(model, str) else model
        if quant is None:
            judged: dict[str, Any] = {}  # identical machines (a rack of one build) are judged once
            best = []
            for done, node in enumerate(self.nodes):
                steps(done, len(self.nodes))
                best.append(
                    _once(
                        judged,
                        node.machine,
                        lambda m: outcome(info, m, catalog, context=context, request=request),
                    )
                )
            return ModelColumn(
                info.id,
                info.name,
                RECOMMENDED,
                context,
                tuple(
                    FleetCell(node.name, o.verdict, o.decode_tokens_per_s, o.quant, "estimate", o.where)
                    for node, o in zip(self.nodes, best, strict=True)
                ),
            )
        custom = request is not None
        request = replace(request or Request(), quant=quant, context=context)
        # Once, before the loop: an unknown format is one error, not one per node.
        quant_name = estimate_memory(info, request, catalog).quant_name
        cells = []
        fitted: dict[str, Any] = {}  # identical machines (a rack of one build) are judged once
        for done, node in enumerate(self.nodes):
            steps(done, len(self.nodes))
            held = _report_fit(node, info.id, quant_name) if context is None and not custom else None
            if held is not None:
                cells.append(held)
                continue
            result = _once(
                fitted, node.machine, lambda m: fit(info, m, request, catalog, live=False, advise=False)
            )
            cells.append(
                FleetCell(
                    node.name,
                    result.verdict,
                    result.speed.decode_tokens_per_s,
                    quant_name,
                    "estimate",
                    where_of(result),
                )
            )
        return ModelColumn(info.id, info.name, quant_name, context, tuple(cells))

    def can_run(
        self,
        model_id: str,
        catalog: Catalog,
        *,
        quant: str | None = DEFAULT_QUANT,
        context: int | None = None,
        steps: Callable[[float, float], None] = no_steps,
    ) -> list[tuple[Node, str, float | None]]:
        """(node, verdict, decode tokens/s) for every node; verdicts as :func:`fit` gives them."""
        col = self.column(model_id, catalog, quant=quant, context=context, steps=steps)
        return [(n, c.verdict, c.decode_tokens_per_s) for n, c in zip(self.nodes, col.cells, strict=True)]

    def matrix(
        self,
        model_ids: Sequence[str],
        catalog: Catalog,
        *,
        quant: str | None = DEFAULT_QUANT,
        context: int | None = None,
        request: Request | None = None,
    ) -> tuple[ModelColumn, ...]:
        """The machine × model matrix for these catalog models."""
        return tuple(
            self.column(m, catalog, quant=quant, context=context, request=request) for m in model_ids
        )

    @paused_gc()
    def report_matrix(self, catalog: Catalog | None = None) -> tuple[ModelColumn, ...]:
        """The machine × model matrix of the verdicts the reports already hold (inference only).

        Each cell is at the format its report chose. With a ``catalog``, a node read from a plain
        snapshot (``audit --json``, no verdicts) is judged as its report would have been (the
        recommendation, as ``audit --format json`` does), and a fleet of snapshots only gets the models a
        report lists by default; without one such a node is ``unknown``. Empty when nothing holds any.
        """
        from rigcheck.core.estimate.upgrade import POPULAR_MODELS, catalog_model, outcome

        order: dict[str, str] = {}
        for node in self.nodes:
            for f in node.report.fits if node.report else ():
                if f.workload == "inference":
                    order.setdefault(f.model_id, f.name)
        if not order and catalog is not None:
            order = {m: "" for m in POPULAR_MODELS if catalog.model(m) is not None}
        # each node's inference verdicts by model, once (a search per cell was models x nodes x fits)
        held_fits: dict[str, dict[str, Any]] = {}
        for node in self.nodes:
            by_model: dict[str, Any] = {}
            for f in node.report.fits if node.report else ():
                if f.workload == "inference":
                    by_model.setdefault(f.model_id, f)
            held_fits[node.name] = by_model
        columns = []
        for model_id, held_name in order.items():
            info = (
                catalog_model(model_id, catalog) if catalog is not None and catalog.model(model_id) else None
            )
            name = held_name or (info.name if info is not None else model_id)
            cells = []
            for node in self.nodes:
                if node.report is None and info is not None and catalog is not None:
                    o = outcome(info, node.machine, catalog)
                    cells.append(
                        FleetCell(node.name, o.verdict, o.decode_tokens_per_s, o.quant, "estimate", o.where)
                    )
                    continue
                held = held_fits[node.name].get(model_id)
                if held is None:
                    cells.append(FleetCell(node.name, "unknown", None, None, "report"))
                else:
                    cells.append(
                        FleetCell(
                            node.name,
                            held.verdict,
                            held.decode_tokens_per_s,
                            held.quant,
                            "report",
                            held.where,
                        )
                    )
            columns.append(ModelColumn(model_id, name, "best", None, tuple(cells)))
        return tuple(columns)


# -- reading --------------------------------------------------------------------------------------


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


def _node(path: Path, machine: Machine, report: Report | None, failing: int) -> Node:
    if report is not None and report.findings:
        # Counted; the fleet never reads them again. Dropping them is most of a node's memory (a
        # report's findings are ~80 records), so 10,000 reports fit in a few hundred MiB.
        report = Report(report.machine, (), report.fits, report.app_version, report.created_at)
    return Node(
        one_line(machine.host.hostname or path.stem),
        str(path),
        machine,
        report,
        failing,
        "report" if report is not None else "snapshot",
    )


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


def _machine_key(machine: Machine) -> str:
    """What an estimate can depend on, as one string: the machine less its name, time and notes."""
    from dataclasses import replace as copy

    anonymous = copy(machine, host=copy(machine.host, hostname=None), taken_at=None, notes=())
    # the dataclasses' repr shows every field (none is repr=False), exactly: 17x cheaper than
    # to_dict + json.dumps, which was 0.4 ms a node in a 10,000-node --model check
    return repr(anonymous)


def _once(cache: dict[str, Any], machine: Machine, judge: Any) -> Any:
    """``judge(machine)``, or the answer already given for an identical machine."""
    key = _machine_key(machine)
    if key not in cache:
        cache[key] = judge(machine)
    return cache[key]


def _report_fit(node: Node, model_id: str, quant_name: str) -> FleetCell | None:
    if node.report is None:
        return None
    for f in node.report.fits:
        if (
            f.model_id == model_id
            and f.workload == "inference"
            and (f.quant or "").lower() == quant_name.lower()
        ):
            return FleetCell(node.name, f.verdict, f.decode_tokens_per_s, f.quant, "report", f.where)
    return None


# -- values ---------------------------------------------------------------------------------------


def _short_gpu_name(name: str) -> str:
    for prefix in ("NVIDIA ", "GeForce ", "AMD ", "Radeon "):
        if name.startswith(prefix) and len(name) > len(prefix):
            name = name[len(prefix) :]
    return name


def gpu_summary(machine: Machine) -> str:
    """``2 × RTX 4090``, ``RTX 3090 + RTX 4090``, ``none``."""
    counts: Counter[str] = Counter(_short_gpu_name(g.name) for g in machine.gpus)
    return " + ".join(f"{n} × {name}" if n > 1 else name for name, n in counts.items()) or "none"


def vram_summary(machine: Machine) -> str:
    """Total GPU memory, ``48 GiB``; ``unified`` when it is shared with the CPU; ``—`` when unknown."""
    sizes: list[int] = []
    by_rule = False
    for g in machine.gpus:
        # a unified GPU whose size the probe could not read: its platform's rule, as the estimates use it
        share = unified_share(g, machine.memory.total_bytes) if machine.memory.total_bytes else None
        if share is not None:
            sizes.append(share.bytes)
            by_rule = by_rule or share.by_rule
        elif g.memory_total_bytes is not None:
            sizes.append(g.memory_total_bytes)
    if not sizes:
        return MISSING
    text = f"{'~' if by_rule else ''}{round(sum(sizes) / GIB):d} GiB"
    if any(g.unified_memory for g in machine.gpus):
        text += " unified"
    if len(sizes) < len(machine.gpus):
        text += "+?"
    return text


class _NotApplicable:
    pass


_NOT_APPLICABLE = _NotApplicable()


def _field_value(name: str, m: Machine) -> str | _NotApplicable | None:
    vendors = {g.vendor for g in m.gpus}
    if name in ("driver", "cuda_driver"):
        if "nvidia" not in vendors:
            return _NOT_APPLICABLE
        return m.drivers.nvidia if name == "driver" else m.drivers.cuda_driver
    if name in ("amdgpu", "rocm"):
        if "amd" not in vendors:
            return _NOT_APPLICABLE
        # amdgpu's own version is only known for the DKMS module; a stock kernel's is not drift
        return m.drivers.amdgpu if name == "rocm" or m.drivers.amdgpu else _NOT_APPLICABLE
    if name == "torch":
        torch = m.software.python_packages.get("torch")
        return torch.split("+", 1)[0] if torch else None
    if name == "gpu":
        return gpu_summary(m)
    if name == "ram_gib":
        return f"{round(m.memory.total_bytes / GIB)} GiB"
    if name == "os":
        return m.host.os_version or m.host.os
    raise ValueError(f"unknown drift field {name!r}")


def version_key(text: str) -> tuple[int, ...]:
    """``"550.54.14"`` → (550, 54, 14); a local part (``2.5.1+cu124``) is left out."""
    return tuple(int(d) for d in re.findall(r"\d+", text.split("+", 1)[0]))


def _order_key(name: str, value: str) -> tuple[int, ...]:
    if name in VERSION_FIELDS or name == "ram_gib":
        return version_key(value)
    return ()


def _relation(name: str, value: str, majority: str) -> str:
    if name in VERSION_FIELDS:
        a, b = version_key(value), version_key(majority)
        if a and b and a != b:
            return "older" if a < b else "newer"
    if name == "ram_gib":
        return "smaller" if version_key(value) < version_key(majority) else "larger"
    return "different"


def _natural(text: str) -> tuple[tuple[int, str], ...]:
    """node2 before node10."""
    return tuple((int(p), "") if p.isdigit() else (-1, p.lower()) for p in re.split(r"(\d+)", text) if p)


# -- rendering ------------------------------------------------------------------------------------

HEADERS = {
    "name": "node",
    "gpus": "GPUs",
    "vram": "VRAM",
    "driver": "driver",
    "cuda": "CUDA",
    "rocm": "ROCm",
    "torch": "torch",
    "failing": "failing",
}


def _cell_text(cell: FleetCell, with_quant: bool = False) -> str:
    said = cell.words
    if said is None:
        return cell.verdict
    text = said.short
    if said.tokens_per_s is not None:
        text += f" {said.speed.removeprefix('~')}"
    if with_quant and cell.quant:
        text += f" ({cell.quant})"
    return text


def _answer_lines(column: ModelColumn) -> list[str]:
    """One line per placement, in the words fit and the reports use: "runs on the CPU: 2 of 5: …"."""
    total = len(column.cells)
    groups: dict[tuple[int, str], list[str]] = {}
    for cell in column.cells:
        said = cell.words
        key = (said.rank, said.words) if said is not None else (99, "unknown")
        groups.setdefault(key, []).append(cell.node)
    return [
        f"  {words}: {len(names)} of {total}: {', '.join(names)}"
        for (_rank, words), names in sorted(groups.items())
    ]


def drift_heading(drift: Sequence[Drift]) -> str:
    """ "Drift from the fleet's majority", or "… most common values" when some value is held by no more
    than half of the nodes compared (3 of 8 with a torch, the other 5 without one, is not a majority)."""
    if all(d.majority_count * 2 > d.compared for d in drift):
        return "Drift from the fleet's majority"
    return "Drift from the fleet's most common values"


def render_table(
    fleet: Fleet, *, model_rows: Sequence[ModelColumn] | None = None, drift: Sequence[Drift] | None = None
) -> str:
    """The machine table, the drift, the machine × model matrix and the skipped files, as plain text."""
    drift = fleet.drift() if drift is None else drift
    skipped = len(fleet.problems)
    parts = [
        f"Fleet: {len(fleet.nodes)} machine{'s' if len(fleet.nodes) != 1 else ''} from {fleet.files} "
        f"file{'s' if fleet.files != 1 else ''}" + (f" ({skipped} skipped)" if skipped else "")
    ]
    rows = [list(fleet.row(n).values()) for n in fleet.nodes]
    parts.append(render(list(HEADERS.values()), rows, right={7}))
    if drift:
        parts.append(f"{drift_heading(drift)}:\n" + "\n".join(f"  {d.sentence()}" for d in drift))
    elif len(fleet.nodes) > 1:
        parts.append(
            "Drift: none (no node stands out from the others in driver, CUDA, ROCm, torch, GPUs, RAM or OS)"
        )
    asked = [c for c in model_rows or () if c.quant != "best"]
    held = [c for c in model_rows or () if c.quant == "best"]
    if asked:
        context = {c.context for c in asked}
        note = "" if context == {None} else f", context {'/'.join(str(c) for c in sorted(context, key=str))}"
        matrix = [
            [node.name, *(_cell_text(c.cells[i], c.quant == RECOMMENDED) for c in asked)]
            for i, node in enumerate(fleet.nodes)
        ]
        parts.append(
            f"Models (decode tokens/s{note}):\n" + render(["node", *(c.label for c in asked)], matrix)
        )
        for column in asked:
            at = "each machine's recommended format" if column.quant == RECOMMENDED else column.quant
            parts.append(f"{column.name} at {at}:\n" + "\n".join(_answer_lines(column)))
    if held:
        # One column per model and node would be far too wide for a terminal: counts here, the
        # whole matrix in --format html/json, one model's nodes with --model.
        counts = [
            [
                c.model_id,
                *(
                    str(len(c.nodes_with(v)))
                    for v in ("fits", "fits_with_offload", "does_not_fit", "unknown")
                ),
            ]
            for c in held
        ]
        parts.append(
            "Models judged on every machine (best format each runs, as its report would say; nodes per "
            "verdict):\n"
            + render(["model", "fits", "offload", "does not fit", "unknown"], counts, right={1, 2, 3, 4})
            + "\n--models ID lists the nodes for a model; --format html shows every machine × model."
        )
    if fleet.problems:
        parts.append("Skipped:\n" + "\n".join(f"  {one_line(p)}" for p in fleet.problems))
    return "\n\n".join(parts)


def fleet_json(
    fleet: Fleet, *, model_rows: Sequence[ModelColumn] | None = None, drift: Sequence[Drift] | None = None
) -> dict[str, Any]:
    drift = fleet.drift() if drift is None else drift
    return {
        "schema": FLEET_SCHEMA,
        "nodes": [
            {
                **fleet.row(n),
                "failing": n.failing,
                "path": n.path,
                "kind": n.kind,
                "hostname": n.machine.host.hostname,
                "taken_at": n.machine.taken_at,
                "created_at": n.report.created_at if n.report else None,
                "app_version": n.report.app_version if n.report else None,
            }
            for n in fleet.nodes
        ],
        "drift": [
            {
                "field": d.field,
                "majority": d.majority,
                "majority_count": d.majority_count,
                "compared": d.compared,
                "nodes": [
                    {"name": n, "value": v, "relation": r}
                    for n, v, r in zip(d.nodes, d.values, d.relations, strict=True)
                ],
            }
            for d in drift
        ],
        "models": [
            {
                "model_id": c.model_id,
                "name": c.name,
                "quant": c.quant,
                "context": c.context,
                "nodes": [
                    {
                        "name": cell.node,
                        "verdict": cell.verdict,
                        "decode_tokens_per_s": cell.decode_tokens_per_s,
                        "quant": cell.quant,
                        "source": cell.source,
                    }
                    for cell in c.cells
                ],
            }
            for c in model_rows or ()
        ],
        "problems": list(fleet.problems),
        "files": fleet.files,
    }


def render_fleet_json(
    fleet: Fleet, *, model_rows: Sequence[ModelColumn] | None = None, drift: Sequence[Drift] | None = None
) -> str:
    """``rigcheck.fleet/1``: nodes (the table's columns and where each came from), drift, models, problems."""
    return json.dumps(fleet_json(fleet, model_rows=model_rows, drift=drift), indent=2, ensure_ascii=False)


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}td.num{text-align:right}.drift{background:#fff3cd}.fail{color:#b00020;font-weight:600}
.fits{background:#d4edda}.fits_with_offload{background:#fff3cd}.does_not_fit{background:#f8d7da}
.unknown{color:#888}ul{margin:.3em 0}code{background:#f3f3f3;padding:0 .2em}
"""


def _escape(value: object) -> str:
    """Escaped for HTML, and one line: a file name with a line break does not break the page's lines
    on a terminal it is printed to (issue 30 #9)."""
    return html.escape(one_line(str(value)), quote=True)


def render_fleet_html(
    fleet: Fleet, *, model_rows: Sequence[ModelColumn] | None = None, drift: Sequence[Drift] | None = None
) -> str:
    """One self-contained page (no scripts, no external files); every value escaped."""
    e = _escape
    drift = fleet.drift() if drift is None else drift
    column_of = {
        "driver": "driver",
        "cuda_driver": "cuda",
        "rocm": "rocm",
        "torch": "torch",
        "gpu": "gpus",
        "gpu_count": "gpus",
        "gpu_mix": "gpus",
    }
    flagged = {(n, column_of[d.field]) for d in drift if d.field in column_of for n in d.nodes}
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>RigCheck fleet: {len(fleet.nodes)} machines</title><style>{_CSS}</style></head><body>",
        f"<h1>RigCheck fleet: {len(fleet.nodes)} machines</h1>",
        f"<p>{fleet.files} files read, {len(fleet.problems)} skipped.</p>",
        "<table><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in HEADERS.values()) + "</tr></thead><tbody>",
    ]
    for node in fleet.nodes:
        cells = []
        for key, value in fleet.row(node).items():
            classes = []
            if (node.name, key) in flagged:
                classes.append("drift")
            if key == "failing":
                classes.append("num")
                if node.failing:
                    classes.append("fail")
            attr = f' class="{" ".join(classes)}"' if classes else ""
            title = f' title="{e(node.path)}"' if key == "name" else ""
            cells.append(f"<td{attr}{title}>{e(value)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    if drift:
        out.append(f"<h2>{e(drift_heading(drift))}</h2><ul>")
        out.extend(f"<li>{e(d.sentence())}</li>" for d in drift)
        out.append("</ul>")
    columns = list(model_rows or ())
    if columns:
        out.append("<h2>Models</h2><table><thead><tr><th>node</th>")
        out.extend(f"<th>{e(c.label if c.quant != 'best' else c.model_id)}</th>" for c in columns)
        out.append("</tr></thead><tbody>")
        for i, node in enumerate(fleet.nodes):
            row = [f"<td>{e(node.name)}</td>"]
            for c in columns:
                cell = c.cells[i]
                with_quant = c.quant in ("best", RECOMMENDED)
                row.append(f'<td class="{e(cell.verdict)}">{e(_cell_text(cell, with_quant))}</td>')
            out.append("<tr>" + "".join(row) + "</tr>")
        out.append("</tbody></table>")
        for c in columns:
            if c.quant != "best":
                at = "each machine's recommended format" if c.quant == RECOMMENDED else c.quant
                out.append(f"<h3>{e(c.name)} at {e(at)}</h3><ul>")
                out.extend(f"<li>{e(line.strip())}</li>" for line in _answer_lines(c))
                out.append("</ul>")
    if fleet.problems:
        out.append("<h2>Skipped files</h2><ul>")
        out.extend(f"<li><code>{e(p)}</code></li>" for p in fleet.problems)
        out.append("</ul>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
