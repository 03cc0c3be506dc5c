"""The loaded catalog (``Catalog``) and the kinds of records a file may hold (``KINDS``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rigcheck.core.catalog.hardware import CpuPlatform, GpuSpec, Maturity, PowerFactor, SpeedFactor
from rigcheck.core.catalog.models import KvCacheType, ModelSpec, QualityMeasurement, QuantFormat
from rigcheck.core.catalog.software import (
    Arch,
    CudaMajor,
    CudaRelease,
    DriverBranch,
    FrameworkRule,
    GfxOverride,
    RocmRelease,
    TorchRelease,
    TorchVariant,
    WheelRecord,
)
from rigcheck.core.machine import GPU

#: TOML array name -> (record class, key of an entry, what a person calls it)
KINDS: dict[str, tuple[type[Any], Callable[[Any], str]]] = {
    "gpu": (GpuSpec, lambda r: r.id),
    "model": (ModelSpec, lambda r: r.id),
    "quant": (QuantFormat, lambda r: r.id),
    "kv_cache": (KvCacheType, lambda r: r.id),
    "cuda_release": (CudaRelease, lambda r: r.version),
    "cuda_major": (CudaMajor, lambda r: str(r.major)),
    "arch": (Arch, lambda r: r.id),
    "torch_release": (TorchRelease, lambda r: r.version),
    "torch_variant": (
        TorchVariant,
        lambda r: f"{r.release}+{r.variant}" + ("" if r.machine == "x86_64" else f" ({r.machine})"),
    ),
    "rocm_release": (RocmRelease, lambda r: r.version),
    "framework": (FrameworkRule, lambda r: r.id),
    "gfx_override": (GfxOverride, lambda r: r.gfx_target),
    "driver_branch": (DriverBranch, lambda r: r.branch),
    "power_factor": (PowerFactor, lambda r: r.id),
    "speed_factor": (SpeedFactor, lambda r: r.id),
    "maturity": (Maturity, lambda r: r.id),
    "cpu_platform": (CpuPlatform, lambda r: r.id),
    "quality": (QualityMeasurement, lambda r: r.quant),
    "wheel": (WheelRecord, lambda r: f"{r.package}=={r.version}"),
}


@dataclass(frozen=True)
class Catalog:
    gpus: tuple[GpuSpec, ...] = ()
    models: tuple[ModelSpec, ...] = ()
    quants: tuple[QuantFormat, ...] = ()
    kv_caches: tuple[KvCacheType, ...] = ()
    cuda_releases: tuple[CudaRelease, ...] = ()
    cuda_majors: tuple[CudaMajor, ...] = ()
    archs: tuple[Arch, ...] = ()
    torch_releases: tuple[TorchRelease, ...] = ()
    torch_variants: tuple[TorchVariant, ...] = ()
    rocm_releases: tuple[RocmRelease, ...] = ()
    frameworks: tuple[FrameworkRule, ...] = ()
    gfx_overrides: tuple[GfxOverride, ...] = ()
    driver_branches: tuple[DriverBranch, ...] = ()
    power_factors: tuple[PowerFactor, ...] = ()
    speed_factors: tuple[SpeedFactor, ...] = ()
    maturities: tuple[Maturity, ...] = ()
    cpu_platforms: tuple[CpuPlatform, ...] = ()
    qualities: tuple[QualityMeasurement, ...] = ()
    wheels: tuple[WheelRecord, ...] = ()
    #: overlay files that were skipped, one line each: "file: entry: field: problem"
    problems: tuple[str, ...] = ()
    _gpu_ids: dict[str, GpuSpec] = field(init=False, repr=False, compare=False)
    _model_ids: dict[str, ModelSpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_gpu_ids", {g.id: g for g in self.gpus})
        object.__setattr__(self, "_model_ids", {m.id: m for m in self.models})

    def gpu(self, gpu_id: str) -> GpuSpec | None:
        return self._gpu_ids.get(gpu_id)

    def model(self, model_id: str) -> ModelSpec | None:
        return self._model_ids.get(model_id)

    def quant(self, quant_id: str) -> QuantFormat | None:
        return next((q for q in self.quants if q.id == quant_id.lower()), None)

    def spec_for(self, gpu: GPU) -> GpuSpec | None:
        """A GPU's catalog entry: its ``catalog_id`` when that resolves, else matched by name or PCI id."""
        if gpu.catalog_id:
            spec = self.gpu(gpu.catalog_id)
            if spec is not None:
                return spec
        return self.match_gpu(gpu)

    def match_gpu(self, gpu: GPU) -> GpuSpec | None:
        """The catalog entry for a detected GPU: by the driver's name first, then by PCI id.

        Names are compared case-insensitively and without "NVIDIA "/"AMD " prefixes; a PCI id only
        decides when exactly one entry claims it (one die is sold under several names).
        """
        wanted = _name_key(gpu.name)
        for spec in self.gpus:
            if spec.vendor == gpu.vendor and wanted in {_name_key(n) for n in (spec.name, *spec.match_names)}:
                return spec
        if gpu.pci_id:
            claimed = [s for s in self.gpus if gpu.pci_id.lower() in s.pci_ids]
            if len(claimed) == 1:
                return claimed[0]
        return None

    def power_factor(self, spec: GpuSpec) -> PowerFactor | None:
        """The transient factor measured for ``spec``'s architecture and segment, if any."""
        return next(
            (
                f
                for f in self.power_factors
                if f.vendor == spec.vendor
                and f.architecture == spec.architecture
                and (spec.segment is None or spec.segment in f.segments)
            ),
            None,
        )

    def search_models(self, text: str) -> tuple[ModelSpec, ...]:
        words = text.lower().split()
        return tuple(
            m
            for m in self.models
            if all(w in " ".join((m.id, m.name, m.family, m.hf_id, *m.tags)).lower() for w in words)
        )


_PREFIXES = ("nvidia ", "amd ", "intel(r) ", "intel ", "apple ")


def _name_key(name: str) -> str:
    key = " ".join(name.lower().split())
    for prefix in _PREFIXES:
        if key.startswith(prefix):
            key = key[len(prefix) :]
    return key


_FIELDS = {
    "gpu": "gpus",
    "model": "models",
    "quant": "quants",
    "kv_cache": "kv_caches",
    "cuda_release": "cuda_releases",
    "cuda_major": "cuda_majors",
    "arch": "archs",
    "torch_release": "torch_releases",
    "torch_variant": "torch_variants",
    "rocm_release": "rocm_releases",
    "framework": "frameworks",
    "gfx_override": "gfx_overrides",
    "power_factor": "power_factors",
    "driver_branch": "driver_branches",
    "speed_factor": "speed_factors",
    "maturity": "maturities",
    "cpu_platform": "cpu_platforms",
    "quality": "qualities",
    "wheel": "wheels",
}
