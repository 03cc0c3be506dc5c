"""Training placement: everything on one GPU, ZeRO-Offload (optimizer states and update on the CPU),
ZeRO-3 (parameters too), or MegaTrain-style streaming (parameters, gradients and optimizer states in host
RAM, layers streamed through the GPU).
"""

from __future__ import annotations

from collections.abc import Callable

from rigcheck.core.estimate.memory import MemoryEstimate
from rigcheck.core.estimate.placement.types import Budget, Placement, TrainOffload
from rigcheck.core.models.spec import ArchConfig

#: MegaTrain's own accounting (DLYuanGod/MegaTrain scripts/calc_resource.py@919520f calc_cpu_memory: "FP32
#: master weights: 4 bytes/param, Adam optimizer states (m + v): 8 bytes/param, Total: 12 bytes/param"),
#: which the paper's headline needs (arXiv 2604.05091: up to 120B on one H200 with 1.5 TB = 1.44 TB at 12 B;
#: a 141B model needs 1.69 TB). Its README's Qwen2.5-32B run (~327 GB, README@2a9f977) is ~10 B/param:
#: the published run and the headline disagree, and the headline's rule is the one MegaTrain documents.
MEGATRAIN_HOST_BYTES = 12
MEGATRAIN_GRAD_SLABS = 12
MEGATRAIN_CHECKPOINT_INTERVAL = 4
#: calc_resource.py ACTIVATION_BYTES_FACTOR: bytes per hidden unit × token × checkpoint interval of one
#: sample's activations, MegaTrain's calibration on its own Qwen2.5-7B run (80 GB H100, seq 1024, batch
#: 148). No hybrid multiplier: calc_resource's HYBRID_OVERHEAD_FACTOR (2.5) puts its own Qwen3.5-27B run at
#: +69% (issue 27), so every layer kind takes the same per-sample rule here.
MEGATRAIN_ACTIVATION_FACTOR = 29
#: CUDA context MegaTrain budgets (calc_resource.py CUDA_CONTEXT_GB)
MEGATRAIN_CUDA_CONTEXT = 2 * 10**9
MEGATRAIN_SOURCE = "DLYuanGod/MegaTrain scripts/calc_resource.py@919520f (calc_gpu_fixed, calc_batch_size)"


def _largest(arch: ArchConfig) -> int:
    return max(arch.layer_params) if arch.layer_params else arch.params_total // max(arch.num_layers, 1)


def megatrain_fixed_bytes(arch: ArchConfig) -> int:
    """The GPU's fixed part as MegaTrain allocates it (infinity/model/cpu_master.py@919520f): the CUDA
    context calc_resource budgets, two bf16 layer buffers (double buffer), and the embedding and head
    resident on the GPU in bf16 with their gradients. calc_resource.py's calc_gpu_fixed also counts the
    12 gradient slabs in fp32 on the GPU, but cpu_master.py allocates them in pinned host memory
    (``device='cpu', pin_memory=True``, in the training dtype), so they are host bytes here."""
    outside = arch.embed_params + arch.head_params
    return MEGATRAIN_CUDA_CONTEXT + 2 * 2 * _largest(arch) + 2 * 2 * outside


def megatrain_host_bytes(arch: ArchConfig) -> int:
    """12 B/param (calc_resource.py) plus the pinned gradient slabs: 12 of the largest layer, one of the
    head and one of the embedding, bf16 (cpu_master.py)."""
    slabs = 2 * (MEGATRAIN_GRAD_SLABS * _largest(arch) + arch.embed_params + arch.head_params)
    return MEGATRAIN_HOST_BYTES * arch.params_total + slabs


def megatrain_sample_bytes(arch: ArchConfig, context: int) -> int:
    """calc_resource.py calc_batch_size: one sample's activations, hidden × seq × K × 29 bytes."""
    return arch.hidden_size * context * MEGATRAIN_CHECKPOINT_INTERVAL * MEGATRAIN_ACTIVATION_FACTOR


def megatrain_batch(arch: ArchConfig, gpu_bytes: int, context: int) -> int:
    """MegaTrain's batch-size rule: (GPU memory - fixed) ÷ per-sample activations; 0 if the fixed part
    alone does not fit."""
    free = gpu_bytes - megatrain_fixed_bytes(arch)
    return max(free // megatrain_sample_bytes(arch, context), 0) if free > 0 else 0


#: DeepSpeed's estimators keep 50% headroom on their CPU figures (additional_buffer_factor=1.5)
DEEPSPEED_BUFFER = 1.5


def zero2_offload_bytes(params: int, gpus: int = 1) -> tuple[int, int]:
    """(CPU, GPU) bytes of DeepSpeed's estimate_zero2_model_states_mem_needs(cpu_offload=True)."""
    return int(params * max(4 * gpus, 16) * DEEPSPEED_BUFFER), 2 * params


def zero3_offload_bytes(params: int, largest_layer: int, nodes: int = 1) -> tuple[int, int]:
    """(CPU, GPU) bytes of DeepSpeed's estimate_zero3_model_states_mem_needs(cpu_offload=True,
    cpu_offload_params=True, zero_init=True): 18 bytes per parameter × 1.5 per node, 4 × the largest layer."""
    return int(params * 18 / nodes * DEEPSPEED_BUFFER), 4 * largest_layer


#: DeepSpeed's ZeRO defaults (deepspeedai/DeepSpeed deepspeed/runtime/zero/config.py@1b88ac3):
#: stage3_max_live_parameters 1e9, stage3_prefetch_bucket_size 5e7, reduce_bucket_size 5e8 elements
ZERO3_MAX_LIVE_PARAMETERS = 10**9
ZERO3_PREFETCH_BUCKET = 5 * 10**7
ZERO_REDUCE_BUCKET = 5 * 10**8


def zero3_buffer_bytes(params: int) -> int:
    """ZeRO-3's working buffers on each GPU beside the estimator's model states: up to
    stage3_max_live_parameters gathered 16-bit parameters, the prefetch bucket and the 16-bit gradient
    reduce bucket (DeepSpeed's defaults)."""
    return 2 * (min(ZERO3_MAX_LIVE_PARAMETERS, params) + ZERO3_PREFETCH_BUCKET + ZERO_REDUCE_BUCKET)


def largest_layer_params(arch: ArchConfig) -> int:
    """DeepSpeed's ``largest_layer_params``: the largest single module (embedding, head or a linear)."""
    linear = arch.hidden_size * (arch.intermediate_size or 4 * arch.hidden_size)
    return max(arch.embed_params, arch.head_params, linear)


def place_training(est: MemoryEstimate, budget: Budget, offload: TrainOffload) -> Placement | None:
    arch = est.model.arch
    params = arch.params_total
    n_layers = arch.num_layers
    best = max(range(len(budget.gpu_bytes)), key=lambda i: budget.gpu_bytes[i], default=None)
    if best is None or budget.gpu_bytes[best] <= 0:
        return None
    gpu_budget = budget.gpu_bytes[best]

    def on(
        gpu_bytes: int, cpu_bytes: int, mode: TrainOffload, layers: int, context: int | None = None
    ) -> Placement | None:
        if gpu_bytes > gpu_budget or cpu_bytes > budget.cpu_bytes:
            return None
        per_gpu = tuple(gpu_bytes if i == best else 0 for i in range(len(budget.gpu_bytes)))
        # the allocator peak leaves out the CUDA context (the estimate's overhead term)
        cuda = est.total("overhead") if context is None else context
        peak = tuple(max(b - cuda, 0) if b else 0 for b in per_gpu)
        return Placement(per_gpu, cpu_bytes, layers, n_layers, mode, gpu_peak_bytes=peak)

    def replicas(
        gpu_bytes: int, cpu_for: Callable[[int], int], mode: TrainOffload, layers: int
    ) -> Placement | None:
        """DeepSpeed runs one data-parallel rank per GPU: each GPU that has room holds ``gpu_bytes``, and
        the host figure follows the rank count (DeepSpeed's estimators take num_gpus_per_node)."""
        ranks = [i for i, b in enumerate(budget.gpu_bytes) if b >= gpu_bytes]
        cpu_bytes = cpu_for(max(len(ranks), 1))
        if not ranks or cpu_bytes > budget.cpu_bytes:
            return None
        per_gpu = tuple(gpu_bytes if i in ranks else 0 for i in range(len(budget.gpu_bytes)))
        cuda = est.total("overhead")
        peak = tuple(max(b - cuda, 0) if b else 0 for b in per_gpu)
        return Placement(per_gpu, cpu_bytes, layers, n_layers, mode, gpu_peak_bytes=peak)

    if offload == "none":  # a framework's offloaded checkpoints (Unsloth's) sit in host RAM
        return on(est.total_bytes, est.training_host_bytes, "none", n_layers)
    runtime = est.total("activations") + est.total("overhead")
    if est.workload != "full":
        # LoRA/QLoRA: DeepSpeed offloads what is trainable (the adapters); ZeRO-3 also the frozen base.
        trainable = est.trainable_params
        if offload == "optimizer":  # estimate_zero2_model_states_mem_needs(cpu_offload=True) on the adapters
            gpu = est.total_bytes - est.total("gradients") - est.total("optimizer")
            return on(gpu, zero2_offload_bytes(trainable)[0], "optimizer", n_layers)
        if offload == "params":  # ZeRO-3: the frozen base weights stream from RAM as well
            cpu, gpu = zero3_offload_bytes(trainable, largest_layer_params(arch))
            return on(gpu + runtime + zero3_buffer_bytes(params), cpu + est.total("weights"), "params", 0)
        return None  # MegaTrain-style streaming is full fine-tuning (see why_not)
    if offload == "optimizer":
        gpu = zero2_offload_bytes(params)[1]
        return replicas(
            gpu + runtime, lambda n: zero2_offload_bytes(params, gpus=n)[0], "optimizer", n_layers
        )
    if offload == "params":
        cpu, gpu = zero3_offload_bytes(params, largest_layer_params(arch))
        return replicas(gpu + runtime + zero3_buffer_bytes(params), lambda _n: cpu, "params", 0)
    # MegaTrain: host keeps the fp32 master weights and Adam states (12 B/param, calc_resource.py) and the
    # gradient slabs; the GPU holds the layer buffers, the embedding and head, and each sample's activations.
    gpu = megatrain_fixed_bytes(arch) + megatrain_sample_bytes(arch, est.context) * est.batch
    return on(gpu, megatrain_host_bytes(arch), "full", 0, MEGATRAIN_CUDA_CONTEXT)
