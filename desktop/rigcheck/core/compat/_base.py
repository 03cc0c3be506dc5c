"""Findings, checks and the machine facts every evaluator reads; version helpers."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from rigcheck.core.catalog import Catalog
from rigcheck.core.i18n import tr
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
    #: True / False: whether the software is on this machine; None: not something one installs (a driver,
    #: a GPU's precision support)
    installed: bool | None = None
    #: why it is not ok, one of :data:`CAUSES` (None when ok)
    cause: str | None = None
    #: the changes that make it ok, machine-readable: "driver:580.65.06", "torch:2.14.1+cu126", "rocm:6.3",
    #: "python:3.12"
    #: (empty when nothing on this machine can fix it); ``rigcheck.core.compat.apply_actions`` applies them
    actions: tuple[str, ...] = ()
    #: what following the fix also changes ("replaces torch 2.6.0+cu124 with torch 2.13.0")
    side_effect: str | None = None
    #: the finding (its subject: "torch 2.6.0+cu124") whose failure blocks this one; it is fixed first, and
    #: the root causes count it once
    blocked_by: str | None = None


@dataclass(frozen=True)
class Check:
    """The outcome of one requirement, before it becomes (part of) a finding."""

    status: Status
    reason: str
    fix: str | None = None
    source: str | None = None
    command: str | None = None
    cause: str | None = None
    actions: tuple[str, ...] = ()

    def finding(
        self, framework: str, subject: str, gpu_index: int | None, *, installed: bool | None
    ) -> Finding:
        """This outcome as the finding about ``subject``, carrying everything it says."""
        return Finding(
            framework, subject, gpu_index, self.status, self.reason, self.fix, self.source, self.command,
            installed=installed, cause=self.cause, actions=self.actions,
        )  # fmt: skip


def worst(statuses: Iterable[Status]) -> Status:
    return min(statuses, key=STATUS_RANK.__getitem__, default="ok")


#: the stable cause ids, most fundamental first: when several requirements fail, the first of these names the
#: finding's cause (a GPU that lacks the architecture is the story, not the old driver next to it)
CAUSES = (
    "no-gpu",  # GPU-only software on a machine without a suitable GPU
    "vendor-only",  # software for another vendor's GPUs (TensorRT-LLM on AMD)
    "arch-unsupported",  # the GPU's architecture (CC, gfx target) lacks it; no update changes that
    "os-unsupported",
    "driver-unsupported",  # the fix needs a driver branch this GPU cannot run
    "driver-too-old",
    "driver-eol",  # the driver branch is past its end of life
    "no-driver",
    "rocm-too-old",
    "rocm-missing",
    "python-unsupported",
    "cpu-unsupported",
    "toolkit-too-old",
    "torch-too-old",
    "wheel-cuda-mismatch",  # the installed wheel has no kernels for this GPU or needs a newer driver
    "arch-unofficial",  # runs only through an unofficial override
    "not-official",  # runs, with community support only
    "limited",  # runs, without a feature
    "missing-fact",  # no documented answer: the reason names the missing fact
)
_CAUSE_RANK = {cause: rank for rank, cause in enumerate(CAUSES)}
#: causes no software change on this machine can fix
HARDWARE_CAUSES = frozenset(
    {"no-gpu", "vendor-only", "arch-unsupported", "os-unsupported", "driver-unsupported"}
)


def combine(checks: Sequence[Check]) -> Check:
    """One check from several: the worst status; its reasons (all of them when everything is ok).

    The cause is the most fundamental one among the worst checks; the actions are every failing check's,
    unless the cause is one no change can fix (then nothing is proposed)."""
    if not checks:
        return Check("ok", tr("no requirement applies"))
    status = worst(c.status for c in checks)
    shown = checks if status == "ok" else sorted((c for c in checks if c.status != "ok"), key=_rank)
    leading = sorted((c for c in shown if c.status == status), key=_cause_rank)
    cause = next((c.cause for c in leading if c.cause), None) if status != "ok" else None
    if status == "unknown" and cause is None:
        cause = "missing-fact"
    actions: tuple[str, ...] = ()
    if cause in HARDWARE_CAUSES:
        # the hardware is the story: an old driver next to it changes nothing, so it is not mentioned
        shown = leading = [c for c in leading if c.cause in HARDWARE_CAUSES]
    fix = next((c.fix for c in leading if c.fix), None)
    if cause not in HARDWARE_CAUSES and status != "ok":
        actions = merge_actions(a for c in shown for a in c.actions)
        # every change the actions take, in words: the driver update and the torch to install, say
        fixes = [c.fix for c in sorted(shown, key=_cause_rank) if c.fix and c.actions]
        if len(dict.fromkeys(fixes)) > 1:
            fix = " ".join(dict.fromkeys(fixes))
    return Check(
        status,
        "; ".join(dict.fromkeys(c.reason for c in shown)),
        fix=fix,
        source=next((c.source for c in leading if c.source), None),
        command=next((c.command for c in leading if c.command), None),
        cause=cause,
        actions=actions,
    )


def merge_actions(actions: Iterable[str]) -> tuple[str, ...]:
    """Actions without duplicates; of two driver floors only the higher one."""
    result: dict[str, str] = {}
    for action in actions:
        kind, _, value = action.partition(":")
        if kind == "driver" and kind in result:
            old, new = version(result[kind].partition(":")[2]), version(value)
            if old is not None and new is not None and new <= old:
                continue
        result[kind] = action
    return tuple(result.values())


def _rank(check: Check) -> int:
    return STATUS_RANK[check.status]


def _cause_rank(check: Check) -> int:
    return _CAUSE_RANK.get(check.cause or "", len(CAUSES))


# -- versions --------------------------------------------------------------------------------------

_MINOR = re.compile(r"(\d+)\.(\d+)")


# Memoised: the compatibility matrices' versions and ranges are parsed once per process, not once per
# rule per machine (a fleet of snapshots asked for the same few hundred strings ~700k times).
@functools.lru_cache(maxsize=8192)
def version(text: str | None) -> Version | None:
    if not text:
        return None
    try:
        return Version(text.strip())
    except InvalidVersion:
        return None


@functools.lru_cache(maxsize=8192)
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
    specifiers = _specifiers(spec)
    return None if specifiers is None else specifiers.contains(value, prereleases=True)


@functools.lru_cache(maxsize=4096)
def _specifiers(spec: str) -> SpecifierSet | None:
    try:
        return SpecifierSet(spec)
    except InvalidSpecifier:
        return None


# -- the machine, as the rules ask about it --------------------------------------------------------


class Facts:
    """What the evaluators need from a machine, read once: each fact is None when the snapshot lacks it."""

    def __init__(self, machine: Machine, catalog: Catalog, today: date | None = None) -> None:
        self.machine = machine
        self.catalog = catalog
        host = machine.host
        #: the OS the software sees; WSL is Linux to pip and vLLM
        self.os: str | None = host.os
        self.wsl = host.container == "wsl"
        #: whose driver-version column applies: WSL runs the Windows driver
        self.driver_platform: str | None = (
            "windows"
            if host.os == "windows" or self.wsl or "microsoft" in (host.kernel or "").lower()
            else "linux"
            if host.os == "linux"
            else None
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
        #: the day lifecycles are judged on (ISO "YYYY-MM-DD"): the snapshot's ``taken_at``, else today by the
        #: clock (``today`` stands in for the clock in tests); ``as_of_source`` says which
        self.as_of, self.as_of_source = judged_on(machine, today)
        #: "YYYY-MM" of that day: driver branches end of life by the month
        self.month: str = self.as_of[:7]
        from rigcheck.core.compat._platform import platform_of

        #: OS, architecture, glibc, Jetson/JetPack, WSL — also recognised in snapshots without those fields
        self.platform = platform_of(machine)
        #: True / False when the CPU architecture is known, None otherwise
        self.x86: bool | None = self.platform.arch == "x86_64" if self.platform.arch else None
        self.arm = self.platform.arch == "aarch64"
        self.wsl = self.wsl or self.platform.wsl
        self.jetson = self.platform.jetson

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


_ISO_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def judged_on(machine: Machine, today: date | None = None) -> tuple[str, str]:
    """(ISO day, "snapshot" | "clock"): the day a machine is judged as of. A snapshot says when it was taken;
    one that does not (or holds no readable date) is judged as of today, never as if no time had passed."""
    match = _ISO_DAY.match(machine.taken_at or "")
    if match is not None:
        try:
            return date(*(int(g) for g in match.groups())).isoformat(), "snapshot"
        except ValueError:
            pass
    return (today or datetime.now(UTC).date()).isoformat(), "clock"


OS_NAMES = {"linux": "Linux", "windows": "Windows", "macos": "macOS", "other": "this OS"}
