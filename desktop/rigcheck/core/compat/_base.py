"""Findings, checks and the machine facts every evaluator reads; version helpers."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from rigcheck.core.catalog import Catalog
from rigcheck.core.machine import GPU, Machine

Status = Literal["ok", "warn", "fail", "unknown"]

#: worst first, for combining checks: a failure outranks "cannot tell", which outranks "runs with limits"
STATUS_RANK: dict[Status, int] = {"fail": 0, "unknown": 1, "warn": 2, "ok": 3}
#: the order reports list findings in: what needs doing first, then what cannot be told
DISPLAY_RANK: dict[Status, int] = {"fail": 0, "warn": 1, "unknown": 2, "ok": 3}


@dataclass(frozen=True)
class Finding:
    """One verdict: does ``framework`` (about ``subject``) work on GPU ``gpu_index`` (None: the machine)?"""

    framework: str
    subject: str
    gpu_index: int | None
    status: Status
    reason: str
    #: one concrete sentence saying what to do; None when there is nothing to do
    fix: str | None = None
    #: where the deciding fact comes from (a URL or repo/path@commit from the catalog)
    source: str | None = None
    #: a copyable shell command, when there is one
    command: str | None = None


@dataclass(frozen=True)
class Check:
    """The outcome of one requirement, before it becomes (part of) a finding."""

    status: Status
    reason: str
    fix: str | None = None
    source: str | None = None
    command: str | None = None


def worst(statuses: Iterable[Status]) -> Status:
    return min(statuses, key=STATUS_RANK.__getitem__, default="ok")


def combine(checks: Sequence[Check]) -> Check:
    """One check from several: the worst status; its reasons (all of them when everything is ok)."""
    if not checks:
        return Check("ok", "no requirement applies")
    status = worst(c.status for c in checks)
    shown = checks if status == "ok" else sorted((c for c in checks if c.status != "ok"), key=_rank)
    leading = [c for c in shown if c.status == status]
    return Check(
        status,
        "; ".join(dict.fromkeys(c.reason for c in shown)),
        fix=next((c.fix for c in leading if c.fix), None),
        source=next((c.source for c in leading if c.source), None),
        command=next((c.command for c in leading if c.command), None),
    )


def _rank(check: Check) -> int:
    return STATUS_RANK[check.status]


# -- versions --------------------------------------------------------------------------------------

_MINOR = re.compile(r"(\d+)\.(\d+)")


def version(text: str | None) -> Version | None:
    if not text:
        return None
    try:
        return Version(text.strip())
    except InvalidVersion:
        return None


def minor(text: str | None) -> tuple[int, int] | None:
    """``"12.4.131"`` -> (12, 4); also compute capabilities (``"8.9"``) and Python versions."""
    match = _MINOR.match(text.strip()) if text else None
    return (int(match.group(1)), int(match.group(2))) if match else None


def dotted(pair: tuple[int, int]) -> str:
    return f"{pair[0]}.{pair[1]}"


def in_range(spec: str, value: Version) -> bool | None:
    """Whether ``value`` is in the PEP 440 range ``spec`` ("" = everything); None for a bad range."""
    if not spec.strip():
        return True
    try:
        return SpecifierSet(spec).contains(value, prereleases=True)
    except InvalidSpecifier:
        return None


# -- the machine, as the rules ask about it --------------------------------------------------------


class Facts:
    """What the evaluators need from a machine, read once: each fact is None when the snapshot lacks it."""

    def __init__(self, machine: Machine, catalog: Catalog) -> None:
        self.machine = machine
        self.catalog = catalog
        host = machine.host
        #: the OS the software sees; WSL is Linux to pip and vLLM
        self.os: str | None = host.os
        self.wsl = host.container == "wsl"
        #: whose driver-version column applies: WSL runs the Windows driver
        self.driver_platform: str | None = (
            "windows" if host.os == "windows" or self.wsl else "linux" if host.os == "linux" else None
        )
        self.python = minor(host.python)
        self.driver_text = machine.drivers.nvidia
        self.driver = version(machine.drivers.nvidia)
        self.cuda_driver = minor(machine.drivers.cuda_driver)
        self.rocm_text = machine.drivers.rocm
        self.rocm = minor(machine.drivers.rocm)
        self.packages = machine.software.python_packages
        self.torch_text = self.packages.get("torch")
        self.torch = version(self.torch_text)
        self.cpu_flags = frozenset(machine.cpu.flags)
        arch = (machine.cpu.arch or "").lower()
        #: True / False when the CPU architecture is known, None otherwise
        self.x86: bool | None = arch in ("x86_64", "amd64", "x64") if arch else None
        self.arm = arch in ("arm64", "aarch64")

    @property
    def gpus(self) -> tuple[tuple[int, GPU], ...]:
        return tuple(
            (gpu.index if gpu.index is not None else pos, gpu) for pos, gpu in enumerate(self.machine.gpus)
        )

    def gpus_of(self, vendor: str) -> tuple[tuple[int, GPU], ...]:
        return tuple((i, g) for i, g in self.gpus if g.vendor == vendor)

    @property
    def in_container(self) -> bool:
        return self.machine.host.container not in (None, "wsl")


OS_NAMES = {"linux": "Linux", "windows": "Windows", "macos": "macOS", "other": "this OS"}
