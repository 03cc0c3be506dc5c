"""PyTorch: the installed build against each GPU and the driver, and the wheel to install.

A wheel variant's cubin ``sm_XY`` runs on compute capability X.Z with Z ≥ Y of the same major, except
arch-specific ``sm_XYa`` cubins, which run only on X.Y; PTX ``compute_XY`` is JIT-compiled on any CC ≥ X.Y
(a slow first start). The recommended wheel is the newest released ([[torch_release]] with a
``release_year``) whose variant has kernels for every GPU, runs on the driver and supports this Python.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rigcheck.core.catalog import FrameworkRule, TorchRelease, TorchVariant
from rigcheck.core.compat._base import (
    STATUS_RANK,
    Check,
    Facts,
    Finding,
    Status,
    combine,
    dotted,
    minor,
    version,
)
from rigcheck.core.compat._cuda import driver_supports
from rigcheck.core.compat._rocm import override_check, rocm_release, rocm_variant
from rigcheck.core.machine import GPU

INDEX = "https://download.pytorch.org/whl"
_SM = re.compile(r"(sm|compute)_(\d+)(\d)([a-z]?)")


@dataclass(frozen=True)
class TorchBuild:
    """An installed torch version, e.g. "2.5.1+cu124": release "2.5.1", variant "cu124"."""

    text: str
    release: str
    variant: str | None


def parse_build(text: str) -> TorchBuild | None:
    parsed = version(text)
    if parsed is None:
        return None
    local = parsed.local
    known = local if local and re.fullmatch(r"cu\d{3}|rocm[\d.]+|cpu|xpu", local) else None
    return TorchBuild(text, parsed.base_version, known)


@dataclass(frozen=True)
class TorchWheel:
    """The wheel to install: ``pip install torch==version`` from the ``variant`` index (None: plain PyPI)."""

    version: str
    variant: str | None
    status: Status
    reason: str
    command: str
    source: str

    @property
    def label(self) -> str:
        return f"torch {self.version}+{self.variant}" if self.variant else f"torch {self.version}"


def cuda_of_variant(variant: str) -> str | None:
    """``"cu124"`` -> ``"12.4"``, ``"cu130"`` -> ``"13.0"``."""
    digits = variant.removeprefix("cu")
    return f"{digits[:-1]}.{digits[-1]}" if variant.startswith("cu") and digits.isdigit() else None


def release_entry(facts: Facts, release: str) -> TorchRelease | None:
    """The entry for an exact release ("2.5.1"), else its minor series ("2.5")."""
    exact = next((r for r in facts.catalog.torch_releases if r.version == release), None)
    series = minor(release)
    return exact or next(
        (r for r in facts.catalog.torch_releases if series and r.version == dotted(series)), None
    )


def variant_entry(facts: Facts, release: str, variant: str) -> TorchVariant | None:
    series = minor(release)
    return next(
        (
            v
            for v in facts.catalog.torch_variants
            if series and v.release == dotted(series) and v.variant == variant
        ),
        None,
    )


def arch_check(entry: TorchVariant, gpu: GPU) -> Check:
    """Has this wheel variant a cubin, or PTX to JIT, for the GPU's compute capability?"""
    label = f"torch {entry.release}+{entry.variant}"
    cc = minor(gpu.compute_capability)
    if cc is None:
        return Check("unknown", "the GPU's compute capability is not known")
    for arch in entry.archs:
        match = _SM.fullmatch(arch)
        if match is None:
            continue
        built = (int(match.group(2)), int(match.group(3)))
        if (built == cc) if match.group(4) else (built[0] == cc[0] and cc[1] >= built[1]):
            return Check(
                "ok", f"{label} has {arch} kernels, which run on CC {dotted(cc)}", source=entry.source
            )
    for ptx in entry.ptx:
        match = _SM.fullmatch(ptx)
        if match and cc >= (int(match.group(2)), int(match.group(3))):
            return Check(
                "warn",
                f"{label} has no cubin for CC {dotted(cc)}, only {ptx} PTX: it is JIT-compiled on the first "
                "run (minutes; cached afterwards)",
                source=entry.source,
            )
    built_for = ", ".join(entry.archs + entry.ptx)
    return Check(
        "fail",
        f"{label} has no kernels for CC {dotted(cc)} (sm_{cc[0]}{cc[1]}); it is built for {built_for}",
        source=entry.source,
    )


def _rocm_gfx_check(facts: Facts, variant: str, gpu: GPU) -> Check:
    wanted = rocm_variant(variant)
    release = rocm_release(facts, dotted(wanted)) if wanted else None
    gfx = gpu.gfx_target
    if release is None:
        return Check("unknown", f"the catalog has no support list for ROCm {variant.removeprefix('rocm')}")
    if gfx is None:
        return Check("unknown", "the GPU's gfx target is not known")
    if gfx in release.gfx_targets:
        return Check(
            "ok", f"{gfx} is an official target of ROCm {release.version} ({variant})", source=release.source
        )
    return override_check(
        facts, gfx, release.gfx_targets, f"ROCm {release.version}'s official list"
    ) or Check("fail", f"{gfx} is not a target of ROCm {release.version} ({variant})", source=release.source)


# -- the recommendation ----------------------------------------------------------------------------


def _released(facts: Facts) -> list[TorchRelease]:
    """Released entries (those with a release year), newest first, one per minor series."""
    seen: set[tuple[int, int] | None] = set()
    result = []
    entries = [r for r in facts.catalog.torch_releases if r.release_year is not None and version(r.version)]
    for entry in sorted(entries, key=lambda r: version(r.version) or 0, reverse=True):
        if minor(entry.version) not in seen:
            seen.add(minor(entry.version))
            result.append(entry)
    return result


def _python_ok(facts: Facts, release: TorchRelease) -> bool:
    if facts.python is None:
        return True
    low, high = minor(release.python_min), minor(release.python_max)
    return (low is None or facts.python >= low) and (high is None or facts.python <= high)


def _pin(release: TorchRelease) -> str:
    return release.version if release.version.count(".") >= 2 else f"{release.version}.0"


def _best(candidates: list[tuple[Check, str, float]], default: str | None) -> tuple[Check, str] | None:
    """The best variant of one release: best status, then the PyPI default, then the newest toolkit."""
    if not candidates:
        return None
    check, name, _ = min(candidates, key=lambda c: (-STATUS_RANK[c[0].status], c[1] != default, -c[2]))
    return check, name


def _wheel(release: TorchRelease, variant: str, check: Check, lead: str) -> TorchWheel:
    pin = _pin(release)
    return TorchWheel(
        pin,
        variant,
        check.status,
        f"{lead} ({check.reason})",
        f"pip install torch=={pin} --index-url {INDEX}/{variant}",
        release.source,
    )


def _recommend_cuda(facts: Facts) -> TorchWheel | None:
    gpus = [g for _, g in facts.gpus_of("nvidia")]
    for release in _released(facts):
        if not _python_ok(facts, release):
            continue
        candidates = []
        for name in release.variants:
            entry = variant_entry(facts, release.version, name)
            cuda = cuda_of_variant(name)
            if entry is None or cuda is None:
                continue
            check = combine(
                [arch_check(entry, g) for g in gpus] + [driver_supports(facts, cuda, f"the {name} wheel")]
            )
            if check.status != "fail":
                candidates.append((check, name, float(cuda)))
        best = _best(candidates, release.default_variant)
        if best is not None:
            check = best[0]
            if facts.x86 is False:
                check = Check(
                    "unknown", check.reason + "; the catalog's arch lists are those of x86-64 wheels"
                )
            return _wheel(release, best[1], check, "the newest release with kernels for every GPU here")
    return None


def _recommend_rocm(facts: Facts) -> TorchWheel | None:
    gpus = [g for _, g in facts.gpus_of("amd")]
    for release in _released(facts):
        if not _python_ok(facts, release):
            continue
        candidates = []
        for name in release.variants:
            wanted = rocm_variant(name)
            if wanted is None:
                continue
            check = combine([_rocm_gfx_check(facts, name, g) for g in gpus])
            if check.status not in ("fail", "unknown"):
                candidates.append((check, name, float(dotted(wanted))))
        best = _best(candidates, release.default_variant)
        if best is not None:
            return _wheel(release, best[1], best[0], "the newest release whose ROCm supports every GPU here")
    return None


def _recommend_cpu(facts: Facts, why: str | None) -> TorchWheel | None:
    for release in _released(facts):
        if _python_ok(facts, release) and "cpu" in release.variants:
            status: Status = "warn" if why else "ok"
            reason = why or "no NVIDIA or AMD GPU here, so the CPU-only wheel: smaller, no CUDA libraries"
            return _wheel(release, "cpu", Check(status, reason), "the newest CPU-only release")
    return None


def _metal_rule(facts: Facts) -> FrameworkRule | None:
    return next(
        (r for r in facts.catalog.frameworks if r.framework == "pytorch" and r.backend == "metal"), None
    )


def _recommend_mac(facts: Facts) -> TorchWheel | None:
    rule = _metal_rule(facts)
    apple_silicon = facts.arm or bool(facts.gpus_of("apple"))
    for release in _released(facts):
        if not _python_ok(facts, release):
            continue
        pin = _pin(release)
        if apple_silicon:
            status: Status = "ok"
            reason = "macOS wheels are CPU/MPS only: use device 'mps' for the Apple GPU"
        else:
            status = "unknown"
            reason = "the catalog does not record which releases still ship Intel-Mac wheels"
        return TorchWheel(
            pin, None, status, reason, f"pip install torch=={pin}", rule.source if rule else release.source
        )
    return None


def recommend(facts: Facts) -> TorchWheel | None:
    """The wheel for this machine (None when the catalog has none for its Python)."""
    if facts.os == "macos":
        return _recommend_mac(facts)
    why = None
    if facts.gpus_of("nvidia"):
        if facts.os in ("linux", "windows"):
            wheel = _recommend_cuda(facts)
            if wheel is not None:
                return wheel
        why = "no catalogued CUDA wheel has kernels for every GPU here and runs on this driver"
    elif facts.gpus_of("amd"):
        if facts.os == "linux":
            wheel = _recommend_rocm(facts)
            if wheel is not None:
                return wheel
            why = "no catalogued ROCm wheel supports every AMD GPU here"
        else:
            rule = next(
                (r for r in facts.catalog.frameworks if r.framework == "pytorch" and r.backend == "rocm"),
                None,
            )
            why = (
                rule.fix if rule and rule.fix else "PyTorch's ROCm wheels are Linux-only"
            ) + " (CPU wheel instead)"
    return _recommend_cpu(facts, why)


# -- findings --------------------------------------------------------------------------------------


def _fix(wheel: TorchWheel | None, build: TorchBuild | None) -> tuple[str | None, str | None]:
    """(fix, command) recommending the wheel, unless it is what is installed."""
    if wheel is None:
        return None, None
    if build is not None and (build.release, build.variant) == (wheel.version, wheel.variant):
        return None, None
    return f"Install {wheel.label}, the newest wheel that fits this machine.", wheel.command


def _finding(
    subject: str, index: int | None, check: Check, wheel: TorchWheel | None, build: TorchBuild
) -> Finding:
    fix, command = _fix(wheel, build) if check.status != "ok" else (None, None)
    return Finding(
        "pytorch",
        subject,
        index,
        check.status,
        check.reason,
        fix or check.fix,
        check.source,
        command or check.command,
    )


def _os_rule_check(facts: Facts, backend: str) -> list[Check]:
    from rigcheck.core.compat._rules import evaluate_rule

    rules = [r for r in facts.catalog.frameworks if r.framework == "pytorch" and r.backend == backend]
    return [c for r in rules if (c := evaluate_rule(r, facts, None)) is not None]


def _cuda_build(facts: Facts, build: TorchBuild, variant: str, wheel: TorchWheel | None) -> list[Finding]:
    subject = f"torch {build.text}"
    cuda = cuda_of_variant(variant) or "?"
    nvidia = facts.gpus_of("nvidia")
    if not nvidia:
        check = Check(
            "warn", f"a CUDA build ({variant}) but no NVIDIA GPU was found: it runs on the CPU only"
        )
        return [_finding(subject, None, check, wheel, build)]
    machine = combine([*_os_rule_check(facts, "cuda"), driver_supports(facts, cuda, f"torch +{variant}")])
    findings = [_finding(subject, None, machine, wheel, build)]
    entry = variant_entry(facts, build.release, variant)
    for index, gpu in nvidia:
        if entry is None:
            check = Check(
                "unknown", f"the catalog has no architecture list for torch {build.release}+{variant}"
            )
        else:
            check = arch_check(entry, gpu)
        findings.append(_finding(subject, index, check, wheel, build))
    return findings


def _rocm_build(facts: Facts, build: TorchBuild, variant: str, wheel: TorchWheel | None) -> list[Finding]:
    subject = f"torch {build.text}"
    amd = facts.gpus_of("amd")
    machine_checks = _os_rule_check(facts, "rocm")
    if not amd:
        machine_checks.append(
            Check("warn", f"a ROCm build ({variant}) but no AMD GPU was found: it runs on the CPU")
        )
    findings = [_finding(subject, None, combine(machine_checks), wheel, build)]
    findings += [_finding(subject, i, _rocm_gfx_check(facts, variant, g), wheel, build) for i, g in amd]
    return findings


def torch_findings(facts: Facts) -> list[Finding]:
    wheel = recommend(facts)
    if facts.torch_text is None:
        return [_not_installed(wheel)]
    build = parse_build(facts.torch_text)
    if build is None:
        check = Check("unknown", f"torch version {facts.torch_text!r} is not readable")
        return [Finding("pytorch", f"torch {facts.torch_text}", None, check.status, check.reason)]
    variant = build.variant
    release = release_entry(facts, build.release)
    if facts.os == "macos":
        rule = _metal_rule(facts)
        check = combine(_os_rule_check(facts, "metal"))
        reason = "macOS wheels are CPU/MPS only: use device 'mps' for the Apple GPU"
        return [
            _finding(
                f"torch {build.text}",
                None,
                Check(check.status, reason, source=rule.source if rule else None),
                wheel,
                build,
            )
        ]
    if variant is None and release is not None and release.default_variant and facts.os == "linux":
        variant = release.default_variant  # PyPI's Linux wheel carries no +tag
    subject = f"torch {build.text}"
    if variant is None:
        check = Check(
            "unknown", f"which CUDA/ROCm build torch {build.text} is cannot be told (no +cuXXX tag)"
        )
        return [_finding(subject, None, check, wheel, build)]
    if variant.startswith("cu"):
        return _cuda_build(facts, build, variant, wheel)
    if variant.startswith("rocm"):
        return _rocm_build(facts, build, variant, wheel)
    if variant == "cpu":
        gpus = facts.gpus_of("nvidia") + facts.gpus_of("amd")
        if gpus:
            check = Check("warn", "a CPU-only build: the GPU is not used")
        else:
            check = Check("ok", "a CPU-only build on a machine without an NVIDIA or AMD GPU")
        return [_finding(subject, None, check, wheel, build)]
    return [
        _finding(
            subject, None, Check("unknown", f"the catalog has no rules for the {variant} build"), wheel, build
        )
    ]


def _not_installed(wheel: TorchWheel | None) -> Finding:
    if wheel is None:
        return Finding(
            "pytorch",
            "torch (not installed)",
            None,
            "unknown",
            "no catalogued PyTorch release fits this machine's Python and hardware",
        )
    return Finding(
        "pytorch",
        "torch (not installed)",
        None,
        wheel.status,
        f"not installed; {wheel.label} would fit: {wheel.reason}",
        fix=f"Install {wheel.label}.",
        source=wheel.source,
        command=wheel.command,
    )
