"""A placement's speed: decode on the GPUs (``decode``) and from RAM (``cpu``), the engine's maturity for the
architecture, then prompt processing (``prefill``, ``cpu``, ``experts`` for ktransformers); or training
throughput (``training``). Every factor names where it was calibrated.
"""

from __future__ import annotations

from collections.abc import Sequence

from rigcheck.core.catalog import Catalog, GpuSpec
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.memory import MemoryEstimate
from rigcheck.core.estimate.mlx import mlx_factor_line
from rigcheck.core.estimate.placement.types import Placement
from rigcheck.core.estimate.speed.cpu import cpu_prefill, ram_decode_seconds
from rigcheck.core.estimate.speed.decode import gpu_decode_seconds
from rigcheck.core.estimate.speed.engine_build import build_correction
from rigcheck.core.estimate.speed.experts import ktransformers_parts, ktransformers_prefill
from rigcheck.core.estimate.speed.host_ops import host_fallback
from rigcheck.core.estimate.speed.prefill import gpu_prefill, prefill_maturity
from rigcheck.core.estimate.speed.reads import active_bytes, bf16_scalar_path
from rigcheck.core.estimate.speed.result import Speed
from rigcheck.core.estimate.speed.training import training_speed
from rigcheck.core.machine import Machine
from rigcheck.core.said import Percent, Text, say


def estimate_speed(est: MemoryEstimate, placement: Placement, machine: Machine, catalog: Catalog) -> Speed:
    specs = [catalog.spec_for(g) for g in machine.gpus]
    if est.workload != "inference":
        return training_speed(est, placement, machine, catalog, specs=specs, explanation=[])
    return inference_speed(est, placement, machine, catalog, specs=specs, explanation=[])


def inference_speed(
    est: MemoryEstimate,
    placement: Placement,
    machine: Machine,
    catalog: Catalog,
    *,
    specs: Sequence[GpuSpec | None],
    explanation: list[Text],
) -> Speed:
    arch = est.model.arch
    gpus = machine.gpus
    used = [i for i, b in enumerate(placement.gpu_bytes) if b > 0]
    per_layer, expert_read, head = active_bytes(est)
    n_gpu_layers = placement.gpu_layers
    cpu_expert = placement.cpu_expert_layers
    # Expert offload (llama.cpp --n-cpu-moe N): the routed experts of the first N layers are read from RAM.
    gpu_read = sum(per_layer[:n_gpu_layers]) - sum(expert_read[:cpu_expert]) + (head if used else 0)
    cpu_read = sum(per_layer[n_gpu_layers:]) + sum(expert_read[:cpu_expert]) + (0 if used else head)
    flops_per_byte = 2 * arch.params_active / max(sum(per_layer) + head, 1)
    # Ollama runs llama.cpp's kernels: llama.cpp's maturity for the architecture, times Ollama's own
    mature = speed.engine_maturity(catalog, est.engine, arch.model_type)
    # each used GPU's class × backend factors (an engine's own where it has them), once for decode and prefill
    found = {i: speed.engine_gpu_factor(catalog, gpus[i], specs[i], est.engine, est.backend) for i in used}
    gpu_factors = {i: factor for i, (factor, _own) in found.items()}
    # and whether its BF16 GEMMs run on Vulkan's FP32 scalar shaders (decode's tiled experts, prefill)
    scalar_bf16 = {i: bf16_scalar_path(est, gpus[i], specs[i], machine) for i in used}
    on_gpus = gpu_decode_seconds(
        est,
        placement,
        machine,
        specs=specs,
        gpu_factors=gpu_factors,
        scalar_bf16=scalar_bf16,
        gpu_read=gpu_read,
        expert_read=expert_read,
        flops_per_byte=flops_per_byte,
        explanation=explanation,
    )
    if isinstance(on_gpus, Speed):
        return on_gpus
    seconds, bound = on_gpus
    kt = est.engine == "ktransformers"
    if est.engine == "mlx":
        explanation.append(mlx_factor_line(gpu_factors.values()))
    if est.engine == "exllamav3":
        explanation.append(
            say(
                "ExLlamaV3: no ExLlamaV3 measurements are fitted yet, so llama.cpp's CUDA factors for this "
                "GPU stand in"
            )
        )
    if cpu_read:
        cpu_s = ram_decode_seconds(
            est,
            machine,
            catalog,
            cpu_read=cpu_read,
            cpu_layers=(len(per_layer) - n_gpu_layers) + cpu_expert,
            experts_only=bool(cpu_expert) and n_gpu_layers == len(per_layer),
            gpu_seconds=seconds,
            explanation=explanation,
            cpu_only=not used,
        )
        if isinstance(cpu_s, Speed):
            return cpu_s
        if cpu_s > seconds:
            bound = "ram_bandwidth"
        seconds += cpu_s
    if mature is not None and mature.decode_factor != 1.0:
        seconds /= mature.decode_factor
        explanation.append(
            say(
                "{engine} runs {model_type} at {share} of its usual speed ({source})",
                engine=est.engine,
                model_type=arch.model_type,
                share=Percent(mature.decode_factor),
                source=mature.source,
            )
        )
    decode = 1 / seconds if seconds > 0 else None
    if arch.is_moe:
        active_fraction = arch.params_active / arch.params_total if arch.params_total else 1.0
        explanation.append(
            say(
                "mixture of experts: {share} of the weights are read per token",
                share=Percent(active_fraction),
            )
        )

    # Prefill: 2 FLOPs per multiplying active parameter per token, at the class's share of the compute peak.
    prefill = None
    if kt:
        parts = ktransformers_parts(est, placement, machine, catalog)
        if parts is not None:
            prefill = ktransformers_prefill(parts, catalog, explanation)
    elif used:
        prefill = gpu_prefill(
            est,
            placement,
            machine,
            specs=specs,
            gpu_factors=gpu_factors,
            scalar_bf16=scalar_bf16,
            mature=mature,
            head=head,
            cpu_read=cpu_read,
            explanation=explanation,
        )
    elif cpu_read:
        speedup = mature.prefill_factor if mature is not None else 1.0
        prefill = cpu_prefill(est, head, machine, catalog, explanation, speedup=speedup)
        if prefill is not None and mature is not None and mature.prefill_factor != 1.0:
            explanation.append(prefill_maturity(est.engine, arch.model_type, mature))
    # the engine build: an older one is slower by each later kernel milestone that applies
    main = gpus[used[0]] if used else None
    backend = (est.backend or speed.default_backend(main.vendor)) if main is not None else "cpu"
    built = build_correction(est.engine, est.engine_build, arch, backend, specs[used[0]] if used else None)
    if decode is not None:
        decode /= built.decode_divisor
    if prefill is not None:
        prefill /= built.prefill_divisor
    explanation.extend(built.explanation_said)
    # an old build whose backend lacks a recurrent op: the op runs on the CPU, its state copied both ways
    if main is not None and est.engine == "llama.cpp":
        fallback = host_fallback(
            est,
            machine,
            catalog=catalog,
            gpu=main,
            spec=specs[used[0]],
            factor=gpu_factors[used[0]],
            backend=backend,
        )
        if fallback is not None:
            decode = 1 / (1 / decode + fallback.decode_s) if decode else decode
            prefill = 1 / (1 / prefill + fallback.prefill_s) if prefill else prefill
            explanation.extend(fallback.explanation_said)
    return Speed(
        decode,
        prefill,
        None,
        bound if decode else None,
        tuple(explanation),
        build_terms=built.terms,
        build_advice_said=built.advice_said,
    )
