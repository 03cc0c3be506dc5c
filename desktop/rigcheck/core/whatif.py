"""What-if machines: swap in catalog GPUs or another amount of RAM; the result is just another Machine."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from rigcheck.core.catalog import GpuSpec
from rigcheck.core.machine import GPU, Machine, Note

GIB = 1024**3


def gpu_from_spec(spec: GpuSpec, index: int) -> GPU:
    """A GPU as the catalog describes it (the largest memory size it is sold with)."""
    memory = int(max(spec.memory_gb) * GIB) if spec.memory_gb else None
    return GPU(
        vendor=spec.vendor,
        name=spec.name,
        memory_total_bytes=memory,
        index=index,
        catalog_id=spec.id,
        pci_id=spec.pci_ids[0] if spec.pci_ids else None,
        unified_memory=spec.unified_memory,
        compute_capability=spec.compute_capability,
        gfx_target=spec.gfx_target,
        power_limit_watts=spec.tdp_watts,
        power_default_limit_watts=spec.tdp_watts,
        pcie_max_gen=spec.pcie_gen,
        pcie_max_width=spec.pcie_lanes,
        source=f"catalog {spec.id}",
    )


def simulate(machine: Machine, gpus: Sequence[GpuSpec] | None = None, ram_gb: float | None = None) -> Machine:
    """``machine`` with its GPUs replaced by ``gpus`` and/or its RAM set to ``ram_gb`` GiB.

    Free memory of a simulated part is unknown, so estimates use its whole capacity.
    """
    notes = list(machine.notes)
    if gpus is not None:
        machine = replace(machine, gpus=tuple(gpu_from_spec(spec, i) for i, spec in enumerate(gpus)))
        names = ", ".join(spec.name for spec in gpus) or "no GPU"
        notes.append(Note("what-if", "info", f"GPUs replaced by {names} (from the catalog)"))
    if ram_gb is not None:
        total = int(ram_gb * GIB)
        # the channels and their speed stay: a bandwidth read, measured or typed in is kept
        memory = replace(machine.memory, total_bytes=total, available_bytes=None, swap_total_bytes=None)
        machine = replace(machine, memory=memory)
        notes.append(Note("what-if", "info", f"RAM set to {ram_gb:g} GiB"))
    return replace(machine, notes=tuple(notes))


def upgrade(
    machine: Machine,
    *,
    gpus: Sequence[GpuSpec] | None = None,
    add_gpus: Sequence[GpuSpec] = (),
    ram_gb: float | None = None,
    psu_watts: float | None = None,
) -> Machine:
    """``machine`` after an upgrade: ``gpus`` replaces all its GPUs, ``add_gpus`` are added to the
    (possibly replaced) ones, mixed models allowed; ``ram_gb`` sets the RAM in GiB and ``psu_watts`` the PSU.

    GPUs kept from ``machine`` keep what the probe read; added ones are built from the catalog.
    """
    result = simulate(machine, gpus, ram_gb)
    if add_gpus:
        start = len(result.gpus)
        added = tuple(gpu_from_spec(spec, start + i) for i, spec in enumerate(add_gpus))
        names = ", ".join(spec.name for spec in add_gpus)
        note = Note("what-if", "info", f"added {names} (from the catalog)")
        result = replace(result, gpus=result.gpus + added, notes=(*result.notes, note))
    if psu_watts is not None:
        result = result.with_psu(psu_watts)
        result = replace(
            result, notes=(*result.notes, Note("what-if", "info", f"PSU set to {psu_watts:g} W"))
        )
    return result
