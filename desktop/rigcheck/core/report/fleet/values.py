"""One node's values as the fleet compares them: GPU and VRAM summaries, the drift fields, version
and natural order."""

from __future__ import annotations

import re
from collections import Counter

from rigcheck.core.machine import Machine
from rigcheck.core.report.fleet.records import GIB, MISSING, VERSION_FIELDS
from rigcheck.core.unified import unified_share


def _short_gpu_name(name: str) -> str:
    for prefix in ("NVIDIA ", "GeForce ", "AMD ", "Radeon "):
        if name.startswith(prefix) and len(name) > len(prefix):
            name = name[len(prefix) :]
    return name


def gpu_summary(machine: Machine) -> str:
    """``2 × RTX 4090``, ``RTX 3090 + RTX 4090``, ``none``."""
    counts: Counter[str] = Counter(_short_gpu_name(g.name) for g in machine.gpus)
    return " + ".join(f"{n} × {name}" if n > 1 else name for name, n in counts.items()) or "none"


def vram_summary(machine: Machine) -> str:
    """Total GPU memory, ``48 GiB``; ``unified`` when it is shared with the CPU; ``—`` when unknown."""
    sizes: list[int] = []
    by_rule = False
    for g in machine.gpus:
        # a unified GPU whose size the probe could not read: its platform's rule, as the estimates use it
        share = unified_share(g, machine.memory.total_bytes) if machine.memory.total_bytes else None
        if share is not None:
            sizes.append(share.bytes)
            by_rule = by_rule or share.by_rule
        elif g.memory_total_bytes is not None:
            sizes.append(g.memory_total_bytes)
    if not sizes:
        return MISSING
    text = f"{'~' if by_rule else ''}{round(sum(sizes) / GIB):d} GiB"
    if any(g.unified_memory for g in machine.gpus):
        text += " unified"
    if len(sizes) < len(machine.gpus):
        text += "+?"
    return text


class _NotApplicable:
    pass


_NOT_APPLICABLE = _NotApplicable()


def _field_value(name: str, m: Machine) -> str | _NotApplicable | None:
    vendors = {g.vendor for g in m.gpus}
    if name in ("driver", "cuda_driver"):
        if "nvidia" not in vendors:
            return _NOT_APPLICABLE
        return m.drivers.nvidia if name == "driver" else m.drivers.cuda_driver
    if name in ("amdgpu", "rocm"):
        if "amd" not in vendors:
            return _NOT_APPLICABLE
        # amdgpu's own version is only known for the DKMS module; a stock kernel's is not drift
        return m.drivers.amdgpu if name == "rocm" or m.drivers.amdgpu else _NOT_APPLICABLE
    if name == "torch":
        torch = m.software.python_packages.get("torch")
        return torch.split("+", 1)[0] if torch else None
    if name == "gpu":
        return gpu_summary(m)
    if name == "ram_gib":
        return f"{round(m.memory.total_bytes / GIB)} GiB"
    if name == "os":
        return m.host.os_version or m.host.os
    raise ValueError(f"unknown drift field {name!r}")


def version_key(text: str) -> tuple[int, ...]:
    """``"550.54.14"`` → (550, 54, 14); a local part (``2.5.1+cu124``) is left out."""
    return tuple(int(d) for d in re.findall(r"\d+", text.split("+", 1)[0]))


def _order_key(name: str, value: str) -> tuple[int, ...]:
    if name in VERSION_FIELDS or name == "ram_gib":
        return version_key(value)
    return ()


def _relation(name: str, value: str, majority: str) -> str:
    if name in VERSION_FIELDS:
        a, b = version_key(value), version_key(majority)
        if a and b and a != b:
            return "older" if a < b else "newer"
    if name == "ram_gib":
        return "smaller" if version_key(value) < version_key(majority) else "larger"
    return "different"


def _natural(text: str) -> tuple[tuple[int, str], ...]:
    """node2 before node10."""
    return tuple((int(p), "") if p.isdigit() else (-1, p.lower()) for p in re.split(r"(\d+)", text) if p)
