"""The dependency chain: software built on PyTorch runs on the torch it would run on here, so when that torch
cannot run on a GPU, neither can the software — whatever its own rules say.

A framework runs on the installed torch when it is installed, or when installing it keeps the installed torch
(its torch requirement admits it, or the catalog records none). Such a finding becomes "blocked by the
installed torch": it fails with the torch's own cause, its fix and actions are the torch's (the torch fix
comes first), and it carries no command of its own, so nothing re-pins a torch that fails. ``blocked_by``
names the torch finding, so the root causes count the broken torch once, with what it blocks listed under it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from rigcheck.core.compat._base import HARDWARE_CAUSES, Facts, Finding
from rigcheck.core.i18n import tr

#: frameworks that are PyTorch extensions or run on PyTorch (their wheels are built against a torch)
TORCH_USERS = frozenset(
    {
        "flash-attn-2", "flash-attn-3", "flash-attn-4", "xformers", "bitsandbytes", "vllm", "sglang",
        "tensorrt-llm", "transformer-engine", "exllamav2", "deepspeed", "unsloth",
    }
)  # fmt: skip

_NOT_INSTALLED = (
    "would work if installed: {reason}",
    "would work, with limits, if installed: {reason}",
    "would not work as things are: {reason}",
)


def torch_blocker(torch: Sequence[Finding], gpu_index: int | None) -> Finding | None:
    """The installed torch's finding that stops it running on this GPU (machine-wide first), else None.

    Blocking: a failure (no kernels for this GPU, a CUDA this driver cannot run), or a CPU-only build on a
    machine with a GPU (the GPU is not used)."""
    installed = [f for f in torch if f.installed and f.framework == "pytorch"]
    for finding in sorted(installed, key=lambda f: f.gpu_index is not None):
        if finding.gpu_index not in (None, gpu_index):
            continue
        if finding.status == "fail" or (finding.status == "warn" and finding.cause == "wheel-cuda-mismatch"):
            return finding
    return None


def keeps_installed_torch(facts: Facts, finding: Finding) -> bool:
    """Whether this framework would run on the installed torch: installed, or installing its newest release
    keeps that torch (no catalogued torch requirement of that release excludes it)."""
    if finding.installed:
        return True
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    for rule in facts.catalog.frameworks:
        if rule.framework != finding.framework or not (rule.torch_pin and rule.latest):
            continue
        try:
            wanted = SpecifierSet(rule.torch_pin)
        except InvalidSpecifier:
            continue
        if facts.torch is None or not wanted.contains(facts.torch.public, prereleases=True):
            return False  # pip brings the torch it pins: the framework's own rules judge that one
    return True


def block(facts: Facts, finding: Finding, blocker: Finding) -> Finding:
    """``finding`` as blocked by the installed torch (``blocker``); unchanged when its own verdict already
    says this hardware cannot run it (the hardware is the story) or when it does not run on that torch."""
    if finding.framework not in TORCH_USERS or not keeps_installed_torch(facts, finding):
        return finding
    if finding.status == "fail" and finding.cause in HARDWARE_CAUSES:
        return finding
    torch = facts.torch_text or "?"
    reason = tr(
        "blocked by the installed torch {torch}, which cannot run here ({why}): fix PyTorch first",
        torch=torch,
        why=blocker.reason,
    )
    own_reason = finding.reason
    for template in _NOT_INSTALLED:  # the framework's own "would work if installed: …" lead goes
        own_reason = own_reason.removeprefix(tr(template, reason=""))
    if finding.status == "ok":
        own = tr("on a working torch: {reason}", reason=own_reason)
    else:
        own = tr("its own requirements: {reason}", reason=own_reason)
    if not finding.installed:
        reason = tr("would not work as things are: {reason}", reason=reason)
    fix = blocker.fix or tr("Fix the installed PyTorch first (see the PyTorch finding).")
    return replace(
        finding,
        status="fail",
        reason=f"{reason}; {own}",
        fix=fix,
        source=blocker.source or finding.source,
        command=blocker.command,
        cause=blocker.cause or "wheel-cuda-mismatch",
        actions=blocker.actions,
        side_effect=None,
        blocked_by=blocker.subject,
    )
