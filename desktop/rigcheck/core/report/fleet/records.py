"""A fleet's records: one node (its machine, its report), the drift and spread of its fields, one
model's answer per node; the constants they share; and :func:`paused_gc` for reading thousands."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rigcheck.core.machine import Machine
from rigcheck.core.report.report import Report
from rigcheck.core.text import one_line
from rigcheck.core.verdict_words import Words, placement_words, verdict_where

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
