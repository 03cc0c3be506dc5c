"""The CPU's part: decode reading weights (or routed experts) from RAM at the host's bandwidth × the CPU
class's fitted efficiency (a share of the platform's peak; of a measured bandwidth, the share llama.cpp
reaches of it: speed.cpu_read_efficiency), and prompt processing on the CPU's cores.
"""

from __future__ import annotations

from rigcheck.core.catalog import Catalog
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.memory import MemoryEstimate
from rigcheck.core.estimate.speed.cpu_host import cpu_peak, decode_factor
from rigcheck.core.estimate.speed.prefill import memory_bound_prefill, prefill_streamed_bytes
from rigcheck.core.estimate.speed.reads import prefill_flops_per_token
from rigcheck.core.estimate.speed.result import Speed
from rigcheck.core.machine import Machine
from rigcheck.core.said import Bytes, Num, Percent, Text, say


def ram_decode_seconds(
    est: MemoryEstimate,
    machine: Machine,
    catalog: Catalog,
    *,
    cpu_read: float,
    cpu_layers: int,
    experts_only: bool,
    gpu_seconds: float,
    explanation: list[Text],
    cpu_only: bool = False,
) -> float | Speed:
    """Seconds per token reading ``cpu_read`` bytes from RAM (``experts_only``: routed experts, with every
    layer on the GPUs); or, for ktransformers without fitted CPU factors, a :class:`Speed` that says so.
    ``cpu_only`` (no GPU in the placement) with a dense model: :func:`cpu_only_decode_seconds`, by the host's
    memory class."""
    kt = est.engine == "ktransformers"
    host = speed.host_bandwidth(machine, catalog)
    if cpu_only and not kt and not est.model.arch.is_moe:
        # a dense model on the CPU alone: by the host's memory class (an MoE token's scattered experts go
        # through MUL_MAT_ID, whose share the CPU class's own row holds, fitted with the offload rows)
        return cpu_only_decode_seconds(est, machine, catalog, cpu_read=cpu_read, explanation=explanation)
    if kt:
        cpu_factor = speed.engine_cpu_factor(catalog, speed.KTRANSFORMERS)
        if cpu_factor is None:
            return Speed(explanation_said=(*explanation, say(
                "ktransformers: no fitted CPU factors (catalog/speed.toml); speed not estimated"
            )))  # fmt: skip
    else:
        cpu_factor = speed.speed_factor(catalog, speed.CPU_CLASS, "cpu")
    # ktransformers' factor is its own kernels' share of whatever figure the snapshot holds; llama.cpp's is
    # a share of the platform's peak, or of a measured bandwidth (speed.cpu_read_efficiency)
    efficiency = (
        (cpu_factor.decode_bandwidth_efficiency if cpu_factor else 1.0)
        if kt
        else speed.cpu_read_efficiency(cpu_factor, host)
    )
    cpu_s = cpu_read / (host.bytes_per_s * efficiency)
    cpu_s += cpu_layers * (cpu_factor.per_layer_us if cpu_factor else 0.0) * 1e-6
    if kt:
        template = (
            "RAM: {read} of routed experts per token, read by ktransformers' CPU kernels at {how} × "
            "{efficiency}"
        )
    elif experts_only:
        template = "RAM: {read} of routed experts read per token at {how} × {efficiency}"
    else:
        template = "RAM: {read} of weights read per token at {how} × {efficiency}"
    explanation.append(say(template, read=Bytes(cpu_read), how=host.why_said, efficiency=Percent(efficiency)))
    if cpu_s > gpu_seconds and kt:
        explanation.append(
            say(
                "decode bound by host memory bandwidth: the CPU reads every token's routed experts "
                "from RAM ({share} of the time per token)",
                share=Percent(cpu_s / (gpu_seconds + cpu_s)),
            )
        )
    return cpu_s


def cpu_prefill(
    est: MemoryEstimate,
    head: int,
    machine: Machine,
    catalog: Catalog,
    explanation: list[Text],
    *,
    speedup: float = 1.0,
) -> float | None:
    """CPU-only prompt processing: compute bound, 2 FLOPs per active layer parameter per token at the CPU
    class's share of cores × clock × FLOPs per cycle (``speed.cpu_compute``), and no faster than reading
    every weight (every expert a micro-batch touches) once per micro-batch from host memory."""
    arch = est.model.arch
    quant_id = est.quant.id if est.quant is not None else None
    compute = cpu_peak(machine, catalog, quant_id=quant_id, threads=est.threads)
    factor = speed.speed_factor(catalog, speed.CPU_CLASS, "cpu")
    if compute is None or factor is None or factor.prefill_compute_efficiency is None:
        explanation.append(
            say("prefill: CPU clock not known; not estimated")
            if compute is None
            else say("prefill: no fitted CPU prefill efficiency; not estimated")
        )
        return None
    rate = compute.flops_per_s * factor.prefill_compute_efficiency * speedup
    flops = prefill_flops_per_token(arch)
    explanation.append(
        say(
            "prefill on the CPU: {gflops} GFLOPs per token at {how} × {efficiency}",
            gflops=Num(flops / 1e9, 1),
            how=compute.why,
            efficiency=Percent(factor.prefill_compute_efficiency),
        )
    )
    compute_s = flops / rate
    streamed, ubatch, touched = prefill_streamed_bytes(est, arch, head, len(est.layer_weight_bytes), 0)
    host = speed.host_bandwidth(machine, catalog)
    read_factor, _cls = decode_factor(catalog, machine)
    memory_s = streamed / (host.bytes_per_s * speed.cpu_read_efficiency(read_factor, host)) / ubatch
    if memory_s > compute_s:
        explanation.append(memory_bound_prefill(arch.is_moe, ubatch, streamed, touched, from_ram=True))
    return 1 / max(compute_s, memory_s)


#: the memory classes (cpu_host.memory_class) in words
_CLASS_WORDS = {
    "server": say("server memory: many channels"),
    "client": say("desktop or laptop memory: one or two channels"),
    "soc": say("SoC memory: LPDDR next to the cores"),
}


def cpu_only_decode_seconds(
    est: MemoryEstimate, machine: Machine, catalog: Catalog, *, cpu_read: float, explanation: list[Text]
) -> float:
    """llama.cpp decoding on the CPU alone: the longer of reading ``cpu_read`` bytes at the host's bandwidth ×
    its memory class's share (``cpu-server``/``cpu-client``/``cpu-soc`` rows of catalog/speed.toml; of a
    measured bandwidth, speed.MEASURED_READ_SHARE) and computing 2 FLOPs per active parameter at the cores'
    peak (threads as asked, ``cpu_host.cpu_peak``) × the class's decode compute share: few threads, or small
    in-order cores, run out of arithmetic before the memory runs out of bandwidth."""
    host = speed.host_bandwidth(machine, catalog)
    factor, cls = decode_factor(catalog, machine)
    efficiency = speed.cpu_read_efficiency(factor, host)
    read_s = cpu_read / (host.bytes_per_s * efficiency)
    explanation.append(
        say(
            "RAM: {read} of weights read per token at {how} × {efficiency} ({memory})",
            read=Bytes(cpu_read),
            how=host.why_said,
            efficiency=Percent(efficiency),
            memory=_CLASS_WORDS[cls],
        )
    )
    quant_id = est.quant.id if est.quant is not None else None
    compute = cpu_peak(machine, catalog, quant_id=quant_id, threads=est.threads)
    if compute is None or factor is None:
        return read_s
    flops = 2 * est.model.arch.params_active
    compute_s = flops / (compute.flops_per_s * factor.decode_compute_efficiency)
    if compute_s > read_s:
        explanation.append(
            say(
                "decode bound by the CPU's arithmetic: {gflops} GFLOPs per token at {how} × {efficiency}",
                gflops=Num(flops / 1e9, 1),
                how=compute.why,
                efficiency=Percent(factor.decode_compute_efficiency),
            )
        )
    return max(read_s, compute_s)
