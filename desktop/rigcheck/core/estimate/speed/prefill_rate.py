"""The FLOP rate a GPU's prompt kernels sustain: the tensor peak they see, its share by the class's fitted
efficiency within the board's power limit, and the multipliers for the weight format and mixture of
experts."""

from __future__ import annotations

from dataclasses import dataclass

from rigcheck.core.catalog import GpuSpec, SpeedFactor
from rigcheck.core.estimate.speed.coopmat import vulkan_matrix_engines
from rigcheck.core.said import Joined, Num, Percent, Said, Text, render, say

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
    xmx: bool = True,
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
    the Vulkan cooperative-matrix rule (speed/coopmat.py). ``xmx``: False for a kernel family the fitted
    matrix-engine factor does not cover (BF16 on Intel: vulkan_bf16.intel_bf16_matrices), which keeps the
    class's shader-core share. None when the peak or the class's efficiency is unknown.
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
        and xmx
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
