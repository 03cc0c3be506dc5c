"""A torch build and the wheel to install, and whether a wheel variant has kernels for a GPU.

A wheel variant's cubin ``sm_XY`` runs on compute capability X.Z with Z ≥ Y of the same major, except
arch-specific ``sm_XYa`` cubins, which run only on X.Y; PTX ``compute_XY`` is JIT-compiled on any CC ≥ X.Y
(a slow first start); a ROCm variant runs on the gfx targets of its ROCm release.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rigcheck.core.catalog import TorchRelease, TorchVariant
from rigcheck.core.compat._base import Check, Facts, Status, dotted, minor, version
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
