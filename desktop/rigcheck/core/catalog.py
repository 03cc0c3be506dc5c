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

import functools
import hashlib
import json
import os
import re
import sys
import tomllib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Literal

from rigcheck.core.errors import InputError
from rigcheck.core.machine import GPU, Vendor
from rigcheck.core.records import decode

Confidence = Literal["primary", "secondary", "uncertain"]
Segment = Literal["desktop", "laptop", "workstation", "datacenter", "integrated", "soc"]
#: how a GPU is built into a machine: a PCIe card, an SXM (NVIDIA) or OAM (OCP) module on a server
#: baseboard, part of a system-on-chip (Apple M, Strix Halo, Grace Hopper, MI300A), or soldered into a laptop
FormFactor = Literal["pcie", "sxm", "oam", "soc", "laptop"]
OVERLAY_ENV = "RIGCHECK_CATALOG_OVERLAY"

_ID = re.compile(r"[a-z0-9][a-z0-9._+-]*")
_CC = re.compile(r"\d+\.\d+")
_GFX = re.compile(r"gfx[0-9a-f]{3,4}")
_PCI_ID = re.compile(r"[0-9a-f]{4}:[0-9a-f]{4}")


# -- records --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GpuSpec:
    """One GPU model. Tensor throughput figures are dense (no 2:4 sparsity), FP32 accumulate."""

    id: str
    vendor: Vendor
    name: str
    source: str
    #: exactly as drivers report it (NVML name, amdgpu product_name, Metal name), for matching
    match_names: tuple[str, ...] = ()
    #: PCI "vendor:device", lower-case hex, e.g. "10de:2684"
    pci_ids: tuple[str, ...] = ()
    architecture: str | None = None
    segment: Segment | None = None
    #: what an upgrade can offer depends on it: a desktop takes PCIe cards, an HGX server SXM modules
    form_factor: FormFactor | None = None
    #: where the form factor comes from, when the name does not say it (a URL or repo path)
    form_factor_source: str | None = None
    compute_capability: str | None = None
    gfx_target: str | None = None
    #: memory sizes in GiB as the probe reads them (GDDR "24 GB" is 24 GiB; where a capture shows the
    #: vendor's "GB" is not, as the H200's "141GB" reads 140.4 GiB, the capture's figure, cited in
    #: ``memory_source``)
    memory_gb: tuple[float, ...] = ()
    #: where ``memory_gb`` comes from when it is not the name's figure (a capture: repo/path@commit)
    memory_source: str | None = None
    memory_type: str | None = None
    memory_bus_bits: int | None = None
    unified_memory: bool = False
    bandwidth_gbs: float | None = None
    fp32_tflops: float | None = None
    fp16_tflops: float | None = None
    bf16_tflops: float | None = None
    fp8_tflops: float | None = None
    fp4_tflops: float | None = None
    int8_tops: float | None = None
    tdp_watts: float | None = None
    psu_recommended_watts: float | None = None
    pcie_gen: int | None = None
    pcie_lanes: int | None = None
    #: total NVLink (or Infinity Fabric link) bandwidth per GPU, GB/s; absent when the card has none
    nvlink_gbs: float | None = None
    release_year: int | None = None
    #: the vendor's launch price (MSRP), US dollars
    launch_price_usd: float | None = None
    cloud_price_usd_hour: float | None = None
    #: when the cloud price was seen (or, for an undated source, recorded here), "YYYY-MM", and where
    cloud_price_date: str | None = None
    cloud_price_source: str | None = None
    #: a purchase price seen in the market (not the MSRP), US dollars; with a range, its low end here and
    #: its high end in ``street_price_high_usd``
    street_price_usd: float | None = None
    street_price_high_usd: float | None = None
    #: the street price is for a used card
    street_price_used: bool = False
    #: when the street price was seen (or recorded here), "YYYY-MM", and where
    street_price_date: str | None = None
    street_price_source: str | None = None
    confidence: Confidence = "primary"
    #: per-figure confidence where it differs from the entry's, e.g. {bandwidth_gbs = "uncertain"}
    field_confidence: dict[str, Confidence] = field(default_factory=dict)
    #: further sources for individual figures
    sources: tuple[str, ...] = ()
    notes: str | None = None


@dataclass(frozen=True)
class ModelSpec:
    """One model at one size; ``config`` holds its published ``config.json`` keys verbatim."""

    id: str
    name: str
    family: str
    hf_id: str
    #: where the config came from: the config.json URL on the hub (with the revision if pinned)
    source: str
    config: dict[str, Any]
    license: str | None = None
    gated: bool = False
    release_year: int | None = None
    #: the published parameter count, in billions, and where it was published
    params_b: float | None = None
    active_params_b: float | None = None
    params_source: str | None = None
    #: the exact published count, e.g. the hub's safetensors total
    params_exact: int | None = None
    gguf_repos: tuple[str, ...] = ()
    #: MLX conversions a user can run with ``mlx_lm.generate --model REPO`` (e.g. mlx-community/…)
    mlx_repos: tuple[str, ...] = ()
    #: the names Ollama publishes this model under in its library, e.g. ("gpt-oss:120b",)
    ollama: tuple[str, ...] = ()
    #: the release date, ISO "YYYY-MM-DD" (the model card's or the hub repository's first commit)
    released: str | None = None
    #: the weight format the checkpoint is released in, a quant id ("mxfp4", "fp8-e4m3", "bf16"); when
    #: absent, read from the config (quantization_config.quant_method, else torch_dtype)
    native_format: str | None = None
    native_format_source: str | None = None
    tags: tuple[str, ...] = ()
    #: further sources for individual facts (a model card table, a mirror of the config)
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
    notes: str | None = None

    @property
    def model_type(self) -> str:
        return str(self.config["model_type"])

    @property
    def max_context(self) -> int | None:
        value = self.config.get("max_position_embeddings")
        return value if isinstance(value, int) else None

    @property
    def is_moe(self) -> bool:
        return any(
            isinstance(self.config.get(k), int) and self.config[k] > 1
            for k in ("num_local_experts", "num_experts", "n_routed_experts")
        )


@dataclass(frozen=True)
class QuantFormat:
    """A weight format and what it costs per weight, scales and block metadata included."""

    id: str
    name: str
    #: "linear": only the linear layers are stored in the format (embeddings and head stay 16-bit)
    kind: Literal["float", "int", "gguf", "gptq", "awq", "bitsandbytes", "mx", "linear"]
    #: storage per weight of the block format itself
    bits_per_weight: float
    source: str
    #: whole-file bits per weight llama.cpp measured for a mix (its Q4_K_M keeps some tensors wider)
    file_bpw: float | None = None
    file_bpw_source: str | None = None
    #: a mix whose layers' bits per weight come from one published file of another model (Unsloth UD,
    #: QAT): the layers at this rate, the embedding and head at outside_bpw (else as llama.cpp's mixes)
    layer_bpw: float | None = None
    layer_bpw_source: str | None = None
    outside_bpw: float | None = None
    #: a mixed checkpoint (kind "mx"): bits per weight of the non-expert layer weights and of lookup
    #: tables beyond the token embedding (DeepSeek-V4's FP8 blocks); None: they stay 16-bit
    dense_bpw: float | None = None
    #: ggml_type enum value, for reading GGUF tensor types
    ggml_type: int | None = None
    block_size: int | None = None
    #: further sources for individual facts
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
    notes: str | None = None


@dataclass(frozen=True)
class KvCacheType:
    id: str
    name: str
    bytes_per_element: float
    source: str
    #: further sources for individual facts
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
    notes: str | None = None


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
class PowerFactor:
    """How far one GPU architecture's short power spikes ("excursions") exceed its board power.

    ``factor`` = measured short peak ÷ rated board power, rounded up; the PSU budget multiplies a GPU's
    power limit by it. ``segments`` are the kinds of card the measurement covers (a GeForce measurement
    says nothing of an SXM module): a GPU of another segment gets no factor and its peak is unknown.
    """

    id: str
    vendor: Vendor
    #: exactly as ``GpuSpec.architecture`` spells it, e.g. "Ada Lovelace"
    architecture: str
    factor: float
    source: str
    #: what was measured, in words: "RTX 5090 FE: 901.1 W for < 1 ms against its 575 W TBP"
    measured: str | None = None
    segments: tuple[Segment, ...] = ("desktop",)
    #: further sources for individual facts
    sources: tuple[str, ...] = ()
    confidence: Confidence = "secondary"
    notes: str | None = None


#: the GPU backend llama.cpp runs, or "ktransformers": the speed_factor row of the CPU class that times
#: ktransformers' CPU expert kernels (catalog/speed.toml; core/estimate/speed engine_cpu_factor), or "mlx":
#: the row of an Apple class that times mlx-lm's own Metal kernels (catalog/speed_engines.toml;
#: speed engine_gpu_factor)
Backend = Literal["cuda", "rocm", "metal", "vulkan", "sycl", "cpu", "ktransformers", "mlx"]


@dataclass(frozen=True)
class SpeedFactor:
    """How close one class of hardware, with one backend, gets to its peaks: fitted on cited measurements.

    Decode time per token = max(bytes read ÷ (bandwidth × ``decode_bandwidth_efficiency``), FLOPs ÷
    (compute × ``decode_compute_efficiency``)) + ``per_layer_us`` × layers + ``moe_layer_us`` × layers with
    a mixture-of-experts MLP + ``per_gpu_us`` per GPU used;
    prefill = FLOPs ÷ (min(compute × ``prefill_compute_efficiency``, board power ×
    ``prefill_tflops_per_watt``) × ``prefill_float_factor`` for unquantized weights × ``prefill_moe_factor``
    for a mixture of experts, or × ``prefill_float_moe_factor`` for a mixture of experts with unquantized
    experts). See docs/catalog.md#speed.
    """

    id: str
    #: "nvidia-consumer", "nvidia-datacenter", "nvidia-soc", "amd-consumer", "amd-datacenter", "amd-apu",
    #: "apple-base", "apple-pro", "apple-max", "intel", "cpu" (core/estimate/speed hardware_class)
    hw_class: str
    backend: Backend
    decode_bandwidth_efficiency: float
    source: str
    per_layer_us: float = 0.0
    per_gpu_us: float = 0.0
    #: µs more per token for each layer whose MLP is a mixture of experts than for a dense layer: the
    #: router, top-k, expert-weighting and expert-sum kernels llama.cpp adds to such a layer, and its three
    #: MUL_MAT_ID launches (core/estimate/speed/fixed.py); 0 where the fit finds none
    moe_layer_us: float = 0.0
    decode_compute_efficiency: float = 0.5
    prefill_compute_efficiency: float | None = None
    #: prefill with unquantized (F16/BF16/F32) weights relative to quantized ones: a different GEMM path
    #: (cuBLAS/rocBLAS/Metal F16 kernels instead of dequantising MMQ-style kernels)
    prefill_float_factor: float = 1.0
    #: a mixture of experts' prefill relative to a dense model's at 64 prompt tokens per expert and
    #: micro-batch (its expert GEMMs see few tokens each), scaled by (tokens per expert / 64) ** exponent
    prefill_moe_factor: float = 1.0
    prefill_moe_exponent: float = 0.0
    #: a mixture of experts with unquantized (F16/BF16) expert weights relative to the dense quantised share:
    #: its expert products take another MUL_MAT_ID path than quantised experts (speed.prefill_path); it
    #: replaces the float and MoE factors for such a model; fitted per backend
    prefill_float_moe_factor: float = 1.0
    #: prompt GEMMs on the matrix engines where llama.cpp's Vulkan backend turns cooperative matrices on for a
    #: GPU whose listed peak is its shader-core rate (Intel Xe2 and later: speed/coopmat.py) relative to the
    #: class's shader-core share; 1 where not fitted
    prefill_coopmat_factor: float = 1.0
    #: prompt TFLOPS this class sustains per watt of board power limit: a GPU at its power limit lowers its
    #: clock, so its prefill rate is at most this × its power limit, whatever its boost-clock peak (None: no
    #: cap fitted for this class × backend)
    prefill_tflops_per_watt: float | None = None
    #: quantized decode on an NVIDIA GPU without __dp4a (compute capability below 6.1): the share of its FP32
    #: peak its byte-multiply dot products reach, 2 FLOPs per weight (speed.dp4a; None: not fitted)
    decode_nodp4a_efficiency: float | None = None
    #: BF16 weights read at this × the class's decode bandwidth efficiency: a backend whose BF16 mat-vec is
    #: another, slower kernel (speed.bf16_decode; 1: as quantized weights)
    decode_bf16_factor: float = 1.0
    #: the share of the GPU's FP32 peak llama.cpp's recurrent scans of a hybrid's Gated DeltaNet / Mamba-2
    #: layers reach in a prompt (core/estimate/speed/recurrent_scan.py), pooled over every class and backend
    #: (None: not fitted; no scan time is added)
    prefill_scan_efficiency: float | None = None
    #: where the class × backend has no prompt measurements: the generic rule its prefill share comes from,
    #: in words (benchmarks/prefill_fallback.py); None when fitted on its own rows
    prefill_rule: str | None = None
    #: the backend this class runs when none is asked for
    default: bool = False
    #: what the factors were fitted on and how well they do there, in words
    measured: str | None = None
    sources: tuple[str, ...] = ()
    confidence: Confidence = "secondary"
    notes: str | None = None


@dataclass(frozen=True)
class Maturity:
    """An engine that runs one architecture below (or above) what its hardware class reaches elsewhere."""

    id: str
    engine: str
    #: config.json model_type, e.g. "qwen3_next"
    model_type: str
    source: str
    decode_factor: float = 1.0
    prefill_factor: float = 1.0
    measured: str | None = None
    sources: tuple[str, ...] = ()
    confidence: Confidence = "secondary"
    notes: str | None = None


@dataclass(frozen=True)
class CpuPlatform:
    """A CPU family's memory system: channels × transfer rate × 8 bytes = peak host bandwidth."""

    id: str
    name: str
    #: case-insensitive regular expressions matched against the CPU model string the probe reads
    match: tuple[str, ...]
    channels: int
    #: the fastest memory the platform officially supports, MT/s
    mt_per_s: int
    source: str
    #: bytes per channel per transfer (8 for DDR4/DDR5 DIMM channels; LPDDR buses given as 64-bit channels)
    bytes_per_transfer: int = 8
    memory_type: str | None = None
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
    notes: str | None = None
    #: the memory bus's total width in bits where it is not a whole number of 64-bit channels (LPDDR on
    #: SoCs: a 32-bit RK3566, a 128-bit CIX P1); the peak is then bus_bits ÷ 8 bytes per transfer
    bus_bits: int | None = None
    #: how one llama.cpp process reads this memory (core/estimate/speed/cpu_host.py memory_class): "server"
    #: (many DDR channels across NUMA nodes or chiplets), "client" (one or two DDR channels, desktop or
    #: laptop), "soc" (LPDDR soldered next to the cores); derived from channels and memory_type when unset
    memory_class: str | None = None
    #: cores and the fastest clock, MHz, where every part on the platform has the same (a single-SKU SoC);
    #: what prompt processing's compute peak takes when the probe did not read them
    cores: int | None = None
    boost_mhz: int | None = None
    #: FP32 FLOPs per core per clock where the ISA flags overstate it (Gracemont E-cores run AVX2 on two
    #: 128-bit pipes: 16, not the 32 the flag implies) or there are no flags to read (an Arm SoC)
    fp32_flops_per_cycle: int | None = None

    @property
    def bandwidth_bytes_per_s(self) -> int:
        if self.bus_bits:
            return self.bus_bits // 8 * self.mt_per_s * 10**6
        return self.channels * self.mt_per_s * 10**6 * self.bytes_per_transfer

    def matches(self, cpu_model: str) -> bool:
        """Whether a pattern finds ``cpu_model`` (its first :data:`MAX_CPU_NAME` characters: real CPU
        names are under 64, and the patterns' form (:func:`pattern_problem`) keeps the work small)."""
        name = cpu_model[:MAX_CPU_NAME]
        return any(_compiled(pattern).search(name) for pattern in self.match)


#: the part of a CPU model string a cpu_platform pattern is matched against
MAX_CPU_NAME = 128
#: unbounded repeats (*, +, {n,}) one cpu_platform pattern may hold: "Xeon.*(Gold|Silver)" needs one
_MAX_UNBOUNDED = 2


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def pattern_problem(pattern: str) -> str | None:
    """Why a cpu_platform pattern could backtrack for minutes (``^(a+)+$``), or None for a safe one.

    Python's ``re`` backtracks, so the form is restricted instead: no group repeated more than once
    (``(K|KF)?`` is fine, ``(a+)+`` and ``(ab)*`` are not), no back-references, at most
    :data:`_MAX_UNBOUNDED` unbounded repeats, at most 256 characters. With names cut to
    :data:`MAX_CPU_NAME` characters that bounds every match to well under a millisecond.
    """
    if len(pattern) > 256:
        return "longer than 256 characters"
    unbounded = 0
    in_class = after_group = False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        closes_group = False
        if char == "\\":
            if not in_class and index + 1 < len(pattern) and pattern[index + 1] in "123456789":
                return "a back-reference, which RigCheck does not allow in patterns"
            index += 1
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[index + 1 : index + 2] == "]":  # "[]...]": the bracket is a member
                index += 1
        elif char in "*+{":
            bounded = char == "{" and not re.match(r"\{\d*,\}", pattern[index:])
            if after_group and not (bounded and re.match(r"\{[01]?\}|\{0?,1\}", pattern[index:])):
                return "a repeated group (like (a+)+), which can take minutes to match"
            unbounded += not bounded
        elif char == ")":
            closes_group = True
        after_group = closes_group
        index += 1
    if unbounded > _MAX_UNBOUNDED:
        return f"{unbounded} unbounded repeats (*, +), more than the {_MAX_UNBOUNDED} RigCheck allows"
    return None


@dataclass(frozen=True)
class QualityMeasurement:
    """A weight format's measured perplexity change against 16-bit weights, on the model measured."""

    #: a quant id or a name ``resolve_quant`` accepts ("q4_k_m")
    quant: str
    #: perplexity increase (negative: lower) measured on ``measured_on``
    ppl_delta: float
    measured_on: str
    source: str
    #: mean KL divergence against the 16-bit model, where measured
    kld: float | None = None
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
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


# -- the catalog ----------------------------------------------------------------------------------


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


# -- loading --------------------------------------------------------------------------------------

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


def default_overlay_dir() -> Path:
    """``$RIGCHECK_CATALOG_OVERLAY``, else ``catalog/`` in the platform's user data folder."""
    if os.environ.get(OVERLAY_ENV):
        return Path(os.environ[OVERLAY_ENV])
    from platformdirs import user_data_path

    return user_data_path("rigcheck", appauthor=False) / "catalog"


def parse_file(name: str, text: str) -> dict[str, list[Any]]:
    """Parse one catalog file into records by kind; every problem is an ``InputError`` naming it."""
    return _records(name, load_toml(name, text))


def load_toml(name: str, text: str) -> dict[str, Any]:
    """TOML text as plain data; nesting past :data:`MAX_DEPTH` or a huge number is an ``InputError``."""
    from rigcheck.core.fileio import check_depth

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(name, f"not valid TOML ({exc})") from None
    except RecursionError:
        raise InputError(name, "not valid TOML (nested too deeply)") from None
    except ValueError as exc:  # an integer of thousands of digits (sys.get_int_max_str_digits)
        raise InputError(name, f"not valid TOML ({exc})") from None
    check_depth(data, name)
    return data


def _records(name: str, data: dict[str, Any]) -> dict[str, list[Any]]:
    result: dict[str, list[Any]] = {}
    for kind, entries in data.items():
        if kind not in KINDS:
            raise InputError(name, f"unknown table [[{kind}]] (known: {', '.join(KINDS)})")
        if not isinstance(entries, list):
            raise InputError(name, f"{kind}: expected an array of tables, written [[{kind}]]")
        cls, key = KINDS[kind]
        records = []
        for position, entry in enumerate(entries, 1):
            label = _entry_label(kind, entry, position)
            try:
                record = decode(cls, entry, name, strict=True)
            except InputError as exc:
                raise InputError(name, f"{label}: {exc.problem}") from None
            problem = _check(kind, record)
            if problem:
                raise InputError(name, f"{label}: {problem}")
            records.append(record)
        seen: set[str] = set()
        for record in records:
            if key(record) in seen:
                raise InputError(name, f"{kind} {key(record)!r}: duplicate id in this file")
            seen.add(key(record))
        result[kind] = records
    return result


def _entry_label(kind: str, entry: object, position: int) -> str:
    if isinstance(entry, dict):
        for key in ("id", "version", "major", "gfx_target", "branch"):
            if key in entry:
                return f"{kind} {str(entry[key])!r}"
    return f"{kind} #{position}"


#: fields shown on one line (a GPU's name in a table row): no line breaks either
_ONE_LINE_FIELDS = frozenset({"id", "name", "match_names", "vendor", "family", "arch"})


def _text_problem(record: Any) -> str | None:
    """A control character (a line break in a name, ESC anywhere) or an absurdly long string."""
    from rigcheck.core.machine import record_strings
    from rigcheck.core.text import text_problem

    for path, text in record_strings(record):
        field_name = path.split(".", 1)[0].split("[", 1)[0]
        problem = text_problem(text, 16384, multiline=field_name not in _ONE_LINE_FIELDS)
        if problem:
            return f"{path}: {problem}"
    return None


def _check(kind: str, record: Any) -> str | None:
    """Checks beyond types: ids, formats, and what each kind must have (compat entries: a quote too)."""
    problem = _text_problem(record) or _check_format(kind, record)
    if problem is None and kind in COMPAT_KINDS:
        problem = _check_compat(kind, record)
    return problem


def _check_format(kind: str, record: Any) -> str | None:
    if hasattr(record, "id") and not _ID.fullmatch(record.id):
        return f"id: {record.id!r} is not a lower-case id (letters, digits, . _ + -)"
    if not record.source.strip():
        return "source: must name a URL or repo/path"
    if kind == "gpu":
        if record.compute_capability is not None and not _CC.fullmatch(record.compute_capability):
            return f"compute_capability: {record.compute_capability!r} is not like '8.9'"
        if record.gfx_target is not None and not _GFX.fullmatch(record.gfx_target):
            return f"gfx_target: {record.gfx_target!r} is not like 'gfx1100'"
        bad = [p for p in record.pci_ids if not _PCI_ID.fullmatch(p)]
        if bad:
            return f"pci_ids: {bad[0]!r} is not like '10de:2684'"
        unknown = sorted(set(record.field_confidence) - set(GpuSpec.__dataclass_fields__))
        if unknown:
            return f"field_confidence: {unknown[0]!r} is not a GPU field"
        return _check_prices(record)
    if kind == "model":
        return _check_config(record.config)
    for name in ("min_cc", "max_cc", "listed_max_cc", "applies_min_cc", "applies_max_cc"):
        value = getattr(record, name, None)
        if value is not None and not _CC.fullmatch(value):
            return f"{name}: {value!r} is not like '8.0'"
    if kind == "arch":
        bad = [cc for cc, cuda in record.min_cuda.items() if not (_CC.fullmatch(cc) and _CC.match(cuda))]
        if bad:
            return f"min_cuda: {bad[0]!r} = {record.min_cuda[bad[0]]!r} is not like '8.9' = '11.8'"
    if kind == "speed_factor":
        for name in ("decode_bandwidth_efficiency", "decode_compute_efficiency"):
            value = getattr(record, name)
            if not 0.0 < value <= 1.0:
                return f"{name}: {value!r} is not a share of the peak (above 0, at most 1)"
        # Prefill is measured against the catalog's FP16/BF16 tensor figure with FP32 accumulate; GeForce
        # cards run llama.cpp's int8/FP16-accumulate kernels at up to twice that (docs/catalog.md#speed).
        value = record.prefill_compute_efficiency
        if value is not None and not 0.0 < value <= 2.0:
            return f"prefill_compute_efficiency: {value!r} is not between 0 and 2 times the listed peak"
        for name in ("prefill_float_factor", "prefill_moe_factor", "prefill_float_moe_factor"):
            if not 0.0 < getattr(record, name) <= 2.0:
                return f"{name}: {getattr(record, name)!r} must be above 0 and at most 2"
        if not 0.0 < record.prefill_coopmat_factor <= 16.0:
            return f"prefill_coopmat_factor: {record.prefill_coopmat_factor!r} must be above 0 and at most 16"
        if not 0.0 < record.decode_bf16_factor <= 2.0:
            return f"decode_bf16_factor: {record.decode_bf16_factor!r} must be above 0 and at most 2"
        nodp4a = record.decode_nodp4a_efficiency
        if nodp4a is not None and not 0.0 < nodp4a <= 1.0:
            return (
                f"decode_nodp4a_efficiency: {nodp4a!r} is not a share of the FP32 peak (above 0, at most 1)"
            )
        scan = record.prefill_scan_efficiency
        if scan is not None and not 0.0 < scan <= 1.0:
            return f"prefill_scan_efficiency: {scan!r} is not a share of the FP32 peak (above 0, at most 1)"
        watt = record.prefill_tflops_per_watt
        if watt is not None and not 0.0 < watt <= 10.0:
            return f"prefill_tflops_per_watt: {watt!r} is not between 0 and 10 TFLOPS per watt"
        if not 0.0 <= record.prefill_moe_exponent <= 1.0:
            return f"prefill_moe_exponent: {record.prefill_moe_exponent!r} is not between 0 and 1"
        if record.per_layer_us < 0 or record.per_gpu_us < 0 or record.moe_layer_us < 0:
            return "per_layer_us, per_gpu_us, moe_layer_us: must not be negative"
    if kind == "maturity" and not (0.0 < record.decode_factor <= 2.0 and 0.0 < record.prefill_factor <= 2.0):
        return "decode_factor, prefill_factor: must be above 0 and at most 2"
    if kind == "cpu_platform":
        if not (0 < record.channels <= 32 and 0 < record.mt_per_s <= 20000):
            return "channels, mt_per_s: out of range (1-32 channels, at most 20000 MT/s)"
        if record.bus_bits is not None and not (16 <= record.bus_bits <= 2048 and record.bus_bits % 16 == 0):
            return "bus_bits: not a memory bus width (16-2048 bits, a multiple of 16)"
        if record.memory_class not in (None, "server", "client", "soc"):
            return f"memory_class: {record.memory_class!r} is not server, client or soc"
        for name, low, high in (
            ("cores", 1, 512),
            ("boost_mhz", 200, 7000),
            ("fp32_flops_per_cycle", 2, 128),
        ):
            value = getattr(record, name)
            if value is not None and not low <= value <= high:
                return f"{name}: {value!r} is out of range ({low}-{high})"
        for pattern in record.match:
            try:
                re.compile(pattern)
            except re.error as exc:
                return f"match: {pattern!r} is not a regular expression ({exc})"
            problem = pattern_problem(pattern)
            if problem:
                return f"match: {pattern[:80]!r}: {problem}"
    if kind == "power_factor" and not 1.0 <= record.factor <= 3.0:
        # PCIe CEM 5.0 lets a card exceed its sustained power by at most 3× (for 100 µs): docs/catalog.md#psu
        return f"factor: {record.factor!r} is not between 1.0 and 3.0"
    if kind == "gfx_override":
        for name in ("gfx_target", "runs_as"):
            if not _GFX.fullmatch(getattr(record, name)):
                return f"{name}: {getattr(record, name)!r} is not like 'gfx1030'"
        if not re.fullmatch(r"\d+\.\d+\.\d+", record.override):
            return f"override: {record.override!r} is not like '10.3.0'"
    return None


#: the compatibility tables: each entry quotes its source and names it so a reader can follow it
COMPAT_KINDS = frozenset(
    {"cuda_release", "cuda_major", "arch", "torch_release", "torch_variant", "rocm_release", "framework",
     "gfx_override", "driver_branch", "wheel"}
)  # fmt: skip
_FOLLOWABLE = re.compile(r"https?://\S+|[\w.-]+/[\w.-]+/\S+@[\w.-]+")
_INTERNAL = re.compile(r"search-index|file id", re.IGNORECASE)
_DATE = re.compile(r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])")


def _check_compat(kind: str, record: Any) -> str | None:
    """What the compatibility rules need of every entry (docs/catalog.md#compat)."""
    for text in (record.source, *record.sources):
        if _INTERNAL.search(text) or not _FOLLOWABLE.fullmatch(text.strip()):
            return f"source: {text!r} is not a URL or repo/path@commit a reader can follow"
    if not (record.quote and record.quote.strip()):
        return "quote: required, the source's own words (or table line) that support this entry"
    if len(record.quote) > 300:
        return "quote: keep it short (300 characters at most)"
    if kind == "torch_release" and not record.prerelease:
        if not (record.latest_patch and record.released and record.variants):
            return (
                "latest_patch, released, variants: required for a released series (or set prerelease = true)"
            )
        if not _DATE.fullmatch(record.released):
            return f"released: {record.released!r} is not like '2025-04-23'"
        if not record.latest_patch.startswith(record.version + ".") and record.latest_patch != record.version:
            return f"latest_patch: {record.latest_patch!r} is not a release of {record.version}"
    if (
        kind == "driver_branch"
        and record.eol is not None
        and not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", record.eol)
    ):
        return f"eol: {record.eol!r} is not like '2028-06'"
    if kind == "wheel" and not _DATE.fullmatch(record.read):
        return f"read: {record.read!r} is not like '2026-12-01' (the day the metadata was read)"
    return None


_PRICE_DATE = re.compile(r"\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?")


def _check_prices(gpu: GpuSpec) -> str | None:
    """A cloud or street price says when and where it was seen (docs/catalog.md#prices)."""
    for kind, price in (("cloud", gpu.cloud_price_usd_hour), ("street", gpu.street_price_usd)):
        date, source = getattr(gpu, f"{kind}_price_date"), getattr(gpu, f"{kind}_price_source")
        if price is not None and not (date and source and source.strip()):
            return f"{kind}_price_date, {kind}_price_source: required with a {kind} price"
        if date is not None and not _PRICE_DATE.fullmatch(date):
            return f"{kind}_price_date: {date!r} is not like '2025-06' or '2025-06-30'"
    high = gpu.street_price_high_usd
    if high is not None and (gpu.street_price_usd is None or high < gpu.street_price_usd):
        return "street_price_high_usd: needs street_price_usd (the low end) and must not be below it"
    return None


_CONFIG_INTS = ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size")


def _check_config(config: dict[str, Any]) -> str | None:
    if not isinstance(config.get("model_type"), str):
        return "config.model_type: required, a string such as 'llama'"
    for key in _CONFIG_INTS:
        value = config.get(key)
        if key == "num_hidden_layers" and value is None and isinstance(config.get("layers_block_type"), list):
            continue  # Nemotron 3 Ultra: the block list gives the layers (models/config/ counts them)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            return f"config.{key}: required, a whole number above 0"
    return None


def _walk(folder: Traversable) -> Iterator[Traversable]:
    for child in sorted(folder.iterdir(), key=lambda t: t.name):
        if child.is_dir():
            yield from _walk(child)
        elif child.name.endswith(".toml"):
            yield child


def _shipped_files() -> Iterator[tuple[str, str]]:
    root = files("rigcheck.catalog")
    for item in _walk(root):
        yield f"catalog/{_relative(root, item)}", item.read_text(encoding="utf-8")


def _relative(root: Traversable, item: Traversable) -> str:
    text, base = str(item), str(root)
    return text[len(base) :].lstrip("/\\").replace("\\", "/") if text.startswith(base) else item.name


#: one overlay file: the whole shipped catalog is ~400 kB of TOML, so a megabyte is a big overlay
MAX_OVERLAY_FILE_BYTES = 1024 * 1024
#: all overlay files together (TOML is parsed in pure Python: ~0.1 s per MB on every command)
MAX_OVERLAY_BYTES = 4 * 1024 * 1024
#: entries of all overlay files together (the shipped catalog has about a thousand)
MAX_OVERLAY_ENTRIES = 5000


def _overlay_files(folder: Path, problems: list[str]) -> Iterator[tuple[str, str]]:
    try:
        paths = sorted(p for p in folder.rglob("*.toml") if p.is_file())
    except OSError as exc:
        problems.append(f"{folder}: cannot read the overlay folder ({exc.strerror or exc})")
        return
    total = 0
    for path in paths:
        try:
            with path.open("rb") as handle:
                raw = handle.read(MAX_OVERLAY_FILE_BYTES + 1)
            if len(raw) > MAX_OVERLAY_FILE_BYTES:
                problems.append(
                    f"{path}: larger than {MAX_OVERLAY_FILE_BYTES // 1024**2} MiB, more than an overlay "
                    "RigCheck reads; file skipped"
                )
                continue
            total += len(raw)
            if total > MAX_OVERLAY_BYTES:
                problems.append(
                    f"{path}: the overlay files pass {MAX_OVERLAY_BYTES // 1024**2} MiB in all; file skipped"
                )
                continue
            yield str(path), raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc}); file skipped")


def _merge(target: dict[str, dict[str, Any]], parsed: dict[str, list[Any]]) -> None:
    for kind, records in parsed.items():
        key = KINDS[kind][1]
        bucket = target.setdefault(kind, {})
        for record in records:
            bucket[key(record)] = record


def _parse_shipped(shipped: Iterable[tuple[str, str]]) -> dict[str, dict[str, Any]]:
    return _records_of_files((name, load_toml(name, text)) for name, text in shipped)


def _records_of_files(files: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Records of the shipped files' parsed TOML, checked; a bad file raises (a bug, or a bad cache)."""
    merged: dict[str, dict[str, Any]] = {}
    for name, data in files:
        parsed = _records(name, data)
        for kind, records in parsed.items():
            key = KINDS[kind][1]
            clash = next((key(r) for r in records if key(r) in merged.get(kind, {})), None)
            if clash is not None:
                raise InputError(name, f"{kind} {clash!r}: id already used in another catalog file")
        _merge(merged, parsed)
    return merged


def _apply_overlay(
    merged: dict[str, dict[str, Any]], overlay: Iterable[tuple[str, str]], problems: list[str]
) -> Catalog:
    merged = {kind: dict(records) for kind, records in merged.items()}  # the cached copy stays as it was
    entries = 0
    for name, text in overlay:
        try:
            parsed = parse_file(name, text)
        except InputError as exc:
            problems.append(f"{exc}; file skipped")
            continue
        entries += sum(len(records) for records in parsed.values())
        if entries > MAX_OVERLAY_ENTRIES:
            problems.append(
                f"{name}: the overlay files pass {MAX_OVERLAY_ENTRIES:,} entries in all; file skipped"
            )
            continue
        _merge(merged, parsed)
    return Catalog(
        **{_FIELDS[kind]: tuple(records.values()) for kind, records in merged.items()},
        problems=tuple(problems),
    )


def _build(
    shipped: Iterable[tuple[str, str]], overlay: Iterable[tuple[str, str]], problems: list[str]
) -> Catalog:
    return _apply_overlay(_parse_shipped(shipped), overlay, problems)


# Parsing ~400 kB of TOML in pure Python is most of a load (~45 ms of ~80 ms here); the shipped files'
# parsed TOML is therefore kept in the user's cache folder as JSON, keyed by a hash of those files' bytes,
# so any edit (or a new release) re-parses. The cache is data only (never pickle: whoever can write that
# folder must not be able to run code in RigCheck) and is not trusted: its content goes through the same
# record checks as a catalog file, and a cache that fails them, or cannot be read or written, is ignored.
_CACHE_FORMAT = 7  # 7: JSON of the parsed TOML, no longer a pickle of records
CACHE_ENV = "RIGCHECK_CACHE_DIR"
#: a cache file larger than this is not ours (the shipped catalog parses to ~0.4 MB of JSON)
_CACHE_MAX_BYTES = 64 * 1024 * 1024


def _cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    from platformdirs import user_cache_path

    return user_cache_path("rigcheck", appauthor=False)


def _read_cache(path: Path, names: list[str]) -> dict[str, dict[str, Any]] | None:
    """The records in a cache file, or None when it is missing, unreadable, or not what we wrote."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(_CACHE_MAX_BYTES + 1)
        if len(raw) > _CACHE_MAX_BYTES:
            return None
        data = json.loads(raw)
    except (OSError, ValueError, RecursionError):
        return None
    if not (isinstance(data, dict) and data.get("format") == _CACHE_FORMAT):
        return None
    entries = data.get("files")
    if not isinstance(entries, list):
        return None
    if [e[0] if isinstance(e, list) and e else None for e in entries] != names:
        return None
    if not all(len(e) == 2 and isinstance(e[1], dict) for e in entries):
        return None
    try:
        return _records_of_files((name, content) for name, content in entries)
    except InputError:
        return None  # tampered with, or written by a buggy version: parse the TOML again


def _shipped_records(use_cache: bool) -> dict[str, dict[str, Any]]:
    shipped = list(_shipped_files())
    if not use_cache:
        return _parse_shipped(shipped)
    digest = hashlib.sha256(f"{_CACHE_FORMAT} {sys.version_info[:2]}".encode())
    for name, text in shipped:
        digest.update(name.encode() + b"\0" + text.encode() + b"\0")
    path = _cache_dir() / f"catalog-{digest.hexdigest()[:24]}.json"
    cached = _read_cache(path, [name for name, _ in shipped])
    if cached is not None:
        return cached
    parsed = [(name, load_toml(name, text)) for name, text in shipped]
    merged = _records_of_files(parsed)  # a bad shipped file is a bug: let it raise
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        payload = {"format": _CACHE_FORMAT, "files": [[name, content] for name, content in parsed]}
        tmp.write_text(json.dumps(payload, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
        tmp.replace(path)
        for old in (*path.parent.glob("catalog-*.json"), *path.parent.glob("catalog-*.pickle")):
            if old != path:
                old.unlink(missing_ok=True)
    except (OSError, TypeError, ValueError):
        pass  # a read-only home or a full disk costs speed, never the catalog
    return merged


def load_catalog(overlay: Path | None = None, *, use_overlay: bool = True, use_cache: bool = True) -> Catalog:
    """The shipped catalog, with the user's overlay folder applied (``overlay`` or the default)."""
    problems: list[str] = []
    folder = overlay if overlay is not None else default_overlay_dir()
    overlay_files: Iterable[tuple[str, str]] = ()
    if use_overlay and folder.is_dir():
        overlay_files = list(_overlay_files(folder, problems))
    return _apply_overlay(_shipped_records(use_cache), overlay_files, problems)
