"""Will it fit, where, and how fast: a memory estimate placed on a machine's GPUs and RAM.

Placement follows what the engines do: llama.cpp fills GPUs layer by layer and leaves the rest in RAM
(``layers``); ZeRO-Offload keeps optimizer states and the update on the CPU (``optimizer``);
MegaTrain keeps parameters, gradients and optimizer states in host RAM and streams layers through the
GPU (``full``). ``auto`` picks the least offload that fits.

Speed is a roofline: decode is bound by the bytes each token reads over each device's bandwidth;
prefill and training by FLOPs at a utilisation factor; offloaded training also by PCIe and the CPU
optimizer. Every factor names where it was calibrated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from rigcheck.core.catalog import Catalog, GpuSpec, Maturity, SpeedFactor
from rigcheck.core.errors import InputError
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.memory import (
    GIB,
    LLAMA_CPP_UBATCH,
    Engine,
    MemoryEstimate,
    Request,
    estimate_memory,
    expert_params_per_layer,
)
from rigcheck.core.i18n import num, percent, sig, tr
from rigcheck.core.machine import GPU, Machine
from rigcheck.core.models.spec import ArchConfig, ModelInfo
from rigcheck.core.unified import unified_share
from rigcheck.core.units import fmt_bytes
from rigcheck.core.whatif import simulate

Offload = Literal["auto", "none", "layers", "experts", "optimizer", "params", "full"]
Verdict = Literal["fits", "fits_with_offload", "does_not_fit"]
Bound = Literal["memory_bandwidth", "compute", "pcie", "ram_bandwidth", "cpu_optimizer"]
Split = Literal["layer", "tensor"]

#: fraction of each GPU's capacity kept free for fragmentation and other processes (shown to users)
GPU_MARGIN = 0.05
#: llama.cpp allocates its weights, KV cache and compute buffers once, at load, so there is no
#: allocator slack to leave room for: it keeps only this much for the display and the driver, at most
#: (our judgement; it lets gpt-oss-20b fit a 12 GB card, where it is measured running entirely on the GPU)
LLAMA_CPP_GPU_MARGIN_BYTES = 256 * 1024**2
#: Inference speed factors (bandwidth and compute efficiency, fixed per-layer cost) are catalog data:
#: catalog/speed.toml, per hardware class and backend (core/estimate/speed.py).
#: effective CPU memory bandwidth for the CPU optimizer of offloaded training: a desktop DDR5 system
#: ran a 7B Q4 model at 12.6–18.3 tokens/s on the CPU (llama.cpp issue #34), i.e. ~50 GB/s
CPU_BANDWIDTH_GBS = 50.0
#: utilisation of peak dense tensor FLOPs in training (Llama 3 405B on H100 reached 38–43% of dense
#: BF16, glennklockwood.com SC'24 table); MegaTrain measured 26–28% on one H100
TRAIN_MFU = 0.4
MEGATRAIN_MFU = 0.27
#: PCIe bandwidth per direction actually achieved, GB/s: Gen4 x16 DMA measured ~26 (MegaTrain
#: summary thread); Gen5 taken as twice that; Gen3 half (memory-formulas §1.6, §2.9)
PCIE_GBS = {3: 13.0, 4: 26.0, 5: 52.0, 6: 104.0}
#: CPU Adam touches ~28 bytes per parameter per step (memory-formulas §1.6, derived)
CPU_ADAM_BYTES_PER_PARAM = 28
#: MegaTrain host state per parameter, calibrated to its published run: Qwen2.5-32B (32.8B parameters)
#: took ~327 GB of host memory on one H100 (MegaTrain README@2a9f977 "Performance" table) = ~10 B/param,
#: i.e. bf16 parameters (2) + fp32 Adam m and v (8, DeepSpeedCPUAdam's fp32_optimizer_states). Its
#: calc_resource.py documents 12 (an fp32 master copy), which overshoots that run by 24%.
MEGATRAIN_HOST_BYTES = 10
MEGATRAIN_GRAD_SLABS = 12
MEGATRAIN_CHECKPOINT_INTERVAL = 4
#: activation bytes per hidden unit × token × checkpoint interval. calc_resource.py's 29 sizes the largest
#: batch of Qwen2.5-7B that fits 80 GB; the README's measured Qwen2.5-32B run (batch 96 × 1024 tokens,
#: ~40 GB of GPU memory) gives 15 once the fixed buffers are counted (memory-formulas §1.4)
MEGATRAIN_ACTIVATION_FACTOR = 15
#: CUDA context MegaTrain budgets (calc_resource.py CUDA_CONTEXT_GB)
MEGATRAIN_CUDA_CONTEXT = 2 * 10**9
#: DeepSpeed's estimators keep 50% headroom on their CPU figures (additional_buffer_factor=1.5)
DEEPSPEED_BUFFER = 1.5
#: QLoRA dequantises the 4-bit base weights to bf16 for every matmul, in the forward pass, in the backward
#: pass (for the input gradients) and again when recomputing (QLoRA arXiv 2305.14314 §3: "we dequantize
#: the storage data type to the computation data type to perform the forward and backward pass"): each
#: pass reads 0.5 B and writes 2 B per weight, and the matmul reads the 2 B copy back, which LoRA reads anyway
QLORA_DEQUANT_BYTES_PER_PARAM = 0.5 + 2


@dataclass(frozen=True)
class Placement:
    gpu_bytes: tuple[int, ...]
    cpu_bytes: int
    gpu_layers: int
    total_layers: int
    offload: Literal["none", "layers", "experts", "optimizer", "params", "full"]
    split: Split = "layer"
    #: layers whose routed experts live in RAM (llama.cpp --n-cpu-moe N)
    cpu_expert_layers: int = 0


@dataclass(frozen=True)
class Speed:
    decode_tokens_per_s: float | None = None
    prefill_tokens_per_s: float | None = None
    train_tokens_per_s: float | None = None
    bound_by: Bound | None = None
    #: how each figure was worked out, in words
    explanation: tuple[str, ...] = ()
    #: with measurements (``fit --measured``): the estimates they replaced, and where they came from
    estimated_decode_tokens_per_s: float | None = None
    estimated_prefill_tokens_per_s: float | None = None
    measured_from: str | None = None


@dataclass(frozen=True)
class Budget:
    """What each device may use: bytes and why."""

    gpu_bytes: tuple[int, ...]
    cpu_bytes: int
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class FitResult:
    verdict: Verdict
    placement: Placement
    speed: Speed
    estimate: MemoryEstimate
    budget: Budget
    reasons: tuple[str, ...]
    advice: tuple[str, ...] = ()


# -- budgets --------------------------------------------------------------------------------------


def host_reserve(total: int) -> int:
    """RAM left for the OS and desktop: 10% of RAM, at least 2 GiB and at most 16 GiB."""
    return min(max(total // 10, 2 * GIB), 16 * GIB)


def gpu_margin(total: int, engine: Engine = "llama.cpp") -> int:
    margin = int(total * GPU_MARGIN)
    return min(margin, LLAMA_CPP_GPU_MARGIN_BYTES) if engine == "llama.cpp" else margin


def budgets(machine: Machine, live: bool, engine: Engine = "llama.cpp") -> Budget:
    reasons: list[str] = []
    gpu_bytes: list[int] = []
    total_ram = machine.memory.total_bytes
    from_ram = 0  # what unified GPUs take out of the RAM the OS reports
    for gpu in machine.gpus:
        label = f"GPU {gpu.index} ({gpu.name})"
        share = unified_share(gpu, total_ram, name=label)
        total = share.bytes if share is not None else gpu.memory_total_bytes
        if total is None:
            gpu_bytes.append(0)
            reasons.append(tr("{label}: memory size unknown, not used", label=label))
            continue
        margin = gpu_margin(total, engine)
        if share is not None:
            usable = total - margin
            reasons.append(
                tr(
                    "{reason}; less a {margin} safety margin = {usable}",
                    reason=share.reason,
                    margin=fmt_bytes(margin),
                    usable=fmt_bytes(usable),
                )
            )
            from_ram += max(usable - (share.bytes - share.from_ram), 0)  # a carve-out is not in RAM
        elif live and gpu.memory_free_bytes is not None and not gpu.unified_memory:
            usable = gpu.memory_free_bytes - margin
            reasons.append(
                tr(
                    "{label}: {free} free of {total}, less a {margin} safety margin = {usable}",
                    label=label,
                    free=fmt_bytes(gpu.memory_free_bytes),
                    total=fmt_bytes(total),
                    margin=fmt_bytes(margin),
                    usable=fmt_bytes(usable),
                )
            )
        else:
            usable = total - margin
            template = (
                "{label}: {total} GPU share of unified memory, less a {margin} safety margin = {usable}"
                if gpu.unified_memory
                else "{label}: {total} capacity, less a {margin} safety margin = {usable}"
            )
            reasons.append(
                tr(
                    template,
                    label=label,
                    total=fmt_bytes(total),
                    margin=fmt_bytes(margin),
                    usable=fmt_bytes(usable),
                )
            )
            if gpu.unified_memory:
                from_ram += max(usable, 0)
        gpu_bytes.append(max(usable, 0))
    reserve = host_reserve(total_ram)
    ram = total_ram - reserve
    if live and machine.memory.available_bytes is not None:
        ram = min(ram, machine.memory.available_bytes)
        reasons.append(
            tr(
                "RAM: {available} available of {total}, keeping {reserve} for the system = {ram}",
                available=fmt_bytes(machine.memory.available_bytes),
                total=fmt_bytes(total_ram),
                reserve=fmt_bytes(reserve),
                ram=fmt_bytes(ram),
            )
        )
    else:
        reasons.append(
            tr(
                "RAM: {total}, keeping {reserve} for the system = {ram}",
                total=fmt_bytes(total_ram),
                reserve=fmt_bytes(reserve),
                ram=fmt_bytes(ram),
            )
        )
    if from_ram:
        ram = max(ram - from_ram, 0)
        reasons.append(
            tr(
                "unified memory: the {gpu} the GPU may use comes out of the same RAM, leaving "
                "{ram} for the CPU side",
                gpu=fmt_bytes(from_ram),
                ram=fmt_bytes(ram),
            )
        )
    return Budget(tuple(gpu_bytes), max(ram, 0), tuple(reasons))


# -- placement ------------------------------------------------------------------------------------


def _runtime_bytes(est: MemoryEstimate) -> int:
    return est.total("activations") + est.total("overhead")


def _place_inference(
    est: MemoryEstimate,
    budget: Budget,
    offload: Literal["none", "layers"],
    split: Split,
    *,
    cpu_experts: int = 0,
    max_layers: int | None = None,
) -> Placement | None:
    """Layers on GPUs in order while they fit, the rest in RAM (when ``layers``); None if it cannot.

    With ``cpu_experts`` N, the routed experts of the first N layers stay in RAM (llama.cpp
    ``--n-cpu-moe N``): those layers take only their attention, shared weights and KV on the GPU.
    """
    expert = est.layer_expert_bytes or (0,) * len(est.layer_weight_bytes)
    layers = [
        w + k - (e if i < cpu_experts else 0)
        for i, (w, k, e) in enumerate(zip(est.layer_weight_bytes, _layer_kv(est), expert, strict=True))
    ]
    other = est.other_weight_bytes
    runtime = _runtime_bytes(est)
    n_gpu = len([b for b in budget.gpu_bytes if b > 0])
    total_layers = len(layers)
    if n_gpu and split == "tensor" and n_gpu > 1:
        share = (sum(layers) + other) // n_gpu + runtime
        gpus = tuple(share if b > 0 else 0 for b in budget.gpu_bytes)
        if all(share <= b for b in budget.gpu_bytes if b > 0):
            return Placement(gpus, 0, total_layers, total_layers, "none", "tensor")
        return None
    used = [0] * len(budget.gpu_bytes)
    placed = 0
    gpu_order = [i for i, b in enumerate(budget.gpu_bytes) if b > 0]
    for position, i in enumerate(gpu_order):
        if placed == total_layers:
            break  # the rest of the GPUs stay idle: no buffers are allocated on them
        fixed = runtime + (other if position == 0 else 0)
        if fixed > budget.gpu_bytes[i]:
            continue
        used[i] = fixed
        limit = total_layers if max_layers is None else min(max_layers, total_layers)
        while placed < limit and used[i] + layers[placed] <= budget.gpu_bytes[i]:
            used[i] += layers[placed]
            placed += 1
    if placed == total_layers and gpu_order:
        if cpu_experts:
            in_ram = sum(expert[:cpu_experts])
            if in_ram > budget.cpu_bytes:
                return None
            return Placement(tuple(used), in_ram, placed, total_layers, "experts", "layer", cpu_experts)
        return Placement(tuple(used), 0, placed, total_layers, "none", "layer")
    if offload == "none" or cpu_experts:
        return None
    cpu = sum(layers[placed:])
    if placed == 0:
        used = [0] * len(budget.gpu_bytes)
        cpu += other + runtime
    if cpu > budget.cpu_bytes:
        return None
    return Placement(tuple(used), cpu, placed, total_layers, "layers" if gpu_order else "none", "layer")


def _layer_kv(est: MemoryEstimate) -> tuple[int, ...]:
    return est.layer_kv_bytes or tuple(0 for _ in est.layer_weight_bytes)


def zero2_offload_bytes(params: int, gpus: int = 1) -> tuple[int, int]:
    """(CPU, GPU) bytes of DeepSpeed's estimate_zero2_model_states_mem_needs(cpu_offload=True)."""
    return int(params * max(4 * gpus, 16) * DEEPSPEED_BUFFER), 2 * params


def zero3_offload_bytes(params: int, largest_layer: int, nodes: int = 1) -> tuple[int, int]:
    """(CPU, GPU) bytes of DeepSpeed's estimate_zero3_model_states_mem_needs(cpu_offload=True,
    cpu_offload_params=True, zero_init=True): 18 bytes per parameter × 1.5 per node, 4 × the largest layer."""
    return int(params * 18 / nodes * DEEPSPEED_BUFFER), 4 * largest_layer


def largest_layer_params(arch: ArchConfig) -> int:
    """DeepSpeed's ``largest_layer_params``: the largest single module (embedding, head or a linear)."""
    linear = arch.hidden_size * (arch.intermediate_size or 4 * arch.hidden_size)
    return max(arch.embed_params, arch.head_params, linear)


TrainOffload = Literal["none", "optimizer", "params", "full"]


def _place_training(est: MemoryEstimate, budget: Budget, offload: TrainOffload) -> Placement | None:
    arch = est.model.arch
    params = arch.params_total
    n_layers = arch.num_layers
    best = max(range(len(budget.gpu_bytes)), key=lambda i: budget.gpu_bytes[i], default=None)
    if best is None or budget.gpu_bytes[best] <= 0:
        return None
    gpu_budget = budget.gpu_bytes[best]

    def on(gpu_bytes: int, cpu_bytes: int, mode: TrainOffload, layers: int) -> Placement | None:
        if gpu_bytes > gpu_budget or cpu_bytes > budget.cpu_bytes:
            return None
        per_gpu = tuple(gpu_bytes if i == best else 0 for i in range(len(budget.gpu_bytes)))
        return Placement(per_gpu, cpu_bytes, layers, n_layers, mode)

    if offload == "none":
        return on(est.total_bytes, 0, "none", n_layers)
    runtime = est.total("activations") + est.total("overhead")
    if est.workload != "full":
        # LoRA/QLoRA: DeepSpeed offloads what is trainable (the adapters); ZeRO-3 also the frozen base.
        trainable = est.total("gradients") // 2  # adapter gradients are 2 bytes per trainable parameter
        if offload == "optimizer":  # estimate_zero2_model_states_mem_needs(cpu_offload=True) on the adapters
            gpu = est.total_bytes - est.total("gradients") - est.total("optimizer")
            return on(gpu, zero2_offload_bytes(trainable)[0], "optimizer", n_layers)
        if offload == "params":  # ZeRO-3: the frozen base weights stream from RAM as well
            cpu, gpu = zero3_offload_bytes(trainable, largest_layer_params(arch))
            return on(gpu + runtime, cpu + est.total("weights"), "params", 0)
        return None  # MegaTrain-style streaming is full fine-tuning (see _why_not)
    if offload == "optimizer":
        cpu, gpu = zero2_offload_bytes(params)
        return on(gpu + runtime, cpu, "optimizer", n_layers)
    if offload == "params":
        cpu, gpu = zero3_offload_bytes(params, largest_layer_params(arch))
        return on(gpu + runtime, cpu, "params", 0)
    # MegaTrain: host keeps the parameters and Adam states; the GPU holds two bf16 layer buffers, the
    # embedding/head slabs in fp32, a CUDA context and the activations of K checkpointed layers.
    largest = max(arch.layer_params) if arch.layer_params else params // max(n_layers, 1)
    hybrid = 2.5 if "linear" in arch.layer_kinds else 1.0
    acts = int(
        arch.hidden_size
        * est.context
        * MEGATRAIN_CHECKPOINT_INTERVAL
        * MEGATRAIN_ACTIVATION_FACTOR
        * est.batch
        * hybrid
    )
    gpu = (
        MEGATRAIN_CUDA_CONTEXT + 2 * largest * 2 + 2 * (arch.embed_params + arch.head_params) * 4 // 2 + acts
    )
    host = MEGATRAIN_HOST_BYTES * params + (2 + MEGATRAIN_GRAD_SLABS) * largest * 2
    return on(gpu, host, "full", 0)


def _place_experts(est: MemoryEstimate, budget: Budget, layers: int | None = None) -> Placement | None:
    """Expert offload: the fewest layers' routed experts in RAM that lets everything else fit the GPUs
    (or exactly ``layers`` of them, as ``--n-cpu-moe N`` asks)."""
    expert = est.layer_expert_bytes
    if not any(expert) or not any(budget.gpu_bytes):
        return None
    if layers is not None:
        return _place_inference(est, budget, "none", "layer", cpu_experts=min(max(layers, 1), len(expert)))
    moe_layers = [i for i, e in enumerate(expert) if e]
    low, high = 1, moe_layers[-1] + 1
    if _place_inference(est, budget, "none", "layer", cpu_experts=high) is None:
        return None
    while low < high:  # more layers' experts in RAM never needs more GPU memory: bisect
        mid = (low + high) // 2
        if _place_inference(est, budget, "none", "layer", cpu_experts=mid) is not None:
            high = mid
        else:
            low = mid + 1
    return _place_inference(est, budget, "none", "layer", cpu_experts=low)


def place(
    est: MemoryEstimate,
    budget: Budget,
    offload: Offload,
    split: Split = "layer",
    *,
    cpu_expert_layers: int | None = None,
    gpu_layers: int | None = None,
) -> Placement | None:
    """Where it goes. With ``auto`` this is the least offload that fits; :func:`fit` compares speeds.

    ``gpu_layers`` caps the layers on the GPUs for ``layers`` (llama.cpp ``-ngl N``)."""
    if est.workload == "inference":
        if offload == "experts":
            return _place_experts(est, budget, cpu_expert_layers)
        if offload == "layers" and gpu_layers is not None:
            return _place_inference(est, budget, "layers", split, max_layers=gpu_layers)
        modes: Sequence[Literal["none", "layers"]] = ("none", "layers") if offload == "auto" else (offload,)  # type: ignore[assignment]
        for mode in modes:
            if mode not in ("none", "layers"):
                return None
            placement = _place_inference(est, budget, mode, split)
            if placement is not None:
                return placement
        return None
    # auto: LoRA/QLoRA keep everything on the GPU (their trainable part is tiny); full fine-tuning tries
    # ZeRO-Offload, then MegaTrain. ZeRO-3 (params) only when asked for: MegaTrain needs less RAM.
    auto: tuple[TrainOffload, ...] = ("none", "optimizer", "full") if est.workload == "full" else ("none",)
    train_modes: Sequence[TrainOffload] = auto if offload == "auto" else (offload,)  # type: ignore[assignment]
    for train_mode in train_modes:
        if train_mode not in ("none", "optimizer", "params", "full"):
            return None
        placement = _place_training(est, budget, train_mode)
        if placement is not None:
            return placement
    return None


# -- speed ----------------------------------------------------------------------------------------


def _pcie_gbs(gpu: GPU, spec: GpuSpec | None) -> float:
    gen = gpu.pcie_max_gen or (spec.pcie_gen if spec else None) or 4
    return PCIE_GBS.get(gen, 26.0)


def estimate_speed(est: MemoryEstimate, placement: Placement, machine: Machine, catalog: Catalog) -> Speed:
    explanation: list[str] = []
    gpus = machine.gpus
    specs = [catalog.spec_for(g) for g in gpus]
    if est.workload != "inference":
        return _training_speed(est, placement, machine, catalog, specs=specs, explanation=explanation)
    return _inference_speed(est, placement, machine, catalog, specs=specs, explanation=explanation)


#: per-architecture read ratios, keyed by id() with the arch kept to guard against id reuse: the matrix
#: (grid) asks for the same architecture once per format, and hashing a frozen ArchConfig costs more
_RATIOS: dict[int, tuple[ArchConfig, tuple[float, ...], tuple[float, ...]]] = {}


def _read_ratios(arch: ArchConfig) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Per layer: the share of its weights a token reads (dense), and of its routed experts (MoE; -1
    for a layer without routed experts)."""
    cached = _RATIOS.get(id(arch))
    if cached is not None and cached[0] is arch:
        return cached[1], cached[2]
    n = arch.num_layers
    active_params = arch.layer_active_params or (0,) * n
    params = arch.layer_params or (0,) * n
    expert_params = expert_params_per_layer(arch) if arch.is_moe else (0,) * n
    dense = tuple(la / lp if lp else 1.0 for la, lp in zip(active_params, params, strict=True))
    routed = tuple(
        min(max(la - (lp - ep), 0) / ep, 1.0) if ep else -1.0
        for la, lp, ep in zip(active_params, params, expert_params, strict=True)
    )
    if len(_RATIOS) > 256:
        _RATIOS.clear()
    _RATIOS[id(arch)] = (arch, dense, routed)
    return dense, routed


def _active_bytes(est: MemoryEstimate) -> tuple[list[int], list[int], int]:
    """Bytes a token reads in each layer (active weights + KV), the routed-expert part of it, and the head."""
    arch = est.model.arch
    dense, routed_share = _read_ratios(arch)
    kv = _layer_kv(est)
    if est.layer_expert_bytes:
        expert_read = [
            int(e * r) if r > 0 else 0 for e, r in zip(est.layer_expert_bytes, routed_share, strict=True)
        ]
        per_layer = [
            (w - e + x + k) if e and r >= 0 else int(w * d) + k
            for w, k, e, x, r, d in zip(
                est.layer_weight_bytes,
                kv,
                est.layer_expert_bytes,
                expert_read,
                routed_share,
                dense,
                strict=True,
            )
        ]
    else:
        expert_read = [0] * len(est.layer_weight_bytes)
        per_layer = [int(w * d) + k for w, k, d in zip(est.layer_weight_bytes, kv, dense, strict=True)]
    if est.host_weight_bytes:  # the input embedding is already out: what is left is the head
        head = est.other_weight_bytes
    else:  # the input embedding is a row lookup; only the head is read whole
        head = int(est.other_weight_bytes * (arch.head_params / max(arch.embed_params + arch.head_params, 1)))
    return per_layer, expert_read, head


def _peak_tflops(spec: GpuSpec | None) -> float | None:
    """Tensor (bf16/fp16) throughput, else fp32: the compute peak the factors are fitted against."""
    if spec is None:
        return None
    return spec.bf16_tflops or spec.fp16_tflops or spec.fp32_tflops


def _memory_bound_prefill(moe: bool, ubatch: int, streamed: float, touched: float, *, from_ram: bool) -> str:
    """Why prefill is bound by memory: each micro-batch reads the weights (or the routed experts) once."""
    size = fmt_bytes(int(streamed))
    if moe and from_ram:
        return tr(
            "prefill bound by memory: each {ubatch}-token micro-batch reads {size} "
            "({share} of the routed experts) from RAM once",
            ubatch=ubatch, size=size, share=percent(touched),
        )  # fmt: skip
    if moe:
        return tr(
            "prefill bound by memory: each {ubatch}-token micro-batch reads {size} "
            "({share} of the routed experts) once",
            ubatch=ubatch, size=size, share=percent(touched),
        )  # fmt: skip
    if from_ram:
        return tr(
            "prefill bound by memory: each {ubatch}-token micro-batch reads {size} (the "
            "weights) from RAM once",
            ubatch=ubatch, size=size,
        )  # fmt: skip
    return tr(
        "prefill bound by memory: each {ubatch}-token micro-batch reads {size} (the weights) once",
        ubatch=ubatch, size=size,
    )  # fmt: skip


def _inference_speed(
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
    per_layer, expert_read, head = _active_bytes(est)
    n_gpu_layers = placement.gpu_layers
    cpu_expert = placement.cpu_expert_layers
    # Expert offload (llama.cpp --n-cpu-moe N): the routed experts of the first N layers are read from RAM.
    gpu_read = sum(per_layer[:n_gpu_layers]) - sum(expert_read[:cpu_expert]) + (head if used else 0)
    cpu_read = sum(per_layer[n_gpu_layers:]) + sum(expert_read[:cpu_expert]) + (0 if used else head)
    flops_per_byte = 2 * arch.params_active / max(sum(per_layer) + head, 1)
    mature = speed.maturity(catalog, est.engine, arch.model_type)
    # each used GPU's class × backend factors, looked up once for decode and prefill
    factors = {i: speed.gpu_factor(catalog, gpus[i], specs[i], est.backend) for i in used}
    # and whether its BF16 GEMMs run on Vulkan's FP32 scalar shaders (decode's tiled experts, prefill)
    scalar_bf16 = {i: _bf16_on_scalar_shaders(est, gpus[i], machine) for i in used}
    seconds = 0.0
    bound: Bound = "memory_bandwidth"
    gpu_seconds = 0.0
    for position, i in enumerate(used):
        bw = _bandwidth(specs[i])
        factor = factors[i]
        if bw is None or factor is None:
            template = (
                "GPU {index} ({name}): memory bandwidth unknown (not in the catalog)"
                if bw is None
                else "GPU {index} ({name}): no speed factors"
            )
            return Speed(explanation=(tr(template, index=i, name=gpus[i].name),))
        if placement.split == "tensor":
            share, layers_here = 1 / len(used), n_gpu_layers
        else:
            share = placement.gpu_bytes[i] / max(sum(placement.gpu_bytes), 1)
            layers_here = round(n_gpu_layers * share)
        read = gpu_read * share
        memory_s = read / (bw * 1e9 * factor.decode_bandwidth_efficiency)
        tiled = _tiled_expert_seconds(
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
        peak = _peak_tflops(specs[i])
        compute_s = read * flops_per_byte / (peak * 1e12 * factor.decode_compute_efficiency) if peak else 0.0
        fixed_s = (layers_here * factor.per_layer_us + factor.per_gpu_us) * 1e-6
        device_s = max(memory_s, compute_s) + fixed_s
        if compute_s > memory_s or tiled_bound:
            bound = "compute"
        gpu_seconds = max(gpu_seconds, device_s) if placement.split == "tensor" else gpu_seconds + device_s
        explanation.append(
            tr(
                "GPU {index}: {read} read per token at {bw} GB/s × {efficiency} ({hw_class}, {backend}) "
                "+ {layers} layers × {per_layer} µs fixed per token",
                index=i,
                read=fmt_bytes(read),
                bw=sig(bw, 6),
                efficiency=percent(factor.decode_bandwidth_efficiency),
                hw_class=factor.hw_class,
                backend=factor.backend,
                layers=layers_here,
                per_layer=sig(factor.per_layer_us, 6),
            )
            + (
                tr(" + {us} µs per GPU", us=sig(factor.per_gpu_us, 6))
                if factor.per_gpu_us and position
                else ""
            )
        )
        if tiled is not None:
            explanation.append(tr("GPU {index}: {why}", index=i, why=tiled[2]))
    seconds += gpu_seconds
    kt = est.engine == "ktransformers"
    if cpu_read:
        host = speed.host_bandwidth(machine, catalog)
        if kt:
            cpu_factor = speed.engine_cpu_factor(catalog, speed.KTRANSFORMERS)
            if cpu_factor is None:
                return Speed(explanation=(*explanation, tr(
                    "ktransformers: no fitted CPU factors (catalog/speed.toml); speed not estimated"
                )))  # fmt: skip
        else:
            cpu_factor = speed.speed_factor(catalog, speed.CPU_CLASS, "cpu")
        efficiency = cpu_factor.decode_bandwidth_efficiency if cpu_factor else 1.0
        cpu_layers = (len(per_layer) - n_gpu_layers) + cpu_expert
        cpu_s = cpu_read / (host.bytes_per_s * efficiency)
        cpu_s += cpu_layers * (cpu_factor.per_layer_us if cpu_factor else 0.0) * 1e-6
        if kt:
            template = (
                "RAM: {read} of routed experts per token, read by ktransformers' CPU kernels at {how} × "
                "{efficiency}"
            )
        elif cpu_expert and n_gpu_layers == len(per_layer):
            template = "RAM: {read} of routed experts read per token at {how} × {efficiency}"
        else:
            template = "RAM: {read} of weights read per token at {how} × {efficiency}"
        explanation.append(
            tr(template, read=fmt_bytes(cpu_read), how=host.why, efficiency=percent(efficiency))
        )
        if cpu_s > seconds:
            bound = "ram_bandwidth"
            if kt:
                explanation.append(
                    tr(
                        "decode bound by host memory bandwidth: the CPU reads every token's routed experts "
                        "from RAM ({share} of the time per token)",
                        share=percent(cpu_s / (seconds + cpu_s)),
                    )
                )
        seconds += cpu_s
    if mature is not None and mature.decode_factor != 1.0:
        seconds /= mature.decode_factor
        explanation.append(
            tr(
                "{engine} runs {model_type} at {share} of its usual speed ({source})",
                engine=est.engine,
                model_type=arch.model_type,
                share=percent(mature.decode_factor),
                source=mature.source,
            )
        )
    decode = 1 / seconds if seconds > 0 else None
    if arch.is_moe:
        active_fraction = arch.params_active / arch.params_total if arch.params_total else 1.0
        explanation.append(
            tr(
                "mixture of experts: {share} of the weights are read per token",
                share=percent(active_fraction),
            )
        )

    # Prefill: 2 FLOPs per multiplying active parameter per token, at the class's share of the compute peak.
    prefill = None
    if kt:
        parts = ktransformers_parts(est, placement, machine, catalog)
        if parts is not None:
            prefill = _ktransformers_prefill(parts, catalog, explanation)
    elif used:
        rates: list[float] = []
        paths: list[str] = []
        unquantized = est.quant is not None and est.quant.kind == "float"
        per_expert = speed.moe_tokens_per_expert(
            max(min(LLAMA_CPP_UBATCH, est.context), 1), arch.experts_per_token or 1, arch.num_experts or 1
        )
        power_bound: dict[str, list[int]] = {}
        for i in used:
            factor = factors[i]
            # the power limit the driver enforces (a what-if GPU carries its catalog board power)
            compute = speed.prefill_compute(
                specs[i], factor, gpus[i].power_limit_watts, fp32=scalar_bf16[i] is True
            )
            if compute is None or factor is None:
                rates = []
                break
            if scalar_bf16[i] is True:
                words = tr(
                    "BF16 on Vulkan without BF16 matrix support in the driver: the scalar shaders promote it "
                    "to FP32 ({source}), so the FP32 peak ({peak} TFLOPS) applies",
                    source=speed.VULKAN_BF16_SOURCE,
                    peak=num(compute.peak_tflops, 1),
                )
                if words not in paths:
                    paths.append(words)
            path = speed.prefill_path(
                factor, moe=arch.is_moe, unquantized=unquantized, tokens_per_expert=per_expert
            )
            rates.append(compute.flops_per_s * path.factor)
            if path.why and path.why not in paths:
                paths.append(path.why)
            if compute.power_bound:
                power_bound.setdefault(compute.why, []).append(i)
        if rates:
            flops = prefill_flops_per_token(arch)
            speedup = mature.prefill_factor if mature is not None else 1.0
            streamed, ubatch, touched = _prefill_streamed_bytes(
                est, arch, head, placement.gpu_layers, placement.cpu_expert_layers
            )
            seconds_per_token: list[float] = []
            memory_bound = False
            for i, rate in zip(used, rates, strict=True):
                if placement.split == "tensor":
                    share = 1 / len(used)
                else:  # layers run one GPU after another: each GPU's share of the FLOPs at its own rate
                    share = placement.gpu_bytes[i] / max(sum(placement.gpu_bytes), 1)
                compute_s = flops * share / (rate * speedup)
                # Each micro-batch streams the GPU's weights once (every routed expert the batch touches):
                # a floor that binds for MoE models, whose total weights far exceed the active ones.
                bw = _bandwidth(specs[i])
                factor = factors[i]
                memory_s = 0.0
                if bw and factor is not None:
                    memory_s = streamed * share / (bw * 1e9 * factor.decode_bandwidth_efficiency) / ubatch
                memory_bound = memory_bound or memory_s > compute_s
                seconds_per_token.append(max(compute_s, memory_s))
            total = max(seconds_per_token) if placement.split == "tensor" else sum(seconds_per_token)
            prefill = 1 / total
            explanation.append(
                tr(
                    "prefill: {gflops} GFLOPs per token (2 × the active layer parameters) at "
                    "{tflops} TFLOPS effective",
                    gflops=num(flops / 1e9, 1),
                    tflops=num(sum(rates) / 1e12),
                )
                + (f" ({'; '.join(paths)})" if paths else "")
            )
            for why, indices in power_bound.items():
                explanation.append(
                    tr(
                        "prefill on GPU {indices}: {why}",
                        indices=", ".join(str(i) for i in indices),
                        why=why,
                    )
                )
            if memory_bound:
                explanation.append(
                    _memory_bound_prefill(arch.is_moe, ubatch, streamed, touched, from_ram=False)
                )
            if mature is not None and mature.prefill_factor != 1.0:
                explanation.append(_prefill_maturity(est.engine, arch.model_type, mature))
            if any(scalar_bf16[i] is None for i in used):
                explanation.append(tr(VULKAN_BF16_CAVEAT))
            if cpu_read:
                # llama.cpp copies offloaded weights to the GPU for each micro-batch of the prompt (a prompt
                # shorter than a micro-batch pays the whole copy for its few tokens), and the copy comes
                # before the computation that needs it: ggml_backend_sched_compute_splits copies a split's
                # inputs to its backend, then runs the split (ggml-org/llama.cpp
                # ggml/src/ggml-backend.cpp@5bc7a74), so the two add up rather than overlap.
                link = min(_pcie_gbs(gpus[i], specs[i]) for i in used)
                moved = sum(est.layer_weight_bytes[n_gpu_layers:]) + sum(
                    (est.layer_expert_bytes or (0,) * len(per_layer))[:cpu_expert]
                )
                copy_s = moved / (link * 1e9) / ubatch
                prefill = 1 / (1 / prefill + copy_s)
                explanation.append(
                    tr(
                        "prefill adds PCIe ({link} GB/s) copying {size} of offloaded weights per "
                        "{ubatch}-token micro-batch",
                        link=sig(link, 6),
                        size=fmt_bytes(int(moved)),
                        ubatch=ubatch,
                    )
                )
        else:
            explanation.append(tr("prefill: compute throughput of this GPU not known; not estimated"))
    elif cpu_read:
        speedup = mature.prefill_factor if mature is not None else 1.0
        prefill = _cpu_prefill(est, head, machine, catalog, explanation, speedup=speedup)
        if prefill is not None and mature is not None and mature.prefill_factor != 1.0:
            explanation.append(_prefill_maturity(est.engine, arch.model_type, mature))
    return Speed(decode, prefill, None, bound if decode else None, tuple(explanation))


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
    _per_layer, expert_read, _head = _active_bytes(est)
    n_cpu = placement.cpu_expert_layers
    _dense, routed_share = _read_ratios(arch)
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


def _ktransformers_prefill(
    parts: KtransformersParts, catalog: Catalog, explanation: list[str]
) -> float | None:
    """ktransformers' prompt rate: the routed experts' products on the CPU (2 FLOPs per weight × the tokens
    routed to it, at cores × clock × FLOPs per cycle × its fitted efficiency), never faster than reading the
    experts a chunk touches once from RAM, plus the rest on the GPU at the class's dense prompt rate."""
    factor = speed.engine_cpu_factor(catalog, speed.KTRANSFORMERS)
    compute = parts.cpu_compute
    if factor is None or factor.prefill_compute_efficiency is None:
        explanation.append(tr("prefill: no fitted ktransformers CPU efficiency; not estimated"))
        return None
    if compute is None:
        explanation.append(tr("prefill: CPU clock not known; not estimated"))
        return None
    if parts.gpu_prefill_s is None:
        explanation.append(tr("prefill: compute throughput of this GPU not known; not estimated"))
        return None
    compute_s = parts.cpu_flops_per_token / (compute.flops_per_s * factor.prefill_compute_efficiency)
    streamed = parts.cpu_expert_bytes * parts.touched
    memory_s = streamed / (parts.host.bytes_per_s * factor.decode_bandwidth_efficiency) / parts.chunk
    explanation.append(
        tr(
            "prefill: the routed experts' {gflops} GFLOPs per token run on the CPU at {how} × {efficiency} "
            "(ktransformers' CPU kernels); the other {gpu_gflops} GFLOPs on the GPU at {tflops} TFLOPS",
            gflops=num(parts.cpu_flops_per_token / 1e9, 1),
            how=compute.why,
            efficiency=percent(factor.prefill_compute_efficiency),
            gpu_gflops=num(parts.gpu_flops_per_token / 1e9, 1),
            tflops=num(parts.gpu_tflops),
        )
    )
    if memory_s > compute_s:
        explanation.append(
            tr(
                "prefill bound by host memory: each {chunk}-token chunk reads {size} ({share} of the routed "
                "experts) from RAM once",
                chunk=parts.chunk,
                size=fmt_bytes(int(streamed)),
                share=percent(parts.touched),
            )
        )
    elif compute_s > parts.gpu_prefill_s:
        explanation.append(
            tr(
                "prefill bound by the CPU's compute: the routed experts' matrix products run on its cores "
                "({share} of the time per token)",
                share=percent(compute_s / (compute_s + parts.gpu_prefill_s)),
            )
        )
    return 1 / (max(compute_s, memory_s) + parts.gpu_prefill_s)


def _prefill_maturity(engine: str, model_type: str, mature: Maturity) -> str:
    """The engine × architecture maturity's share of the usual prompt speed (catalog/speed.toml [[maturity]],
    fitted by benchmarks/fit_speed.py --maturity), in words."""
    return tr(
        "{engine} processes {model_type} prompts at {share} of its usual speed ({source})",
        engine=engine,
        model_type=model_type,
        share=percent(mature.prefill_factor),
        source=mature.source,
    )


#: Where the estimator cannot tell whether a GPU's Vulkan driver offers BF16 matrices
#: (speed.bf16_on_scalar_shaders is None: an Intel GPU, an NVIDIA driver version not in the snapshot), the
#: prompt estimate assumes it does, and says so.
VULKAN_BF16_CAVEAT = (
    "BF16 on Vulkan: llama.cpp uses matrix cores for BF16 only where the driver reports BF16 support "
    "(llama-bench prints 'bf16: 1'); without it prompts run on slower scalar shaders than this estimate "
    "assumes"
)


def _bf16_on_scalar_shaders(est: MemoryEstimate, gpu: GPU, machine: Machine) -> bool | None:
    """speed.bf16_on_scalar_shaders for this GPU, with the backend the estimate runs on it."""
    backend = est.backend or speed.default_backend(gpu.vendor)
    quant_id = est.quant.id if est.quant is not None else None
    return speed.bf16_on_scalar_shaders(backend, quant_id, gpu.vendor, machine.drivers.nvidia)


def _tiled_expert_seconds(
    est: MemoryEstimate,
    gpu: GPU,
    spec: GpuSpec | None,
    factor: SpeedFactor,
    expert_bytes: float,
    *,
    fp32: bool = False,
) -> tuple[float, float, str] | None:
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
    bw = _bandwidth(spec)
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
    why = tr(
        "{read} of {quant} routed experts per token go through llama.cpp's tiled MUL_MAT_ID GEMM on "
        "{backend}, not a matrix-vector kernel ({source}): each costs what it costs in a prompt micro-batch "
        "for {tokens} tokens, {ms} ms per token at {tflops} TFLOPS",
        read=fmt_bytes(int(expert_bytes)),
        quant=quant.name,
        backend=backend,
        source=speed.TILED_EXPERT_DECODE_SOURCE,
        tokens=num(per_expert),
        ms=num(seconds * 1e3, 1),
        tflops=num(rate / 1e12, 2),
    )
    return expert_bytes, seconds, why


def prefill_flops_per_token(arch: ArchConfig) -> float:
    """2 FLOPs per active parameter that multiplies a prompt token. Neither end of the model counts: the
    input embedding is a row lookup, and llama.cpp computes the output head only for the tokens whose logits
    are asked for (the last one of a prompt: the graph keeps only the ``inp_out_ids`` rows before the final
    norm and head, llama.cpp src/llama-graph.cpp build_inp_out_ids), a vanishing share of a prompt's work."""
    return 2.0 * max(arch.params_active - arch.embed_params - arch.head_params, 1)


def _prefill_streamed_bytes(
    est: MemoryEstimate, arch: ArchConfig, head: int, layers: int, cpu_expert_layers: int
) -> tuple[float, int, float]:
    """Weight bytes a device reads for one prompt micro-batch (the first ``layers`` layers less the routed
    experts of the first ``cpu_expert_layers``, plus the head), the micro-batch, and the share of routed
    experts it touches.

    llama.cpp processes a prompt in micro-batches of ``LLAMA_CPP_UBATCH`` tokens (fewer when the prompt is
    shorter); each one multiplies every weight matrix on the device once. For a mixture of experts the batch's
    tokens pick ``experts_per_token`` of ``num_experts`` experts each, so with uniform routing a share
    1 - (1 - k/E)^tokens of the experts is read: all of them for any real batch.
    """
    ubatch = max(min(LLAMA_CPP_UBATCH, est.context), 1)
    touched = 1.0
    if arch.is_moe and arch.num_experts and arch.experts_per_token:
        touched = 1 - (1 - min(arch.experts_per_token / arch.num_experts, 1.0)) ** ubatch
    n_gpu = layers
    experts = est.layer_expert_bytes or (0,) * len(est.layer_weight_bytes)
    cpu_expert = cpu_expert_layers
    weights = sum(est.layer_weight_bytes[:n_gpu]) - sum(experts[:cpu_expert]) + head
    on_gpu_experts = sum(experts[cpu_expert:n_gpu])
    return weights - on_gpu_experts * (1 - touched), ubatch, touched


def _cpu_prefill(
    est: MemoryEstimate,
    head: int,
    machine: Machine,
    catalog: Catalog,
    explanation: list[str],
    *,
    speedup: float = 1.0,
) -> float | None:
    """CPU-only prompt processing: compute bound, 2 FLOPs per active layer parameter per token at the CPU
    class's share of cores × clock × FLOPs per cycle (``speed.cpu_compute``), and no faster than reading
    every weight (every expert a micro-batch touches) once per micro-batch from host memory."""
    arch = est.model.arch
    compute = speed.cpu_compute(machine.cpu)
    factor = speed.speed_factor(catalog, speed.CPU_CLASS, "cpu")
    if compute is None or factor is None or factor.prefill_compute_efficiency is None:
        explanation.append(
            tr("prefill: CPU clock not known; not estimated")
            if compute is None
            else tr("prefill: no fitted CPU prefill efficiency; not estimated")
        )
        return None
    rate = compute.flops_per_s * factor.prefill_compute_efficiency * speedup
    flops = prefill_flops_per_token(arch)
    explanation.append(
        tr(
            "prefill on the CPU: {gflops} GFLOPs per token at {how} × {efficiency}",
            gflops=num(flops / 1e9, 1),
            how=compute.why,
            efficiency=percent(factor.prefill_compute_efficiency),
        )
    )
    compute_s = flops / rate
    streamed, ubatch, touched = _prefill_streamed_bytes(est, arch, head, len(est.layer_weight_bytes), 0)
    host = speed.host_bandwidth(machine, catalog)
    memory_s = streamed / (host.bytes_per_s * factor.decode_bandwidth_efficiency) / ubatch
    if memory_s > compute_s:
        explanation.append(_memory_bound_prefill(arch.is_moe, ubatch, streamed, touched, from_ram=True))
    return 1 / max(compute_s, memory_s)


def _bandwidth(spec: GpuSpec | None) -> float | None:
    return spec.bandwidth_gbs if spec else None


def _tflops(spec: GpuSpec | None) -> float | None:
    if spec is None:
        return None
    return spec.bf16_tflops or spec.fp16_tflops


def _training_speed(
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
        return Speed(explanation=(tr("training needs a GPU"),))
    i = used[0]
    peak = _tflops(specs[i])
    if peak is None:
        return Speed(
            explanation=(
                tr(
                    "GPU {index} ({name}): tensor throughput not published; speed not estimated",
                    index=i,
                    name=gpus[i].name,
                ),
            )
        )
    # FLOPs follow the parameters a token touches: a mixture of experts trains its active experts only.
    active = arch.params_active
    recompute = 2 if est.checkpointing == "full" else 0
    per_param = (6 if est.workload == "full" else 4) + recompute
    flops_per_token = per_param * active
    mfu = MEGATRAIN_MFU if placement.offload == "full" else TRAIN_MFU
    tokens_per_step = est.context * est.batch
    t_compute = flops_per_token * tokens_per_step / (mfu * peak * 1e12)
    moe = (
        ", " + tr("{active} of {total} parameters active", active=num(active), total=num(arch.params_total))
        if arch.is_moe
        else ""
    )
    base = "6N" if est.workload == "full" else tr("4N (frozen base: no weight gradients)")
    explanation.append(
        tr(
            "{per_param}·N FLOPs per token ({base}{recompute}{moe}) at {mfu} of {peak} TFLOPS",
            per_param=per_param,
            base=base,
            recompute=", " + tr("+2N recompute") if recompute else "",
            moe=moe,
            mfu=percent(mfu),
            peak=sig(peak, 6),
        )
    )
    bound: Bound = "compute"
    step = t_compute
    if est.workload == "qlora":
        bw = _bandwidth(specs[i])
        factor = speed.gpu_factor(catalog, gpus[i], specs[i], est.backend)
        if bw is not None and factor is not None:
            passes = 2 + (1 if recompute else 0)
            quantized = arch.params_total - arch.embed_params - arch.head_params
            t_dequant = (
                passes
                * quantized
                * QLORA_DEQUANT_BYTES_PER_PARAM
                / (bw * 1e9 * factor.decode_bandwidth_efficiency)
            )
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
        trainable = arch.params_total if est.workload == "full" else est.total("gradients") // 2
        t_opt = trainable * CPU_ADAM_BYTES_PER_PARAM / host.bytes_per_s
        explanation.append(
            tr(
                "CPU AdamW: {bytes} B per trainable parameter per step at {how}",
                bytes=CPU_ADAM_BYTES_PER_PARAM,
                how=host.why,
            )
        )
        link = _pcie_gbs(gpus[i], specs[i])
        if placement.offload in ("params", "full"):
            # bf16 weights stream in for the forward pass and again for the backward (and recompute);
            # bf16 gradients stream out (memory-formulas §1.6, §7.3)
            t_h2d = (2 * arch.params_total * 2 + arch.params_total * 2) / (link * 1e9)
            explanation.append(
                tr(
                    "streaming bf16 weights in twice and gradients out once per step over {link} GB/s",
                    link=sig(link, 6),
                )
            )
            if t_h2d > step:
                step, bound = t_h2d, "pcie"
        if placement.offload == "full":
            # MegaTrain pipelines prefetch, compute, gradient offload and the CPU update (arXiv 2604.05091)
            if t_opt > step:
                step, bound = t_opt, "cpu_optimizer"
            explanation.append(tr("MegaTrain overlaps the CPU optimizer with the GPU's work"))
        else:
            if t_opt > step:
                bound = "cpu_optimizer"
            step += t_opt
    return Speed(None, None, tokens_per_step / step, bound, tuple(explanation))


# -- verdict, solvers, advice --------------------------------------------------------------------


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


def _check_ktransformers(est: MemoryEstimate, machine: Machine, offload: Offload, layers: int | None) -> None:
    """ktransformers runs mixtures of experts on a GPU with their routed experts in RAM: else one line why."""
    if not any(est.layer_expert_bytes):
        raise InputError(
            "--engine ktransformers",
            tr(
                "ktransformers runs mixture-of-experts models (their routed experts on the CPU); "
                "{model} is dense",
                model=est.model.id,
            ),
        )
    if not machine.gpus:
        raise InputError(
            "--engine ktransformers",
            tr("ktransformers needs a GPU for attention and the KV cache; this machine has none"),
        )
    if offload not in ("auto", "experts") or layers is not None:
        raise InputError(
            "--engine ktransformers",
            tr("ktransformers keeps every layer's routed experts in RAM: use --offload auto or experts"),
        )


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
) -> FitResult:
    """Place and time ``model``; ``cpu_expert_layers`` fixes N for ``offload="experts"`` (else the fewest),
    ``gpu_layers`` caps the layers on the GPUs for ``offload="layers"`` (llama.cpp ``-ngl N``)."""
    est = estimate_memory(model, req, catalog)
    budget = budgets(machine, live, req.engine if est.workload == "inference" else "transformers")
    if req.engine == "vllm" and est.workload == "inference":
        budget = _vllm_budget(machine, budget)
    kt = req.engine == "ktransformers" and est.workload == "inference"
    if kt:
        _check_ktransformers(est, machine, offload, cpu_expert_layers)
        # every layer's routed experts in RAM: ktransformers' injection rules send each
        # model.layers.*.mlp.experts to KExpertsCPU (generate_device "cpu"), the rest to the GPU
        placement = _place_experts(est, budget, len(est.layer_weight_bytes))
    else:
        placement = place(
            est, budget, offload, split, cpu_expert_layers=cpu_expert_layers, gpu_layers=gpu_layers
        )
    chosen: Speed | None = None
    if (
        not kt
        and offload == "auto"
        and est.workload == "inference"
        and placement is not None
        and placement.offload != "none"
    ):
        # Something must go to RAM: offer whichever of layer and expert offload decodes faster.
        options = [
            (p, estimate_speed(est, p, machine, catalog))
            for p in (placement, _place_experts(est, budget))
            if p
        ]
        placement, chosen = max(options, key=lambda o: o[1].decode_tokens_per_s or 0.0)
    reasons = list(budget.reasons)
    if placement is None:
        verdict: Verdict = "does_not_fit"
        reasons.insert(0, _why_not(est, budget, offload))
        placement = Placement(tuple(0 for _ in budget.gpu_bytes), 0, 0, model.arch.num_layers, "none")
        speed = Speed()
    else:
        verdict = "fits" if placement.cpu_bytes == 0 and placement.offload == "none" else "fits_with_offload"
        reasons.insert(0, _placement_sentence(est, placement))
        speed = chosen or estimate_speed(est, placement, machine, catalog)
    advice: tuple[str, ...] = ()
    if advise:
        advice = tuple(
            _advice(model, machine, req, catalog, est, verdict=verdict, placement=placement, live=live)
        )
    return FitResult(verdict, placement, speed, est, budget, tuple(reasons), advice)


#: vLLM's default --gpu-memory-utilization: it takes this fraction of each GPU's total memory
#: (memory-formulas §5: "Standard 0,9"; vllm PR #10511 start-up profile 79.22 GiB × 0.90)
VLLM_GPU_UTILIZATION = 0.9


def _why_not(est: MemoryEstimate, budget: Budget, offload: Offload) -> str:
    """Why nothing was placed, in one sentence that never claims it fits."""
    need, gpu, ram = est.total_bytes, max(budget.gpu_bytes, default=0), budget.cpu_bytes
    offers = {"gpus": fmt_bytes(sum(budget.gpu_bytes)), "ram": fmt_bytes(ram)}
    if est.workload in ("lora", "qlora") and offload == "full":
        return tr(
            "MegaTrain-style offload (--offload full) streams full fine-tuning; for LoRA/QLoRA use "
            "--offload optimizer or params, or none"
        )
    if (
        est.workload in ("lora", "qlora", "inference")
        and offload == "experts"
        and not any(est.layer_expert_bytes)
    ):
        return tr("expert offload needs a mixture-of-experts model; this one is dense")
    if not any(budget.gpu_bytes) and est.workload != "inference":
        return tr("training needs a GPU; GPUs offer {gpus} and RAM {ram}", **offers)
    if est.workload == "full" and offload in ("optimizer", "params", "full"):
        params = est.model.arch.params_total
        host = {
            "optimizer": zero2_offload_bytes(params)[0],
            "params": zero3_offload_bytes(params, largest_layer_params(est.model.arch))[0],
            "full": MEGATRAIN_HOST_BYTES * params,
        }[offload]
        if host > ram:
            return tr(
                "--offload {offload} keeps {host} in RAM; {ram} is available",
                offload=offload,
                host=fmt_bytes(host),
                ram=fmt_bytes(ram),
            )
    if est.workload != "inference" and offload in ("optimizer", "params", "full") and need <= gpu:
        return tr(
            "with --offload {offload} the parts kept in RAM need more than the {ram} available "
            "(it would fit the GPU without offload: {need} of {gpu})",
            offload=offload,
            ram=fmt_bytes(ram),
            need=fmt_bytes(need),
            gpu=fmt_bytes(gpu),
        )
    return tr("needs {need}; GPUs offer {gpus} and RAM {ram}", need=fmt_bytes(need), **offers)


def _vllm_budget(machine: Machine, budget: Budget) -> Budget:
    capped = tuple(
        min(b, int(g.memory_total_bytes * VLLM_GPU_UTILIZATION)) if g.memory_total_bytes else b
        for g, b in zip(machine.gpus, budget.gpu_bytes, strict=True)
    )
    reason = tr(
        "vLLM uses at most {share} of each GPU's memory (--gpu-memory-utilization default)",
        share=percent(VLLM_GPU_UTILIZATION),
    )
    return Budget(capped, budget.cpu_bytes, (*budget.reasons, reason))


def _placement_sentence(est: MemoryEstimate, p: Placement) -> str:
    gpu_total = sum(p.gpu_bytes)
    if p.offload == "experts" and est.engine == "ktransformers":
        return tr(
            "attention, shared experts and KV cache of all {layers} layers on the GPU ({gpu}); the routed "
            "experts of {cpu_layers} layers in RAM ({ram}), computed on the CPU by ktransformers",
            layers=p.total_layers,
            gpu=fmt_bytes(gpu_total),
            cpu_layers=sum(1 for e in est.layer_expert_bytes[: p.cpu_expert_layers] if e),
            ram=fmt_bytes(p.cpu_bytes),
        )
    if p.offload == "experts":
        return tr(
            "attention, shared weights and KV cache of all {layers} layers on the GPU ({gpu}); "
            "the routed experts of {cpu_layers} layers in RAM ({ram}), as llama.cpp --n-cpu-moe {cpu_layers}",
            layers=p.total_layers,
            gpu=fmt_bytes(gpu_total),
            cpu_layers=p.cpu_expert_layers,
            ram=fmt_bytes(p.cpu_bytes),
        )
    if p.offload == "full":
        return tr(
            "MegaTrain-style: {ram} of parameters and optimizer states in RAM, {gpu} on the GPU",
            ram=fmt_bytes(p.cpu_bytes),
            gpu=fmt_bytes(gpu_total),
        )
    if p.offload == "params":
        return tr(
            "ZeRO-3 offload: parameters, gradients and optimizer states in RAM ({ram}), "
            "{gpu} on the GPU (4 × the largest layer + activations)",
            ram=fmt_bytes(p.cpu_bytes),
            gpu=fmt_bytes(gpu_total),
        )
    if p.offload == "optimizer":
        return tr(
            "ZeRO-Offload: optimizer states in RAM ({ram}), {gpu} on the GPU",
            ram=fmt_bytes(p.cpu_bytes),
            gpu=fmt_bytes(gpu_total),
        )
    if p.cpu_bytes and gpu_total:
        return tr(
            "{gpu_layers} of {layers} layers on the GPU ({gpu}), the rest in RAM ({ram})",
            gpu_layers=p.gpu_layers,
            layers=p.total_layers,
            gpu=fmt_bytes(gpu_total),
            ram=fmt_bytes(p.cpu_bytes),
        )
    if p.cpu_bytes:
        return tr("runs on the CPU from RAM ({ram})", ram=fmt_bytes(p.cpu_bytes))
    used = sum(1 for b in p.gpu_bytes if b)
    host = (
        "; "
        + tr(
            "the input embedding ({size}) stays in RAM, as llama.cpp keeps it",
            size=fmt_bytes(est.host_weight_bytes),
        )
        if est.host_weight_bytes
        else ""
    )
    if used > 1:
        return (
            tr(
                "everything on {count} GPUs: {gpu} in all (each GPU keeps its own buffers)",
                count=used,
                gpu=fmt_bytes(gpu_total),
            )
            + host
        )
    return (
        tr(
            "everything on the GPU: {gpu} of {need} needed",
            gpu=fmt_bytes(gpu_total),
            need=fmt_bytes(est.total_bytes),
        )
        + host
    )


def max_context(
    model: ModelInfo, machine: Machine, req: Request, catalog: Catalog, *, live: bool = True
) -> int | None:
    """The longest context that fits entirely in GPU memory, or None if not even 512 tokens do (or the engine,
    ktransformers, keeps the routed experts in RAM whatever fits)."""
    if req.engine == "ktransformers":
        return None
    upper = model.arch.max_context or 131072

    def fits(context: int) -> bool:
        return (
            fit(
                model,
                machine,
                replace(req, context=context),
                catalog,
                offload="none",
                live=live,
                advise=False,
            ).verdict
            == "fits"
        )

    return largest_context(fits, upper)


def largest_context(ok: Callable[[int], bool], upper: int) -> int | None:
    """The largest context in [512, ``upper``] for which ``ok`` holds (to 256 tokens, bisecting; more
    context never needs less memory), or None if not even 512 tokens do."""
    if not ok(512):
        return None
    if ok(upper):
        return upper
    low, high = 512, upper
    while high - low > 256:
        mid = (low + high) // 2
        low, high = (mid, high) if ok(mid) else (low, mid)
    return low


#: from best quality to smallest; GGUF mixes by llama.cpp's measured perplexity order
QUANT_LADDER = ("bf16", "q8_0", "q6_k", "q5_k_m", "q4_k_m", "q3_k_m", "iq3_xxs", "q2_k")


def best_quant(
    model: ModelInfo, machine: Machine, req: Request, catalog: Catalog, *, live: bool = True
) -> tuple[str, int] | None:
    """The highest-quality format that fits on the GPUs, and the bytes it leaves spare."""
    for name in QUANT_LADDER:
        result = fit(
            model, machine, replace(req, quant=name), catalog, offload="none", live=live, advise=False
        )
        if result.verdict == "fits":
            spare = sum(result.budget.gpu_bytes) - sum(result.placement.gpu_bytes)
            return result.estimate.quant_name, spare
    return None


def fewest_gpus(
    model: ModelInfo, machine: Machine, spec: GpuSpec, req: Request, catalog: Catalog, *, limit: int = 16
) -> int | None:
    """How many of a catalog GPU it takes to fit entirely in GPU memory (layer split)."""
    for count in range(1, limit + 1):
        trial = simulate(machine, [spec] * count)
        if fit(model, trial, req, catalog, offload="none", live=False, advise=False).verdict == "fits":
            return count
    return None


def _advice(
    model: ModelInfo, machine: Machine, req: Request, catalog: Catalog, est: MemoryEstimate,
    *, verdict: Verdict, placement: Placement, live: bool,
) -> list[str]:  # fmt: skip
    advice: list[str] = []
    if verdict == "fits":
        spare = sum(b for b in budgets(machine, live, req.engine).gpu_bytes) - sum(placement.gpu_bytes)
        advice.append(tr("{quant} fits with {spare} to spare", quant=est.quant_name, spare=fmt_bytes(spare)))
        return advice
    if est.workload == "inference" and machine.gpus and req.engine != "ktransformers":
        # (ktransformers always keeps the routed experts in RAM: "entirely on the GPU" is not its choice)
        longest = max_context(model, machine, req, catalog, live=live)
        if longest is not None and longest < est.context:
            advice.append(tr("reduce context to {k}k to fit entirely on the GPU", k=longest // 1024))
        if model.weights is None or req.quant:
            best = best_quant(model, machine, req, catalog, live=live)
            if best is not None and best[0] != est.quant_name:
                advice.append(
                    tr(
                        "{quant} fits on the GPU with {spare} to spare",
                        quant=best[0],
                        spare=fmt_bytes(best[1]),
                    )
                )
        if verdict == "fits_with_offload" and placement.gpu_layers < placement.total_layers:
            advice.append(
                tr(
                    "{count} layers run from RAM: expect decode bound by RAM bandwidth",
                    count=placement.total_layers - placement.gpu_layers,
                )
            )
        first = machine.gpus[0]
        spec = catalog.gpu(first.catalog_id) if first.catalog_id else None
        if spec is not None:
            count = fewest_gpus(model, machine, spec, req, catalog, limit=8)
            if count is not None and count > len(machine.gpus):
                advice.append(
                    tr("{count} × {gpu} would hold it entirely in GPU memory", count=count, gpu=spec.name)
                )
    if est.workload == "full" and verdict == "does_not_fit":
        host_need = MEGATRAIN_HOST_BYTES * model.arch.params_total
        have = budgets(machine, live).cpu_bytes
        if host_need > have:
            extra = (host_need - have + GIB - 1) // GIB
            advice.append(
                tr(
                    "add {extra} GiB RAM for MegaTrain-style training (about {bytes} bytes per "
                    "parameter in RAM)",
                    extra=extra,
                    bytes=MEGATRAIN_HOST_BYTES,
                )
            )
    if est.workload in ("lora", "full") and verdict == "does_not_fit":
        advice.append(tr("QLoRA (4-bit base) needs about a quarter of the weight memory"))
    if verdict == "does_not_fit" and est.workload == "inference":
        advice.append(tr("a smaller quantization, a shorter context, or a GPU with more memory would help"))
    return advice


# -- many at once ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One model × format × GPU: the verdict and decode speed, without the explanations."""

    model_id: str
    quant: str
    gpu_id: str
    verdict: Verdict
    gpu_layers: int
    decode_tokens_per_s: float | None


def grid(
    models: Sequence[ModelInfo],
    quants: Sequence[str],
    gpus: Sequence[GpuSpec],
    catalog: Catalog,
    *,
    ram_bytes: int = 64 * GIB,
    context: int | None = None,
) -> list[Cell]:
    """Inference verdicts for every combination, sharing each model × format estimate across GPUs.

    The same placement rule as :func:`fit` on one GPU (layers in order, the rest in RAM), in
    arithmetic only, so the Overview's "what you can run" and the benchmarks stay instant.
    """
    from bisect import bisect_right
    from itertools import accumulate

    cells: list[Cell] = []
    cpu_budget = ram_bytes - host_reserve(ram_bytes)
    capacities = [
        (int(max(g.memory_gb) * GIB) - gpu_margin(int(max(g.memory_gb) * GIB)) if g.memory_gb else 0)
        for g in gpus
    ]
    factors = [
        speed.speed_factor(
            catalog,
            speed.hardware_class(g.vendor, g.name, g, g.unified_memory),
            speed.default_backend(g.vendor),
        )
        for g in gpus
    ]
    cpu_factor = speed.speed_factor(catalog, speed.CPU_CLASS, "cpu")
    host_rate = speed.DEFAULT_HOST_BANDWIDTH * (cpu_factor.decode_bandwidth_efficiency if cpu_factor else 1.0)
    cpu_layer_s = (cpu_factor.per_layer_us if cpu_factor else 0.0) * 1e-6
    for model in models:
        mature = speed.maturity(catalog, "llama.cpp", model.arch.model_type)
        slowdown = mature.decode_factor if mature else 1.0
        for quant in quants:
            est = estimate_memory(model, Request(quant=quant, context=context), catalog)
            layer_bytes = [w + k for w, k in zip(est.layer_weight_bytes, _layer_kv(est), strict=True)]
            prefix = list(accumulate(layer_bytes))
            body = prefix[-1] if prefix else 0
            fixed = _runtime_bytes(est) + est.other_weight_bytes
            active, _routed, head = _active_bytes(est)
            read_prefix = list(accumulate(active))
            read_total = (read_prefix[-1] if read_prefix else 0) + head
            n_layers = len(layer_bytes)
            for spec, capacity, factor in zip(gpus, capacities, factors, strict=True):
                room = capacity - fixed
                layers = bisect_right(prefix, room) if room > 0 else 0
                if layers == n_layers and room >= 0:
                    verdict: Verdict = "fits"
                elif body + fixed - (prefix[layers - 1] if layers else 0) <= cpu_budget:
                    verdict = "fits_with_offload"
                else:
                    verdict = "does_not_fit"
                tokens = None
                if verdict != "does_not_fit" and spec.bandwidth_gbs and factor is not None:
                    on_gpu = (read_prefix[layers - 1] + head) if layers else 0
                    seconds = on_gpu / (spec.bandwidth_gbs * 1e9 * factor.decode_bandwidth_efficiency)
                    seconds += layers * factor.per_layer_us * 1e-6
                    seconds += (read_total - on_gpu) / host_rate + (n_layers - layers) * cpu_layer_s
                    tokens = slowdown / seconds if seconds > 0 else None
                cells.append(Cell(model.id, est.quant_name, spec.id, verdict, layers, tokens))
    return cells
