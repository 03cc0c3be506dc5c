"""AMD GPUs: the gfx target against ROCm's official lists, and the community's HSA_OVERRIDE_GFX_VERSION."""

from __future__ import annotations

from collections.abc import Collection

from rigcheck.core.catalog import GfxOverride, RocmRelease
from rigcheck.core.compat._base import Check, Facts, Finding, minor
from rigcheck.core.i18n import tr
from rigcheck.core.machine import GPU


def override_for(facts: Facts, gfx: str, official: Collection[str]) -> GfxOverride | None:
    """A documented override that makes ``gfx`` run as one of ``official`` on this OS, if any."""
    for entry in facts.catalog.gfx_overrides:
        if entry.gfx_target == gfx and entry.runs_as in official and facts.os in entry.os:
            return entry
    return None


def override_check(facts: Facts, gfx: str, official: Collection[str], where: str) -> Check | None:
    entry = override_for(facts, gfx, official)
    if entry is None:
        return None
    return Check(
        "warn",
        tr(
            "{gfx} is not on {where}; unofficially it runs as {runs_as} with "
            "HSA_OVERRIDE_GFX_VERSION={override} (community reports, {confidence})",
            gfx=gfx,
            where=where,
            runs_as=entry.runs_as,
            override=entry.override,
            confidence=tr(entry.confidence),
        ),
        fix=tr(
            "Set HSA_OVERRIDE_GFX_VERSION={override} before starting the program (unofficial; AMD does not "
            "support it).",
            override=entry.override,
        ),
        source=entry.source,
        command=f"export HSA_OVERRIDE_GFX_VERSION={entry.override}",
        cause="arch-unofficial",
    )


def rocm_release(facts: Facts, text: str) -> RocmRelease | None:
    wanted = minor(text)
    return next((r for r in facts.catalog.rocm_releases if minor(r.version) == wanted), None)


def _supporting(facts: Facts, gfx: str) -> list[RocmRelease]:
    return sorted(
        (r for r in facts.catalog.rocm_releases if gfx in r.gfx_targets),
        key=lambda r: minor(r.version) or (0, 0),
    )


def _span(releases: list[RocmRelease]) -> str:
    return releases[0].version if len(releases) == 1 else f"{releases[0].version}–{releases[-1].version}"


def gfx_check(facts: Facts, gpu: GPU) -> Check:
    gfx = gpu.gfx_target
    if gfx is None:
        return Check("unknown", tr("the GPU's gfx target is not known"), cause="missing-fact")
    if facts.os is None:
        return Check(
            "unknown", tr("the OS is not known (ROCm's support lists are per OS)"), cause="missing-fact"
        )
    if facts.os != "linux":
        return Check(
            "unknown",
            tr(
                "the catalog's ROCm support lists are for Linux; on Windows AMD ships the HIP SDK for some "
                "Radeon cards"
            ),
            cause="missing-fact",
        )
    supporting = _supporting(facts, gfx)
    newest = supporting[-1] if supporting else None
    if facts.rocm_text is None:
        if newest is not None:
            return Check(
                "warn",
                tr(
                    "ROCm was not found; {gfx} is an official target of ROCm {releases}. PyTorch's ROCm "
                    "wheels and ROCm containers bring their own ROCm runtime and need only the amdgpu kernel "
                    "driver; software built against the host ROCm (llama.cpp's HIP build, source builds) "
                    "needs ROCm installed",
                    gfx=gfx,
                    releases=_span(supporting),
                ),
                fix=tr(
                    "Install ROCm {version} (amdgpu-install) for software built against the host ROCm.",
                    version=newest.version,
                ),
                source=newest.source,
                cause="rocm-missing",
                actions=(f"rocm:{newest.version}",),
            )
        every = {t for r in facts.catalog.rocm_releases for t in r.gfx_targets}
        return override_check(facts, gfx, every, tr("any catalogued ROCm release's list")) or Check(
            "fail",
            tr("ROCm was not found, and no catalogued ROCm release supports {gfx}", gfx=gfx),
            fix=tr("Use a Vulkan backend (llama.cpp, Ollama) for this GPU."),
            cause="arch-unsupported",
        )
    release = rocm_release(facts, facts.rocm_text)
    if release is None:
        known = ", ".join(r.version for r in facts.catalog.rocm_releases)
        return Check(
            "unknown",
            tr("ROCm {rocm} is not in the catalog (known: {known})", rocm=facts.rocm_text, known=known),
            cause="missing-fact",
        )
    if gfx in release.gfx_targets:
        return Check(
            "ok",
            tr("{gfx} is an official target of ROCm {rocm}", gfx=gfx, rocm=release.version),
            source=release.source,
        )
    later = [r for r in supporting if (minor(r.version) or (0, 0)) > (facts.rocm or (0, 0))]
    found = override_check(
        facts, gfx, release.gfx_targets, tr("ROCm {rocm}'s official list", rocm=release.version)
    )
    if found is not None:
        if later:
            return Check(
                found.status,
                found.reason,
                fix=tr(
                    "Upgrade to ROCm {version}, which supports {gfx} officially; or: {fix}",
                    version=later[0].version,
                    gfx=gfx,
                    fix=found.fix,
                ),
                source=found.source,
                command=found.command,
                cause="arch-unofficial",
                actions=(f"rocm:{later[0].version}",),
            )
        return found
    return Check(
        "fail",
        tr("{gfx} is not a target of ROCm {rocm}", gfx=gfx, rocm=release.version),
        fix=tr("Upgrade to ROCm {version}, which supports {gfx}.", version=later[0].version, gfx=gfx)
        if later
        else tr("Use a Vulkan backend (llama.cpp, Ollama) for this GPU."),
        source=release.source,
        cause="rocm-too-old" if later else "arch-unsupported",
        actions=(f"rocm:{later[0].version}",) if later else (),
    )


def rocm_findings(facts: Facts) -> list[Finding]:
    findings = []
    for index, gpu in facts.gpus_of("amd"):
        check = gfx_check(facts, gpu)
        subject = f"ROCm {facts.rocm_text}" if facts.rocm_text else "ROCm (not found)"
        findings.append(check.finding("rocm", subject, index, installed=facts.rocm_text is not None))
    return findings


def rocm_variant(variant: str) -> tuple[int, int] | None:
    """``"rocm6.2.4"`` -> (6, 2)."""
    return minor(variant.removeprefix("rocm")) if variant.startswith("rocm") else None
