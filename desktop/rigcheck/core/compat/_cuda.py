"""The NVIDIA driver against CUDA versions: [[cuda_release]] toolkit drivers and [[cuda_major]] floors."""

from __future__ import annotations

from dataclasses import replace

from packaging.version import Version

from rigcheck.core.catalog import CudaMajor, CudaRelease
from rigcheck.core.compat._base import Check, Facts, Finding, Status, combine, dotted, minor, version
from rigcheck.core.i18n import tr
from rigcheck.core.machine import GPU

MINOR_COMPAT = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"


def _driver_of(record: CudaRelease | CudaMajor, platform: str) -> str | None:
    return record.min_windows_driver if platform == "windows" else record.min_linux_driver


def toolkit_driver(facts: Facts, cuda: tuple[int, int]) -> tuple[str, CudaRelease] | None:
    """The lowest driver any catalogued X.Y.* release of ``cuda`` needs on this platform (its GA's)."""
    if facts.driver_platform is None:
        return None
    found = [
        (v, r)
        for r in facts.catalog.cuda_releases
        if minor(r.version) == cuda and (v := _driver_of(r, facts.driver_platform)) and version(v)
    ]
    return min(found, key=lambda pair: version(pair[0]) or Version("0")) if found else None


def major_of(facts: Facts, major: int) -> CudaMajor | None:
    return next((m for m in facts.catalog.cuda_majors if m.major == major), None)


def major_floor(facts: Facts, major: int) -> str | None:
    record = major_of(facts, major)
    return _driver_of(record, facts.driver_platform) if record and facts.driver_platform else None


def _update_driver(facts: Facts, floor: str | None, what: str, check: Check) -> Check:
    """``check`` with the advice to update the driver to ``floor`` — or, where no branch this GPU can run
    reaches it, with the cause "driver-unsupported" and no driver advice at all."""
    from rigcheck.core.compat._lifecycle import advise, last_branch

    if floor is None:
        fix = (
            tr(
                "Update the NVIDIA driver on Windows to one that supports {what}: WSL2 uses the "
                "Windows driver "
                "(do not install a Linux driver inside WSL).",
                what=what,
            )
            if facts.wsl
            else tr("Update the NVIDIA driver to one that supports {what}.", what=what)
        )
        return replace(check, fix=fix, cause="driver-too-old")
    if facts.jetson:
        # the driver is part of Jetson Linux (L4T): it changes only with a JetPack release
        jetpack = facts.platform.jetpack_text
        return replace(
            check,
            fix=tr(
                "On a Jetson the driver comes with JetPack{version} and cannot be updated on its "
                "own: it takes a "
                "JetPack release whose driver supports {what}, or a build made for this JetPack.",
                version=f" {jetpack}" if jetpack else "",
                what=what,
            ),
            # nothing installable changes it: like a driver branch the GPU cannot run (no half fixes proposed)
            cause="driver-unsupported",
            actions=(),
        )
    advice = advise(facts, floor)
    if advice is None:
        limit = last_branch(facts)
        reason = (
            tr(
                "{what} needs driver {floor} or newer, and R{branch} is the last driver branch for {gpus}",
                what=what,
                floor=floor,
                branch=limit[0],
                gpus=limit[1],
            )
            if limit
            else tr(
                "{what} needs driver {floor} or newer, and no supported branch has it", what=what, floor=floor
            )
        )
        return replace(
            check,
            reason=f"{check.reason}; {reason}",
            fix=None,
            cause="driver-unsupported",
        )
    return replace(check, fix=advice.text, cause="driver-too-old", actions=(f"driver:{advice.version}",))


def driver_supports(facts: Facts, cuda_text: str, what: str) -> Check:
    """Can the driver run software built with CUDA ``cuda_text``? ``what`` names that software."""
    cuda = minor(cuda_text)
    if cuda is None:
        return Check(
            "unknown",
            tr("{what}: CUDA version {cuda} is not readable", what=what, cuda=repr(cuda_text)),
            cause="missing-fact",
        )
    need = toolkit_driver(facts, cuda)
    floor = major_floor(facts, cuda[0])
    major = major_of(facts, cuda[0])
    major_source = major.source if major else MINOR_COMPAT
    if facts.cuda_driver is not None:
        reported = dotted(facts.cuda_driver)
        if cuda <= facts.cuda_driver:
            return Check(
                "ok",
                tr(
                    "the driver supports CUDA {reported} ≥ {cuda} ({what})",
                    reported=reported,
                    cuda=dotted(cuda),
                    what=what,
                ),
            )
        if cuda[0] == facts.cuda_driver[0]:
            check = Check(
                "warn",
                tr(
                    "the driver supports CUDA {reported}, older than {what}'s {cuda}: it runs through CUDA "
                    "minor-version compatibility (features that need a newer driver, such as JIT "
                    "of newer PTX, fail)",
                    reported=reported,
                    what=what,
                    cuda=dotted(cuda),
                ),
                source=MINOR_COMPAT,
            )
            return _update_driver(
                facts, need[0] if need else None, f"full CUDA {dotted(cuda)} support", check
            )
        check = Check(
            "fail",
            tr(
                "the driver supports CUDA {reported}; {what} needs a CUDA {major} driver",
                reported=reported,
                what=what,
                major=cuda[0],
            ),
            source=major_source,
        )
        return _update_driver(facts, floor, f"CUDA {cuda[0]}.x", check)
    if facts.driver is None:
        return Check(
            "unknown",
            tr(
                "{what} needs a driver for CUDA {cuda}, and the NVIDIA driver version is not known",
                what=what,
                cuda=dotted(cuda),
            ),
            fix=tr("Install the NVIDIA driver, or check that nvidia-smi works, then run the check again."),
            cause="no-driver",
        )
    if facts.driver_platform is None:
        return Check(
            "unknown",
            tr("the OS is not known, so the driver table for CUDA {cuda} cannot be read", cuda=dotted(cuda)),
        )
    if need is not None and facts.driver >= Version(need[0]):
        return Check(
            "ok",
            tr(
                "driver {driver} ≥ {need} for CUDA {cuda} ({what})",
                driver=facts.driver_text,
                need=need[0],
                cuda=dotted(cuda),
                what=what,
            ),
        )
    floor_version = version(floor)
    if floor_version is not None and facts.driver >= floor_version:
        needed = (
            " " + tr("(CUDA {cuda} itself ships with {need})", cuda=dotted(cuda), need=need[0])
            if need
            else ""
        )
        check = Check(
            "warn",
            tr(
                "driver {driver} is older than CUDA {cuda}'s{needed}: {what} runs through CUDA minor-version "
                "compatibility (≥ {floor}), without features that need a newer driver",
                driver=facts.driver_text,
                cuda=dotted(cuda),
                needed=needed,
                what=what,
                floor=floor,
            ),
            source=MINOR_COMPAT,
        )
        full = tr("full CUDA {cuda} support", cuda=dotted(cuda))
        return _update_driver(facts, need[0] if need else None, full, check)
    if floor is None:
        return Check(
            "unknown",
            tr(
                "the catalog has no driver floor for CUDA {major} on this OS ({what})",
                major=cuda[0],
                what=what,
            ),
            cause="missing-fact",
        )
    check = Check(
        "fail",
        tr(
            "driver {driver} is older than {floor}, the least any CUDA {major} software needs ({what})",
            driver=facts.driver_text,
            floor=floor,
            major=cuda[0],
            what=what,
        ),
        source=major_source,
    )
    return _update_driver(facts, floor, f"CUDA {cuda[0]}.x", check)


def driver_findings(facts: Facts) -> list[Finding]:
    """The NVIDIA driver itself: readable, which CUDA majors it can run, and its branch's lifecycle."""
    from rigcheck.core.compat._lifecycle import branch_status

    if not facts.gpus_of("nvidia") and facts.driver_text is None:
        return []
    subject = f"NVIDIA driver {facts.driver_text}" if facts.driver_text else "NVIDIA driver"
    if facts.driver is None and facts.cuda_driver is None:
        hint = " " + tr("(in a container, start it with the NVIDIA container toolkit, e.g. --gpus all)")
        return [
            Finding(
                "nvidia-driver",
                subject,
                None,
                "unknown",
                tr("the NVIDIA driver version could not be read"),
                fix=tr("Check that the NVIDIA driver is installed and that nvidia-smi works")
                + (hint if facts.in_container else "")
                + ".",
                cause="missing-fact",
            )
        ]
    met: list[str] = []
    missing: list[tuple[int, str]] = []
    for record in sorted(facts.catalog.cuda_majors, key=lambda m: m.major):
        floor = major_floor(facts, record.major)
        if floor is None or facts.driver is None:
            continue
        if facts.driver >= Version(floor):
            met.append(f"CUDA {record.major}.x (≥ {floor})")
        else:
            missing.append((record.major, floor))
    parts = []
    if facts.cuda_driver:
        parts.append(tr("supports CUDA up to {cuda}", cuda=dotted(facts.cuda_driver)))
    if met:
        parts.append(tr("runs software built with {majors}", majors=", ".join(met)))
    if missing:
        parts.append(
            "; ".join(tr("CUDA {major} software needs ≥ {floor}", major=m, floor=f) for m, f in missing)
        )
    source = facts.catalog.cuda_majors[0].source if facts.catalog.cuda_majors else MINOR_COMPAT
    checks: list[Check] = []
    if facts.driver is not None and facts.driver_platform is not None and not met:
        first = missing[0] if missing else None
        check = Check(
            "warn",
            tr("older than every CUDA major in the catalog: {parts}", parts="; ".join(parts)),
            source=source,
        )
        checks.append(
            _update_driver(
                facts, first[1] if first else None, f"CUDA {first[0]}.x" if first else "CUDA", check
            )
        )
    else:
        status: Status = "ok" if met or facts.cuda_driver else "unknown"
        newest_major = max((m.major for m in facts.catalog.cuda_majors), default=0)
        if any(major < newest_major for major, _ in missing):
            status = "warn"  # it misses more than the newest major: most current wheels need a newer driver
        reason = (
            ", ".join(parts)
            if parts
            else tr("the driver's CUDA support could not be worked out (OS unknown)")
        )
        check = Check(status, reason, source=source, cause="missing-fact" if status == "unknown" else None)
        newest = missing[-1] if missing else None
        if newest and status == "warn":
            check = _update_driver(facts, newest[1], tr("CUDA {major}.x software", major=newest[0]), check)
        checks.append(check)
    lifecycle = branch_status(facts)
    if lifecycle is not None:
        status_, reason_, advice = lifecycle
        branch = next((b for b in facts.catalog.driver_branches if b.designation != "legacy"), None)
        checks.append(
            Check(
                "warn" if status_ == "warn" else "ok",
                reason_,
                fix=advice.text if advice else None,
                source=branch.source if branch else None,
                cause="driver-eol" if status_ == "warn" else None,
                actions=(f"driver:{advice.version}",) if advice and status_ == "warn" else (),
            )
        )
    check = combine(checks)
    return [
        Finding(
            "nvidia-driver",
            subject,
            None,
            check.status,
            check.reason,
            fix=check.fix,
            source=check.source,
            cause=check.cause,
            actions=check.actions,
        )
    ]


def toolkit_targets(facts: Facts, toolkit: str, gpu: GPU) -> Check:
    """Can this toolkit's compiler build for the GPU? ([[arch]] min_cuda: the first toolkit per CC)."""
    from rigcheck.core.compat._precision import arch_of

    cc, have = minor(gpu.compute_capability), minor(toolkit)
    if cc is None or have is None:
        return Check("unknown", tr("the GPU's compute capability is not known"), cause="missing-fact")
    arch = arch_of(facts.catalog, gpu)
    need = minor(arch.min_cuda.get(dotted(cc))) if arch else None
    if arch is None or need is None:
        return Check(
            "unknown",
            tr("no source in the catalog says which CUDA first builds for CC {cc}", cc=dotted(cc)),
            cause="missing-fact",
        )
    if have < need:
        return Check(
            "fail",
            tr(
                "CUDA {have} cannot build for CC {cc} (sm_{sm}); that needs CUDA {need} or newer",
                have=dotted(have),
                cc=dotted(cc),
                sm=f"{cc[0]}{cc[1]}",
                need=dotted(need),
            ),
            fix=tr("Install CUDA {need} or newer to compile for this GPU.", need=dotted(need)),
            source=arch.source,
            cause="toolkit-too-old",
        )
    return Check(
        "ok",
        tr(
            "CUDA {have} builds for CC {cc} (needs ≥ {need})",
            have=dotted(have),
            cc=dotted(cc),
            need=dotted(need),
        ),
    )


def toolkit_driver_finding(facts: Facts, toolkit: str) -> Finding:
    subject = f"CUDA toolkit {toolkit}"
    if not facts.gpus_of("nvidia") and facts.driver_text is None:
        hint = (
            " " + tr("In a container, pass the GPU through (docker run --gpus all).")
            if facts.in_container
            else ""
        )
        return Finding(
            "cuda-toolkit",
            subject,
            None,
            "warn",
            tr("no NVIDIA GPU or driver was found, so nothing built with this toolkit can run here"),
            fix=tr("Nothing to do unless you add an NVIDIA GPU and its driver.") + hint,
            installed=True,
            cause="no-gpu",
        )
    check = combine([driver_supports(facts, toolkit, tr("the CUDA {toolkit} toolkit", toolkit=toolkit))])
    return check.finding("cuda-toolkit", subject, None, installed=True)
