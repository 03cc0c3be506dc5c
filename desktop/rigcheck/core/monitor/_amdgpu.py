"""AMD GPUs on Linux through the amdgpu driver's sysfs files, read at every tick."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rigcheck.core.monitor._values import _float, _scaled
from rigcheck.core.monitor.records import GpuSample
from rigcheck.core.probe._common import Notes, ProbeContext, hwmon_folder, read_int, read_text

_DPM_CURRENT = re.compile(r"^\s*\S+:\s*(\d+(?:\.\d+)?)\s*mhz\s*\*", re.IGNORECASE | re.MULTILINE)


@dataclass
class _AmdCard:
    index: int
    name: str
    label: str
    device: Path
    hwmon: Path | None
    #: ``power1_average`` (older kernels, a 1 s average) or ``power1_input`` (newer, instantaneous)
    power: Path | None
    noted: set[str]


class _AmdSource:
    """The amdgpu driver's sysfs files under ``/sys/class/drm/cardN/device``, read at every tick.

    - utilisation: ``gpu_busy_percent``; VRAM: ``mem_info_vram_used`` / ``mem_info_vram_total``
    - hwmon (µW, m°C): ``power1_average`` or ``power1_input``, ``power1_cap``, ``temp1_input``
      (the edge sensor)
    - clocks: the current level (the line marked ``*``) of ``pp_dpm_sclk`` and ``pp_dpm_mclk``
    - fan: ``pwm1`` / ``pwm1_max``, else ``fan1_input`` / ``fan1_max`` (RPM)

    amdgpu publishes no PCIe throughput, throttle reasons or per-process VRAM as plain sysfs files,
    so those stay empty. On an APU, the power reading is the whole package, CPU included.
    """

    def __init__(self, ctx: ProbeContext) -> None:
        from rigcheck.core.probe import _amd
        from rigcheck.core.probe._pci import drm_cards

        self.notes = Notes("amd")
        self.cards: list[_AmdCard] = []
        ids: dict[tuple[int, int], str] | None = None
        for card in drm_cards(ctx, _amd.VENDOR_ID, self.notes):
            if card.driver != "amdgpu":
                continue
            if ids is None:
                ids = _amd._amdgpu_ids(ctx, self.notes)
            dev = card.device
            name = (
                read_text(dev / "product_name")
                or _amd._amdgpu_ids_name(card, ids)
                or _amd._pci_ids_name(ctx, card)
                or f"AMD GPU {card.pci_id or ''}".strip()
            )
            label = f"{card.name} ({name})"
            # the card's hwmon folder: the first with power or temperature readings
            hwmon = hwmon_folder(dev, ("power1_average", "power1_input", "power1_cap", "temp1_input"))
            power = next(
                (hwmon / f for f in ("power1_average", "power1_input") if hwmon and (hwmon / f).exists()),
                None,
            )
            self.cards.append(_AmdCard(len(self.cards), name, label, dev, hwmon, power, set()))
            self.notes.info(
                f"{label}: amdgpu reports no PCIe throughput, throttle reasons or per-process VRAM in sysfs"
            )
            total = read_int(dev / "mem_info_vram_total")
            if total is not None and _amd._is_apu(card, total, Notes("amd")):
                self.notes.info(f"{label}: an APU: its power reading is the whole package, CPU included")

    def read(self, first_index: int) -> list[GpuSample]:
        return [self._read(card, first_index + card.index) for card in self.cards]

    def _read(self, card: _AmdCard, index: int) -> GpuSample:
        dev, hwmon, notes = card.device, card.hwmon, self.notes
        if not dev.exists():
            notes.error(f"{card.label} disappeared from sysfs (removed or driver reset): no readings since")
            return GpuSample(index, card.name, lost=True)
        power = read_int(card.power, notes) if card.power else None
        cap = read_int(hwmon / "power1_cap", notes) if hwmon else None
        temp = read_int(hwmon / "temp1_input", notes) if hwmon else None
        gpu = GpuSample(
            index=index,
            name=card.name,
            utilization_percent=_float(read_int(dev / "gpu_busy_percent", notes)),
            memory_used_bytes=read_int(dev / "mem_info_vram_used", notes),
            memory_total_bytes=read_int(dev / "mem_info_vram_total", notes),
            power_watts=_scaled(power, 1e-6),
            power_limit_watts=_scaled(cap, 1e-6),
            temperature_c=_scaled(temp, 1e-3),
            sm_clock_mhz=_dpm_current(read_text(dev / "pp_dpm_sclk", notes)),
            memory_clock_mhz=_dpm_current(read_text(dev / "pp_dpm_mclk", notes)),
            fan_percent=_amd_fan(hwmon, notes) if hwmon else None,
        )
        for field, what, files in (
            ("utilization_percent", "utilisation", "gpu_busy_percent"),
            ("memory_used_bytes", "VRAM use", "mem_info_vram_used"),
            ("power_watts", "power draw", "hwmon power1_average or power1_input"),
            ("power_limit_watts", "power limit", "hwmon power1_cap"),
            ("temperature_c", "temperature", "hwmon temp1_input"),
            ("sm_clock_mhz", "GPU clock", "pp_dpm_sclk"),
            ("memory_clock_mhz", "memory clock", "pp_dpm_mclk"),
            ("fan_percent", "fan speed", "hwmon pwm1 or fan1_input with its maximum"),
        ):
            if field not in card.noted and getattr(gpu, field) is None:
                card.noted.add(field)
                notes.info(f"{card.label}: {what} not available (no readable {files})")
        return gpu


def _amd_fan(hwmon: Path, notes: Notes) -> float | None:
    for value, maximum in (("pwm1", "pwm1_max"), ("fan1_input", "fan1_max")):
        now = read_int(hwmon / value, notes)
        top = read_int(hwmon / maximum, notes) if now is not None else None
        if now is not None and top:
            return min(100.0, 100.0 * now / top)
    return None


def _dpm_current(text: str | None) -> float | None:
    """The level marked ``*`` in amdgpu's ``pp_dpm_*`` table: "1: 2000Mhz *" -> 2000.0."""
    match = _DPM_CURRENT.search(text or "")
    return float(match.group(1)) if match else None
