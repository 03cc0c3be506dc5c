"""PyTorch: the installed build against each GPU and the driver, and the wheel to install.

A wheel variant's cubin ``sm_XY`` runs on compute capability X.Z with Z ≥ Y of the same major, except
arch-specific ``sm_XYa`` cubins, which run only on X.Y; PTX ``compute_XY`` is JIT-compiled on any CC ≥ X.Y
(a slow first start). The recommended wheel is the newest released ([[torch_release]] with a
``release_year``) whose variant has kernels for every GPU, runs on the driver and supports this Python.

The findings on the installed build live here; the builds, wheels and kernel checks in
:mod:`._torch_builds`, the recommendation in :mod:`._torch_recommend` (both re-exported).
"""

from __future__ import annotations

from dataclasses import replace

from rigcheck.core.compat._base import Check, Facts, Finding, combine, dotted, minor
from rigcheck.core.compat._cuda import driver_supports
from rigcheck.core.compat._torch_builds import (
    _XPU_DOCS,
    INDEX,
    ON_PYTORCH_INDEX,
    TorchBuild,
    TorchWheel,
    _rocm_gfx_check,
    arch_check,
    cuda_of_variant,
    parse_build,
    release_entry,
    variant_entry,
)
from rigcheck.core.compat._torch_recommend import (
    JETSON_INDEX,
    _jetson_builds,
    _metal_rule,
    _pin,
    _released,
    recommend,
)
from rigcheck.core.i18n import tr


def _fix(
    wheel: TorchWheel | None, build: TorchBuild | None
) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(fix, command, actions) recommending the wheel, unless it is what is installed."""
    if wheel is None:
        return None, None, ()
    if build is not None and (build.release, build.variant) == (wheel.version, wheel.variant):
        return None, None, ()
    fix = tr("Install {wheel}, the newest wheel that fits this machine.", wheel=wheel.label)
    if wheel.driver_advice:
        fix = f"{wheel.driver_advice} " + tr(
            "Then install {wheel}, the newest wheel that fits this machine.", wheel=wheel.label
        )
    return fix, same_release_command(wheel, build), wheel.actions


def same_release_command(wheel: TorchWheel, build: TorchBuild | None) -> str:
    """The wheel's command, with the build's local label pinned when the installed torch is the same release
    (a CPU ``2.14.1`` replaced by ``2.14.1+cu130``): ``torch==2.14.1`` matches any local label (PEP 440), so
    pip would keep the installed build and change nothing."""
    if build is None or wheel.variant is None or build.release != wheel.version or wheel.named:
        return wheel.command
    return wheel.command.replace(f"torch=={wheel.version} ", f"torch=={wheel.version}+{wheel.variant} ", 1)


def _finding(
    subject: str, index: int | None, check: Check, wheel: TorchWheel | None, build: TorchBuild
) -> Finding:
    fix, command, actions = _fix(wheel, build) if check.status != "ok" else (None, None, ())
    cause = check.cause if check.status != "ok" else None
    if check.status != "ok" and check.cause in ("driver-unsupported", "arch-unsupported") and actions:
        cause = "wheel-cuda-mismatch"  # another wheel fixes it: the installed one is the problem
    return Finding(
        "pytorch",
        subject,
        index,
        check.status,
        check.reason,
        fix or check.fix,
        check.source,
        command or check.command,
        installed=True,
        cause=cause,
        actions=actions or (check.actions if check.status != "ok" else ()),
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
            "warn",
            tr(
                "a CUDA build ({variant}) but no NVIDIA GPU was found: it runs on the CPU only",
                variant=variant,
            ),
            cause="no-gpu",
        )
        return [_finding(subject, None, check, wheel, build)]
    machine = combine([*_os_rule_check(facts, "cuda"), driver_supports(facts, cuda, f"torch +{variant}")])
    findings = [_finding(subject, None, machine, wheel, build)]
    entry = variant_entry(facts, build.release, variant)
    for index, gpu in nvidia:
        if entry is None:
            check = Check(
                "unknown",
                tr(
                    "the catalog has no architecture list for torch {build}",
                    build=f"{build.release}+{variant}",
                ),
                cause="missing-fact",
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
            Check(
                "warn",
                tr("a ROCm build ({variant}) but no AMD GPU was found: it runs on the CPU", variant=variant),
                cause="no-gpu",
            )
        )
    findings = [_finding(subject, None, combine(machine_checks), wheel, build)]
    findings += [_finding(subject, i, _rocm_gfx_check(facts, variant, g), wheel, build) for i, g in amd]
    return findings


def support_window(facts: Facts, release: str) -> str | None:
    """Where an installed release stands: PyTorch patches only its newest series, so say how far behind it
    is ("torch 2.3 (2024-04-24) is 12 releases behind 2.15.0"); None for the newest or an unknown one."""
    entry = release_entry(facts, release)
    series = minor(release)
    released = _released(facts)
    if entry is None or series is None or not released:
        return None
    from rigcheck.core.compat._lifecycle import as_of

    # only the releases out by the day the machine is judged as of count
    newer = [
        r
        for r in released
        if (minor(r.version) or (0, 0)) > series and (r.released is None or r.released <= facts.as_of)
    ]
    if not newer:
        return None
    when = f" ({entry.released})" if entry.released else ""
    return tr(
        "torch {series}{when} is {count} behind {newest} {as_of}; PyTorch publishes patch releases for its "
        "newest series only (RELEASE.md)",
        series=dotted(series),
        when=when,
        count=tr("1 release") if len(newer) == 1 else tr("{n} releases", n=len(newer)),
        newest=_pin(newer[0]),
        as_of=as_of(facts),
    )


def torch_findings(facts: Facts, findings: list[Finding] | None = None) -> list[Finding]:
    """The PyTorch findings (``findings``: those of :func:`bare_torch_findings`, when already worked out), the
    machine-wide ones with where the installed series stands."""
    findings = _torch_findings(facts) if findings is None else findings
    build = parse_build(facts.torch_text or "")
    window = support_window(facts, build.release) if build is not None else None
    if window is None:
        return findings
    return [
        replace(f, reason=f"{f.reason}; {window}") if f.gpu_index is None and f.installed else f
        for f in findings
    ]


def bare_torch_findings(facts: Facts) -> list[Finding]:
    """The PyTorch findings without the support-window note: what software built on torch is blocked by."""
    return _torch_findings(facts)


def _torch_findings(facts: Facts) -> list[Finding]:
    wheel = recommend(facts)
    if facts.torch_text is None:
        return [_not_installed(wheel)]
    build = parse_build(facts.torch_text)
    if build is None:
        return [
            Finding(
                "pytorch",
                f"torch {facts.torch_text}",
                None,
                "unknown",
                f"torch version {facts.torch_text!r} is not readable",
                installed=True,
                cause="missing-fact",
            )
        ]
    variant = build.variant
    release = release_entry(facts, build.release)
    if facts.os == "macos":
        rule = _metal_rule(facts)
        check = combine(_os_rule_check(facts, "metal"))
        reason = tr("macOS wheels are CPU/MPS only: use device 'mps' for the Apple GPU")
        return [
            _finding(
                f"torch {build.text}",
                None,
                Check(check.status, reason, source=rule.source if rule else None),
                wheel,
                build,
            )
        ]
    subject = f"torch {build.text}"
    if _jetson_builds(facts) and variant is None:
        check = Check(
            "ok",
            tr(
                "a Jetson build of torch (no CUDA tag; PyPI has no torch wheel that runs on a Jetson before "
                "JetPack 7): it uses the CUDA that JetPack {jetpack} ships",
                jetpack=facts.platform.jetpack_text or "?",
            ),
            source=JETSON_INDEX,
        )
        return [_finding(subject, None, check, wheel, build)]
    if variant is None and facts.os == "windows":
        variant = "cpu"  # PyPI's Windows wheel: its CUDA dependencies are marked for Linux only (wheels.toml)
    if variant is None and release is not None and release.default_variant and facts.os == "linux":
        variant = release.default_variant  # PyPI's Linux wheel carries no +tag
    if variant is None:
        check = Check(
            "unknown",
            tr("which CUDA/ROCm build torch {build} is cannot be told (no +cuXXX tag)", build=build.text),
            cause="missing-fact",
        )
        return [_finding(subject, None, check, wheel, build)]
    if variant.startswith("cu"):
        return _cuda_build(facts, build, variant, wheel)
    if variant.startswith("rocm"):
        return _rocm_build(facts, build, variant, wheel)
    if variant == "xpu":
        if facts.gpus_of("intel"):
            check = Check(
                "ok",
                tr("an XPU build: it runs on the Intel GPU (device 'xpu')"),
                source=_XPU_DOCS,
            )
        else:
            check = Check(
                "warn", tr("an XPU build but no Intel GPU was found: it runs on the CPU only"), cause="no-gpu"
            )
        return [_finding(subject, None, check, wheel, build)]
    if variant == "cpu":
        gpus = facts.gpus_of("nvidia") + facts.gpus_of("amd") + facts.gpus_of("intel")
        if gpus:
            check = Check("warn", tr("a CPU-only build: the GPU is not used"), cause="wheel-cuda-mismatch")
        else:
            check = Check("ok", tr("a CPU-only build on a machine without an NVIDIA or AMD GPU"))
        return [_finding(subject, None, check, wheel, build)]
    return [
        _finding(
            subject,
            None,
            Check(
                "unknown",
                tr("the catalog has no rules for the {variant} build", variant=variant),
                cause="missing-fact",
            ),
            wheel,
            build,
        )
    ]


def _not_installed(wheel: TorchWheel | None) -> Finding:
    if wheel is None:
        return Finding(
            "pytorch",
            tr("{framework} (not installed)", framework="torch"),
            None,
            "unknown",
            "no catalogued PyTorch release fits this machine's Python and hardware",
            installed=False,
            cause="missing-fact",
        )
    fix = tr("Install {wheel}.", wheel=wheel.label)
    if wheel.driver_advice:
        fix = f"{wheel.driver_advice} " + tr("Then install {wheel}.", wheel=wheel.label)
    cause = None
    if wheel.status != "ok":
        cause = "driver-too-old" if wheel.driver else "limited" if wheel.status == "warn" else "missing-fact"
    return Finding(
        "pytorch",
        tr("{framework} (not installed)", framework="torch"),
        None,
        wheel.status,
        tr("not installed; {wheel} would fit: {reason}", wheel=wheel.label, reason=wheel.reason),
        fix=fix,
        source=wheel.source,
        command=wheel.command,
        installed=False,
        cause=cause,
        actions=wheel.actions if wheel.driver else (),
    )


__all__ = [
    "INDEX",
    "JETSON_INDEX",
    "ON_PYTORCH_INDEX",
    "TorchBuild",
    "TorchWheel",
    "arch_check",
    "bare_torch_findings",
    "cuda_of_variant",
    "parse_build",
    "recommend",
    "release_entry",
    "same_release_command",
    "support_window",
    "torch_findings",
    "variant_entry",
]
