"""Routed experts: llama.cpp's tiled MUL_MAT_ID GEMM where a backend has no matrix-vector kernel for an
expert format, and ktransformers' split of the work (routed experts on the CPU, the rest on the GPU).
"""

from __future__ import annotations

from dataclasses import dataclass

from rigcheck.core.catalog import Catalog, GpuSpec, SpeedFactor
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.memory import LLAMA_CPP_UBATCH, MemoryEstimate, expert_params_per_layer
from rigcheck.core.estimate.placement.types import Placement
from rigcheck.core.estimate.speed.reads import (
    active_bytes,
    gpu_bandwidth,
    prefill_flops_per_token,
    read_ratios,
)
from rigcheck.core.machine import GPU, Machine
from rigcheck.core.said import Bytes, Num, Percent, Said, Text, say

#: ktransformers: what runs where (kvcache-ai/ktransformers doc/en/DeepseekR1_V3_tutorial.md@034a116, "Where
#: Does the Speedup Come From?": "we offload the expert computation to the CPU and MLA/KVCache to GPU"; the
#: injection rules ktransformers/optimize/optimize_rules/DeepSeek-V3-Chat.yaml@4e1359d: routed experts on
#: KExpertsCPU, attention, shared experts, gate and lm_head on "cuda", embed_tokens on "cpu"). Its CPU expert
#: kernels are its own CPUInfer operators on llamafile's sgemm, AVX2/AVX-512 by what the CPU offers
#: (doc/en/operators/llamafile.md@b244f25); its prefill speed grows with the CPU's cores (the tutorial's V0.2
#: table: 54.21 tokens/s on one 32-core socket, 82.94 on two) and with a faster CPU kernel (V0.3's AMX), so
#: the routed experts' prompt products run on the CPU too.
KTRANSFORMERS_SOURCE = "kvcache-ai/ktransformers doc/en/DeepseekR1_V3_tutorial.md@034a116"
#: tokens ktransformers prefills at a time (chunk_prefill_size, default 8192: the same tutorial, "longer
#: context"); a shorter prompt is one chunk
KTRANSFORMERS_CHUNK = 8192


def tiled_expert_seconds(
    est: MemoryEstimate,
    gpu: GPU,
    spec: GpuSpec | None,
    factor: SpeedFactor,
    expert_bytes: float,
    *,
    fp32: bool = False,
) -> tuple[float, float, Said] | None:
    """Routed experts that llama.cpp multiplies at batch 1 with its tiled MUL_MAT_ID GEMM (the kernel a prompt
    micro-batch runs) rather than a matrix-vector kernel: their bytes on this GPU, the seconds per token they
    take, and why, in words; None where the backend has a matrix-vector kernel for them
    (speed.TILED_EXPERT_DECODE).

    The tiled kernel computes whole tiles of tokens for each selected expert, so one token's expert costs
    about what that expert costs in a prompt micro-batch, where it multiplies micro-batch × k / E tokens
    (speed.moe_tokens_per_expert: 32 for Qwen3-30B-A3B at 512, within one tile). Per token, then: those
    tokens × the routed experts' FLOPs (2 per weight) at the class's prefill rate for unquantized experts
    (speed.prefill_path), never faster than reading them at the decode bandwidth.
    """
    arch = est.model.arch
    quant = est.quant
    backend = est.backend or speed.default_backend(gpu.vendor)
    if (
        not arch.is_moe
        or quant is None
        or not expert_bytes
        or not speed.tiled_expert_decode(backend, quant.id)
    ):
        return None
    found = speed.prefill_peak_tflops(spec, fp32=fp32)
    bw = gpu_bandwidth(spec)
    if found is None or bw is None or factor.prefill_compute_efficiency is None:
        return None
    # the full default micro-batch, whatever the context: the per-expert cost is the kernel's, and the
    # prefill factors it is read from are fitted on pp512 runs
    per_expert = speed.moe_tokens_per_expert(
        LLAMA_CPP_UBATCH, arch.experts_per_token or 1, arch.num_experts or 1
    )
    path = speed.prefill_path(factor, moe=True, unquantized=True, tokens_per_expert=per_expert)
    rate = found[0] * 1e12 * factor.prefill_compute_efficiency * path.factor
    flops = 2 * expert_bytes / (quant.bits_per_weight / 8)
    seconds = max(per_expert * flops / rate, expert_bytes / (bw * 1e9 * factor.decode_bandwidth_efficiency))
    why = say(
        "{read} of {quant} routed experts per token go through llama.cpp's tiled MUL_MAT_ID GEMM on "
        "{backend}, not a matrix-vector kernel ({source}): each costs what it costs in a prompt micro-batch "
        "for {tokens} tokens, {ms} ms per token at {tflops} TFLOPS",
        read=Bytes(int(expert_bytes)),
        quant=quant.name,
        backend=backend,
        source=speed.TILED_EXPERT_DECODE_SOURCE,
        tokens=Num(per_expert),
        ms=Num(seconds * 1e3, 1),
        tflops=Num(rate / 1e12, 2),
    )
    return expert_bytes, seconds, why


@dataclass(frozen=True)
class KtransformersParts:
    """ktransformers' work per token split between the GPU and the CPU (before its CPU efficiencies)."""

    #: routed-expert bytes the CPU reads per decoded token, and every routed-expert byte in RAM
    cpu_read_bytes: float
    cpu_expert_bytes: float
    host: speed.HostBandwidth
    #: 2 FLOPs per routed-expert weight × the experts a token is routed to
    cpu_flops_per_token: float
    cpu_compute: speed.CpuCompute | None
    #: prefill seconds per token of the rest (attention, shared experts, dense layers) on the GPUs, or None
    gpu_prefill_s: float | None
    gpu_flops_per_token: float
    gpu_tflops: float
    #: prompt tokens per chunk and the share of the routed experts a chunk's tokens touch
    chunk: int
    touched: float


def ktransformers_parts(
    est: MemoryEstimate, placement: Placement, machine: Machine, catalog: Catalog
) -> KtransformersParts | None:
    """The CPU and GPU shares of a ktransformers placement; None where a GPU lacks prefill factors."""
    arch = est.model.arch
    _per_layer, expert_read, _head = active_bytes(est)
    n_cpu = placement.cpu_expert_layers
    _dense, routed_share = read_ratios(arch)
    expert_params = expert_params_per_layer(arch)
    routed_params = sum(
        p * r for p, r in zip(expert_params[:n_cpu], routed_share[:n_cpu], strict=False) if r > 0
    )
    cpu_flops = 2.0 * routed_params
    gpu_flops = max(prefill_flops_per_token(arch) - cpu_flops, 0.0)
    used = [i for i, b in enumerate(placement.gpu_bytes) if b > 0]
    gpu_s: float | None = 0.0
    tflops = 0.0
    for i in used:
        spec = catalog.spec_for(machine.gpus[i])
        factor = speed.gpu_factor(catalog, machine.gpus[i], spec, est.backend)
        compute = speed.prefill_compute(spec, factor, machine.gpus[i].power_limit_watts)
        if compute is None:
            gpu_s = None
            break
        share = placement.gpu_bytes[i] / max(sum(placement.gpu_bytes), 1)
        gpu_s = (gpu_s or 0.0) + gpu_flops * share / compute.flops_per_s
        tflops += compute.flops_per_s / 1e12
    chunk = max(min(KTRANSFORMERS_CHUNK, est.context), 1)
    touched = 1.0
    if arch.num_experts and arch.experts_per_token:
        touched = 1 - (1 - min(arch.experts_per_token / arch.num_experts, 1.0)) ** chunk
    return KtransformersParts(
        cpu_read_bytes=float(sum(expert_read[:n_cpu])),
        cpu_expert_bytes=float(placement.cpu_bytes),
        host=speed.host_bandwidth(machine, catalog),
        cpu_flops_per_token=cpu_flops,
        cpu_compute=speed.cpu_compute(machine.cpu),
        gpu_prefill_s=gpu_s,
        gpu_flops_per_token=gpu_flops,
        gpu_tflops=tflops,
        chunk=chunk,
        touched=touched,
    )


def ktransformers_prefill(
    parts: KtransformersParts, catalog: Catalog, explanation: list[Text]
) -> float | None:
    """ktransformers' prompt rate: the routed experts' products on the CPU (2 FLOPs per weight × the tokens
    routed to it, at cores × clock × FLOPs per cycle × its fitted efficiency), never faster than reading the
    experts a chunk touches once from RAM, plus the rest on the GPU at the class's dense prompt rate."""
    factor = speed.engine_cpu_factor(catalog, speed.KTRANSFORMERS)
    compute = parts.cpu_compute
    if factor is None or factor.prefill_compute_efficiency is None:
        explanation.append(say("prefill: no fitted ktransformers CPU efficiency; not estimated"))
        return None
    if compute is None:
        explanation.append(say("prefill: CPU clock not known; not estimated"))
        return None
    if parts.gpu_prefill_s is None:
        explanation.append(say("prefill: compute throughput of this GPU not known; not estimated"))
        return None
    compute_s = parts.cpu_flops_per_token / (compute.flops_per_s * factor.prefill_compute_efficiency)
    streamed = parts.cpu_expert_bytes * parts.touched
    memory_s = streamed / (parts.host.bytes_per_s * factor.decode_bandwidth_efficiency) / parts.chunk
    explanation.append(
        say(
            "prefill: the routed experts' {gflops} GFLOPs per token run on the CPU at {how} × {efficiency} "
            "(ktransformers' CPU kernels); the other {gpu_gflops} GFLOPs on the GPU at {tflops} TFLOPS",
            gflops=Num(parts.cpu_flops_per_token / 1e9, 1),
            how=compute.why,
            efficiency=Percent(factor.prefill_compute_efficiency),
            gpu_gflops=Num(parts.gpu_flops_per_token / 1e9, 1),
            tflops=Num(parts.gpu_tflops),
        )
    )
    if memory_s > compute_s:
        explanation.append(
            say(
                "prefill bound by host memory: each {chunk}-token chunk reads {size} ({share} of the routed "
                "experts) from RAM once",
                chunk=parts.chunk,
                size=Bytes(int(streamed)),
                share=Percent(parts.touched),
            )
        )
    elif compute_s > parts.gpu_prefill_s:
        explanation.append(
            say(
                "prefill bound by the CPU's compute: the routed experts' matrix products run on its cores "
                "({share} of the time per token)",
                share=Percent(compute_s / (compute_s + parts.gpu_prefill_s)),
            )
        )
    return 1 / (max(compute_s, memory_s) + parts.gpu_prefill_s)
