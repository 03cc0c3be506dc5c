"""Read the real machine into a :class:`~rigcheck.core.machine.Machine`.

One public entry, :func:`probe_machine`; one private module per source, each exposing the same
function names (``probe_gpus(ctx)`` for the GPU vendors), in the manner of psutil's platform modules:

- ``_nvidia``  NVIDIA GPUs through NVML (nvidia-ml-py), on Linux and Windows
- ``_amd``     AMD GPUs through sysfs (and amdsmi when importable), on Linux
- ``_intel``   Intel GPUs through i915/xe sysfs, on Linux
- ``_apple``   Apple Silicon unified memory through sysctl/system_profiler, on macOS
- ``_windows`` any GPU's VRAM from the display-adapter registry keys, on Windows
- ``_host``, ``_cpu``, ``_software``: the OS, container, CPU, RAM, disks and the software stack

No probe raises for a missing library, driver or refused query; what it could not read is ``None``
and a note says why.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from rigcheck.core.machine import CPU, GPU, PSU, SCHEMA, Drivers, Machine, Memory, Note, now_iso
from rigcheck.core.probe import _cpu, _host, _software
from rigcheck.core.probe._common import ProbeContext, VendorResult, pci_ids_name

__all__ = ["ProbeContext", "probe_gpus", "probe_machine"]


def probe_gpus(ctx: ProbeContext) -> VendorResult:
    """Every GPU the platform's backends find, NVIDIA first, indexed in that order."""
    # Imported here: each backend module is only needed on its own platform.
    from rigcheck.core.probe import _amd, _apple, _intel, _nvidia, _windows

    if ctx.platform.startswith("linux"):
        backends = [_nvidia.probe_gpus, _amd.probe_gpus, _intel.probe_gpus]
    elif ctx.platform == "win32":
        backends = [_nvidia.probe_gpus, _windows.probe_gpus]
    elif ctx.platform == "darwin":
        backends = [_apple.probe_gpus]
    else:
        return VendorResult(
            notes=(Note("gpu", "warning", f"GPU probing is not implemented for platform {ctx.platform!r}"),)
        )

    gpus: list[GPU] = []
    notes: list[Note] = []
    drivers = Drivers()
    for backend in backends:
        result = backend(ctx)
        seen = {g.pci_bus_id for g in gpus if g.pci_bus_id} | {g.uuid for g in gpus if g.uuid}
        for gpu in result.gpus:
            # The registry lists NVIDIA cards that NVML already described: keep NVML's richer record.
            if (gpu.pci_bus_id and gpu.pci_bus_id in seen) or (gpu.uuid and gpu.uuid in seen):
                continue
            if (
                backend is _windows.probe_gpus
                and gpu.vendor == "nvidia"
                and any(g.vendor == "nvidia" and g.source == "nvml" for g in gpus)
            ):
                continue
            gpus.append(gpu)
        notes.extend(result.notes)
        drivers = _merge_drivers(drivers, result.drivers)
    if ctx.platform.startswith("linux"):
        unseen, unseen_notes = _nvidia_without_nvml(ctx, gpus)
        gpus += unseen
        notes += unseen_notes
    if not gpus:
        notes.append(Note("gpu", "info", "no GPU found; models would run on the CPU only"))
    indexed = tuple(replace(gpu, index=i) for i, gpu in enumerate(gpus))
    return VendorResult(gpus=indexed, drivers=drivers, notes=tuple(notes))


def probe_machine(
    ctx: ProbeContext | None = None,
    psu_watts: float | None = None,
    pythons: tuple[str, ...] = (),
    *,
    measure_bandwidth: bool = False,
) -> Machine:
    """Describe this computer. Never raises for what the machine lacks or refuses to tell.

    The slow parts (NVML initialisation, ``--version`` subprocesses) run side by side on threads.
    ``pythons`` are extra interpreters whose packages are listed too. The host memory bandwidth comes
    from the CPU platform catalog (or a default); ``measure_bandwidth`` runs a ~1 s copy test instead.
    """
    ctx = ctx or ProbeContext()
    taken_at = now_iso()
    with ThreadPoolExecutor(max_workers=3) as pool:
        gpu_future = pool.submit(probe_gpus, ctx)
        software_future = pool.submit(_software.probe_software, ctx, pythons)
        cpu_future = pool.submit(_cpu.probe_cpu, ctx)
        host, host_notes = _host.probe_host(ctx)
        disks, disk_notes = _host.probe_disks(ctx)
        cpu, memory, cpu_notes = cpu_future.result()
        gpu_result = gpu_future.result()
        software, sw_drivers, sw_notes = software_future.result()
    gpus, catalog_notes = _with_catalog_ids(gpu_result.gpus)
    memory, bandwidth_notes = _with_host_bandwidth(cpu, memory, measure_bandwidth)
    catalog_notes = (*catalog_notes, *bandwidth_notes)
    return Machine(
        schema=SCHEMA,
        taken_at=taken_at,
        host=host,
        cpu=cpu,
        memory=memory,
        disks=disks,
        gpus=gpus,
        drivers=_merge_drivers(gpu_result.drivers, sw_drivers),
        software=software,
        psu=PSU(watts=psu_watts, source="user") if psu_watts is not None else PSU(),
        notes=(*host_notes, *cpu_notes, *disk_notes, *gpu_result.notes, *sw_notes, *catalog_notes),
    )


def _with_host_bandwidth(cpu: CPU, memory: Memory, measure: bool) -> tuple[Memory, tuple[Note, ...]]:
    """The host memory bandwidth: measured on request, else the CPU platform's from the catalog."""
    from rigcheck.core.catalog import load_catalog
    from rigcheck.core.errors import InputError
    from rigcheck.core.estimate.speed import with_host_bandwidth

    measured = None
    notes: list[Note] = []
    if measure:
        try:
            from rigcheck.core.probe._membw import measure_copy_bandwidth

            measured = measure_copy_bandwidth()
        except (ImportError, MemoryError, OSError) as exc:
            notes.append(Note("memory", "warning", f"memory bandwidth not measured: {exc}"))
        else:
            notes.append(Note("memory", "info", f"memory copy test: {measured / 1e9:.1f} GB/s"))
    try:
        catalog = load_catalog()
    except InputError as exc:
        return memory, (*notes, Note("catalog", "error", f"catalog not loaded: {exc}"))
    bare = Machine(cpu=cpu, memory=memory, gpus=())
    return with_host_bandwidth(bare, catalog, measured).memory, tuple(notes)


def _with_catalog_ids(gpus: tuple[GPU, ...]) -> tuple[tuple[GPU, ...], tuple[Note, ...]]:
    """Each GPU's catalog entry, matched by the driver's name or PCI id; what the driver said stays."""
    if not gpus:
        return gpus, ()
    from rigcheck.core.catalog import load_catalog
    from rigcheck.core.errors import InputError

    try:
        catalog = load_catalog()
    except InputError as exc:  # a broken shipped catalog must not cost the user the audit
        return gpus, (Note("catalog", "error", f"catalog not loaded: {exc}"),)
    notes = [Note("catalog", "warning", problem) for problem in catalog.problems]
    matched = []
    for gpu in gpus:
        spec = catalog.match_gpu(gpu)
        if spec is None:
            notes.append(
                Note("catalog", "info", f"{gpu.name} is not in the catalog: its specifications are unknown")
            )
        matched.append(replace(gpu, catalog_id=spec.id if spec else None))
    return tuple(matched), tuple(notes)


def _normal_bus_id(bus_id: str) -> str:
    """NVML writes the PCI domain with 8 hex digits, sysfs with 4: compare them as numbers."""
    domain, _, rest = bus_id.lower().partition(":")
    try:
        return f"{int(domain, 16):04x}:{rest}"
    except ValueError:
        return bus_id.lower()


def _nvidia_without_nvml(ctx: ProbeContext, gpus: list[GPU]) -> tuple[list[GPU], list[Note]]:
    """NVIDIA cards on the PCI bus that NVML did not describe: listed, with the reason.

    Without this, a box whose driver is missing or broken would look like it has no GPU at all.
    """
    from rigcheck.core.probe import _pci

    known = {_normal_bus_id(g.pci_bus_id) for g in gpus if g.pci_bus_id}
    found: list[GPU] = []
    notes: list[Note] = []
    for dev in _pci.display_devices(ctx):
        if dev.vendor_id != "10de" or _normal_bus_id(dev.bus_id) in known:
            continue
        name = (
            pci_ids_name(ctx, dev.vendor_id, dev.device_id) or f"NVIDIA GPU {dev.vendor_id}:{dev.device_id}"
        )
        found.append(
            GPU(
                vendor="nvidia",
                name=name,
                memory_total_bytes=None,
                pci_bus_id=dev.bus_id,
                pci_id=f"{dev.vendor_id}:{dev.device_id}",
                source="sysfs /sys/bus/pci/devices (NVML unavailable)",
            )
        )
        driver = f"bound to {dev.driver}" if dev.driver else "with no driver bound"
        notes.append(
            Note(
                "nvidia",
                "warning",
                f"NVIDIA GPU at {dev.bus_id} ({name}) is {driver} and not visible to NVML: "
                "install or load the NVIDIA driver to read its memory, power and compute capability",
            )
        )
    return found, notes


def _merge_drivers(first: Drivers, second: Drivers) -> Drivers:
    """Fields ``first`` knows win; ``second`` fills the gaps."""
    return Drivers(
        nvidia=first.nvidia or second.nvidia,
        cuda_driver=first.cuda_driver or second.cuda_driver,
        amdgpu=first.amdgpu or second.amdgpu,
        rocm=first.rocm or second.rocm,
    )
