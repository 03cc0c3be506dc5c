"""Software records: CUDA releases and majors, GPU architectures, PyTorch releases and wheels, ROCm,
framework rules, driver branches, gfx overrides, PyPI wheel metadata.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from rigcheck.core.catalog.common import Confidence
from rigcheck.core.machine import Vendor


@dataclass(frozen=True)
class CudaRelease:
    """A CUDA toolkit release and the driver it needs (its "toolkit driver version")."""

    version: str
    source: str
    label: str | None = None
    min_linux_driver: str | None = None
    min_windows_driver: str | None = None
    #: the exact words (or table line) of ``source`` that support this entry, short
    quote: str | None = None
    #: further sources for individual facts
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
    notes: str | None = None


@dataclass(frozen=True)
class CudaMajor:
    """Per CUDA major: the minor-version-compatibility driver floor and the architectures it targets."""

    major: int
    source: str
    min_linux_driver: str | None = None
    min_windows_driver: str | None = None
    #: lowest and highest compute capability the major's compilers can target
    min_cc: str | None = None
    max_cc: str | None = None
    #: the exact words (or table line) of ``source`` that support this entry, short
    quote: str | None = None
    #: further sources for individual facts
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
    notes: str | None = None


@dataclass(frozen=True)
class Arch:
    """What an architecture's hardware supports, for precision advice."""

    id: str
    vendor: Vendor
    name: str
    source: str
    compute_capabilities: tuple[str, ...] = ()
    gfx_targets: tuple[str, ...] = ()
    #: parts of the GPU names of vendors with neither CC nor gfx target (Intel: "Arc(TM) B"), matched
    #: case-insensitively
    match_names: tuple[str, ...] = ()
    fp16_tensor: bool | None = None
    int8_tensor: bool | None = None
    bf16: bool | None = None
    fp8: bool | None = None
    fp4: bool | None = None
    #: compute capability -> the first CUDA toolkit that can build for it, e.g. {"8.9" = "11.8"}; a CC of
    #: this architecture missing here is unknown (when the table is empty: nothing beyond ``[[cuda_major]]``)
    min_cuda: dict[str, str] = field(default_factory=dict)
    #: the newest NVIDIA driver branch that supports the architecture ("580"); None: still in current branches
    last_driver_branch: str | None = None
    #: the exact words (or table line) of ``source`` that support this entry, short
    quote: str | None = None
    #: further sources for individual facts
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
    notes: str | None = None


@dataclass(frozen=True)
class TorchRelease:
    version: str
    source: str
    python_min: str | None = None
    python_max: str | None = None
    #: wheel variants published on download.pytorch.org: "cu124", "rocm6.2", "cpu", …
    variants: tuple[str, ...] = ()
    #: the variant ``pip install torch`` gets from PyPI on Linux x86_64
    default_variant: str | None = None
    release_year: int | None = None
    #: the newest patch release of this series ("2.7.1"); pins use it
    latest_patch: str | None = None
    #: "YYYY-MM-DD" of the series' first release (its .0)
    released: str | None = None
    #: announced but not released: the recommendation skips it, and says so
    prerelease: bool = False
    #: the exact words (or table line) of ``source`` that support this entry, short
    quote: str | None = None
    #: further sources for individual facts
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
    notes: str | None = None


@dataclass(frozen=True)
class TorchVariant:
    """The architectures compiled into one wheel variant of a release (cubins, and PTX for the JIT)."""

    release: str
    variant: str
    source: str
    cuda: str | None = None
    rocm: str | None = None
    #: the CPU architecture of the wheels the list is for: "x86_64" (also Windows) or "aarch64"
    machine: str = "x86_64"
    #: "sm_50", "sm_90a", … or "gfx90a", …
    archs: tuple[str, ...] = ()
    ptx: tuple[str, ...] = ()
    #: the exact words (or table line) of ``source`` that support this entry, short
    quote: str | None = None
    #: further sources for individual facts
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
    notes: str | None = None


@dataclass(frozen=True)
class RocmRelease:
    version: str
    source: str
    gfx_targets: tuple[str, ...] = ()
    os: tuple[str, ...] = ()
    windows: bool | None = None
    #: the exact words (or table line) of ``source`` that support this entry, short
    quote: str | None = None
    #: further sources for individual facts
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
    notes: str | None = None


@dataclass(frozen=True)
class FrameworkRule:
    """What one framework (at a version range) needs; the compatibility checks evaluate these."""

    id: str
    framework: str
    source: str
    #: PEP 440 specifier of the framework versions this rule covers, e.g. ">=2.7"; empty: all
    versions: str = ""
    backend: Literal["cuda", "rocm", "cpu", "metal", "vulkan", "sycl", "any"] = "any"
    min_cc: str | None = None
    max_cc: str | None = None
    #: the newest compute capability the source names: newer GPUs are "unknown", never a guessed "ok"
    listed_max_cc: str | None = None
    #: exactly these compute capabilities (FlashAttention-3: "9.0")
    cc_list: tuple[str, ...] = ()
    gfx_targets: tuple[str, ...] = ()
    #: False where the source names examples ("data center GPUs including the MI300X"), not a full list: a
    #: target outside it is unknown, not unsupported
    gfx_complete: bool = True
    min_cuda: str | None = None
    min_rocm: str | None = None
    min_torch: str | None = None
    #: lowest NVIDIA driver the framework's own binaries need (Ollama ships its CUDA runtime)
    min_driver: str | None = None
    os: tuple[str, ...] = ()
    python_min: str | None = None
    python_max: str | None = None
    cpu_flags: tuple[str, ...] = ()
    #: the rule covers only GPUs in this compute-capability range (inclusive), e.g. CC 5.0-6.2 needing a newer
    #: driver; GPUs outside it skip the rule
    applies_min_cc: str | None = None
    applies_max_cc: str | None = None
    #: the rule covers only machines with one of these platform tags ("linux", "windows", "wsl", "aarch64",
    #: "jetson", "jetpack6"; "!jetson" = not on a Jetson); empty: every platform (core/compat/_platform.py)
    applies_to: tuple[str, ...] = ()
    #: what an unmet requirement means: "fail" (it does not run), "warn" (it runs, limited or unofficially)
    severity: Literal["fail", "warn"] = "fail"
    #: the one feature this rule is about, when it is not the whole framework ("LLM.int8() 8-bit inference")
    feature: str | None = None
    #: the source calls this backend experimental: it runs, as a warning ("limited"), whatever else holds
    experimental: bool = False
    #: False: the framework has no build for this backend at all (TensorRT-LLM on ROCm, FlashAttention-3 on
    #: a CPU)
    available: bool = True
    #: GPU name fragments the source names as officially supported ("H100", "L40S"); others: community support
    official_gpus: tuple[str, ...] = ()
    #: the newest release the rule describes, and the torch it installs (a pin or the highest allowed)
    latest: str | None = None
    torch_pin: str | None = None
    #: the download.pytorch.org variant its docs install that torch from ("cu130"); None: PyPI's default wheel
    torch_variant: str | None = None
    #: a container image that ships a working set, for where pip cannot work
    container: str | None = None
    #: how to install it where plain ``pip install`` would not (AMD, Intel, Jetson routes): shown with a
    #: finding for a package that is not installed and would work
    install: str | None = None
    fix: str | None = None
    #: the exact words (or table line) of ``source`` that support this entry, short
    quote: str | None = None
    #: further sources for individual facts
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
    notes: str | None = None


@dataclass(frozen=True)
class DriverBranch:
    """An NVIDIA driver branch ("R580") with its support designation and end of life."""

    branch: str
    source: str
    #: "ltsb" (long-term support), "pb" (production), "nfb" (new feature: short-lived, no end-of-life date)
    designation: Literal["ltsb", "pb", "nfb", "legacy"]
    #: "YYYY-MM" after which NVIDIA no longer supports the branch; None for a new feature branch
    eol: str | None = None
    #: the newest CUDA major the branch runs without the forward-compatibility package
    max_cuda_major: int | None = None
    quote: str | None = None
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
    notes: str | None = None


@dataclass(frozen=True)
class GfxOverride:
    """An unofficial ``HSA_OVERRIDE_GFX_VERSION`` that the community documents for a gfx target ROCm lacks."""

    gfx_target: str
    #: the value to set, "x.y.z", e.g. "10.3.0"
    override: str
    #: the official target whose code the GPU then runs, e.g. "gfx1030"
    runs_as: str
    source: str
    #: where the override works (the variable is read by the Linux ROCm runtime)
    os: tuple[str, ...] = ("linux",)
    #: the exact words (or table line) of ``source`` that support this entry, short
    quote: str | None = None
    #: further sources for individual facts
    sources: tuple[str, ...] = ()
    confidence: Confidence = "secondary"
    notes: str | None = None


@dataclass(frozen=True)
class WheelRecord:
    """One package release as its own PyPI files and wheel METADATA say (catalog/compat/wheels.toml, written
    by tools/read_wheels.py): the torch it requires, its Python range, and the platforms it has wheels for."""

    package: str
    version: str
    source: str
    #: the day the metadata was read ("2026-12-01")
    read: str
    uploaded: str | None = None
    requires_python: str | None = None
    #: its Requires-Dist on torch (PEP 440; "" = any torch); None: it does not require torch
    torch: str | None = None
    #: for torch itself: the CUDA toolkit its PyPI wheel depends on ("13.0.3") and the OS that dependency is
    #: marked for ("linux"; elsewhere the PyPI wheel is CPU-only)
    cuda: str | None = None
    cuda_os: str | None = None
    #: python-abi-platform tags of its wheels ("cp312-cp312-manylinux_2_34_x86_64"); empty with sdist: only a
    #: source archive
    platforms: tuple[str, ...] = ()
    sdist: bool = False
    metadata_from: str | None = None
    quote: str | None = None
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
    notes: str | None = None
