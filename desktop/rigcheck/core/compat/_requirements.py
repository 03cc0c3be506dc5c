"""One requirement of a [[framework]] rule each (OS, CC, gfx, CUDA, driver, ROCm, torch, Python, CPU flags),
checked on its own; :func:`rule_checks` lists them for one rule."""

from __future__ import annotations

from dataclasses import replace

from packaging.version import Version

from rigcheck.core.catalog import FrameworkRule
from rigcheck.core.compat._base import OS_NAMES, Check, Facts, dotted, minor, version
from rigcheck.core.compat._cuda import driver_supports
from rigcheck.core.compat._rocm import override_check
from rigcheck.core.i18n import tr
from rigcheck.core.machine import GPU

_BACKEND_NAMES = {
    "cuda": "CUDA",
    "rocm": "ROCm",
    "metal": "Metal",
    "vulkan": "Vulkan",
    "sycl": "SYCL",
    "cpu": "CPU",  # a name, as the others: the sentences around it are translated whole
}


def _fix(rule: FrameworkRule) -> str | None:
    """The catalog's fix in the current language (an entry in the translation table, else English)."""
    return tr(rule.fix) if rule.fix else None


def _os_check(rule: FrameworkRule, facts: Facts) -> Check:
    if facts.os is None:
        return Check("unknown", tr("the OS is not known"), cause="missing-fact")
    names = "/".join(OS_NAMES.get(o, o) for o in rule.os)
    if facts.os in rule.os:
        return Check(
            "ok", tr("runs on {os}", os=OS_NAMES.get(facts.os, facts.os)) + (" (WSL)" if facts.wsl else "")
        )
    return Check(
        "fail",
        tr("runs on {names} only, not {os}", names=names, os=OS_NAMES.get(facts.os, facts.os)),
        cause="os-unsupported",
    )


def _cc_checks(rule: FrameworkRule, gpu: GPU) -> list[Check]:
    if not (rule.min_cc or rule.max_cc or rule.cc_list or rule.listed_max_cc):
        return []
    cc = minor(gpu.compute_capability)
    if cc is None:
        return [Check("unknown", tr("the GPU's compute capability is not known"), cause="missing-fact")]
    checks = []
    low, high, listed = minor(rule.min_cc), minor(rule.max_cc), minor(rule.listed_max_cc)
    if low is not None:
        ok = cc >= low
        checks.append(
            Check(
                "ok" if ok else "fail",
                tr("CC {cc} {op} {need} needed", cc=dotted(cc), op="≥" if ok else "<", need=rule.min_cc),
                cause=None if ok else "arch-unsupported",
            )
        )
    if high is not None:
        ok = cc <= high
        checks.append(
            Check(
                "ok" if ok else "fail",
                tr("CC {cc} {op} {limit} supported", cc=dotted(cc), op="≤" if ok else ">", limit=rule.max_cc),
                cause=None if ok else "arch-unsupported",
            )
        )
    if rule.cc_list:
        ok = dotted(cc) in rule.cc_list
        template = "CC {cc} is one of {listed}" if ok else "CC {cc} is not one of {listed}"
        checks.append(
            Check(
                "ok" if ok else "fail",
                tr(template, cc=dotted(cc), listed=", ".join(rule.cc_list)),
                cause=None if ok else "arch-unsupported",
            )
        )
    if listed is not None and cc > listed:
        checks.append(
            Check(
                "unknown",
                tr(
                    "the source names GPUs up to CC {listed}; CC {cc} is not covered",
                    listed=rule.listed_max_cc,
                    cc=dotted(cc),
                ),
                cause="missing-fact",
            )
        )
    return checks


def _gfx_check(rule: FrameworkRule, facts: Facts, gpu: GPU) -> Check:
    gfx = gpu.gfx_target
    if gfx is None:
        return Check("unknown", tr("the GPU's gfx target is not known"), cause="missing-fact")
    if gfx in rule.gfx_targets:
        return Check("ok", tr("{gfx} is supported", gfx=gfx))
    found = override_check(facts, gfx, rule.gfx_targets, tr("{framework}'s list", framework=rule.framework))
    if found is None and not rule.gfx_complete:
        return Check(
            "unknown",
            tr("its documentation names examples, not every target, and not {gfx}", gfx=gfx),
            cause="missing-fact",
        )
    return found or Check(
        "fail", tr("{gfx} is not among its supported targets", gfx=gfx), cause="arch-unsupported"
    )


def _floor_check(
    name: str,
    have: Version | None,
    need: str,
    missing: str,
    *,
    shown: str | None = None,
    cause: str | None = None,
) -> Check:
    wanted = version(need)
    if wanted is None:
        return Check(
            "unknown",
            tr("the catalog's {name} floor {need} is not a version", name=name, need=repr(need)),
            cause="missing-fact",
        )
    if have is None:
        return Check(
            "unknown",
            tr("needs {name} ≥ {need}; {missing}", name=name, need=need, missing=missing),
            cause="missing-fact",
        )
    ok = have >= wanted
    return Check(
        "ok" if ok else "fail",
        tr(
            "{name} {have} {op} {need} needed",
            name=name,
            have=shown or have,
            op="≥" if ok else "<",
            need=need,
        ),
        cause=None if ok else cause,
    )


def _torch_check(rule: FrameworkRule, facts: Facts) -> Check:
    if facts.torch_text is None:
        return Check(
            "ok",
            tr(
                "needs PyTorch ≥ {need} (not installed; pip installs it with the package)",
                need=rule.min_torch,
            ),
        )
    check = _floor_check(
        "PyTorch", facts.torch, rule.min_torch or "", tr("its version is not readable"), cause="torch-too-old"
    )
    if check.status == "fail":
        from rigcheck.core.compat._torch import recommend

        wheel = recommend(facts)
        if wheel is not None and (version(wheel.version) or Version("0")) >= (
            version(rule.min_torch) or Version("0")
        ):
            check = replace(
                check,
                fix=tr("Install {wheel}, the newest PyTorch that fits this machine.", wheel=wheel.label),
                command=wheel.command,
                actions=wheel.actions,
            )
    return check


def _python_check(rule: FrameworkRule, facts: Facts) -> Check:
    if rule.python_min and rule.python_min == rule.python_max:
        span = tr("{version} only", version=rule.python_min)
    elif rule.python_min and rule.python_max:
        span = f"{rule.python_min}–{rule.python_max}"
    else:
        span = f"≥ {rule.python_min}" if rule.python_min else f"≤ {rule.python_max}"
    if facts.python is None:
        return Check(
            "unknown",
            tr("needs Python {span}; the Python version is not known", span=span),
            cause="missing-fact",
        )
    low, high = minor(rule.python_min), minor(rule.python_max)
    ok = (low is None or facts.python >= low) and (high is None or facts.python <= high)
    if ok:
        return Check("ok", tr("Python {version} fits {span}", version=dotted(facts.python), span=span))
    target = rule.python_min if low is not None and facts.python < low else rule.python_max
    return Check(
        "fail",
        tr("Python {version} outside {span}", version=dotted(facts.python), span=span),
        fix=tr(
            "Use Python {target} for it (a separate virtual environment, e.g. uv venv --python {target}).",
            target=target,
        ),
        cause="python-unsupported",
        actions=(f"python:{target}",),
    )


def _cpu_check(rule: FrameworkRule, facts: Facts) -> Check:
    if not facts.cpu_flags:
        return Check(
            "unknown",
            tr("needs CPU flags {flags}; the CPU's flags are not known", flags=", ".join(rule.cpu_flags)),
            cause="missing-fact",
        )
    missing = [f for f in rule.cpu_flags if f not in facts.cpu_flags]
    if missing:
        return Check("fail", tr("the CPU lacks {flags}", flags=", ".join(missing)), cause="cpu-unsupported")
    return Check("ok", tr("the CPU has {flags}", flags=", ".join(rule.cpu_flags)))


def _driver_floor(need: str, facts: Facts) -> Check:
    from rigcheck.core.compat._cuda import _update_driver

    check = _floor_check(
        "NVIDIA driver",
        facts.driver,
        need,
        tr("the driver version is not known"),
        shown=facts.driver_text,
        cause="driver-too-old",
    )
    return _update_driver(facts, need, f"driver {need}", check) if check.status == "fail" else check


def _rocm_floor(rule: FrameworkRule, have: Version | None) -> Check:
    need = rule.min_rocm or ""
    if have is None:
        return Check(
            "fail",
            tr("needs ROCm ≥ {need}; ROCm was not found", need=need),
            fix=tr(
                "Install ROCm {need} or newer (amdgpu-install), or use the {container} container, "
                "which brings "
                "its own ROCm.",
                need=need,
                container=rule.container,
            )
            if rule.container
            else tr("Install ROCm {need} or newer (amdgpu-install).", need=need),
            cause="rocm-missing",
            actions=(f"rocm:{need}",),
        )
    check = _floor_check("ROCm", have, need, tr("ROCm was not found"), cause="rocm-too-old")
    if check.status != "fail":
        return check
    fix = (
        tr(
            "Upgrade ROCm to {need} or newer, or use the {container} container, which brings its own ROCm.",
            need=need,
            container=rule.container,
        )
        if rule.container
        else tr("Upgrade ROCm to {need} or newer.", need=need)
    )
    return replace(check, fix=fix, actions=(f"rocm:{need}",))


def _official_check(rule: FrameworkRule, gpu: GPU) -> Check:
    name = gpu.name.upper()
    hit = next((g for g in rule.official_gpus if g.upper() in name), None)
    if hit is not None:
        return Check("ok", tr("the {gpu} is officially supported", gpu=hit))
    return Check(
        "fail",
        tr("the {gpu} is not on the official list (community support only)", gpu=gpu.name),
        cause="not-official",
    )


def _unavailable(rule: FrameworkRule) -> Check:
    if rule.applies_to and rule.severity == "warn":  # one build does not run here, another does (the fix)
        return Check("fail", tr("not supported on this platform"), fix=_fix(rule), cause="os-unsupported")
    if rule.applies_to:  # no build for this platform (a Jetson, Windows): not applicable here
        return Check(
            "fail",
            tr("not applicable on this platform: {fix}", fix=_fix(rule) or rule.id),
            fix=_fix(rule),
            cause="os-unsupported",
        )
    if rule.backend == "cpu":
        return Check(
            "fail", tr("it needs a GPU; this machine has none it can use"), fix=_fix(rule), cause="no-gpu"
        )
    backend = _BACKEND_NAMES.get(rule.backend, rule.backend)
    return Check(
        "fail",
        tr("it has no {backend} build: it runs on other vendors' GPUs only", backend=backend),
        fix=_fix(rule),
        cause="vendor-only",
    )


def rule_checks(rule: FrameworkRule, facts: Facts, gpu: GPU | None) -> list[Check]:
    """Every requirement of one rule, each checked on its own."""
    if not rule.available:
        return [_unavailable(rule)]
    checks: list[Check] = []
    if rule.os:
        checks.append(_os_check(rule, facts))
    if gpu is not None:
        checks += _cc_checks(rule, gpu)
        if rule.gfx_targets:
            checks.append(_gfx_check(rule, facts, gpu))
        if rule.official_gpus:
            checks.append(_official_check(rule, gpu))
    if rule.experimental:
        backend = _BACKEND_NAMES.get(rule.backend, rule.backend)
        checks.append(
            Check(
                "warn",
                tr("its {backend} support is experimental", backend=backend),
                fix=_fix(rule),
                cause="limited",
            )
        )
    if rule.min_cuda:
        checks.append(driver_supports(facts, rule.min_cuda, f"CUDA ≥ {rule.min_cuda}"))
    if rule.min_driver:
        checks.append(_driver_floor(rule.min_driver, facts))
    if rule.min_rocm:
        have = version(dotted(facts.rocm)) if facts.rocm else None
        checks.append(_rocm_floor(rule, have))
    if rule.min_torch:
        checks.append(_torch_check(rule, facts))
    if rule.python_min or rule.python_max:
        checks.append(_python_check(rule, facts))
    if rule.cpu_flags:
        checks.append(_cpu_check(rule, facts))
    return checks
