"""The speed model's inputs: which class of hardware a device is, which backend it runs, its fitted
factors (``catalog/speed.toml``), and the host's memory bandwidth.

Decode time per token, per device = max(bytes read ÷ (bandwidth × efficiency), FLOPs ÷ (compute ×
efficiency)) + a fixed cost per layer (kernel launches and synchronisation: what dominates small models
on fast GPUs) and per GPU. The efficiencies and fixed costs are per hardware class and backend, fitted
on the cited measurement set (``benchmarks/fit_speed.py``), never per chip and model.

This package's own namespace holds those inputs; the model itself is one module per mechanism:

- ``reads``: the bytes a token reads per layer and what each device offers (bandwidth, peak, PCIe).
- ``decode``: the GPU decode roofline; ``fixed``: the fixed cost per layer and per GPU.
- ``cpu``: decode from RAM and prompt processing on the CPU.
- ``prefill``: prompt processing on the GPUs.
- ``experts``: routed experts: llama.cpp's tiled expert kernel, ktransformers' CPU experts.
- ``training``: fine-tuning throughput.
- ``estimate``: :func:`~rigcheck.core.estimate.speed.estimate.estimate_speed`, which puts them together.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from rigcheck.core.catalog import Backend, Catalog, CpuPlatform, GpuSpec, Maturity, SpeedFactor
from rigcheck.core.estimate.speed.coopmat import vulkan_matrix_engines
from rigcheck.core.estimate.speed.vulkan_bf16 import VULKAN_BF16_NVIDIA_DRIVER as VULKAN_BF16_NVIDIA_DRIVER
from rigcheck.core.estimate.speed.vulkan_bf16 import VULKAN_BF16_SOURCE as VULKAN_BF16_SOURCE
from rigcheck.core.estimate.speed.vulkan_bf16 import bf16_on_scalar_shaders as bf16_on_scalar_shaders
from rigcheck.core.machine import CPU, GPU, Machine
from rigcheck.core.said import Joined, Num, Percent, Said, Text, render, say

CPU_CLASS = "cpu"
_DEFAULT_BACKEND: dict[str, Backend] = {"nvidia": "cuda", "amd": "rocm", "apple": "metal", "intel": "vulkan"}
#: the vendors whose usual backend is known
DEFAULT_BACKENDS = frozenset(_DEFAULT_BACKEND)

#: a host whose memory system nobody could tell us: two channels of DDR5-4800 (2 × 4800 MT/s × 8 B =
#: 76.8 GB/s), the JEDEC base speed of DDR5 on a typical desktop (JESD79-5; AM5/LGA1700 boards run two
#: channels)
DEFAULT_HOST_BANDWIDTH = 2 * 4800 * 10**6 * 8
DEFAULT_HOST_SOURCE = "default: dual-channel DDR5-4800, 76.8 GB/s (a typical desktop; not measured)"

HostSource = Literal["measured", "catalog", "default"]


def hardware_class(vendor: str, name: str, spec: GpuSpec | None, unified: bool | None = None) -> str:
    """The class whose factors apply: vendor × market segment, and for Apple the chip tier."""
    if vendor == "apple":
        words = name.lower()
        if "max" in words or "ultra" in words:
            return "apple-max"
        return "apple-pro" if "pro" in words else "apple-base"
    segment = spec.segment if spec else None
    if vendor == "nvidia":
        if segment == "soc":
            return "nvidia-soc"
        return "nvidia-datacenter" if segment == "datacenter" else "nvidia-consumer"
    if vendor == "amd":
        if segment in ("soc", "integrated") or unified:
            return "amd-apu"
        if spec is not None and (spec.architecture or "").upper().startswith("GCN"):
            # Vega-era GCN (gfx906: MI50/MI60, Radeon VII): no matrix units, prompt GEMMs on dot-product ALUs
            return "amd-gcn"
        return "amd-datacenter" if segment == "datacenter" else "amd-consumer"
    return "intel"


def default_backend(vendor: str) -> Backend:
    return _DEFAULT_BACKEND.get(vendor, "cpu")


def speed_factor(catalog: Catalog, hw_class: str, backend: Backend | None) -> SpeedFactor | None:
    """The factors for this class and backend; the class's default backend when that one is not fitted."""
    rows = [f for f in catalog.speed_factors if f.hw_class == hw_class]
    if backend is not None:
        exact = next((f for f in rows if f.backend == backend), None)
        if exact is not None:
            return exact
    return next((f for f in rows if f.default), rows[0] if rows else None)


#: the speed_factor backend that holds ktransformers' CPU expert factors (hw_class "cpu")
KTRANSFORMERS = "ktransformers"
#: the speed_factor backend that holds MLX's own factors per Apple class (catalog/speed_engines.toml)
MLX: Backend = "mlx"


def engine_cpu_factor(catalog: Catalog, engine: str) -> SpeedFactor | None:
    """The CPU class's factors for an engine with CPU kernels of its own (ktransformers): its exact row only,
    never llama.cpp's CPU row in its place (another engine's kernels); None when none is fitted."""
    return next((f for f in catalog.speed_factors if f.hw_class == CPU_CLASS and f.backend == engine), None)


def maturity(catalog: Catalog, engine: str, model_type: str) -> Maturity | None:
    return next((m for m in catalog.maturities if m.engine == engine and m.model_type == model_type), None)


def engine_maturity(catalog: Catalog, engine: str, model_type: str) -> Maturity | None:
    """The maturity an estimate for ``engine`` applies to ``model_type``. Ollama runs llama.cpp's kernels, so
    llama.cpp's maturity for the architecture holds for it, times Ollama's own where its fit rows show one
    (catalog/speed.toml engine "ollama", fitted by benchmarks/fit_speed.py --maturity against estimates that
    already carry llama.cpp's): Ollama builds some architectures' graphs itself (in Go, on a pinned ggml) and
    runs them below llama.cpp's own, e.g. Qwen3-Next/Qwen3.5's Gated DeltaNet without llama.cpp's fused op
    (ollama/ollama PR #16150). Either alone is returned as it is; both as one Maturity, product of the
    factors, naming both sources."""
    if engine != "ollama":
        return maturity(catalog, engine, model_type)
    upstream = maturity(catalog, "llama.cpp", model_type)
    own = maturity(catalog, "ollama", model_type)
    if upstream is None or own is None:
        return upstream or own
    return replace(
        own,
        decode_factor=upstream.decode_factor * own.decode_factor,
        prefill_factor=upstream.prefill_factor * own.prefill_factor,
        source=f"{upstream.source}; {own.source}",
        sources=(*upstream.sources, *own.sources),
    )


def gpu_factor(
    catalog: Catalog, gpu: GPU, spec: GpuSpec | None, backend: Backend | None
) -> SpeedFactor | None:
    cls = hardware_class(gpu.vendor, gpu.name, spec, gpu.unified_memory)
    return speed_factor(catalog, cls, backend or default_backend(gpu.vendor))


#: engines with GPU kernels of their own whose factors are a speed_factor row keyed by the engine's name
#: (hw_class × "mlx"): mlx-lm's Metal kernels are not llama.cpp's Metal backend
ENGINE_GPU_BACKENDS: frozenset[str] = frozenset({"mlx"})


def engine_gpu_factor(
    catalog: Catalog, gpu: GPU, spec: GpuSpec | None, engine: str, backend: Backend | None
) -> tuple[SpeedFactor | None, bool]:
    """The GPU's factors for ``engine``, and whether they are the engine's own: its exact class × engine row
    (for what that row was fitted on; the prefill shares it lacks come from the backend's row), else the
    class × backend row llama.cpp's kernels use."""
    base = gpu_factor(catalog, gpu, spec, backend)
    if engine not in ENGINE_GPU_BACKENDS:
        return base, False
    cls = hardware_class(gpu.vendor, gpu.name, spec, gpu.unified_memory)
    own = next((f for f in catalog.speed_factors if f.hw_class == cls and f.backend == engine), None)
    if own is None:
        return base, False
    if own.prefill_compute_efficiency is None and base is not None:
        own = replace(
            base,
            id=own.id,
            backend=own.backend,
            decode_bandwidth_efficiency=own.decode_bandwidth_efficiency,
            decode_compute_efficiency=own.decode_compute_efficiency,
            per_layer_us=own.per_layer_us,
            per_gpu_us=own.per_gpu_us,
            source=own.source,
        )
    return own, True


@dataclass(frozen=True)
class HostBandwidth:
    bytes_per_s: int
    source: HostSource
    #: in words, with the platform or the measurement, as said: :attr:`why` in words
    why_said: Text

    @property
    def why(self) -> str:
        return render(self.why_said)


def cpu_platform(catalog: Catalog, cpu_model: str | None) -> CpuPlatform | None:
    if not cpu_model:
        return None
    for platform in catalog.cpu_platforms:
        if platform.matches(cpu_model):
            return platform
    return None


def host_bandwidth(machine: Machine, catalog: Catalog) -> HostBandwidth:
    """Peak host memory bandwidth: the snapshot's (measured or typed in), a unified-memory GPU's, the CPU
    platform's, or a default. A peak the snapshot holds (``bandwidth_source = "catalog"``: the platform's, or
    DIMMs as stated) is at most the platform's: a memory controller clocks DIMMs rated above its supported
    rate down to it."""
    memory = machine.memory
    platform = cpu_platform(catalog, machine.cpu.model)
    above_ceiling = (
        memory.bandwidth_source == "catalog"
        and platform is not None
        and (memory.bandwidth_bytes_per_s or 0) > platform.bandwidth_bytes_per_s
    )
    if memory.bandwidth_bytes_per_s and not above_ceiling:
        source: HostSource = "measured" if memory.bandwidth_source == "measured" else "catalog"
        if memory.bandwidth_source == "default":
            source = "default"
        return HostBandwidth(
            memory.bandwidth_bytes_per_s,
            source,
            Joined(
                "",
                (
                    Num(memory.bandwidth_bytes_per_s / 1e9, group=False, unit=" GB/s"),
                    " (",
                    say(memory.bandwidth_source or "from the snapshot"),
                    ")",
                ),
            ),
        )
    # A unified-memory machine (Apple, Strix Halo, GB10) has one memory: its RAM is the GPU's memory,
    # whose bandwidth the GPU catalog has (the CPU cores alone reach only part of that peak).
    for gpu in machine.gpus:
        spec = catalog.spec_for(gpu) if gpu.unified_memory else None
        if spec is not None and spec.bandwidth_gbs:
            bw = int(spec.bandwidth_gbs * 1e9)
            return HostBandwidth(
                bw,
                "catalog",
                say(
                    "{bw} GB/s: the unified memory of {gpu}, shared by CPU and GPU (peak; the CPU cores "
                    "alone reach less) ({source})",
                    bw=Num(bw / 1e9, group=False),
                    gpu=spec.name,
                    source=spec.source,
                ),
            )
    if platform is not None:
        bw = platform.bandwidth_bytes_per_s
        return HostBandwidth(
            bw,
            "catalog",
            say(
                "{bw} GB/s: {platform}, {channels} channels × {mts} MT/s ({source})",
                bw=Num(bw / 1e9, group=False),
                platform=platform.name,
                channels=platform.channels,
                mts=platform.mt_per_s,
                source=platform.source,
            ),
        )
    return HostBandwidth(DEFAULT_HOST_BANDWIDTH, "default", say(DEFAULT_HOST_SOURCE))


#: llama.cpp's CPU decode reads its weights at this share of a *measured* host bandwidth: on a Raspberry Pi 5
#: (4 threads, five quants of one model) decode's bytes × tokens/s came to 84-91% of a STREAM-style read
#: kernel's bandwidth on the same board (ggml-org/llama.cpp issue #26484, 2026-08). A measured figure is
#: already what the memory system delivers, so the CPU class's fitted share, which is a share of the
#: platform's *peak* (channels × transfer rate, or the default), does not apply on top of it. Uncertain where
#: the measurement is a copy test (``audit --measure`` copies, counting read + written bytes as STREAM's Copy
#: does): on that Pi 5 the 4-thread STREAM Copy read 6.19 GB/s against 11.59 GB/s read-only, so a copy
#: figure can sit below what decode reads; where the two agree, as on desktop DRAM, the share holds.
MEASURED_READ_SHARE = 0.88
MEASURED_READ_SOURCE = "https://github.com/ggml-org/llama.cpp/issues/26484"


def cpu_read_efficiency(factor: SpeedFactor | None, host: HostBandwidth) -> float:
    """The share of ``host``'s bandwidth llama.cpp's CPU kernels read weights at: of a measured bandwidth,
    :data:`MEASURED_READ_SHARE`; of a peak (catalog or default), the CPU class's fitted efficiency (1 when
    none is fitted)."""
    if host.source == "measured":
        return MEASURED_READ_SHARE
    return factor.decode_bandwidth_efficiency if factor else 1.0


def with_host_bandwidth(machine: Machine, catalog: Catalog, measured: int | None = None) -> Machine:
    """``machine`` with ``memory.bandwidth_bytes_per_s`` filled: a measurement, what it already has (a
    measurement or a figure the user typed in), the CPU platform's, or the default."""
    memory = machine.memory
    if measured:
        return replace(
            machine, memory=replace(memory, bandwidth_bytes_per_s=measured, bandwidth_source="measured")
        )
    if memory.bandwidth_bytes_per_s and memory.bandwidth_source == "measured":
        return machine
    host = host_bandwidth(replace(machine, memory=replace(memory, bandwidth_bytes_per_s=None)), catalog)
    return replace(
        machine, memory=replace(memory, bandwidth_bytes_per_s=host.bytes_per_s, bandwidth_source=host.source)
    )


# ---- prefill compute peaks ----


@dataclass(frozen=True)
class PrefillPath:
    """How the prompt's matrix products run for this model and weight format, relative to the class's
    dense, quantised-weight prefill efficiency, and why, in words (empty when nothing applies)."""

    factor: float
    #: as said: :attr:`why` in words
    why_said: Text

    @property
    def why(self) -> str:
        return render(self.why_said)


#: prompt tokens per expert and micro-batch at which ``prefill_moe_factor`` is stated
MOE_TOKENS_REF = 64.0


def moe_tokens_per_expert(micro_batch: int, experts_per_token: int, experts: int) -> float:
    """Prompt tokens each routed expert multiplies per micro-batch, routing uniform: micro-batch × k / E."""
    return micro_batch * experts_per_token / max(experts, 1)


def prefill_path(
    factor: SpeedFactor,
    *,
    moe: bool,
    unquantized: bool,
    tokens_per_expert: float = MOE_TOKENS_REF,
    coopmat: bool = False,
) -> PrefillPath:
    """The class × backend's fitted prefill multipliers that apply to this model and format.

    Unquantized (F16/BF16/F32) weights take another GEMM path than quantised ones (llama.cpp CUDA: cuBLAS on
    tensor cores instead of MMQ, which dequantises each weight tile before its int8 product), so their share
    of the peak differs (``prefill_float_factor``). A mixture of experts multiplies each expert's weights by
    only the prompt tokens routed to it (micro-batch × k / E: 16-64 tokens for gpt-oss and Qwen3 MoE against
    512 for a dense layer) through MUL_MAT_ID kernels whose narrow tiles reuse each loaded weight less, so
    they reach a smaller share of the peak than the dense GEMM: ``prefill_moe_factor`` at 64 tokens per
    expert, × (tokens per expert / 64) ** ``prefill_moe_exponent``, never above the dense share. Both are
    fitted per hardware class × backend on measured rows (benchmarks/fit_speed.py).

    The MoE factor is a ratio within one kernel family, so ``coopmat`` (Intel XMX through Vulkan cooperative
    matrices, PrefillCompute.coopmat) takes ``prefill_coopmat_moe_factor`` where set: the coopmat matmul_id
    shaders, not the shader-core ones (speed/intel_paths.py).
    """
    value, words = 1.0, list[Said]()
    if moe and unquantized and factor.prefill_float_moe_factor != 1.0:
        # Unquantized experts leave the quantised MUL_MAT_ID kernels: llama.cpp's CUDA/HIP backend multiplies
        # them expert by expert with a host synchronisation (the fallback loop of ggml_cuda_mul_mat_id), its
        # Vulkan backend on its float matmul_id shaders (BF16 on the scalar path where the driver lacks
        # VK_KHR_shader_bfloat16). One factor, fitted on such rows, stands for the float and MoE factors.
        return PrefillPath(
            factor.prefill_float_moe_factor,
            say(
                "unquantized experts (float MUL_MAT_ID kernels) × {factor}",
                factor=Num(factor.prefill_float_moe_factor, 2),
            ),
        )
    if unquantized and factor.prefill_float_factor != 1.0:
        value *= factor.prefill_float_factor
        words.append(say("unquantized weights × {factor}", factor=Num(factor.prefill_float_factor, 2)))
    moe_factor = factor.prefill_moe_factor
    if coopmat and factor.prefill_coopmat_moe_factor != 1.0:
        moe_factor = factor.prefill_coopmat_moe_factor
    if moe and moe_factor != 1.0:
        scale = (max(tokens_per_expert, 1.0) / MOE_TOKENS_REF) ** factor.prefill_moe_exponent
        moe_share = min(moe_factor * scale, 1.0)
        value *= moe_share
        words.append(
            say(
                "expert GEMMs over {tokens} tokens each × {share}",
                tokens=Num(tokens_per_expert),
                share=Num(moe_share, 2),
            )
        )
    return PrefillPath(value, Joined(", ", tuple(words)) if words else "")


#: Where llama.cpp multiplies one token's routed experts with a tiled matrix-matrix kernel instead of its
#: matrix-vector one, by backend and expert weight type. Vulkan: ``ggml_vk_use_mul_mat_vec_id`` sends
#: MUL_MAT_ID at batch 1 to the matrix-vector shaders only for F32, F16 and quantised weights, so BF16 experts
#: run ``ggml_vk_mul_mat_id_q_f16``, the tiled matmul_id GEMM a prompt micro-batch runs (dense BF16 MUL_MAT
#: does take the matrix-vector path: ``ggml_vk_mul_mat`` lists BF16) (ggml-org/llama.cpp
#: ggml/src/ggml-vulkan/ggml-vulkan.cpp@000651caaa5b97364a481345863770c2b898d2e7; the same test, with
#: ``ne[1] == 1``, in earlier versions). CUDA/HIP is not listed: ``ggml_cuda_mul_mat_id`` runs one token's
#: unquantized experts through ``ggml_cuda_mul_mat_vec_f`` with the expert ids (``ne2 == 1``;
#: ggml/src/ggml-cuda/ggml-cuda.cu@f6d77a1ba0ac794e950bd3abb630b904bdcd8fb8, built for HIP too), and only a
#: prompt's go through its per-expert fallback loop (prefill_float_moe_factor).
TILED_EXPERT_DECODE: dict[Backend, frozenset[str]] = {"vulkan": frozenset({"bf16"})}
TILED_EXPERT_DECODE_SOURCE = (
    "ggml-org/llama.cpp ggml/src/ggml-vulkan/ggml-vulkan.cpp@000651c, ggml_vk_use_mul_mat_vec_id"
)


def tiled_expert_decode(backend: Backend | None, quant_id: str | None) -> bool:
    """Whether llama.cpp decodes this backend's routed experts of this weight type through a tiled GEMM."""
    return backend is not None and quant_id is not None and quant_id in TILED_EXPERT_DECODE.get(backend, ())


#: NVIDIA architectures whose GeForce cards (desktop and laptop) run FP16 tensor maths with FP32
#: accumulation at half the FP16-accumulate rate; professional and data-centre chips run both at one rate
#: (NVIDIA's Turing, GA102 and Ada whitepapers list both figures per card)
_GEFORCE_HALF_RATE_ARCHS = ("turing", "ampere", "ada", "blackwell")

#: AMD RDNA 4 multiplies FP16 matrices (WMMA) at 1024 FLOPs per compute unit per clock, twice RDNA 3's 512,
#: while its packed-FP16 shader rate (the figure the catalog's Radeon entries carry, 2 × FP32) stayed at 512:
#: the matrix rate llama.cpp's WMMA kernels (MMQ on RDNA 4 for every quantised type, ggml-org/llama.cpp
#: ggml/src/ggml-cuda/mmq.cu@027ef87, ggml_cuda_should_use_mmq; hipBLASLt for F16/BF16) run at is twice
#: that figure. On RDNA 3 the two rates are one (512), so the catalog figure is already the matrix rate.
#: Per-CU rates: https://www.reddit.com/r/hardware/comments/1j97xyw/ (reproduces AMD's 1557 AI TOPS for
#: the RX 9070 XT from 64 CUs × 2.97 GHz), read 2026-12-02.
RDNA4_MATRIX_PER_PACKED_FP16 = 2.0


def prefill_peak_tflops(spec: GpuSpec | None, *, fp32: bool = False) -> tuple[float, str] | None:
    """The tensor peak llama.cpp's prefill kernels see, and what it is, in words.

    The catalog's ``bf16_tflops``/``fp16_tflops`` are dense tensor figures with FP32 accumulation.
    llama.cpp's CUDA prompt kernels (int8 MMQ for quantised weights, cuBLAS with FP16 compute for F16) run
    at the FP16-accumulate rate, which on GeForce cards is twice the FP32-accumulate figure, so those
    cards' figure is doubled here. Without a tensor figure the FP32 peak is used (Apple GPUs run FP16 at
    the FP32 rate). ``fp32``: the kernels compute in FP32 (BF16 on Vulkan's scalar shaders,
    bf16_on_scalar_shaders), so the FP32 peak is theirs.

    Intel GPUs are measured against their FP32 peak whatever else the catalog lists: the fp16_tflops the
    Lunar Lake and Arrow Lake iGPUs carry is the vector engines' packed FP16 rate (2 × FP32, TechPowerUp's
    "FP16 (half)"), not an XMX figure, and every Intel prompt share is fitted against FP32, with what the
    XMX engines add as prefill_coopmat_factor (speed/coopmat.py).
    """
    if spec is None:
        return None
    if fp32:
        if not spec.fp32_tflops:
            return None
        return spec.fp32_tflops, f"{spec.fp32_tflops:g} TFLOPS FP32 (BF16 promoted to FP32)"
    if spec.vendor == "intel" and spec.fp32_tflops:
        return spec.fp32_tflops, f"{spec.fp32_tflops:g} TFLOPS FP32"
    tensor = spec.bf16_tflops or spec.fp16_tflops
    if tensor:
        arch = (spec.architecture or "").lower()
        geforce = (
            spec.vendor == "nvidia"
            and "geforce" in spec.name.lower()  # not TITAN RTX/V or workstation cards: full rate
            and any(a in arch for a in _GEFORCE_HALF_RATE_ARCHS)
        )
        if geforce:
            return 2 * tensor, f"{2 * tensor:g} TFLOPS FP16 tensor, FP16 accumulate (GeForce: 2 × {tensor:g})"
        if spec.vendor == "amd" and arch == "rdna4" and spec.fp16_tflops and not spec.bf16_tflops:
            matrix = RDNA4_MATRIX_PER_PACKED_FP16 * tensor
            return matrix, f"{matrix:g} TFLOPS FP16 matrix (RDNA 4 WMMA: 2 × the {tensor:g} packed-FP16 rate)"
        return tensor, f"{tensor:g} TFLOPS FP16/BF16 tensor"
    if spec.fp32_tflops:
        return spec.fp32_tflops, f"{spec.fp32_tflops:g} TFLOPS FP32"
    return None


@dataclass(frozen=True)
class PrefillCompute:
    """The FLOP rate a GPU's prompt kernels sustain for a dense model with quantised weights, before the
    format and mixture-of-experts multipliers (``prefill_path``), and why, in words."""

    flops_per_s: float
    #: the listed peak it is measured against, TFLOPS (``prefill_peak_tflops``)
    peak_tflops: float
    #: the board power limit held it below peak × efficiency
    power_bound: bool
    #: in words, when the power limit binds (empty otherwise), as said: :attr:`why` in words
    why_said: Text
    #: the class's cooperative-matrix factor applied: prompt GEMMs on Intel's XMX engines (speed/coopmat.py)
    coopmat: bool = False

    @property
    def why(self) -> str:
        return render(self.why_said)


def prefill_compute(
    spec: GpuSpec | None,
    factor: SpeedFactor | None,
    watts: float | None = None,
    *,
    fp32: bool = False,
    build: int | None = None,
) -> PrefillCompute | None:
    """min(peak × the class's ``prefill_compute_efficiency``, board power × its ``prefill_tflops_per_watt``).

    A GPU that reaches its power limit lowers its clocks to stay within it (NVML's clock event reason
    "SwPowerCap": "the clocks have been optimized to ensure not to exceed currently set power limits",
    https://docs.nvidia.com/deploy/nvml-api/api/group__nvmlClocksEventReasons.html), so sustained prompt
    GEMMs on a card whose boost-clock peak needs more power than its board may draw run at a rate set by the
    watts: the professional Ada cards (RTX 6000 Ada: 364 TFLOPS at 300 W) reach a smaller share of their peak
    than a GeForce RTX 4090 (330 TFLOPS at 450 W). ``watts``: the power limit the driver enforces (the
    snapshot's), else the catalog's board power. ``fp32``: measured against the FP32 peak
    (prefill_peak_tflops), at most all of it. ``build``: the llama.cpp build (None: a current one), for
    the Vulkan cooperative-matrix rule (speed/coopmat.py). None when the peak or the class's efficiency is
    unknown.
    """
    found = prefill_peak_tflops(spec, fp32=fp32)
    if found is None or factor is None or factor.prefill_compute_efficiency is None:
        return None
    peak, peak_why = found
    # FP32 GEMMs on the vector ALUs cannot pass the FP32 peak, whatever share the class's matrix kernels reach
    efficiency = min(factor.prefill_compute_efficiency, 1.0) if fp32 else factor.prefill_compute_efficiency
    rate = peak * 1e12 * efficiency
    # XMX through cooperative matrices (speed/coopmat.py); FP32 scalar shaders never reach them
    coopmat = (
        not fp32
        and factor.prefill_coopmat_factor != 1.0
        and vulkan_matrix_engines(factor.backend, spec, build)
    )
    if coopmat:
        rate *= factor.prefill_coopmat_factor
    per_watt = factor.prefill_tflops_per_watt
    limit = watts or (spec.tdp_watts if spec else None)
    if per_watt and limit and limit * per_watt * 1e12 < rate:
        capped = limit * per_watt * 1e12
        why = say(
            "held to {capped} TFLOPS by its {watts} W power limit ({per_watt} TFLOPS per watt, {hw_class}), "
            "below {peak_why} × {efficiency}",
            capped=Num(capped / 1e12, 1),
            watts=Num(limit),
            per_watt=Num(per_watt, 3),
            hw_class=factor.hw_class,
            peak_why=peak_why,
            efficiency=Percent(efficiency),
        )
        return PrefillCompute(capped, peak, True, why, coopmat)
    return PrefillCompute(rate, peak, False, "", coopmat)


#: FP32 FLOPs per core per clock by the widest vector extension the CPU reports (two FMA pipes × lanes × 2):
#: AMX-capable Xeons (Sapphire Rapids and later) have two 512-bit FMA units (2 × 16 × 2); other AVX-512 CPUs
#: are counted as two 256-bit pipes (Zen 4 runs 512-bit ops on 256-bit units; Ice/Tiger Lake clients have one
#: 512-bit FMA port), as are AVX2+FMA CPUs (Haswell and later, Zen 2 and later: 2 × 8 × 2); AVX without FMA
#: has separate 256-bit multiply and add ports (8 + 8); Arm NEON cores are counted as two 128-bit FMA pipes
#: (2 × 4 × 2); anything else as SSE2 (4 + 4). Intel and AMD optimisation manuals, per microarchitecture.
_FLOPS_PER_CYCLE: tuple[tuple[tuple[str, ...], int, str], ...] = (
    (("amx_tile",), 64, "AMX/AVX-512, two 512-bit FMA units"),
    (("avx512f",), 32, "AVX-512 on 256-bit-wide FMA pipes"),
    (("avx2", "fma"), 32, "AVX2, two 256-bit FMA pipes"),
    (("avx",), 16, "AVX"),
    (("asimd",), 16, "NEON, two 128-bit FMA pipes"),
    (("neon",), 16, "NEON, two 128-bit FMA pipes"),  # the probe's spelling of Linux's "asimd"
)
_FALLBACK_FLOPS_PER_CYCLE = (8, "SSE2")
#: GGUF types llama.cpp multiplies with Intel AMX tiles (qtype_has_amx_kernels: Q4_0, Q4_1, Q8_0, Q4_K, Q5_K,
#: Q6_K, IQ4_XS), as catalog format ids; every other type (Q2_K, Q3_K, Q5_0, F16, BF16, MXFP4, ...) takes the
#: AVX-512 path on the same CPU
AMX_QUANTS = frozenset(
    {
        "q4_0",
        "q4_1",
        "q8_0",
        "q4_k",
        "q5_k",
        "q6_k",
        "iq4_xs",
        "q4_k_s",
        "q4_k_m",
        "q5_k_s",
        "q5_k_m",
        "q6_k-mix",
    }
)
AMX_SOURCE = "ggml-org/llama.cpp ggml/src/ggml-cpu/amx/common.h@5c5f166 (qtype_has_amx_kernels)"


@dataclass(frozen=True)
class CpuCompute:
    """A CPU's peak FP32 throughput for prompt processing: cores × clock × FLOPs per cycle."""

    flops_per_s: float
    cores: int
    ghz: float
    flops_per_cycle: int
    isa: str

    @property
    def why(self) -> str:
        return (
            f"{self.cores} cores × {self.ghz:.2f} GHz × {self.flops_per_cycle} FLOPs/cycle ({self.isa}) = "
            f"{self.flops_per_s / 1e12:.2f} TFLOPS FP32"
        )


def cpu_compute(cpu: CPU, *, quant_id: str | None = None, threads: int | None = None) -> CpuCompute | None:
    """Peak FP32 FLOP/s from the probe's core count, maximum clock and ISA flags; None when the clock is not
    known. Physical cores are the ones llama.cpp's default thread count uses; without them, logical cores.

    ``threads`` (llama.cpp ``-t``) computes on that many cores, never more than the physical ones (a second
    hardware thread shares its core's FMA units). With a ``quant_id``, AMX counts only for the types llama.cpp
    has AMX kernels for (``AMX_QUANTS``); the others run at the CPU's AVX-512 rate."""
    if not cpu.max_mhz or cpu.max_mhz <= 0:
        return None
    cores = cpu.physical_cores or cpu.logical_cores
    if threads is not None and threads > 0:
        cores = min(cores, threads)
    if cores <= 0:
        return None
    flags = {f.lower() for f in cpu.flags}
    per_cycle, isa = _FALLBACK_FLOPS_PER_CYCLE
    for needed, value, name in _FLOPS_PER_CYCLE:
        if "amx_tile" in needed and quant_id is not None and quant_id not in AMX_QUANTS:
            continue  # no AMX kernel for this type: llama.cpp's AVX-512 path
        if all(f in flags for f in needed):
            per_cycle, isa = value, name
            break
    if "amx_tile" in flags and quant_id is not None and quant_id not in AMX_QUANTS:
        isa += f"; llama.cpp has no AMX kernel for {quant_id} ({AMX_SOURCE})"
    ghz = cpu.max_mhz / 1000
    return CpuCompute(cores * ghz * 1e9 * per_cycle, cores, ghz, per_cycle, isa)
