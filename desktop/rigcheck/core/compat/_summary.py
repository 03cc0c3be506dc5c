"""Root causes first: findings grouped by what is wrong, and the one change that fixes the most.

Every sentence a user reads about a cause or an action is built here, whole, so that a later translation
has one place to go.

``bucket`` sorts a finding for display: ``problem`` (something on this machine is broken or limited),
``unknown`` (no documented answer), ``not-here`` (not installed, and this hardware cannot run it: shown muted,
never as a red failure), ``limited`` (not installed; it would run with limits), ``ok``.

``apply_actions`` applies a finding's machine-readable actions to a snapshot (the driver a fix names, with the
CUDA version that driver reports; a torch wheel; a ROCm version): the summary's "fixes N" is counted by
re-checking the changed snapshot, never guessed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from rigcheck.core.catalog import Catalog
from rigcheck.core.compat._base import CAUSES, HARDWARE_CAUSES, Facts, Finding, merge_actions
from rigcheck.core.i18n import tr
from rigcheck.core.machine import Machine

BUCKETS = ("problem", "unknown", "not-here", "limited", "ok")
_PRECISIONS = frozenset({"bf16", "fp8", "fp4"})

#: one sentence per cause, naming what blocks; "{n}" is filled with "1 thing" / "6 things"
CAUSE_TITLES: dict[str, str] = {
    "no-gpu": "Needs a GPU this machine lacks: {n}.",
    "vendor-only": "Made for another vendor's GPUs: {n}.",
    "arch-unsupported": "This GPU's architecture lacks {n}; no driver or package update changes that.",
    "os-unsupported": "Not supported on this operating system: {n}.",
    "driver-unsupported": "Needs a driver branch this GPU cannot run: {n}.",
    "driver-too-old": "An old NVIDIA driver ({driver}) blocks {n}.",
    "driver-eol": "The NVIDIA driver branch is past its end of life ({driver}).",
    "no-driver": "The NVIDIA driver could not be read, so {n} could not be checked.",
    "rocm-too-old": "An old ROCm ({rocm}) blocks {n}.",
    "rocm-missing": "ROCm is not installed; needed by {n}.",
    "python-unsupported": "This Python ({python}) is not supported by {n}.",
    "cpu-unsupported": "The CPU lacks instructions needed by {n}.",
    "toolkit-too-old": "The CUDA toolkit is too old to build for this GPU: {n}.",
    "torch-too-old": "The installed PyTorch ({torch}) is too old for {n}.",
    "wheel-cuda-mismatch": "The installed PyTorch wheel ({torch}) does not fit this GPU or driver: {n}.",
    "arch-unofficial": "Runs only through an unofficial override on this GPU: {n}.",
    "not-official": "Community support only on this GPU: {n}.",
    "limited": "Runs without some features: {n}.",
    "missing-fact": "No documented answer for {n}; the reason names the missing fact.",
}


def _things(n: int) -> str:
    return tr("1 thing") if n == 1 else tr("{n} things", n=n)


def _count(findings: Iterable[Finding]) -> int:
    """How many things: a check that several GPUs share counts once (an 8-GPU server's vLLM is one thing)."""
    return len({(f.framework, f.subject) for f in findings})


def _names(findings: Iterable[Finding]) -> str:
    """ "vllm, xformers ×2": each framework once, with how many GPUs it concerns when more than one."""
    counts = Counter(f.framework for f in findings)
    return ", ".join(name + (f" ×{n}" if n > 1 else "") for name, n in counts.items())


def bucket(finding: Finding) -> str:
    """Where a finding is shown: see the module docstring."""
    if finding.status == "ok":
        return "ok"
    if finding.status == "unknown":
        return "unknown"
    hardware_feature = finding.framework in _PRECISIONS and finding.cause in HARDWARE_CAUSES
    if finding.installed is False or hardware_feature:
        return "not-here" if finding.status == "fail" or hardware_feature else "limited"
    return "problem"


def describe_action(action: str, catalog: Catalog | None = None) -> str:
    """A machine-readable action as a short imperative phrase ("update the NVIDIA driver to 580.65.06")."""
    kind, _, value = action.partition(":")
    if kind == "driver":
        branch = value.split(".")[0]
        return tr(
            "update the NVIDIA driver to the R{branch} branch ({version} or later)",
            branch=branch,
            version=value,
        )
    if kind == "torch":
        return tr("install torch {version}", version=value)
    if kind == "rocm":
        return tr("upgrade ROCm to {version}", version=value)
    if kind == "python":
        return tr("use Python {version}", version=value)
    return action


@dataclass(frozen=True)
class CauseGroup:
    """Findings that share one cause, the actions that fix them all, and the fix most of them name."""

    cause: str
    title: str
    findings: tuple[Finding, ...]
    actions: tuple[str, ...] = ()
    fix: str | None = None

    def json(self) -> dict[str, Any]:
        return {
            "cause": self.cause,
            "title": self.title,
            "actions": list(self.actions),
            "fix": self.fix,
            "findings": [
                {"framework": f.framework, "gpu_index": f.gpu_index, "subject": f.subject}
                for f in self.findings
            ],
        }


@dataclass(frozen=True)
class Summary:
    """The machine in one sentence: the change that fixes the most, and what it fixes."""

    sentence: str
    groups: tuple[CauseGroup, ...]
    best_actions: tuple[str, ...] = ()
    fixes: tuple[Finding, ...] = ()

    def json(self) -> dict[str, Any]:
        return {
            "sentence": self.sentence,
            "actions": list(self.best_actions),
            "fixes": [{"framework": f.framework, "gpu_index": f.gpu_index} for f in self.fixes],
        }


def _fill(template: str, n: int, finding: Finding, machine: Machine | None) -> str:
    drivers = machine.drivers if machine is not None else None
    packages = machine.software.python_packages if machine is not None else {}
    python = machine.host.python if machine is not None else None
    return tr(
        template,
        n=_things(n),
        driver=(drivers.nvidia if drivers else None) or tr("unknown version"),
        rocm=(drivers.rocm if drivers else None) or tr("unknown version"),
        torch=packages.get("torch") or tr("not installed"),
        python=python or tr("unknown version"),
    )


def root_causes(findings: Sequence[Finding], machine: Machine | None = None) -> tuple[CauseGroup, ...]:
    """Findings that are not ok, grouped by cause; the biggest, most fundamental first.

    Only problems and unknowns count: software that is not installed and cannot run here is listed (muted)
    under its finding, not blamed on the machine."""
    groups: dict[str, list[Finding]] = {}
    for finding in findings:
        if bucket(finding) not in ("problem", "unknown") or finding.cause is None:
            continue
        groups.setdefault(finding.cause, []).append(finding)
    result = []
    for cause, members in groups.items():
        # what a broken torch blocks is counted under the torch, once: "… 1 thing; it blocks 3 more …"
        own = [f for f in members if f.blocked_by is None]
        blocked = [f for f in members if f.blocked_by is not None]
        title = _fill(CAUSE_TITLES.get(cause, "{n}: " + cause), len(own) or len(members), members[0], machine)
        if own and blocked:
            title += " " + tr(
                "The installed PyTorch also blocks {things} that run on it ({names}).",
                things=_things(_count(blocked)),
                names=_names(blocked),
            )
        fixes = Counter(f.fix for f in members if f.fix)
        fix = fixes.most_common(1)[0][0] if fixes else None
        actions = merge_actions(a for f in members for a in f.actions)
        result.append(CauseGroup(cause, title, tuple(members), actions, fix))
    rank = {c: i for i, c in enumerate(CAUSES)}
    return tuple(sorted(result, key=lambda g: (-len(g.findings), rank.get(g.cause, len(CAUSES)))))


def apply_actions(machine: Machine, catalog: Catalog, actions: Iterable[str]) -> Machine:
    """The snapshot as it would be after the actions: driver, torch, ROCm or Python changed, nothing else."""
    from rigcheck.core.compat._lifecycle import cuda_of_driver

    for action in actions:
        kind, _, value = action.partition(":")
        if kind == "driver":
            cuda = cuda_of_driver(Facts(machine, catalog), value)
            machine = replace(machine, drivers=replace(machine.drivers, nvidia=value, cuda_driver=cuda))
        elif kind == "torch":
            packages = {**machine.software.python_packages, "torch": value}
            machine = replace(machine, software=replace(machine.software, python_packages=packages))
        elif kind == "rocm":
            text = value if value.count(".") >= 2 else f"{value}.0"
            machine = replace(machine, drivers=replace(machine.drivers, rocm=text))
        elif kind == "python":
            machine = replace(machine, host=replace(machine.host, python=f"{value}.0"))
    return machine


def _key(finding: Finding) -> tuple[str, int | None, str]:
    """The same check before and after a change (its subject names versions that the change replaces)."""
    subject = finding.subject if finding.framework == "cuda-toolkit" else ""
    return finding.framework, finding.gpu_index, subject


def summarize(
    machine: Machine, catalog: Catalog, findings: Sequence[Finding], today: date | None = None
) -> Summary:
    """Root causes, and the single change (one finding's set of actions) that turns the most findings OK
    (re-checked as of the same day as ``findings``)."""
    from rigcheck.core.compat import check_compat

    groups = root_causes(findings, machine)
    open_ = {_key(f): f for f in findings if bucket(f) != "ok"}
    best: tuple[tuple[str, ...], list[Finding], list[Finding]] = ((), [], [])
    for actions in dict.fromkeys(f.actions for f in findings if f.actions and f.status != "ok"):
        after = check_compat(apply_actions(machine, catalog, actions), catalog, today)
        fixed = [open_[_key(f)] for f in after if f.status == "ok" and _key(f) in open_]
        problems = [f for f in fixed if bucket(f) in ("problem", "unknown")]
        others = [f for f in fixed if bucket(f) not in ("problem", "unknown")]
        if (len(problems), len(others)) > (len(best[1]), len(best[2])):
            best = (actions, problems, others)
    actions, problems, others = best
    remaining = _count(f for f in findings if bucket(f) == "problem")
    if not actions or not problems:
        if remaining:
            sentence = tr(
                "{things} need attention; no single driver, ROCm or PyTorch change fixes them.",
                things=_things(remaining).capitalize(),
            )
        else:
            sentence = tr("Nothing installed here is broken.")
        if actions and others:
            what = tr(" and ").join(describe_action(a, catalog) for a in actions)
            sentence += " " + tr(
                "It would also let {things} run here ({names}) if you {what}.",
                things=_things(_count(others)),
                names=_names(others),
                what=what,
            )
        return Summary(sentence, groups, actions if others else (), tuple(others))
    what = tr(" and ").join(describe_action(a, catalog) for a in actions)
    values = {"what": what, "things": _things(_count(problems)), "names": _names(problems)}
    sentence = (
        tr(
            "The one change that fixes the most: {what}; it makes {things} OK ({names}) and lets "
            "{more} more run here.",
            more=_things(_count(others)),
            **values,
        )
        if others
        else tr("The one change that fixes the most: {what}; it makes {things} OK ({names}).", **values)
    )
    return Summary(sentence, groups, actions, tuple(problems + others))
