"""PyTorch: the installed build against each GPU and the driver, and the wheel to install.

A wheel variant's cubin ``sm_XY`` runs on compute capability X.Z with Z ≥ Y of the same major, except
arch-specific ``sm_XYa`` cubins, which run only on X.Y; PTX ``compute_XY`` is JIT-compiled on any CC ≥ X.Y
(a slow first start). The recommended wheel is the newest released ([[torch_release]] with a
``release_year``) whose variant has kernels for every GPU, runs on the driver and supports this Python.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from packaging.version import Version

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
from rigcheck.core.i18n import tr
from rigcheck.core.machine import GPU

INDEX = "https://download.pytorch.org/whl"
_XPU_DOCS = "https://docs.pytorch.org/docs/2.15/notes/get_start_xpu.html"
#: packages download.pytorch.org builds per CUDA variant (xformers' README installs it from there)
ON_PYTORCH_INDEX = frozenset({"xformers"})
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
    #: the NVIDIA driver the wheel needs and this machine lacks (advice already in ``reason``), else None
    driver: str | None = None
    driver_advice: str | None = None
    #: a wheel named by where it comes from rather than by version (Jetson's own index): shown as this
    named: str | None = None

    @property
    def label(self) -> str:
        if self.named:
            return self.named
        return f"torch {self.version}+{self.variant}" if self.variant else f"torch {self.version}"

    @property
    def actions(self) -> tuple[str, ...]:
        """What installing it takes: a driver update first where one is needed, then the wheel."""
        if self.named:
            return ()
        torch = f"torch:{self.version}+{self.variant}" if self.variant else f"torch:{self.version}"
        return ((f"driver:{self.driver}",) if self.driver else ()) + (torch,)


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
    """The arch list of one variant, for this machine's CPU architecture (aarch64 wheels carry other GPU
    targets than x86-64 ones: Thor's sm_110)."""
    series = minor(release)
    machine = "aarch64" if facts.arm else "x86_64"
    return next(
        (
            v
            for v in facts.catalog.torch_variants
            if series and v.release == dotted(series) and v.variant == variant and v.machine == machine
        ),
        None,
    )


def arch_check(entry: TorchVariant, gpu: GPU) -> Check:
    """Has this wheel variant a cubin, or PTX to JIT, for the GPU's compute capability?"""
    label = f"torch {entry.release}+{entry.variant}"
    cc = minor(gpu.compute_capability)
    if cc is None:
        return Check("unknown", tr("the GPU's compute capability is not known"), cause="missing-fact")
    for arch in entry.archs:
        match = _SM.fullmatch(arch)
        if match is None:
            continue
        built = (int(match.group(2)), int(match.group(3)))
        if (built == cc) if match.group(4) else (built[0] == cc[0] and cc[1] >= built[1]):
            return Check(
                "ok",
                tr("{label} has {arch} kernels, which run on CC {cc}", label=label, arch=arch, cc=dotted(cc)),
                source=entry.source,
            )
    for ptx in entry.ptx:
        match = _SM.fullmatch(ptx)
        if match and cc >= (int(match.group(2)), int(match.group(3))):
            return Check(
                "warn",
                tr(
                    "{label} has no cubin for CC {cc}, only {ptx} PTX: it is JIT-compiled on the first run "
                    "(minutes; cached afterwards)",
                    label=label,
                    cc=dotted(cc),
                    ptx=ptx,
                ),
                source=entry.source,
                cause="limited",
            )
    built_for = ", ".join(entry.archs + entry.ptx)
    return Check(
        "fail",
        tr(
            "{label} has no kernels for CC {cc} (sm_{sm}); it is built for {built_for}",
            label=label,
            cc=dotted(cc),
            sm=f"{cc[0]}{cc[1]}",
            built_for=built_for,
        ),
        source=entry.source,
        cause="wheel-cuda-mismatch",
    )


def _rocm_gfx_check(facts: Facts, variant: str, gpu: GPU) -> Check:
    wanted = rocm_variant(variant)
    release = rocm_release(facts, dotted(wanted)) if wanted else None
    gfx = gpu.gfx_target
    if release is None:
        return Check(
            "unknown",
            tr("the catalog has no support list for ROCm {rocm}", rocm=variant.removeprefix("rocm")),
            cause="missing-fact",
        )
    if gfx is None:
        return Check("unknown", tr("the GPU's gfx target is not known"), cause="missing-fact")
    if gfx in release.gfx_targets:
        return Check(
            "ok",
            tr(
                "{gfx} is an official target of ROCm {rocm} ({variant})",
                gfx=gfx,
                rocm=release.version,
                variant=variant,
            ),
            source=release.source,
        )
    return override_check(
        facts, gfx, release.gfx_targets, tr("ROCm {rocm}'s official list", rocm=release.version)
    ) or Check(
        "fail",
        tr(
            "{gfx} is not a target of ROCm {rocm} ({variant})", gfx=gfx, rocm=release.version, variant=variant
        ),
        source=release.source,
        cause="wheel-cuda-mismatch",
    )


# -- the recommendation ----------------------------------------------------------------------------


def _released(facts: Facts) -> list[TorchRelease]:
    """Released entries (those with a release year), newest first, one per minor series."""
    seen: set[tuple[int, int] | None] = set()
    result = []
    entries = [r for r in facts.catalog.torch_releases if not r.prerelease and version(r.version)]
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
    """The release to install: the series' newest patch ("2.7" -> "2.7.1")."""
    if release.latest_patch:
        return release.latest_patch
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


def _cuda_candidates(facts: Facts, release: TorchRelease) -> list[tuple[Check, Check, str, float]]:
    """(kernels check, driver check, variant, CUDA) per CUDA variant with kernels for every NVIDIA GPU."""
    gpus = [g for _, g in facts.gpus_of("nvidia")]
    found = []
    for name in release.variants:
        entry = variant_entry(facts, release.version, name)
        cuda = cuda_of_variant(name)
        if entry is None or cuda is None:
            continue
        kernels = combine([arch_check(entry, g) for g in gpus])
        if kernels.status == "fail":
            continue
        found.append(
            (kernels, driver_supports(facts, cuda, tr("the {name} wheel", name=name)), name, float(cuda))
        )
    return found


def _skipped(facts: Facts, chosen: TorchRelease, kind: str = "CUDA") -> str:
    """Why a newer catalogued release was not chosen, when one exists."""
    newer = [
        r
        for r in _released(facts)
        if (version(r.version) or Version("0")) > (version(chosen.version) or Version("0"))
    ]
    if not newer:
        return ""
    names = ", ".join(_pin(r) for r in newer)
    if kind == "ROCm":
        return " " + tr(
            "({names} is newer, but the catalog lists no ROCm wheel of it that fits)", names=names
        )
    return " " + tr("({names} is newer, but the catalog lists no CUDA wheel of it that fits)", names=names)


def _recommend_cuda(facts: Facts) -> TorchWheel | None:
    """The newest release with kernels for every GPU: a variant this driver runs fully if there is one; else
    the variant needing the least driver, with the driver update it takes (never a branch the GPU cannot
    run)."""
    from rigcheck.core.compat._lifecycle import advise

    for release in _released(facts):
        if not _python_ok(facts, release):
            continue
        candidates = _cuda_candidates(facts, release)
        if not candidates:
            continue
        lead = tr("the newest release with kernels for every GPU here") + _skipped(facts, release)
        ready = [(combine([k, d]), name, cuda) for k, d, name, cuda in candidates if d.status == "ok"]
        best = _best(ready, release.default_variant)
        if best is not None:
            wheel = _wheel(release, best[1], best[0], lead)
        else:
            kernels, _driver, name, _cuda = min(candidates, key=lambda c: c[3])
            need = _driver_for(facts, cuda_of_variant(name) or "")
            advice = advise(facts, need) if need else None
            if advice is None:
                continue  # this release needs a driver the GPU cannot run: try an older one
            # with the advised driver, the default or the newest toolkit that driver fully runs
            fits = [
                (k, n, c)
                for k, _d, n, c in candidates
                if (v := _driver_for(facts, cuda_of_variant(n) or ""))
                and version(v)
                and version(advice.version)
                and (version(v) or Version("0")) <= (version(advice.version) or Version("0"))
            ]
            best_after = _best(fits, release.default_variant)
            if best_after is not None:
                kernels, name = best_after
                need = _driver_for(facts, cuda_of_variant(name) or "") or need
            check = Check(
                "warn",
                tr("{reason}; it needs NVIDIA driver {need} or newer", reason=kernels.reason, need=need),
            )
            wheel = replace(
                _wheel(release, name, check, lead), driver=advice.version, driver_advice=advice.text
            )
        return wheel
    return None


def _driver_for(facts: Facts, cuda_text: str) -> str | None:
    """The driver a CUDA X.Y wheel needs for full support: the toolkit driver of X.Y's first release."""
    from rigcheck.core.compat._cuda import toolkit_driver

    cuda = minor(cuda_text)
    found = toolkit_driver(facts, cuda) if cuda else None
    return found[0] if found else None


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
            lead = tr("the newest release whose ROCm supports every GPU here") + _skipped(
                facts, release, "ROCm"
            )
            return _wheel(release, best[1], best[0], lead)
    return None


def _recommend_cpu(facts: Facts, why: str | None) -> TorchWheel | None:
    for release in _released(facts):
        if _python_ok(facts, release) and "cpu" in release.variants:
            status: Status = "warn" if why else "ok"
            reason = why or tr("no NVIDIA or AMD GPU here, so the CPU-only wheel: smaller, no CUDA libraries")
            return _wheel(release, "cpu", Check(status, reason), tr("the newest CPU-only release"))
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
            reason = tr("macOS wheels are CPU/MPS only: use device 'mps' for the Apple GPU")
        else:
            status = "unknown"
            reason = tr("the catalog does not record which releases still ship Intel-Mac wheels")
        return TorchWheel(
            pin, None, status, reason, f"pip install torch=={pin}", rule.source if rule else release.source
        )
    return None


JETSON_INDEX = "https://pypi.jetson-ai-lab.io/jp6/cu126"


def _jetson_builds(facts: Facts) -> bool:
    """A Jetson before JetPack 7: its iGPU runs only NVIDIA's Jetson builds of torch, not PyPI's aarch64
    (SBSA, server) wheels. JetPack 7 (Thor) moved to the SBSA stack, where download.pytorch.org's cu130
    aarch64 wheels, built for sm_110, run."""
    jetpack = facts.platform.jetpack
    return facts.jetson and (jetpack is None or jetpack[0] < 7)


def _recommend_jetson(facts: Facts) -> TorchWheel:
    jetpack = facts.platform.jetpack_text or "6"
    if facts.platform.jetpack and facts.platform.jetpack[0] == 6:
        return TorchWheel(
            "",
            None,
            "ok",
            tr(
                "JetPack {jetpack} (CUDA 12.6): PyPI's aarch64 torch wheels are server (SBSA) builds "
                "that do not "
                "run on a Jetson; NVIDIA's Jetson AI Lab index has torch built for JetPack 6",
                jetpack=jetpack,
            ),
            f"pip install torch torchvision --index-url {JETSON_INDEX}",
            JETSON_INDEX,
            named=tr("torch for JetPack 6 (Jetson AI Lab)"),
        )
    return TorchWheel(
        "",
        None,
        "unknown",
        tr(
            "the catalog names no torch index for this JetPack ({jetpack}); PyPI's aarch64 wheels are server "
            "(SBSA) builds that do not run on a Jetson before JetPack 7",
            jetpack=jetpack,
        ),
        "pip install torch  # from NVIDIA's Jetson builds for this JetPack",
        "https://developer.nvidia.com/embedded/jetpack-archive",
        named=tr("torch for this JetPack"),
    )


def _recommend_xpu(facts: Facts) -> TorchWheel | None:
    """Intel GPUs: PyTorch's XPU wheels (download.pytorch.org/whl/xpu), never the CPU build."""
    for release in _released(facts):
        if _python_ok(facts, release) and "xpu" in release.variants:
            reason = tr(
                "PyTorch's XPU build runs on Intel Arc GPUs (device 'xpu'); install the Intel GPU "
                "driver first"
            )
            return _wheel(release, "xpu", Check("ok", reason), tr("the newest release with an XPU build"))
    return None


def recommend(facts: Facts) -> TorchWheel | None:
    """The wheel for this machine (None when the catalog has none for its Python)."""
    if facts.os == "macos":
        return _recommend_mac(facts)
    if _jetson_builds(facts) and facts.gpus_of("nvidia"):
        return _recommend_jetson(facts)
    why = None
    if facts.gpus_of("intel") and not facts.gpus_of("nvidia") and not facts.gpus_of("amd"):
        wheel = _recommend_xpu(facts)
        if wheel is not None:
            return wheel
        why = tr("no catalogued release lists an XPU build for this Python")
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
            why = tr(
                "{why} (CPU wheel instead)",
                why=tr(rule.fix) if rule and rule.fix else tr("PyTorch's ROCm wheels are Linux-only"),
            )
    return _recommend_cpu(facts, why)


# -- findings --------------------------------------------------------------------------------------


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
