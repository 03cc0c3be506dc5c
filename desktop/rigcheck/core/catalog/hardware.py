"""Hardware records: GPUs, their power excursions, speed factors fitted per class and backend, engine
maturity, CPU platforms (and the safe form of a CPU-name pattern).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Literal

from rigcheck.core.catalog.common import Confidence, FormFactor, Segment
from rigcheck.core.machine import Vendor


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
    #: a mixture of experts' prefill relative to a dense model's, at 64 tokens per expert, where those
    #: cooperative matrices run it (Vulkan's KHR_coopmat matmul_id shaders against its dense coopmat ones):
    #: ``prefill_moe_factor``'s counterpart on that kernel path (speed.prefill_path); 1 where not fitted
    prefill_coopmat_moe_factor: float = 1.0
    #: µs of host and launch work per routed expert per MoE layer in a prompt micro-batch where the backend
    #: multiplies the experts one at a time (llama.cpp SYCL: core/estimate/speed/sycl_experts.py); it stands
    #: in for the MoE factor there; 0 where not fitted
    prefill_expert_us: float = 0.0
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
    #: quantised weights whose SYCL mat-vec lacks the reordered layout (speed.sycl_matvec) read at this × the
    #: class's decode bandwidth efficiency (1: as the reordered types)
    decode_unreordered_factor: float = 1.0
    #: the same for a type whose blocks are not a multiple of 4 bytes (its quants read as 16-bit halves)
    decode_unaligned_factor: float = 1.0
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
