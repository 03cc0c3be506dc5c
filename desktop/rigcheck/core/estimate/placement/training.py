"""Training placement: everything on one GPU, ZeRO-Offload (optimizer states and update on the CPU),
ZeRO-3 (parameters too), or MegaTrain-style streaming (parameters, gradients and optimizer states in host
RAM, layers streamed through the GPU).
"""

from __future__ import annotations

from collections.abc import Callable

from rigcheck.core.estimate.memory import MemoryEstimate
from rigcheck.core.estimate.placement import megatrain
from rigcheck.core.estimate.placement.types import Budget, Placement, TrainOffload
from rigcheck.core.models.spec import ArchConfig

#: RAM per parameter MegaTrain holds at the optimizer step (bf16 weights and gradients, fp32 Adam m and v;
#: placement/megatrain.py): 120B needs 1.44 TB of the paper's 1.5 TB (arXiv 2604.05091), 141B 1.69 TB
MEGATRAIN_HOST_BYTES = megatrain.HOST_STEP_BYTES
MEGATRAIN_GRAD_SLABS = megatrain.GRAD_SLABS
MEGATRAIN_CHECKPOINT_INTERVAL = megatrain.CHECKPOINT_INTERVAL
MEGATRAIN_CUDA_CONTEXT = megatrain.CUDA_CONTEXT
MEGATRAIN_SOURCE = megatrain.SOURCE


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

    if est.framework == "megatrain" and est.workload == "full" and offload != "full":
        return None  # MegaTrain streams the layers from RAM: its placement is the streamed one
    if offload == "none" and est.training_gpus > 1:  # sharded (FSDP): every GPU of the run holds its share
        ranks = [i for i, b in enumerate(budget.gpu_bytes) if b >= est.total_bytes][: est.training_gpus]
        if len(ranks) < est.training_gpus or est.training_host_bytes > budget.cpu_bytes:
            return None
        per_gpu = tuple(est.total_bytes if i in ranks else 0 for i in range(len(budget.gpu_bytes)))
        cuda = est.total("overhead")
        peak = tuple(max(b - cuda, 0) if b else 0 for b in per_gpu)
        return Placement(per_gpu, est.training_host_bytes, n_layers, n_layers, "none", gpu_peak_bytes=peak)
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
    # MegaTrain: RAM holds the bf16 weights, their gradients at the step and fp32 Adam states; the GPU the
    # layer buffers and templates, the embedding and head, the checkpoints and the larger of the loss and
    # one layer's backward (placement/megatrain.py). With several GPUs that hold it, one data-parallel
    # worker per GPU (MegaTrain's ``devices``), each at ``est.batch``, over one shared host copy.
    gpu = megatrain.gpu_bytes(arch, est.context, est.batch, est.linear_kernels)
    ranks = [i for i, b in enumerate(budget.gpu_bytes) if b >= gpu]
    if len(ranks) > 1:
        host = megatrain.host_step_bytes(arch, len(ranks))
        if host <= budget.cpu_bytes:
            per_gpu = tuple(gpu if i in ranks else 0 for i in range(len(budget.gpu_bytes)))
            peak = tuple(max(b - MEGATRAIN_CUDA_CONTEXT, 0) if b else 0 for b in per_gpu)
            return Placement(per_gpu, host, 0, n_layers, "full", gpu_peak_bytes=peak)
    return on(gpu, megatrain.host_step_bytes(arch), "full", 0, MEGATRAIN_CUDA_CONTEXT)
