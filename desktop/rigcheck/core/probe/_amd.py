"""AMD GPUs on Linux: the amdgpu driver's sysfs files, the KFD topology, and amdsmi when importable.

Per ``/sys/class/drm/cardN/device`` (PCI vendor 0x1002, driver amdgpu):

- name: amdsmi's market name, else ``product_name``, else libdrm's ``amdgpu.ids`` (device id and
  revision), else ``pci.ids``, else "AMD GPU 1002:xxxx"
- VRAM: ``mem_info_vram_total``; free is total minus ``mem_info_vram_used``
- ``unique_id`` goes into ``GPU.uuid``: it is the ASIC's serial number (what rocm-smi calls
  "Unique ID"), the only stable per-board id amdgpu publishes; ``serial`` is left for a board serial
- power caps from ``hwmon/hwmon*/power1_cap{,_default,_max}`` (µW), PCIe from ``*_link_{speed,width}``
- gfx target (``gfx1100``) from the KFD topology, matched by PCI address; without KFD it stays None

The PCIe figures are the GPU endpoint's own link; on cards with an internal PCIe switch that can
differ from the slot's link.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from rigcheck.core.machine import GPU, Drivers
from rigcheck.core.probe._common import (
    Notes,
    ProbeContext,
    VendorResult,
    hwmon_folder,
    pci_ids_name,
    read_int,
    read_text,
)
from rigcheck.core.probe._pci import DrmCard, drm_cards

VENDOR_ID = "1002"
GIB = 1024**3
#: an APU's BIOS carve-out is at most this large; dGPUs have more (see _is_apu)
_APU_MAX_CARVE_OUT = 4 * GIB
#: PCIe transfer rate (GT/s) -> generation
_PCIE_GEN = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}
_GFX_NAME = re.compile(r"gfx[0-9a-f]{3,4}")


def _load_amdsmi() -> ModuleType:
    """The ``amdsmi`` module from ROCm; raises ImportError when absent (tests replace this)."""
    return importlib.import_module("amdsmi")


def probe_gpus(ctx: ProbeContext) -> VendorResult:
    notes = Notes("amd")
    cards = []
    for card in drm_cards(ctx, VENDOR_ID, notes):
        if card.driver == "amdgpu":
            cards.append(card)
        else:
            driver = f"driver {card.driver!r}" if card.driver else "no driver"
            notes.info(f"{card.name}: AMD GPU with {driver}, not amdgpu")
    rocm = rocm_version(ctx, notes)
    if not cards:
        return VendorResult(drivers=Drivers(rocm=rocm), notes=notes.collected())

    smi = _amdsmi_facts(notes)
    kfd = _kfd_nodes(ctx, notes)
    ids = _amdgpu_ids(ctx, notes)
    gpus = tuple(_describe(ctx, card, smi=smi, kfd=kfd, ids=ids, notes=notes) for card in cards)

    driver_version = read_text(ctx.path("/sys/module/amdgpu/version"), notes)
    if driver_version is None:
        notes.info("amdgpu is the kernel's in-tree driver (no separate driver version)")
    override = ctx.env.get("HSA_OVERRIDE_GFX_VERSION")
    if override:
        notes.info(f"HSA_OVERRIDE_GFX_VERSION={override} is set: ROCm treats the GPUs as that gfx version")
    return VendorResult(gpus=gpus, drivers=Drivers(amdgpu=driver_version, rocm=rocm), notes=notes.collected())


@dataclass(frozen=True)
class _KfdNode:
    """One GPU node of the KFD topology (``/sys/class/kfd/kfd/topology/nodes/N/properties``)."""

    gfx_target: str
    compute_units: int | None
    #: the PCI address as ``(domain << 16) | location_id``; see :func:`_location`
    location: int | None
    render_minor: int | None


def _describe(
    ctx: ProbeContext,
    card: DrmCard,
    *,
    smi: dict[str, dict[str, str]],
    kfd: list[_KfdNode],
    ids: dict[tuple[int, int], str],
    notes: Notes,
) -> GPU:
    dev = card.device
    smi_facts = smi.get(card.bus_id or "", {})
    topo = _match_kfd(kfd, card)

    total = read_int(dev / "mem_info_vram_total", notes)
    used = read_int(dev / "mem_info_vram_used", notes)
    if total is None:
        notes.warning(f"{card.name}: VRAM size unknown (no readable mem_info_vram_total)")
    unified = _is_apu(card, total, notes) if total is not None else None
    # An APU may also map system RAM (GTT) on top of its carve-out: the estimator counts both.
    gtt = read_int(dev / "mem_info_gtt_total", notes) if unified else None
    hwmon = hwmon_folder(dev, ("power1_cap",))  # the one with a power cap (amdgpu creates one)
    name = (
        smi_facts.get("name")
        or read_text(dev / "product_name", notes)
        or _amdgpu_ids_name(card, ids)
        or _pci_ids_name(ctx, card)
        or f"AMD GPU {card.pci_id or ''}".strip()
    )
    return GPU(
        vendor="amd",
        name=name,
        memory_total_bytes=total,
        memory_free_bytes=total - used if total is not None and used is not None else None,
        unified_memory=unified,
        memory_shared_bytes=gtt,
        uuid=read_text(dev / "unique_id", notes),
        pci_bus_id=card.bus_id,
        pci_id=card.pci_id,
        gfx_target=smi_facts.get("gfx") or (topo.gfx_target if topo else None),
        cores=topo.compute_units if topo else None,
        power_limit_watts=_watts(hwmon, "power1_cap", notes),
        power_default_limit_watts=_watts(hwmon, "power1_cap_default", notes),
        power_max_limit_watts=_watts(hwmon, "power1_cap_max", notes),
        pcie_gen=_pcie_gen(read_text(dev / "current_link_speed", notes)),
        pcie_width=read_int(dev / "current_link_width", notes),
        pcie_max_gen=_pcie_gen(read_text(dev / "max_link_speed", notes)),
        pcie_max_width=read_int(dev / "max_link_width", notes),
        source=card.source,
    )


def _amdgpu_ids_name(card: DrmCard, ids: dict[tuple[int, int], str]) -> str | None:
    if not card.device_id:
        return None
    device = int(card.device_id, 16)
    if card.revision is not None:
        return ids.get((device, card.revision))
    # Without a revision, use amdgpu.ids only when every revision of the device has the same name.
    names = {name for (dev_id, _rev), name in ids.items() if dev_id == device}
    return names.pop() if len(names) == 1 else None


def _pci_ids_name(ctx: ProbeContext, card: DrmCard) -> str | None:
    name = pci_ids_name(ctx, VENDOR_ID, card.device_id) if card.device_id else None
    return f"AMD {name}" if name and not name.startswith("AMD") else name


def _is_apu(card: DrmCard, vram_total: int, notes: Notes) -> bool:
    """True for an integrated GPU whose "VRAM" is a BIOS carve-out of system RAM.

    ``boot_vga`` does not tell. Heuristic: amdgpu creates ``mem_info_vram_vendor`` only when the
    board reports a memory vendor (dGPUs do; APUs do not), the carve-out is at most 4 GiB, and the
    GTT pool (system RAM the GPU may map) is larger than that VRAM.
    """
    dev = card.device
    gtt_total = read_int(dev / "mem_info_gtt_total", notes)
    vendor_file = (dev / "mem_info_vram_vendor").exists()
    if vendor_file or gtt_total is None or vram_total > _APU_MAX_CARVE_OUT or gtt_total <= vram_total:
        return False
    notes.info(
        f"{card.name}: APU: VRAM is the BIOS carve-out; the GPU can also use up to "
        f"{gtt_total / GIB:.1f} GiB of system RAM (GTT)"
    )
    return True


def _watts(hwmon: Path | None, name: str, notes: Notes) -> float | None:
    microwatts = read_int(hwmon / name, notes) if hwmon else None
    return microwatts / 1_000_000 if microwatts is not None else None


def _pcie_gen(speed: str | None) -> int | None:
    """ "16.0 GT/s PCIe" -> 4; None for "Unknown" or anything unexpected."""
    match = re.match(r"([\d.]+)\s*GT/s", speed or "")
    return _PCIE_GEN.get(float(match.group(1))) if match else None


def _location(bus_id: str | None) -> int | None:
    """A PCI address as KFD's ``(domain << 16) | location_id``, location_id being bus<<8 | devfn."""
    match = re.fullmatch(r"([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])", bus_id or "")
    if not match:
        return None
    domain, bus, slot, function = (int(g, 16) for g in match.groups())
    return (domain << 16) | (bus << 8) | (slot << 3) | function


def _render_minor(device: Path) -> int | None:
    try:
        names = [p.name for p in (device / "drm").iterdir()]
    except OSError:
        return None
    minors = [int(n[7:]) for n in names if re.fullmatch(r"renderD\d+", n)]
    return minors[0] if minors else None


def gfx_name(version: int) -> str:
    """KFD's ``gfx_target_version`` as an LLVM target: 110000 -> "gfx1100", 90010 -> "gfx90a"."""
    major, minor, step = version // 10000, (version // 100) % 100, version % 100
    return f"gfx{major}{minor:x}{step:x}"


def _kfd_nodes(ctx: ProbeContext, notes: Notes) -> list[_KfdNode]:
    """The GPU nodes of the KFD topology (absent without the amdkfd driver, e.g. in some containers)."""
    try:
        folders = sorted(ctx.path("/sys/class/kfd/kfd/topology/nodes").iterdir())
    except OSError:
        return []
    found = []
    for folder in folders:
        props: dict[str, int] = {}
        for line in (read_text(folder / "properties", notes) or "").splitlines():
            key, _, value = line.partition(" ")
            if value.strip().isdigit():
                props[key] = int(value)
        version = props.get("gfx_target_version", 0)
        if not version:  # a CPU node
            continue
        simds, per_cu = props.get("simd_count", 0), props.get("simd_per_cu", 0)
        location = props.get("location_id")
        found.append(
            _KfdNode(
                gfx_target=gfx_name(version),
                compute_units=simds // per_cu if simds and per_cu else None,
                location=(props.get("domain", 0) << 16) | location if location is not None else None,
                render_minor=props.get("drm_render_minor"),
            )
        )
    return found


def _match_kfd(nodes: list[_KfdNode], card: DrmCard) -> _KfdNode | None:
    """The node at the card's PCI address, else the one with the card's render minor."""
    location = _location(card.bus_id)
    if location is not None:
        for node in nodes:
            if node.location == location:
                return node
    minor = _render_minor(card.device)
    return next((n for n in nodes if minor is not None and n.render_minor == minor), None)


def _amdgpu_ids(ctx: ProbeContext, notes: Notes) -> dict[tuple[int, int], str]:
    """libdrm's marketing names: lines "DEVICE_ID,<tab>REVISION_ID,<tab>PRODUCT_NAME" in hex."""
    names: dict[tuple[int, int], str] = {}
    for candidate in ("/usr/share/libdrm/amdgpu.ids", "/opt/amdgpu/share/libdrm/amdgpu.ids"):
        text = read_text(ctx.path(candidate), notes)
        if not text:
            continue
        for line in text.splitlines():
            parts = [p.strip() for p in line.split(",", 2)]
            if len(parts) == 3 and not line.startswith("#"):
                try:
                    names[int(parts[0], 16), int(parts[1], 16)] = parts[2]
                except ValueError:
                    continue
        break
    return names


def rocm_version(ctx: ProbeContext, notes: Notes) -> str | None:
    """The installed ROCm release ("6.1.2"), from ``$ROCM_PATH`` first, then ``/opt/rocm``."""
    roots = [p for p in (ctx.env.get("ROCM_PATH"), "/opt/rocm") if p]
    for root in roots:
        for name in (".info/version", ".info/version-dev"):
            found = _version(read_text(ctx.path(f"{root}/{name}"), notes))
            if found:
                return found
        header = read_text(ctx.path(f"{root}/include/rocm-core/rocm_version.h"), notes) or ""
        parts = [
            re.search(rf"#define\s+ROCM_VERSION_{k}\s+(\d+)", header) for k in ("MAJOR", "MINOR", "PATCH")
        ]
        if all(parts):
            return ".".join(m.group(1) for m in parts if m)
    try:
        folders = [p.name for p in ctx.path("/opt").iterdir() if p.is_dir()]
    except OSError:
        return None
    versions = [v for v in (_version(n.removeprefix("rocm-")) for n in folders if n.startswith("rocm-")) if v]
    return max(versions, key=lambda v: tuple(int(x) for x in v.split(".")), default=None)


def _version(text: str | None) -> str | None:
    """The leading "X.Y[.Z]" of a version string ("6.1.2-112" -> "6.1.2")."""
    match = re.match(r"\d+\.\d+(?:\.\d+)?", text or "")
    return match.group(0) if match else None


def _amdsmi_facts(notes: Notes) -> dict[str, dict[str, str]]:
    """Market name and gfx target per PCI address from amdsmi; {} when absent or failing."""
    try:
        smi = _load_amdsmi()
    except ImportError:
        return {}
    facts: dict[str, dict[str, str]] = {}
    try:
        smi.amdsmi_init()
        try:
            for handle in smi.amdsmi_get_processor_handles():
                bus_id = str(smi.amdsmi_get_gpu_device_bdf(handle)).lower()
                asic = smi.amdsmi_get_gpu_asic_info(handle)
                name = str(asic.get("market_name") or "").strip()
                gfx = str(asic.get("target_graphics_version") or "").strip().lower()
                facts[bus_id] = {
                    "name": name if name and name != "N/A" else "",
                    "gfx": gfx if _GFX_NAME.fullmatch(gfx) else "",
                }
        finally:
            smi.amdsmi_shut_down()
    except Exception as exc:  # noqa: BLE001 - amdsmi raises its own types, and ctypes errors
        notes.warning(f"amdsmi failed ({exc}); using the sysfs values")
        return {}
    return facts
