"""Decode on the GPUs, a roofline per device: a token reads its layers' active weights and KV cache over the
device's memory bandwidth at its class's fitted efficiency, or is bound by the FLOPs those bytes carry at
its compute efficiency, whichever is slower, plus the fixed costs (``fixed``). Layer split runs the GPUs
one after another; tensor split runs them together.
"""

from __future__ import annotations

from collections.abc import Sequence

from rigcheck.core.catalog import GpuSpec, SpeedFactor
from rigcheck.core.estimate.memory import MemoryEstimate
from rigcheck.core.estimate.placement.types import Placement
from rigcheck.core.estimate.speed.bf16_decode import bf16_read_factor
from rigcheck.core.estimate.speed.dp4a import emulated_dot_seconds
from rigcheck.core.estimate.speed.experts import tiled_expert_seconds
from rigcheck.core.estimate.speed.fixed import block_layers, fixed_seconds, moe_layers_between
from rigcheck.core.estimate.speed.multigpu import (
    ALLREDUCE_SOURCES,
    ALLREDUCES_PER_LAYER,
    allreduce_seconds,
    link_between,
)
from rigcheck.core.estimate.speed.reads import gpu_bandwidth, peak_tflops
from rigcheck.core.estimate.speed.result import Bound, Speed
from rigcheck.core.estimate.speed.sycl_matvec import unreordered_read_factor
from rigcheck.core.machine import Machine
from rigcheck.core.said import Bytes, Joined, Percent, Sig, Text, say


def gpu_decode_seconds(
    est: MemoryEstimate,
    placement: Placement,
    machine: Machine,
    *,
    specs: Sequence[GpuSpec | None],
    gpu_factors: dict[int, SpeedFactor | None],
    scalar_bf16: dict[int, bool | None],
    gpu_read: float,
    expert_read: Sequence[int],
    flops_per_byte: float,
    explanation: list[Text],
) -> tuple[float, Bound] | Speed:
    """Seconds per token on the GPUs and what bounds them; or, where a GPU lacks a bandwidth or factors,
    a :class:`Speed` that says so."""
    gpus = machine.gpus
    used = [i for i, b in enumerate(placement.gpu_bytes) if b > 0]
    n_gpu_layers = placement.gpu_layers
    cpu_expert = placement.cpu_expert_layers
    bound: Bound = "memory_bandwidth"
    gpu_seconds = 0.0
    # layers with a mixture-of-experts MLP among the GPU layers (their router runs there even where
    # --n-cpu-moe keeps the experts' weights in RAM)
    moe_on_gpus = (
        moe_layers_between(est.model.arch.moe_layers, 0, n_gpu_layers) if est.model.arch.is_moe else 0
    )
    # the GPU layers as transformer layers for their fixed cost (a single-mixer block is half of one)
    mixers = est.model.arch.layer_mixers
    blocks_on_gpus = block_layers(mixers, 0, n_gpu_layers, est.model.arch.layer_kernels)
    if mixers and n_gpu_layers:
        explanation.append(
            say(
                "its {blocks} blocks each hold one mixer (Mamba-2, attention or an MLP), not attention and "
                "an MLP: for the fixed per-layer cost they count as {layers} transformer layers",
                blocks=n_gpu_layers,
                layers=Sig(blocks_on_gpus, 4),
            )
        )
    if est.model.arch.layer_kernels != 1.0 and n_gpu_layers:
        explanation.append(
            say(
                "each of its layers runs {kernels}× a plain transformer layer's kernels in llama.cpp's "
                "graph (its extra norms, biases and side branches): for the fixed per-layer cost its "
                "{blocks} layers count as {layers}",
                kernels=Sig(est.model.arch.layer_kernels, 3),
                blocks=n_gpu_layers,
                layers=Sig(blocks_on_gpus, 4),
            )
        )
    for position, i in enumerate(used):
        bw = gpu_bandwidth(specs[i])
        factor = gpu_factors[i]
        if bw is None or factor is None:
            template = (
                "GPU {index} ({name}): memory bandwidth unknown (not in the catalog)"
                if bw is None
                else "GPU {index} ({name}): no speed factors"
            )
            return Speed(explanation_said=(say(template, index=i, name=gpus[i].name),))
        if placement.split == "tensor":
            share, layers_here, moe_here = 1 / len(used), n_gpu_layers, moe_on_gpus
            fixed_layers = blocks_on_gpus
        else:
            share = placement.gpu_bytes[i] / max(sum(placement.gpu_bytes), 1)
            layers_here = round(n_gpu_layers * share)
            moe_here = round(moe_on_gpus * share)
            fixed_layers = blocks_on_gpus * layers_here / max(n_gpu_layers, 1)
        read = gpu_read * share
        memory_s = read / (bw * 1e9 * factor.decode_bandwidth_efficiency)
        slow_bf16 = bf16_read_factor(factor, est.quant.id if est.quant else None)
        if slow_bf16 is not None:
            memory_s /= slow_bf16[0]
            explanation.append(say("GPU {index}: {why}", index=i, why=slow_bf16[1]))
        unreordered = unreordered_read_factor(
            factor,
            specs[i],
            est.quant.id if est.quant else None,
            est.engine_build,
            moe=est.model.arch.is_moe,
        )
        if unreordered is not None:
            memory_s /= unreordered[0]
            explanation.append(say("GPU {index}: {why}", index=i, why=unreordered[1]))
        tiled = tiled_expert_seconds(
            est,
            gpus[i],
            specs[i],
            factor,
            sum(expert_read[cpu_expert:n_gpu_layers]) * share,
            fp32=scalar_bf16[i] is True,
        )
        tiled_bound = False
        if tiled is not None:
            expert_bytes, expert_s, _why = tiled
            streamed_s = expert_bytes / (bw * 1e9 * factor.decode_bandwidth_efficiency)
            memory_s += expert_s - streamed_s
            tiled_bound = expert_s > streamed_s  # the GEMM's arithmetic, not the reads, sets the pace
        peak = peak_tflops(specs[i])
        compute_s = read * flops_per_byte / (peak * 1e12 * factor.decode_compute_efficiency) if peak else 0.0
        quantized = est.quant is None or est.quant.kind != "float"
        emulated = emulated_dot_seconds(specs[i], factor, read * flops_per_byte, quantized=quantized)
        if emulated is not None and emulated[0] > compute_s:
            compute_s = emulated[0]
            explanation.append(say("GPU {index}: {why}", index=i, why=emulated[1]))
        fixed_s = fixed_seconds(
            fixed_layers, factor, hand_off=position > 0 and placement.split != "tensor", moe_layers=moe_here
        )
        device_s = max(memory_s, compute_s) + fixed_s
        if compute_s > memory_s or tiled_bound:
            bound = "compute"
        gpu_seconds = max(gpu_seconds, device_s) if placement.split == "tensor" else gpu_seconds + device_s
        line: Text = say(
            "GPU {index}: {read} read per token at {bw} GB/s × {efficiency} ({hw_class}, {backend}) "
            "+ {layers} layers × {per_layer} µs fixed per token",
            index=i,
            read=Bytes(read),
            bw=Sig(bw, 6),
            efficiency=Percent(factor.decode_bandwidth_efficiency),
            hw_class=factor.hw_class,
            backend=factor.backend,
            layers=Sig(fixed_layers, 4) if mixers else layers_here,
            per_layer=Sig(factor.per_layer_us, 6),
        )
        if factor.moe_layer_us and moe_here:
            line = Joined(
                "",
                (
                    line,
                    say(
                        " + {layers} mixture-of-experts layers × {per_layer} µs more (router, top-k and "
                        "expert-sum kernels)",
                        layers=moe_here,
                        per_layer=Sig(factor.moe_layer_us, 6),
                    ),
                ),
            )
        if factor.per_gpu_us and position and placement.split != "tensor":
            line = Joined("", (line, say(" + {us} µs per GPU", us=Sig(factor.per_gpu_us, 6))))
        explanation.append(line)
        if tiled is not None:
            explanation.append(say("GPU {index}: {why}", index=i, why=tiled[2]))
    if placement.split == "tensor" and len(used) > 1:
        link = link_between([gpus[i] for i in used], [specs[i] for i in used])
        reduce_s = allreduce_seconds(n_gpu_layers, link, len(used))
        if reduce_s is None:
            explanation.append(
                say(
                    "tensor parallel over {count} GPUs: no measured all-reduce latency for this link; "
                    "its cost is not counted",
                    count=len(used),
                )
            )
        else:
            gpu_seconds += reduce_s
            explanation.append(
                say(
                    "tensor parallel over {count} GPUs ({link}): {reductions} all-reduces per token at "
                    "{us} µs each ({source})",
                    count=len(used),
                    link=link,
                    reductions=n_gpu_layers * ALLREDUCES_PER_LAYER,
                    us=Sig(reduce_s / (n_gpu_layers * ALLREDUCES_PER_LAYER) * 1e6, 3),
                    source=ALLREDUCE_SOURCES[link],
                )
            )
    return gpu_seconds, bound
