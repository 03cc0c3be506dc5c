"""Fine-tuning throughput: the FLOPs a token costs at the GPU's tensor peak times the framework's measured
efficiency, plus QLoRA's dequantisation, and with offload the CPU optimizer and the PCIe streams.

FLOPs per token (``training_flops``): a token passes through every matmul weight it touches (the active
parameters less the input embedding, a lookup) -- 2 FLOPs each forward, 2 more for the input gradients
and, when the weights train, 2 for their gradients: 6·N for full fine-tuning, 4·N + 6·N_adapters for LoRA
(Kaplan et al. 2020 §2.1; EleutherAI Transformer Math 101); attention adds 12·a·d·s per attending layer
(PaLM, arXiv 2204.02311 App. B: 6N + 12·L·H·Q·T), with a sliding window's s capped at the window and
linear-attention layers' fixed state left out. Checkpointing recomputes the forward pass once more
(+2·N, +4·a·d·s).

The efficiency (achieved ÷ peak dense tensor FLOPs) is each framework's, fitted on the cited speed rows
of ``benchmarks/data/training.csv`` outside the held-out quarter (``benchmarks/training_speed_fit.py``
prints the fit and a test checks these constants against it); a framework without a cited speed row
takes the median over every framework's fit rows, and says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rigcheck.core.catalog import Catalog, GpuSpec
from rigcheck.core.estimate import gdn_fallback, speed
from rigcheck.core.estimate.memory import MemoryEstimate
from rigcheck.core.estimate.placement import megatrain
from rigcheck.core.estimate.placement.types import Placement
from rigcheck.core.estimate.speed import linear_kernels
from rigcheck.core.estimate.speed.reads import gpu_bandwidth, pcie_gbs
from rigcheck.core.estimate.speed.result import Bound, Speed
from rigcheck.core.i18n import num, percent, sig, tr
from rigcheck.core.machine import Machine
from rigcheck.core.models.spec import ArchConfig

#: effective CPU memory bandwidth for the CPU optimizer of offloaded training: a desktop DDR5 system
#: ran a 7B Q4 model at 12.6–18.3 tokens/s on the CPU (llama.cpp issue #34), i.e. ~50 GB/s
CPU_BANDWIDTH_GBS = 50.0

#: achieved ÷ peak dense BF16 tensor FLOPs per framework, the median over its fit rows' implied
#: efficiency (benchmarks/training_speed_fit.py; torchtune: 5 rows of its README@0031bfb table on
#: RTX 4090, RTX A6000 and 8× A100, implied 0.36-1.50: the A6000 LoRA row exceeds the card's dense peak,
#: so the median, not a mean, is the fit)
TRAIN_EFFICIENCY: dict[str, float] = {"torchtune": 0.64}
#: frameworks without a cited speed row: the median over all fit rows
FALLBACK_EFFICIENCY = 0.64
#: MegaTrain's streamed training, the fit over its two single-GPU TFLOPS rows (README@2a9f977 and its
#: 2026-04-17 news: Qwen2.5-32B 259 and Qwen2.5-7B 272 TFLOPS on one H100, counted as its train.py does,
#: 6·N per token): with the work its code does (megatrain_flops, 10 FLOPs per layer weight) and the CPU
#: optimizer train.py runs after the GPU's pass (at the default host bandwidth: the rows state no host),
#: they imply 0.513 and 0.473 of the dense peak; the median (benchmarks/training_speed_fit.py)
MEGATRAIN_MFU = 0.49


#: CPU Adam touches ~28 bytes per parameter per step (memory-formulas §1.6, derived)
CPU_ADAM_BYTES_PER_PARAM = 28


#: QLoRA dequantises the 4-bit base weights to bf16 for every matmul, in the forward pass, in the backward
#: pass (for the input gradients) and again when recomputing (QLoRA arXiv 2305.14314 §3: "we dequantize
#: the storage data type to the computation data type to perform the forward and backward pass"): each
#: pass reads 0.5 B and writes 2 B per weight, and the matmul reads the 2 B copy back, which LoRA reads anyway
QLORA_DEQUANT_BYTES_PER_PARAM = 0.5 + 2


@dataclass(frozen=True)
class TrainingFlops:
    """FLOPs one trained token costs, split as the formula counts them."""

    matmul: float
    attention: float
    #: the weight-matrix parameters a token passes through (N)
    weights: int
    recompute: bool

    @property
    def total(self) -> float:
        return self.matmul + self.attention


def attending_width(arch: ArchConfig, context: int) -> float:
    """Σ over layers of a·d·(keys each query sees): full and MLA layers the context, sliding layers the
    window, linear-attention layers none (their fixed state costs no per-key work)."""
    width = arch.num_heads * arch.head_dim
    total = 0.0
    for kind in arch.layer_kinds or ("full",) * arch.num_layers:
        if kind in ("full", "mla"):
            total += width * context
        elif kind == "sliding":
            total += width * min(context, arch.sliding_window or context)
    return total


def training_flops(
    arch: ArchConfig, workload: str, context: int, *, recompute: bool, adapters: int = 0
) -> TrainingFlops:
    weights = arch.params_active - arch.embed_params  # the input embedding is a lookup, not a matmul
    per_weight = 6 if workload == "full" else 4
    matmul = per_weight * weights + (6 * adapters if workload != "full" else 0)
    attention = 12 * attending_width(arch, context)
    if recompute:
        matmul += 2 * weights + (2 * adapters if workload != "full" else 0)
        attention += 4 * attending_width(arch, context)
    return TrainingFlops(float(matmul), attention, weights, recompute)


def megatrain_flops(arch: ArchConfig, context: int) -> TrainingFlops:
    """MegaTrain's work per token: each layer runs forward three times and backward once
    (placement/megatrain.py layer_work_per_weight), the head forward and backward once (6), the
    embedding is a lookup; attention likewise three forwards (4 each) and one backward (8)."""
    head = arch.head_params
    layers = arch.params_active - arch.embed_params - head
    matmul = megatrain.layer_work_per_weight() * layers + 6 * head
    attention = (3 * 4 + 8) * attending_width(arch, context)
    return TrainingFlops(float(matmul), attention, layers + head, True)


def efficiency(framework: str | None) -> tuple[float, bool]:
    """(efficiency, measured): the framework's own fitted efficiency, or the fallback (measured False)."""
    if framework in TRAIN_EFFICIENCY:
        return TRAIN_EFFICIENCY[framework], True
    return FALLBACK_EFFICIENCY, False


def qlora_dequant_seconds(
    arch: ArchConfig, recompute: bool, bandwidth_gbs: float, efficiency: float
) -> float:
    """Seconds per step QLoRA spends dequantising its NF4 layers (forward, backward, recompute)."""
    passes = 2 + (1 if recompute else 0)
    quantized = arch.params_total - arch.embed_params - arch.head_params
    return passes * quantized * QLORA_DEQUANT_BYTES_PER_PARAM / (bandwidth_gbs * 1e9 * efficiency)


def _tflops(spec: GpuSpec | None) -> float | None:
    if spec is None:
        return None
    return spec.bf16_tflops or spec.fp16_tflops


def training_speed(
    est: MemoryEstimate,
    placement: Placement,
    machine: Machine,
    catalog: Catalog,
    *,
    specs: Sequence[GpuSpec | None],
    explanation: list[str],
) -> Speed:
    arch = est.model.arch
    gpus = machine.gpus
    used = [i for i, b in enumerate(placement.gpu_bytes) if b > 0]
    if not used:
        return Speed(explanation_said=(tr("training needs a GPU"),))
    i = used[0]
    peak = _tflops(specs[i])
    if peak is None:
        return Speed(
            explanation_said=(
                tr(
                    "GPU {index} ({name}): tensor throughput not published; speed not estimated",
                    index=i,
                    name=gpus[i].name,
                ),
            )
        )
    # FLOPs follow the parameters a token touches: a mixture of experts trains its active experts only.
    recompute = est.checkpointing in ("full", "offloaded") or placement.offload == "full"
    adapters = est.trainable_params if est.workload != "full" else 0
    flops = training_flops(arch, est.workload, est.context, recompute=recompute, adapters=adapters)
    if placement.offload == "full":
        flops = megatrain_flops(arch, est.context)
        eff, measured = MEGATRAIN_MFU, True
    else:
        eff, measured = efficiency(est.framework)
    tokens_per_step = est.context * est.batch
    t_compute = flops.total * tokens_per_step / (eff * peak * 1e12)
    moe = (
        ", "
        + tr(
            "{active} of {total} parameters active",
            active=num(arch.params_active),
            total=num(arch.params_total),
        )
        if arch.is_moe
        else ""
    )
    base = "6N" if est.workload == "full" else tr("4N (frozen base: no weight gradients)")
    if placement.offload == "full":
        base, recompute = tr("10N: each layer three times forward and once backward, MegaTrain"), False
    explanation.append(
        tr(
            "{gflops} GFLOPs per token ({base}{recompute}{moe}; attention {attention} GFLOPs at "
            "{context} tokens) at {eff} of {peak} TFLOPS",
            gflops=sig(flops.total / 1e9, 3),
            base=base,
            recompute=", " + tr("+2N recompute") if recompute else "",
            moe=moe,
            attention=sig(flops.attention / 1e9, 3),
            context=num(est.context),
            eff=percent(eff),
            peak=sig(peak, 6),
        )
    )
    if not measured:
        explanation.append(
            tr(
                "no cited speed measurement of {framework}: the median efficiency of the measured frameworks",
                framework=est.framework or "?",
            )
        )
    bound: Bound = "compute"
    step = t_compute
    # Gated DeltaNet kernels: their measured time, which the matmul FLOPs above leave out
    forwards = 3 if placement.offload == "full" else 1 + (1 if recompute else 0)
    t_linear = linear_kernels.per_token_seconds(arch, peak, forwards) * tokens_per_step
    spec = specs[i]
    bw, fp32 = gpu_bandwidth(spec), spec.fp32_tflops if spec else None
    if est.linear_kernels == "torch" and t_linear > 0 and bw and fp32:
        t_linear = linear_kernels.fallback_per_token_seconds(arch, bw, fp32, forwards) * tokens_per_step
        step += t_linear
        explanation.append(
            tr(
                "Gated DeltaNet layers on transformers' pure-torch fallback (no flash-linear-attention): "
                "+{ms} ms per step ({forwards} forward and 1 backward pass over {layers} layers, its fp32 "
                "ops' memory traffic at {bw} GB/s and matmuls at {fp32} TFLOPS: {source})",
                ms=num(t_linear * 1e3),
                forwards=forwards,
                layers=sum(1 for kind in arch.layer_kinds if kind == "linear"),
                bw=sig(bw, 6),
                fp32=sig(fp32, 6),
                source=gdn_fallback.SOURCE,
            )
        )
    elif t_linear > 0:
        step += t_linear
        explanation.append(
            tr(
                "Gated DeltaNet kernels: +{ms} ms per step ({forwards} forward and 1 backward pass over "
                "{layers} linear-attention layers, at flash-linear-attention's measured kernel time scaled "
                "by value heads and GPU peak: {source})",
                ms=num(t_linear * 1e3),
                forwards=forwards,
                layers=sum(1 for kind in arch.layer_kinds if kind == "linear"),
                source=linear_kernels.SOURCE,
            )
        )
    if est.workload == "qlora":
        bw = gpu_bandwidth(specs[i])
        factor = speed.gpu_factor(catalog, gpus[i], specs[i], est.backend)
        if bw is not None and factor is not None:
            passes = 2 + (1 if recompute else 0)
            t_dequant = qlora_dequant_seconds(arch, recompute, bw, factor.decode_bandwidth_efficiency)
            step += t_dequant
            explanation.append(
                tr(
                    "QLoRA dequantises the NF4 base {passes}× per step ({bytes} B per weight each): "
                    "+{ms} ms per step at {bw} GB/s (QLoRA §3)",
                    passes=passes,
                    bytes=sig(QLORA_DEQUANT_BYTES_PER_PARAM, 6),
                    ms=num(t_dequant * 1e3),
                    bw=sig(bw, 6),
                )
            )
    if placement.offload in ("optimizer", "params", "full"):
        host = speed.host_bandwidth(machine, catalog)
        trainable = arch.params_total if est.workload == "full" else est.trainable_params
        t_opt = trainable * CPU_ADAM_BYTES_PER_PARAM / host.bytes_per_s
        explanation.append(
            tr(
                "CPU AdamW: {bytes} B per trainable parameter per step at {how}",
                bytes=CPU_ADAM_BYTES_PER_PARAM,
                how=host.why,
            )
        )
        link = pcie_gbs(gpus[i], specs[i])
        if placement.offload in ("params", "full"):
            # bf16 weights stream in for the forward pass and again for the backward (and recompute);
            # bf16 gradients stream out (memory-formulas §1.6, §7.3)
            loads = 3 if placement.offload == "full" else 2  # MegaTrain: pass, recompute, backward
            t_h2d = (loads * arch.params_total * 2 + arch.params_total * 2) / (link * 1e9)
            explanation.append(
                tr(
                    "streaming bf16 weights in {loads}× and gradients out once per step over {link} GB/s",
                    loads=loads,
                    link=sig(link, 6),
                )
            )
            if t_h2d > step:
                step, bound = t_h2d, "pcie"
        if placement.offload == "full":
            # MegaTrain pipelines prefetch, compute and gradient offload (arXiv 2604.05091); its train.py
            # runs optimizer.step() on the CPU after forward_and_backward returns, inside the timed step
            explanation.append(tr("MegaTrain runs the CPU optimizer after the GPU's pass, not beside it"))
        if t_opt > step:
            bound = "cpu_optimizer"
        step += t_opt
    ranks = len(used) if placement.offload in ("optimizer", "params", "full") else 1
    if placement.offload == "none" and est.training_gpus > 1:  # sharded: the GPUs of the run step together
        ranks = len(used)
        explanation.append(tr("× {ranks} GPUs (the model states sharded over them, FSDP)", ranks=ranks))
    elif ranks > 1 and placement.offload == "full":  # MegaTrain's workers: one per GPU, one CPU step for all
        explanation.append(
            tr("× {ranks} GPUs (one MegaTrain worker each, one CPU optimizer step)", ranks=ranks)
        )
    elif ranks > 1:  # DeepSpeed data parallel: one rank per GPU, the host's CPU optimizer shared
        explanation.append(tr("× {ranks} GPUs (one DeepSpeed data-parallel rank each)", ranks=ranks))
    return Speed(None, None, ranks * tokens_per_step / step, bound, tuple(explanation))
