"""Will it fit, where, and how fast: a memory estimate placed on a machine's GPUs and RAM.

Placement follows what the engines do: llama.cpp fills GPUs layer by layer and leaves the rest in RAM
(``layers``); ZeRO-Offload keeps optimizer states and the update on the CPU (``optimizer``);
MegaTrain keeps parameters, gradients and optimizer states in host RAM and streams layers through the
GPU (``full``). ``auto`` picks the least offload that fits.

Speed is a roofline: decode is bound by the bytes each token reads over each device's bandwidth;
prefill and training by FLOPs at a utilisation factor; offloaded training also by PCIe and the CPU
optimizer. Every factor names where it was calibrated.

The pieces live one idea to a module: ``placement`` (budgets, inference and training placement),
``speed`` (decode, fixed costs, prefill, experts, CPU, training), ``verdict`` (the result and its
sentences), ``advice`` and ``solvers`` (max context, best format, fewest GPUs, grid). This module is the
entry, :func:`fit`, and keeps their names importable from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from rigcheck.core.catalog import Backend, Catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate import ollama
from rigcheck.core.estimate.advice import advice_for
from rigcheck.core.estimate.exllamav3 import check_exllamav3
from rigcheck.core.estimate.memory import GIB, MemoryEstimate, Request, estimate_memory
from rigcheck.core.estimate.mlx import check_mlx, check_mlx_weights
from rigcheck.core.estimate.placement import (
    GPU_MARGIN,
    LLAMA_CPP_GPU_MARGIN_BYTES,
    MEGATRAIN_HOST_BYTES,
    VLLM_GPU_UTILIZATION,
    Budget,
    Offload,
    Placement,
    Split,
    TrainOffload,
    budgets,
    gpu_margin,
    host_reserve,
    largest_layer_params,
    place,
    place_experts,
    vllm_budget,
    zero2_offload_bytes,
    zero3_offload_bytes,
)
from rigcheck.core.estimate.placement.exllamav3 import exllamav3_budget
from rigcheck.core.estimate.placement.mlx import mlx_budget
from rigcheck.core.estimate.placement.sglang import sglang_budget
from rigcheck.core.estimate.solvers import (
    QUANT_LADDER,
    Cell,
    best_quant,
    fewest_gpus,
    grid,
    largest_context,
    max_context,
)
from rigcheck.core.estimate.speed import DEFAULT_BACKENDS, default_backend
from rigcheck.core.estimate.speed.estimate import estimate_speed
from rigcheck.core.estimate.speed.experts import (
    KTRANSFORMERS_CHUNK,
    KTRANSFORMERS_SOURCE,
    KtransformersParts,
    ktransformers_parts,
)
from rigcheck.core.estimate.speed.prefill import VULKAN_BF16_CAVEAT
from rigcheck.core.estimate.speed.reads import PCIE_GBS, prefill_flops_per_token
from rigcheck.core.estimate.speed.reads import active_bytes as _active_bytes
from rigcheck.core.estimate.speed.result import Bound, Speed
from rigcheck.core.estimate.verdict import FitResult, Verdict, placement_sentence, why_not
from rigcheck.core.machine import Machine
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.said import Bytes, Num, Text, say


def _check_ktransformers(est: MemoryEstimate, machine: Machine, offload: Offload, layers: int | None) -> None:
    """ktransformers runs mixtures of experts on a GPU with their routed experts in RAM: else one line why."""
    if not any(est.layer_expert_bytes):
        raise InputError(
            "--engine ktransformers",
            say(
                "ktransformers runs mixture-of-experts models (their routed experts on the CPU); "
                "{model} is dense",
                model=est.model.id,
            ),
        )
    if not machine.gpus:
        raise InputError(
            "--engine ktransformers",
            say("ktransformers needs a GPU for attention and the KV cache; this machine has none"),
        )
    if offload not in ("auto", "experts") or layers is not None:
        raise InputError(
            "--engine ktransformers",
            say("ktransformers keeps every layer's routed experts in RAM: use --offload auto or experts"),
        )


def running_backend(machine: Machine) -> Backend | None:
    """The backend llama.cpp runs when none is asked for: the CPU's on a machine without GPUs, the vendor's
    usual one where every GPU is one known vendor's (what the speed factors assume too), else None."""
    if not machine.gpus:
        return "cpu"
    vendors = {gpu.vendor for gpu in machine.gpus}
    vendor = vendors.pop() if len(vendors) == 1 else None
    return default_backend(vendor) if vendor in DEFAULT_BACKENDS else None


def fit(
    model: ModelInfo,
    machine: Machine,
    req: Request,
    catalog: Catalog,
    *,
    offload: Offload = "auto",
    live: bool = True,
    split: Split = "layer",
    advise: bool = True,
    cpu_expert_layers: int | None = None,
    gpu_layers: int | None = None,
    tensor_split: Sequence[float] | None = None,
) -> FitResult:
    """Place and time ``model``; ``cpu_expert_layers`` fixes N for ``offload="experts"`` (else the fewest),
    ``gpu_layers`` caps the layers on the GPUs for ``offload="layers"`` (llama.cpp ``-ngl N``),
    ``tensor_split`` sets each GPU's share of the layers (llama.cpp ``-ts``).

    Read top to bottom: the backend and the engine's own rules, what each device may hold (budget), what the
    model needs (memory), where it goes (placement), how fast (speed), and the verdict with its reasons and
    advice. Each step is one call into the module that owns it (docs/architecture.md, "Reading fit()")."""
    if req.backend is None:
        req = replace(req, backend=running_backend(machine))
    if req.engine == "ollama" and req.context is None and req.workload == "inference":
        return _ollama_fit(
            model, machine, req, catalog, offload=offload, live=live, split=split, advise=advise,
            cpu_expert_layers=cpu_expert_layers, gpu_layers=gpu_layers, tensor_split=tensor_split,
        )  # fmt: skip
    offload = _engine_offload(req, machine, offload)
    # 1. budget: what each GPU and the RAM may hold, as the engine sizes it
    budget = budgets(machine, live, req.engine if req.workload == "inference" else "transformers")
    # 2. memory: what the model needs (a framework's paged optimizer states stay on the GPU when they fit)
    est = estimate_memory(model, req, catalog, gpu_capacity=max(budget.gpu_bytes, default=0) or None)
    budget = _engine_budget(req, est, machine, budget)
    # 3. placement: where it goes
    kt = req.engine == "ktransformers" and est.workload == "inference"
    if kt:
        _check_ktransformers(est, machine, offload, cpu_expert_layers)
        # every layer's routed experts in RAM: ktransformers' injection rules send each
        # model.layers.*.mlp.experts to KExpertsCPU (generate_device "cpu"), the rest to the GPU
        placement = place_experts(est, budget, len(est.layer_weight_bytes))
    else:
        placement = place(
            est,
            budget,
            offload,
            split,
            cpu_expert_layers=cpu_expert_layers,
            gpu_layers=gpu_layers,
            tensor_split=tensor_split,
        )
    if placement is not None and placement.offload == "full" and req.framework is None:
        # streamed from RAM: the run is MegaTrain's, so name it (its placement reads no step terms)
        est = estimate_memory(model, replace(req, framework="megatrain"), catalog, gpu_capacity=None)
    # 4. speed: under auto, whichever of layer and expert offload decodes faster
    chosen: Speed | None = None
    if not kt and offload == "auto" and est.workload == "inference" and placement is not None:
        placement, chosen = _faster_offload(
            est, placement, budget=budget, machine=machine, catalog=catalog, req=req
        )
    # 5. verdict, reasons and advice
    reasons: list[Text] = list(budget.reasons_said)
    if placement is None:
        verdict: Verdict = "does_not_fit"
        reasons.insert(0, why_not(est, budget, offload))
        placement = Placement(tuple(0 for _ in budget.gpu_bytes), 0, 0, model.arch.num_layers, "none")
        speed = Speed()
    else:
        verdict = "fits" if placement.cpu_bytes == 0 and placement.offload == "none" else "fits_with_offload"
        reasons.insert(0, placement_sentence(est, placement))
        speed = chosen or estimate_speed(est, placement, machine, catalog)
    advice: tuple[Text, ...] = ()
    if advise:
        advice = tuple(
            advice_for(model, machine, req, catalog, est, verdict=verdict, placement=placement, live=live)
        )
        advice += (
            speed.build_advice_said
        )  # an older engine build: the milestones it lacks (speed/engine_build.py)
    return FitResult(verdict, placement, speed, est, budget, tuple(reasons), advice)


def _engine_offload(req: Request, machine: Machine, offload: Offload) -> Offload:
    """The engine's own limits before anything is placed: ExLlamaV3 and MLX need their GPU, and neither
    offloads layers to the CPU (``auto`` means ``none`` for them)."""
    if req.engine == "exllamav3" and req.workload == "inference":
        check_exllamav3(machine)
        # ExLlamaV3's autosplit puts every module on a GPU ("Insufficient VRAM in split" otherwise)
        return "none" if offload == "auto" else offload
    if req.engine == "mlx" and req.workload == "inference":
        check_mlx(machine)
        # MLX has no CPU offload of layers: the model is in the Metal working set or it does not run
        return "none" if offload == "auto" else offload
    return offload


def _engine_budget(req: Request, est: MemoryEstimate, machine: Machine, budget: Budget) -> Budget:
    """The budget as the inference engine sizes its pool: vLLM's and SGLang's memory fractions, MLX's
    working set, ExLlamaV3's autosplit reserve; llama.cpp's and the training frameworks' unchanged."""
    if est.workload != "inference":
        return budget
    if req.engine == "mlx":
        check_mlx_weights(est)
        return mlx_budget(budget)
    if req.engine == "vllm":
        return vllm_budget(machine, budget)
    if req.engine == "sglang":
        return sglang_budget(machine, budget)
    if req.engine == "exllamav3":
        return exllamav3_budget(machine, budget)
    return budget


def _faster_offload(
    est: MemoryEstimate,
    placement: Placement,
    *,
    budget: Budget,
    machine: Machine,
    catalog: Catalog,
    req: Request,
) -> tuple[Placement, Speed | None]:
    """Where something must go to RAM: the faster-decoding of layer and expert offload (Ollama offloads
    whole layers only: num_gpu, no --n-cpu-moe), with its speed; unchanged when nothing is offloaded."""
    if placement.offload == "none":
        return placement, None
    experts = place_experts(est, budget) if req.engine != "ollama" else None
    options = [(p, estimate_speed(est, p, machine, catalog)) for p in (placement, experts) if p]
    return max(options, key=lambda o: o[1].decode_tokens_per_s or 0.0)


def _ollama_fit(
    model: ModelInfo, machine: Machine, req: Request, catalog: Catalog, **options: Any
) -> FitResult:
    """Ollama with no context asked for: its VRAM-based default, stepped down as Ollama does when that
    does not fit."""
    context = ollama.default_context(machine, model)
    result = fit(model, machine, replace(req, context=context), catalog, **options)
    smaller = ollama.smaller_context(context)
    while result.verdict == "does_not_fit" and smaller is not None:
        context = smaller
        result = fit(model, machine, replace(req, context=context), catalog, **options)
        smaller = ollama.smaller_context(context)
    total = sum(gpu.memory_total_bytes or 0 for gpu in machine.gpus)
    why = say(
        "Ollama's default context on {vram} of GPU memory: {context} tokens ({source})",
        vram=Bytes(total),
        context=Num(context),
        source=ollama.OLLAMA_SOURCE,
    )
    return replace(result, reasons_said=(result.reasons_said[0], why, *result.reasons_said[1:]))


__all__ = [
    "GIB",
    "GPU_MARGIN",
    "KTRANSFORMERS_CHUNK",
    "KTRANSFORMERS_SOURCE",
    "LLAMA_CPP_GPU_MARGIN_BYTES",
    "MEGATRAIN_HOST_BYTES",
    "PCIE_GBS",
    "QUANT_LADDER",
    "VLLM_GPU_UTILIZATION",
    "VULKAN_BF16_CAVEAT",
    "Bound",
    "Budget",
    "Cell",
    "FitResult",
    "KtransformersParts",
    "Offload",
    "Placement",
    "Speed",
    "Split",
    "TrainOffload",
    "Verdict",
    "_active_bytes",
    "best_quant",
    "budgets",
    "estimate_speed",
    "fewest_gpus",
    "fit",
    "gpu_margin",
    "grid",
    "host_reserve",
    "ktransformers_parts",
    "largest_context",
    "largest_layer_params",
    "max_context",
    "place",
    "prefill_flops_per_token",
    "zero2_offload_bytes",
    "zero3_offload_bytes",
]
