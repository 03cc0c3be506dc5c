"""The torch wheel to install: the newest released ([[torch_release]] with a ``release_year``) whose variant
has kernels for every GPU, runs on the driver and supports this Python; Jetson, Mac, XPU and CPU wheels.
"""

from __future__ import annotations

from dataclasses import replace

from packaging.version import Version

from rigcheck.core.catalog import FrameworkRule, TorchRelease
from rigcheck.core.compat._base import STATUS_RANK, Check, Facts, Status, combine, dotted, minor, version
from rigcheck.core.compat._cuda import driver_supports
from rigcheck.core.compat._rocm import rocm_variant
from rigcheck.core.compat._torch_builds import (
    INDEX,
    TorchWheel,
    _rocm_gfx_check,
    arch_check,
    cuda_of_variant,
    variant_entry,
)
from rigcheck.core.i18n import tr


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
