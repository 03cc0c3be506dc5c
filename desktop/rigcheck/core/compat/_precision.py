"""Precision support per GPU (bf16, fp8, fp4) from the [[arch]] flags."""

from __future__ import annotations

from rigcheck.core.catalog import Arch, Catalog
from rigcheck.core.compat._base import Facts, Finding
from rigcheck.core.i18n import tr
from rigcheck.core.machine import GPU

PRECISIONS = ("bf16", "fp8", "fp4")
_BACKEND = {"nvidia": "cuda", "amd": "rocm", "intel": "sycl", "apple": "metal"}


def arch_of(catalog: Catalog, gpu: GPU) -> Arch | None:
    """The architecture entry of a GPU: by compute capability (NVIDIA), gfx target (AMD), name (Intel: Arc
    A/B series), vendor (Apple)."""
    for arch in catalog.archs:
        if arch.vendor != gpu.vendor:
            continue
        if gpu.vendor == "nvidia" and gpu.compute_capability in arch.compute_capabilities:
            return arch
        if gpu.vendor == "amd" and gpu.gfx_target in arch.gfx_targets:
            return arch
        if gpu.vendor == "intel" and any(n.lower() in gpu.name.lower() for n in arch.match_names):
            return arch
    if gpu.vendor == "apple":
        apple = [a for a in catalog.archs if a.vendor == "apple"]
        return apple[0] if len(apple) == 1 else None
    return None


def precision_findings(facts: Facts, index: int, gpu: GPU) -> list[Finding]:
    arch = arch_of(facts.catalog, gpu)
    findings = []
    for precision in PRECISIONS:
        subject = tr("{precision} on {gpu}", precision=precision, gpu=gpu.name)
        if arch is None:
            what = gpu.compute_capability or gpu.gfx_target or tr("its architecture")
            findings.append(
                Finding(
                    precision,
                    subject,
                    index,
                    "unknown",
                    tr("the catalog has no architecture entry for this GPU ({what})", what=what),
                    cause="missing-fact",
                )
            )
            continue
        flag = getattr(arch, precision)
        if flag is None:
            findings.append(
                Finding(
                    precision,
                    subject,
                    index,
                    "unknown",
                    tr(
                        "no source in the catalog says whether {arch} runs {precision} natively",
                        arch=arch.name,
                        precision=precision,
                    ),
                    source=arch.source,
                    cause="missing-fact",
                )
            )
        elif flag:
            findings.append(
                Finding(
                    precision,
                    subject,
                    index,
                    "ok",
                    tr("{arch} runs {precision} natively", arch=arch.name, precision=precision),
                    source=arch.source,
                )
            )
        else:
            rule = next(
                (
                    r
                    for r in facts.catalog.frameworks
                    if r.framework == precision and r.backend == _BACKEND.get(gpu.vendor)
                ),
                None,
            )
            findings.append(
                Finding(
                    precision,
                    subject,
                    index,
                    "fail",
                    tr(
                        "{arch} has no native {precision}: it would not work here",
                        arch=arch.name,
                        precision=precision,
                    ),
                    fix=tr(rule.fix) if rule and rule.fix else None,
                    source=arch.source,
                    cause="arch-unsupported",
                )
            )
    return findings
