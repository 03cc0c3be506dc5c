"""The generic evaluator: a framework's [[framework]] rules against one GPU (or the CPU).

Each requirement of a rule is checked in :mod:`._requirements`; here a rule becomes one check, and a
framework's rules on one GPU one finding.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from rigcheck.core.catalog import FrameworkRule
from rigcheck.core.compat._base import (
    HARDWARE_CAUSES,
    Check,
    Facts,
    Finding,
    combine,
    in_range,
    minor,
    version,
)
from rigcheck.core.compat._platform import no_wheel
from rigcheck.core.compat._requirements import _BACKEND_NAMES, _fix, rule_checks
from rigcheck.core.i18n import tr
from rigcheck.core.machine import GPU

#: the backends a GPU of each vendor can use, preferred first (later ones are fallbacks)
BACKENDS: dict[str, tuple[str, ...]] = {
    "nvidia": ("cuda", "vulkan"),
    "amd": ("rocm", "vulkan"),
    "intel": ("sycl", "vulkan"),
    # a library with no Metal build may still run on an Apple machine's CPU (bitsandbytes' macOS wheel)
    "apple": ("metal", "cpu"),
}
#: where a framework shows up on a machine: Python distributions (as the probe names them) and executables
PACKAGES: dict[str, tuple[str, ...]] = {
    "flash-attn-2": ("flash-attn",),
    "flash-attn-3": ("flash-attn-3",),
    "xformers": ("xformers",),
    "bitsandbytes": ("bitsandbytes",),
    "vllm": ("vllm",),
    "sglang": ("sglang",),
    "tensorrt-llm": ("tensorrt-llm",),
    "llama.cpp": ("llama-cpp-python",),
    "exllamav2": ("exllamav2",),
    "deepspeed": ("deepspeed",),
    "unsloth": ("unsloth",),
    "transformer-engine": ("transformer-engine",),
    "mlx": ("mlx",),
}
_VENDORS = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel", "apple": "Apple"}
_NOTHING = {
    "cpu": "runs on the CPU with no special requirement",
    "vulkan": "needs only a working Vulkan driver",
    "metal": "needs only Metal (macOS)",
}
EXECUTABLES: dict[str, tuple[str, ...]] = {"ollama": ("ollama",), "llama.cpp": ("llama-server", "llama-cli")}


@dataclass(frozen=True)
class Installed:
    label: str
    version: Version | None


def installed(facts: Facts, framework: str) -> Installed | None:
    for name in PACKAGES.get(framework, ()):
        if name in facts.packages:
            text = facts.packages[name]
            return Installed(f"{name} {text}", version(text))
    for name in EXECUTABLES.get(framework, ()):
        exe = facts.machine.software.executables.get(name)
        if exe is not None:
            return Installed(f"{name} {exe.version or '(version unknown)'}", version(exe.version))
    return None


def _applies(rule: FrameworkRule, gpu: GPU | None) -> bool | None:
    if rule.applies_min_cc is None and rule.applies_max_cc is None:
        return True
    cc = minor(gpu.compute_capability) if gpu else None
    if cc is None:
        return None
    low, high = minor(rule.applies_min_cc), minor(rule.applies_max_cc)
    return (low is None or cc >= low) and (high is None or cc <= high)


def evaluate_rule(rule: FrameworkRule, facts: Facts, gpu: GPU | None) -> Check | None:
    """One rule as one check (None when it does not concern this GPU or platform); ``severity`` softens a
    failure."""
    from rigcheck.core.compat._platform import applies as on_platform

    if rule.applies_to and not on_platform(facts.platform.tags, rule.applies_to):
        return None
    applies = _applies(rule, gpu)
    if applies is False:
        return None
    if applies is None:
        checks = [
            Check(
                "unknown",
                tr("rule {id} depends on the compute capability, which is not known", id=rule.id),
                cause="missing-fact",
            )
        ]
    else:
        checks = rule_checks(rule, facts, gpu) or [
            Check("ok", tr(_NOTHING.get(rule.backend, "no special requirement")))
        ]
    check = combine(checks)
    softened = check.status == "fail" and rule.severity == "warn"
    status = "warn" if softened else check.status
    cause = check.cause
    if softened and cause in HARDWARE_CAUSES:
        cause = "limited"  # the feature is missing, the framework still runs
    reason = f"{tr(rule.feature)}: {check.reason}" if rule.feature else check.reason
    fix = check.fix or (_fix(rule) if status != "ok" else None)
    if softened and rule.fix and cause == "rocm-too-old":  # the rule says which ROCm matters (torch's)
        fix = _fix(rule)
    return Check(
        status,
        reason,
        fix=fix,
        source=check.source or rule.source,
        command=check.command,
        cause=cause,
        actions=check.actions,
    )


def _legacy(rule: FrameworkRule) -> bool:
    """A rule for older releases only (its range has an upper bound): not what a new install gets."""
    try:
        return any(s.operator in ("<", "<=", "==", "~=", "===") for s in SpecifierSet(rule.versions))
    except InvalidSpecifier:
        return False


def _rules_check(rules: list[FrameworkRule], facts: Facts, gpu: GPU | None, have: Installed | None) -> Check:
    applicable = rules
    if have is None:
        applicable = [r for r in rules if not _legacy(r)]  # not installed: judged as its newest release
    elif have.version is not None:
        applicable = [r for r in rules if in_range(r.versions, have.version)]
        if not applicable:
            ranges = ", ".join(sorted({r.versions for r in rules if r.versions})) or "all"
            return Check(
                "unknown",
                tr(
                    "the catalog has no requirements for {label} (its rules cover {ranges})",
                    label=have.label,
                    ranges=ranges,
                ),
                cause="missing-fact",
            )
    checks = [c for r in applicable if (c := evaluate_rule(r, facts, gpu)) is not None]
    return combine(checks)


def framework_finding(facts: Facts, framework: str, index: int | None, gpu: GPU | None) -> Finding:
    """One framework on one GPU (or, with ``gpu`` None, on the CPU of a machine without GPUs)."""
    rules = [r for r in facts.catalog.frameworks if r.framework == framework]
    have = installed(facts, framework)
    subject = (
        f"{framework} ({have.label})" if have else tr("{framework} (not installed)", framework=framework)
    )
    backends = BACKENDS.get(gpu.vendor, ()) if gpu is not None else ("cpu",)
    # a route of its own for this GPU that is not PyPI's wheel (the vllm-metal plugin on a Mac)
    own_route = any(r.backend in backends and r.backend in ("metal", "sycl") and r.available for r in rules)
    absent = (
        None if own_route or have is not None else no_wheel(facts, framework, PACKAGES.get(framework, ()))
    )
    if absent is not None and absent.status == "fail":
        return Finding(
            framework, subject, index, "fail", tr("would not work here: {reason}", reason=absent.reason),
            absent.fix, absent.source, installed=False, cause=absent.cause,
        )  # fmt: skip
    results: list[tuple[str, Check]] = []
    for backend in backends:
        chosen = [r for r in rules if r.backend in (backend, "any")]
        if chosen:
            results.append((backend, _rules_check(chosen, facts, gpu, have)))
            if results[0][1].status != "fail":
                break
    if not results:
        known = sorted({_BACKEND_NAMES.get(r.backend, r.backend) for r in rules})
        covered = ", ".join(known) or tr("nothing")
        return Finding(
            framework,
            subject,
            index,
            "unknown",
            tr(
                "the catalog has no rule for {framework} on {vendor} GPUs (its rules cover: {covered})",
                framework=framework,
                vendor=_VENDORS.get(gpu.vendor, gpu.vendor),
                covered=covered,
            )
            if gpu is not None
            else tr(
                "the catalog has no rule for {framework} without a GPU (its rules cover: {covered})",
                framework=framework,
                covered=covered,
            ),
            installed=have is not None,
            cause="missing-fact",
        )
    backend, check = results[0]
    if backend == "cpu" and gpu is not None and gpu.vendor == "apple":
        if check.cause == "no-gpu":  # no Metal build and none for the CPU: not applicable on a Mac
            check = replace(
                check,
                reason=tr("it has no Metal (Apple GPU) build and none for the CPU"),
                cause="vendor-only",
            )
        else:
            check = replace(
                check,
                reason=tr(
                    "on the CPU, not the Apple GPU (it has no Metal build): {reason}", reason=check.reason
                ),
            )
    if absent is not None and check.status != "fail":
        check = combine([check, absent])  # runs once built from source: no wheel for this platform
    fallback = next(((b, c) for b, c in results[1:] if c.status in ("ok", "warn")), None)
    if check.status == "fail" and fallback is not None:
        check = replace(
            check,
            status="warn",
            reason=tr(
                "not through {backend} ({reason}); it runs through its {fallback} backend",
                backend=_BACKEND_NAMES[backend],
                reason=check.reason,
                fallback=_BACKEND_NAMES[fallback[0]],
            ),
        )
    chosen = [r for r in rules if r.backend in (backend, "any")]
    side_effect, command, problem = _side_effect(facts, chosen, framework, have, check)
    if problem is not None and have is None:
        check = combine([check, problem])  # the torch it would install cannot run here
    reason = check.reason
    if have is None and check.status in ("ok", "warn", "fail"):
        template = {
            "fail": "would not work here: {reason}"
            if check.cause in HARDWARE_CAUSES
            else "would not work as things are: {reason}",
            "warn": "would work, with limits, if installed: {reason}",
            "ok": "would work if installed: {reason}",
        }[check.status]
        reason = tr(template, reason=reason)
    new_torch = next((a.partition(":")[2] for a in check.actions if a.startswith("torch:")), None)
    if side_effect is None and new_torch and facts.torch_text and new_torch != facts.torch_text:
        side_effect = tr(
            "Following this fix replaces torch {old} with torch {new}.", old=facts.torch_text, new=new_torch
        )

    from rigcheck.core.compat._platform import applies as on_platform

    route_note = next(
        (r.install for r in chosen if r.install and on_platform(facts.platform.tags, r.applies_to)), None
    )
    if have is None and side_effect is None and command is None and route_note and check.status != "fail":
        side_effect = tr(route_note)
    fix = check.fix
    if check.status == "fail" and check.cause == "driver-too-old":
        # a release whose wheel pins a torch of a newer CUDA: its rule says which routes exist without the
        # driver update (and that a container still needs a driver for its CUDA)
        pinned = next(
            (
                r
                for r in chosen
                if r.torch_pin and r.min_cuda and r.fix and on_platform(facts.platform.tags, r.applies_to)
            ),
            None,
        )
        if pinned is not None and fix and "container" not in fix:
            fix = f"{fix} {_fix(pinned)}"
    if check.status == "fail" and check.cause not in HARDWARE_CAUSES:
        route = next((r.container for r in chosen if r.container), None)
        jetson_before_7 = facts.jetson and (facts.platform.jetpack or (6, None))[0] < 7
        if route and fix and "container" not in fix and not jetson_before_7:  # x86/SBSA images
            fix = f"{fix} " + tr("Or run the {route} container, which ships a working set.", route=route)
    return Finding(
        framework,
        subject,
        index,
        check.status,
        reason,
        fix,
        check.source,
        check.command or command,
        installed=have is not None,
        cause=check.cause,
        actions=check.actions,
        side_effect=side_effect,
    )


def _side_effect(
    facts: Facts, rules: list[FrameworkRule], framework: str, have: Installed | None, check: Check
) -> tuple[str | None, str | None, Check | None]:
    """What installing the newest release does to the installed torch, a command pinning a working set, and
    why the torch it would install cannot run here (None when it can)."""
    from rigcheck.core.compat._install import pinned_install

    rule = next((r for r in rules if r.torch_pin and r.latest), None)
    if rule is None or rule.latest is None or rule.torch_pin is None or check.status == "fail":
        return None, None, None
    if have is not None and have.version is not None and str(have.version) == rule.latest:
        return None, None, None
    package = PACKAGES.get(framework, (framework,))[0]
    plan = pinned_install(facts, package, rule.latest, rule.torch_pin, rule.torch_variant)
    if plan is None:
        return None, None, None
    replaced = plan.replaced
    effect = None
    if replaced is not None and facts.torch_text is None:  # nothing to replace: pip brings its own torch
        effect = tr(
            "Installing {package} {version} also installs {new}.",
            package=package,
            version=rule.latest,
            new=replaced,
        )
    elif replaced is not None:
        effect = tr(
            "Installing {package} {version} replaces torch {old} with {new}.",
            package=package,
            version=rule.latest,
            old=facts.torch_text,
            new=replaced,
        )
    return effect, plan.command, plan.problem


__all__ = [
    "BACKENDS",
    "EXECUTABLES",
    "PACKAGES",
    "Installed",
    "evaluate_rule",
    "framework_finding",
    "installed",
    "rule_checks",
]
