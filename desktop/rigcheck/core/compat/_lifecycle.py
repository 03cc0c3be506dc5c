"""Lifecycles: NVIDIA driver branches (end of life, the last branch per architecture), the driver to advise.

A branch is judged as of the snapshot's day (its ``taken_at``, else today by the clock), and the finding names
that day: one whose end of life has passed, or that NVIDIA's newest table no longer lists, is out of support.
Advice names the lowest supported long-term or production branch that meets the need and that every NVIDIA GPU
here can run; for Maxwell, Pascal and Volta that is R580 at most ([[arch]] ``last_driver_branch``), so "580 or
newer" is never proposed where newer would drop the GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

from rigcheck.core.catalog import DriverBranch
from rigcheck.core.compat._base import Facts, version
from rigcheck.core.compat._precision import arch_of
from rigcheck.core.i18n import month_year, tr


@dataclass(frozen=True)
class DriverAdvice:
    """The driver to install: at least ``version``, on ``branch``; ``text`` says so in one sentence."""

    version: str
    branch: str | None
    text: str


def branch_of(text: str | None) -> int | None:
    parsed = version(text)
    return parsed.major if parsed is not None else None


def month_name(month: str) -> str:
    """``"2028-06"`` -> ``"June 2028"``."""
    year, number = month.split("-")
    return month_year(int(year), int(number))


def last_branch(facts: Facts) -> tuple[int, str] | None:
    """The newest branch every NVIDIA GPU here can run, with the architecture that limits it (None: none)."""
    limits = []
    for _, gpu in facts.gpus_of("nvidia"):
        arch = arch_of(facts.catalog, gpu)
        if arch is not None and arch.last_driver_branch:
            limits.append((int(arch.last_driver_branch), arch.name))
    return min(limits) if limits else None


def branch_entry(facts: Facts, branch: int) -> DriverBranch | None:
    return next((b for b in facts.catalog.driver_branches if b.branch == str(branch)), None)


def is_current(facts: Facts, entry: DriverBranch) -> bool:
    """Still supported in the month the machine is judged as of."""
    if entry.designation in ("legacy", "nfb") and entry.eol is None:
        return False
    return entry.eol is None or entry.eol >= facts.month


def as_of(facts: Facts) -> str:
    """ "as of 2026-12-01" — and, when the snapshot does not say when it was taken, that this is today."""
    if facts.as_of_source == "snapshot":
        return tr("as of {day}, when the snapshot was taken", day=facts.as_of)
    return tr("as of today, {day} (the snapshot does not say when it was taken)", day=facts.as_of)


def _first_driver(facts: Facts, branch: int) -> str | None:
    """The lowest Linux driver of ``branch`` any catalogued CUDA release names (580 -> "580.65.06")."""
    found = [
        v
        for r in facts.catalog.cuda_releases
        if (v := r.min_linux_driver) and branch_of(v) == branch and version(v) is not None
    ]
    return min(found, key=lambda v: version(v) or Version("0")) if found else None


def advise(facts: Facts, need: str) -> DriverAdvice | None:
    """The driver for software needing ``need`` or newer; None when no branch this machine can run has it."""
    wanted = version(need)
    if wanted is None:
        return None
    limit = last_branch(facts)
    if limit is not None and wanted.major > limit[0]:
        return None
    if facts.wsl:
        return DriverAdvice(
            need,
            None,
            tr(
                "Update the NVIDIA driver on Windows to {need} or newer: WSL2 uses the Windows "
                "driver (do not "
                "install a Linux driver inside WSL).",
                need=need,
            ),
        )
    if facts.driver_platform == "windows":
        return DriverAdvice(need, None, tr("Update the NVIDIA driver to {need} or newer.", need=need))
    branches = sorted(
        (
            b
            for b in facts.catalog.driver_branches
            if b.designation in ("ltsb", "pb") and is_current(facts, b)
        ),
        key=lambda b: int(b.branch),
    )
    for entry in branches:
        number = int(entry.branch)
        if number < wanted.major or (limit is not None and number > limit[0]):
            continue
        first = _first_driver(facts, number)
        floor = need if wanted.major == number else first or entry.branch
        if first and wanted.major == number and (version(first) or wanted) > wanted:
            floor = first
        kind = tr("long-term support") if entry.designation == "ltsb" else tr("production branch")
        until = ", " + tr("{kind} until {month}", kind=kind, month=month_name(entry.eol)) if entry.eol else ""
        last = (
            "; " + tr("R{branch} is the last branch for {gpus}", branch=number, gpus=limit[1])
            if limit is not None and limit[0] == number
            else ""
        )
        return DriverAdvice(
            floor,
            entry.branch,
            tr(
                "Update the NVIDIA driver to the R{branch} branch ({floor} or a later {branch}.xx{details}).",
                branch=number,
                floor=floor,
                details=until + last,
            ),
        )
    if limit is not None:
        return None
    return DriverAdvice(need, None, tr("Update the NVIDIA driver to {need} or newer.", need=need))


def cuda_of_driver(facts: Facts, driver: str) -> str | None:
    """The newest CUDA "X.Y" whose release notes' Linux driver this driver meets (as nvidia-smi prints)."""
    have = version(driver)
    if have is None:
        return None
    best: tuple[int, int] | None = None
    for release in facts.catalog.cuda_releases:
        need = version(release.min_linux_driver)
        parsed = version(release.version)
        if need is not None and parsed is not None and need <= have:
            pair = (parsed.major, parsed.minor)
            best = max(best, pair) if best else pair
    return f"{best[0]}.{best[1]}" if best else None


def branch_status(facts: Facts) -> tuple[str, str, DriverAdvice | None] | None:
    """("ok"|"warn", reason, advice) for the installed driver's branch; None when there is nothing to say."""
    number = branch_of(facts.driver_text)
    if number is None or facts.driver_platform != "linux" or facts.jetson:
        return None  # Windows drivers and Jetson's (part of JetPack) follow other lifecycles
    limit = last_branch(facts)
    entry = branch_entry(facts, number)
    if limit is not None and number == limit[0]:
        note = tr("R{branch} is the last driver branch for {gpus}", branch=number, gpus=limit[1])
        if entry is not None and entry.eol and entry.eol >= facts.month:
            note += " " + tr("(supported until {month})", month=month_name(entry.eol))
        if entry is None or is_current(facts, entry):
            return "ok", f"{note}, {as_of(facts)}", None
        why = tr(
            "R{branch} reached its end of life in {month}: it gets no more security fixes",
            branch=number,
            month=month_name(entry.eol or facts.month),
        )
        return "warn", f"{note}; {why}, {as_of(facts)}", None
    current = [
        b for b in facts.catalog.driver_branches if b.designation in ("ltsb", "pb") and is_current(facts, b)
    ]
    if entry is not None and is_current(facts, entry):
        if entry.eol:
            until = tr("R{branch} is supported until {month}", branch=number, month=month_name(entry.eol))
            return "ok", f"{until}, {as_of(facts)}", None
        return "ok", f"{tr('R{branch} is supported', branch=number)}, {as_of(facts)}", None
    if entry is not None and entry.eol:
        why = tr(
            "R{branch} reached its end of life in {month}: it gets no more security fixes",
            branch=number,
            month=month_name(entry.eol),
        )
    elif entry is not None and entry.designation == "legacy":
        why = tr(
            "R{branch} is a legacy branch that is no longer maintained: it gets no more security fixes",
            branch=number,
        )
    else:
        names = ", ".join(f"R{b.branch}" for b in sorted(current, key=lambda b: int(b.branch)))
        why = tr(
            "R{branch} is not among NVIDIA's supported branches ({names}): it gets no more security fixes",
            branch=number,
            names=names,
        )
    advice = advise(facts, str(number + 1))
    return "warn", f"{why}, {as_of(facts)}", advice
