"""The catalog: GPUs, models, quantization formats and compatibility matrices, as sourced data.

The data lives in TOML under the top-level ``catalog/`` folder, shipped inside the package as
``rigcheck.catalog`` and read with ``importlib.resources`` (the same from a checkout, a wheel or a
frozen bundle). Every file may hold any of the tables in :data:`KINDS` as arrays
(``[[gpu]]``, ``[[model]]``, …); each entry becomes a frozen record and is checked field by field,
refusing unknown fields, so a typo never vanishes. A problem names the file, the entry and the field.

A user overlay folder (``<user data dir>/catalog``, or ``$RIGCHECK_CATALOG_OVERLAY``) holds more TOML
files in the same format: an entry with a known key replaces the shipped one, a new key adds an entry.
A bad overlay file is reported in :attr:`Catalog.problems` and skipped; it never stops the app. A bad
shipped file is a bug and raises.

Every entry names its ``source`` (a URL or repo/path@commit). ``confidence`` says how far to trust
its figures: ``primary`` (the vendor's or project's own document, the default), ``secondary`` (a third
party quoting or compiling vendor figures) or ``uncertain`` (conflicting or weak sources). A figure
nobody published is left out, and the UI says "unknown".
"""

from __future__ import annotations

from rigcheck.core.catalog.checks import COMPAT_KINDS, _check, _check_format, load_toml, parse_file
from rigcheck.core.catalog.common import OVERLAY_ENV, Confidence, FormFactor, Segment
from rigcheck.core.catalog.hardware import (
    MAX_CPU_NAME,
    Backend,
    CpuPlatform,
    GpuSpec,
    Maturity,
    PowerFactor,
    SpeedFactor,
    pattern_problem,
)
from rigcheck.core.catalog.loading import (
    CACHE_ENV,
    MAX_OVERLAY_BYTES,
    MAX_OVERLAY_ENTRIES,
    MAX_OVERLAY_FILE_BYTES,
    _build,
    _overlay_files,
    default_overlay_dir,
    load_catalog,
)
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
from rigcheck.core.catalog.table import KINDS, Catalog

__all__ = [
    "CACHE_ENV",
    "COMPAT_KINDS",
    "KINDS",
    "MAX_CPU_NAME",
    "MAX_OVERLAY_BYTES",
    "MAX_OVERLAY_ENTRIES",
    "MAX_OVERLAY_FILE_BYTES",
    "OVERLAY_ENV",
    "Arch",
    "Backend",
    "Catalog",
    "Confidence",
    "CpuPlatform",
    "CudaMajor",
    "CudaRelease",
    "DriverBranch",
    "FormFactor",
    "FrameworkRule",
    "GfxOverride",
    "GpuSpec",
    "KvCacheType",
    "Maturity",
    "ModelSpec",
    "PowerFactor",
    "QualityMeasurement",
    "QuantFormat",
    "RocmRelease",
    "Segment",
    "SpeedFactor",
    "TorchRelease",
    "TorchVariant",
    "WheelRecord",
    "_build",
    "_check",
    "_check_format",
    "_overlay_files",
    "default_overlay_dir",
    "load_catalog",
    "load_toml",
    "parse_file",
    "pattern_problem",
]
