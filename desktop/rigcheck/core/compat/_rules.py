"""The generic evaluator: a framework's [[framework]] rules against one GPU (or the CPU)."""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

from rigcheck.core.catalog import FrameworkRule
from rigcheck.core.compat._base import (
    OS_NAMES,
    Check,
    Facts,
    Finding,
    combine,
    dotted,
    in_range,
    minor,
    version,
)
from rigcheck.core.compat._cuda import driver_supports
from rigcheck.core.compat._rocm import override_check
from rigcheck.core.machine import GPU

#: the backends a GPU of each vendor can use, preferred first (later ones are fallbacks)
BACKENDS: dict[str, tuple[str, ...]] = {
    "nvidia": ("cuda", "vulkan"),
    "amd": ("rocm", "vulkan"),
    "intel": ("sycl", "vulkan"),
    "apple": ("metal",),
}
_BACKEND_NAMES = {
    "cuda": "CUDA",
    "rocm": "ROCm",
    "metal": "Metal",
    "vulkan": "Vulkan",
    "sycl": "SYCL",
    "cpu": "the CPU",
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


# -- one requirement each --------------------------------------------------------------------------


def _os_check(rule: FrameworkRule, facts: Facts) -> Check:
    if facts.os is None:
        return Check("unknown", "the OS is not known")
    names = "/".join(OS_NAMES.get(o, o) for o in rule.os)
    if facts.os in rule.os:
        return Check("ok", f"runs on {OS_NAMES.get(facts.os, facts.os)}" + (" (WSL)" if facts.wsl else ""))
    return Check("fail", f"runs on {names} only, not {OS_NAMES.get(facts.os, facts.os)}")


def _cc_checks(rule: FrameworkRule, gpu: GPU) -> list[Check]:
    if not (rule.min_cc or rule.max_cc or rule.cc_list or rule.listed_max_cc):
        return []
    cc = minor(gpu.compute_capability)
    if cc is None:
        return [Check("unknown", "the GPU's compute capability is not known")]
    checks = []
    low, high, listed = minor(rule.min_cc), minor(rule.max_cc), minor(rule.listed_max_cc)
    if low is not None:
        ok = cc >= low
        checks.append(
            Check("ok" if ok else "fail", f"CC {dotted(cc)} {'≥' if ok else '<'} {rule.min_cc} needed")
        )
    if high is not None:
        ok = cc <= high
        checks.append(
            Check("ok" if ok else "fail", f"CC {dotted(cc)} {'≤' if ok else '>'} {rule.max_cc} supported")
        )
    if rule.cc_list:
        ok = dotted(cc) in rule.cc_list
        text = "is" if ok else "is not"
        checks.append(
            Check("ok" if ok else "fail", f"CC {dotted(cc)} {text} one of {', '.join(rule.cc_list)}")
        )
    if listed is not None and cc > listed:
        checks.append(
            Check(
                "unknown",
                f"the source names GPUs up to CC {rule.listed_max_cc}; CC {dotted(cc)} is not covered",
            )
        )
    return checks


def _gfx_check(rule: FrameworkRule, facts: Facts, gpu: GPU) -> Check:
    gfx = gpu.gfx_target
    if gfx is None:
        return Check("unknown", "the GPU's gfx target is not known")
    if gfx in rule.gfx_targets:
        return Check("ok", f"{gfx} is supported")
    return override_check(facts, gfx, rule.gfx_targets, f"{rule.framework}'s list") or Check(
        "fail", f"{gfx} is not among its supported targets"
    )


def _floor_check(name: str, have: Version | None, need: str, missing: str, shown: str | None = None) -> Check:
    wanted = version(need)
    if wanted is None:
        return Check("unknown", f"the catalog's {name} floor {need!r} is not a version")
    if have is None:
        return Check("unknown", f"needs {name} ≥ {need}; {missing}")
    ok = have >= wanted
    return Check("ok" if ok else "fail", f"{name} {shown or have} {'≥' if ok else '<'} {need} needed")


def _torch_check(rule: FrameworkRule, facts: Facts) -> Check:
    if facts.torch_text is None:
        return Check(
            "ok", f"needs PyTorch ≥ {rule.min_torch} (not installed; pip installs it with the package)"
        )
    return _floor_check("PyTorch", facts.torch, rule.min_torch or "", "its version is not readable")


def _python_check(rule: FrameworkRule, facts: Facts) -> Check:
    if rule.python_min and rule.python_min == rule.python_max:
        span = f"{rule.python_min} only"
    elif rule.python_min and rule.python_max:
        span = f"{rule.python_min}–{rule.python_max}"
    else:
        span = f"≥ {rule.python_min}" if rule.python_min else f"≤ {rule.python_max}"
    if facts.python is None:
        return Check("unknown", f"needs Python {span}; the Python version is not known")
    low, high = minor(rule.python_min), minor(rule.python_max)
    ok = (low is None or facts.python >= low) and (high is None or facts.python <= high)
    return Check(
        "ok" if ok else "fail", f"Python {dotted(facts.python)} {'fits' if ok else 'outside'} {span}"
    )


def _cpu_check(rule: FrameworkRule, facts: Facts) -> Check:
    if not facts.cpu_flags:
        return Check("unknown", f"needs CPU flags {', '.join(rule.cpu_flags)}; the CPU's flags are not known")
    missing = [f for f in rule.cpu_flags if f not in facts.cpu_flags]
    if missing:
        return Check("fail", f"the CPU lacks {', '.join(missing)}")
    return Check("ok", f"the CPU has {', '.join(rule.cpu_flags)}")


def rule_checks(rule: FrameworkRule, facts: Facts, gpu: GPU | None) -> list[Check]:
    """Every requirement of one rule, each checked on its own."""
    checks: list[Check] = []
    if rule.os:
        checks.append(_os_check(rule, facts))
    if gpu is not None:
        checks += _cc_checks(rule, gpu)
        if rule.gfx_targets:
            checks.append(_gfx_check(rule, facts, gpu))
    if rule.min_cuda:
        checks.append(driver_supports(facts, rule.min_cuda, f"CUDA ≥ {rule.min_cuda}"))
    if rule.min_driver:
        checks.append(
            _floor_check(
                "NVIDIA driver",
                facts.driver,
                rule.min_driver,
                "the driver version is not known",
                facts.driver_text,
            )
        )
    if rule.min_rocm:
        have = version(dotted(facts.rocm)) if facts.rocm else None
        checks.append(_floor_check("ROCm", have, rule.min_rocm, "ROCm was not found"))
    if rule.min_torch:
        checks.append(_torch_check(rule, facts))
    if rule.python_min or rule.python_max:
        checks.append(_python_check(rule, facts))
    if rule.cpu_flags:
        checks.append(_cpu_check(rule, facts))
    return checks


# -- a rule, a backend, a framework ----------------------------------------------------------------


def _applies(rule: FrameworkRule, gpu: GPU | None) -> bool | None:
    if rule.applies_min_cc is None and rule.applies_max_cc is None:
        return True
    cc = minor(gpu.compute_capability) if gpu else None
    if cc is None:
        return None
    low, high = minor(rule.applies_min_cc), minor(rule.applies_max_cc)
    return (low is None or cc >= low) and (high is None or cc <= high)


def evaluate_rule(rule: FrameworkRule, facts: Facts, gpu: GPU | None) -> Check | None:
    """One rule as one check (None when it does not concern this GPU); ``severity`` softens a failure."""
    applies = _applies(rule, gpu)
    if applies is False:
        return None
    if applies is None:
        checks = [Check("unknown", f"rule {rule.id} depends on the compute capability, which is not known")]
    else:
        checks = rule_checks(rule, facts, gpu) or [
            Check("ok", _NOTHING.get(rule.backend, "no special requirement"))
        ]
    check = combine(checks)
    status = "warn" if check.status == "fail" and rule.severity == "warn" else check.status
    reason = f"{rule.feature}: {check.reason}" if rule.feature else check.reason
    return Check(
        status,
        reason,
        fix=check.fix or (rule.fix if status != "ok" else None),
        source=check.source or rule.source,
        command=check.command,
    )


def _rules_check(rules: list[FrameworkRule], facts: Facts, gpu: GPU | None, have: Installed | None) -> Check:
    applicable = rules
    if have is not None and have.version is not None:
        applicable = [r for r in rules if in_range(r.versions, have.version)]
        if not applicable:
            ranges = ", ".join(sorted({r.versions for r in rules if r.versions})) or "all"
            return Check("unknown", f"the catalog has no rule for {have.label} (its rules cover {ranges})")
    checks = [c for r in applicable if (c := evaluate_rule(r, facts, gpu)) is not None]
    return combine(checks)


def framework_finding(facts: Facts, framework: str, index: int | None, gpu: GPU | None) -> Finding:
    """One framework on one GPU (or, with ``gpu`` None, on the CPU of a machine without GPUs)."""
    rules = [r for r in facts.catalog.frameworks if r.framework == framework]
    have = installed(facts, framework)
    subject = f"{framework} ({have.label})" if have else f"{framework} (not installed)"
    backends = BACKENDS.get(gpu.vendor, ()) if gpu is not None else ("cpu",)
    results: list[tuple[str, Check]] = []
    for backend in backends:
        chosen = [r for r in rules if r.backend in (backend, "any")]
        if chosen:
            results.append((backend, _rules_check(chosen, facts, gpu, have)))
            if results[0][1].status != "fail":
                break
    if not results:
        known = sorted({_BACKEND_NAMES.get(r.backend, r.backend) for r in rules})
        where = f"on {_VENDORS.get(gpu.vendor, gpu.vendor)} GPUs" if gpu is not None else "without a GPU"
        return Finding(
            framework,
            subject,
            index,
            "unknown",
            f"the catalog has no rule for {framework} {where} "
            f"(its rules cover: {', '.join(known) or 'nothing'})",
        )
    backend, check = results[0]
    fallback = next(((b, c) for b, c in results[1:] if c.status in ("ok", "warn")), None)
    if check.status == "fail" and fallback is not None:
        check = Check(
            "warn",
            f"not through {_BACKEND_NAMES[backend]} ({check.reason}); it runs through its "
            f"{_BACKEND_NAMES[fallback[0]]} backend",
            fix=check.fix,
            source=check.source,
            command=check.command,
        )
    reason = check.reason
    if have is None and check.status in ("ok", "warn", "fail"):
        verdict = {
            "fail": "would not work if installed",
            "warn": "would work, with limits, if installed",
            "ok": "would work if installed",
        }[check.status]
        reason = f"{verdict}: {reason}"
    return Finding(framework, subject, index, check.status, reason, check.fix, check.source, check.command)
