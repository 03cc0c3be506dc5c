"""Training memory as frameworks allocate it: model states by optimizer and precision, LoRA adapters,
QLoRA's NF4 base with its fp32 casts and dequantisation buffer, activations by checkpointing mode and
kernel, the logits and loss by how the framework computes them, and sharding over data-parallel GPUs.

``training_memory`` returns :class:`Part`\\ s, each with where it lives (``gpu``, ``host`` or ``paged``:
bitsandbytes' paged optimizer states, on the GPU while they fit and in host RAM when it is full) and its
formula; ``gpu_peak_bytes`` is what the PyTorch allocator's peak would show
(``torch.cuda.max_memory_allocated``) and ``gpu_bytes`` adds the CUDA context, what nvidia-smi shows.

Activations count the 16-bit tensors autograd saves per token in one decoder layer (inputs of each
norm and linear, RoPE's q/k, the attention output, the gated MLP's gate, up, SiLU and product), the
fp32 copies unfused RMSNorms make, and — without flash attention — the ``5·a·s`` bytes of scores,
softmax and dropout mask per token (Korthikanti et al. 2022, arXiv 2205.05198). Full checkpointing keeps
each layer's input (``2·h`` bytes per token) and recomputes one layer at a time; offloaded
checkpointing (Unsloth's) moves those inputs to host RAM.
"""

from __future__ import annotations

from dataclasses import replace

from rigcheck.core.estimate.lora_targets import SOURCE as LORA_SOURCE
from rigcheck.core.estimate.lora_targets import lora_param_count, lora_plan
from rigcheck.core.estimate.training_activations import KORTHIKANTI, _activations
from rigcheck.core.estimate.training_megatrain import _megatrain_memory
from rigcheck.core.estimate.training_mixers import (
    Attention,
    backward_token_bytes,
    ffn_width,
    layer_token_bytes,
)
from rigcheck.core.estimate.training_states import (
    FOREACH_ADAMW_STACKS,
    FOREACH_SQRT,
    ZERO_MASTER,
    _states,
    _step_temporary,
)
from rigcheck.core.estimate.training_types import Method, Part, Setup, TrainingMemory, Where
from rigcheck.core.estimate.training_zero import ZERO_STEP_SOURCE, zero_step
from rigcheck.core.i18n import tr
from rigcheck.core.models.spec import ArchConfig

__all__ = [
    "FOREACH_ADAMW_STACKS",
    "FOREACH_SQRT",
    "KORTHIKANTI",
    "ZERO_MASTER",
    "Attention",
    "Method",
    "Part",
    "Setup",
    "TrainingMemory",
    "Where",
    "backward_token_bytes",
    "layer_token_bytes",
    "lora_param_count",
]

GIB = 1024**3
#: "When PyTorch uses CUDA for the first time, it allocates between 300 MiB and 2 GiB of VRAM"
#: (vram.asmirnov.xyz); vLLM's start-up profile measures 0.16-1.79 GiB of non-torch memory (PR #10511,
#: #12126, #14447). Half a GiB is the low end a bare PyTorch training process shows.
CUDA_CONTEXT = GIB // 2
CONTEXT_SOURCE = "PyTorch CUDA context: 300 MiB-2 GiB (vram.asmirnov.xyz); vLLM non-torch 0.16-1.79 GiB"
GATHER = "PyTorch FSDP backward_prefetch; DeepSpeed ZeRO-3 prefetch"
NO_SYNC = (
    "pytorch/pytorch torch/distributed/fsdp/fully_sharded_data_parallel.py FullyShardedDataParallel.no_sync: "
    "'FSDP will accumulate the full model gradients (instead of gradient shards) until the eventual sync'"
)
FSDP_ROOT = (
    "pytorch/pytorch torch/distributed/fsdp/_runtime_utils.py _post_forward: the root unit is not resharded "
    "after forward; litgpt FSDPStrategy(auto_wrap_policy={Block}) leaves wte and lm_head in the root"
)
FULL_LOAD = (
    "Lightning-AI/litgpt lit_gpt/utils.py@b732986 load_checkpoint: fabric.load_raw under "
    "FSDPStrategy(state_dict_type='full'); finetune/lora.py@0010d8e init_module(empty_init=False)"
)


def _largest_layer(arch: ArchConfig) -> int:
    return max(arch.layer_params) if arch.layer_params else arch.params_total // max(arch.num_layers, 1)


def training_memory(arch: ArchConfig, setup: Setup, context: int, batch: int) -> TrainingMemory:
    """The memory of one training step of ``arch`` at ``context`` × ``batch`` tokens per GPU."""
    prof = setup.profile
    if prof.framework == "megatrain" and setup.method == "full":
        return _megatrain_memory(arch, context, batch)
    if prof.unties_embeddings and arch.tie_word_embeddings:  # the head becomes its own V × h matrix
        arch = replace(arch, tie_word_embeddings=False, head_params=arch.head_params + arch.embed_params)
    params = arch.params_total
    pbytes = 4 if setup.precision == "fp32" else 2
    shard = max(setup.gpus, 1)
    states_at: Where = "host" if setup.offload_states else "gpu"
    largest = _largest_layer(arch)
    parts: list[Part] = []
    if setup.method == "full":
        trainable = params
        parts.append(
            Part(
                "weights",
                tr("weights ({precision})", precision=setup.precision),
                pbytes * params // shard,
                states_at,
                f"{params:,} × {pbytes} B" + (f" / {shard} GPUs" if shard > 1 else ""),
                prof.source,
            )
        )
        in_backward = prof.optimizer_in_backward and (shard == 1 or prof.in_backward_sharded)
        if in_backward and not setup.offload_states:
            biggest = max(arch.embed_params, arch.head_params, largest // 4)
            parts.append(
                Part(
                    "gradients",
                    tr("gradients (stepped inside backward)"),
                    pbytes * biggest,
                    "gpu",
                    f"the largest tensor's gradient only: {biggest:,} × {pbytes} B",
                    prof.source,
                )
            )
        elif _unsharded_gradients(setup):
            parts.append(
                Part(
                    "gradients",
                    tr("gradients, unsharded while accumulating"),
                    pbytes * params,
                    "gpu",
                    f"{params:,} × {pbytes} B on every GPU: {setup.grad_accumulation} micro-batches "
                    "accumulated under FSDP no_sync()",
                    NO_SYNC,
                )
            )
        else:
            parts.append(
                Part(
                    "gradients",
                    tr("gradients ({precision})", precision=setup.precision),
                    pbytes * params // shard,
                    states_at,
                    f"{params:,} × {pbytes} B" + (f" / {shard} GPUs" if shard > 1 else ""),
                    prof.source,
                )
            )
        states = _states(setup, params // shard, pbytes, states_at, "model")
        parts.extend(states)
        gathered = pbytes * largest
    else:
        plan = lora_plan(arch, setup.targets)
        trainable = plan.params(setup.rank)
        outside = arch.embed_params + arch.head_params
        if setup.method == "qlora":
            body = params - outside
            casts = 4 if prof.qlora_fp32_casts else 2
            base = int(body * prof.nf4_bits / 8) + casts * outside
            formula = (
                f"{body:,} layer parameters × {prof.nf4_bits:g} bits (NF4) + embedding and head × {casts} B"
            )
            gathered = int(largest * prof.nf4_bits / 8)
        else:
            base, formula, gathered = pbytes * params, f"{params:,} × {pbytes} B (frozen)", pbytes * largest
        parts.append(
            Part(
                "weights",
                tr("base weights"),
                base // shard,
                states_at,
                formula + (f" / {shard} GPUs" if shard > 1 else ""),
                prof.source,
            )
        )
        abytes = 4 if setup.precision == "fp32" else prof.adapter_bytes
        targets = ",".join(setup.targets)
        parts.append(
            Part(
                "weights",
                tr("LoRA adapters"),
                abytes * trainable // shard,
                "gpu",
                f"rank {setup.rank} × (in + out) of the modules {targets} wraps: {plan.words()}"
                f" = {trainable:,} × {abytes} B",
                f"{prof.source}; {LORA_SOURCE}",
            )
        )
        parts.append(
            Part(
                "gradients",
                tr("adapter gradients"),
                abytes * trainable // shard,
                "gpu",
                f"{trainable:,} × {abytes} B" + (f" / {shard} GPUs" if shard > 1 else ""),
            )
        )
        states = _states(setup, trainable // shard, abytes, "gpu", "adapter")
        parts.extend(states)
        if setup.method == "qlora":
            linear = arch.hidden_size * ffn_width(arch)
            parts.append(
                Part(
                    "weights",
                    tr("NF4 dequantisation buffers"),
                    2 * 2 * linear,
                    "gpu",
                    f"the largest linear ({linear:,} weights) in bf16, forward and backward",
                    prof.source,
                )
            )
    if shard > 1 or setup.offload_states:  # FSDP / ZeRO-3 gather the running layer and prefetch the next
        parts.append(
            Part(
                "weights",
                tr("gathered layers (running + prefetched)"),
                2 * gathered,
                "gpu",
                f"2 × the largest layer ({largest:,} parameters)",
                GATHER,
            )
        )
    if shard > 1 and prof.fsdp_root_unsharded and not setup.offload_states:
        outer = arch.embed_params + arch.head_params
        outer_bytes = pbytes * outer - pbytes * outer // shard
        parts.append(
            Part(
                "weights",
                tr("embedding and head gathered (FSDP root unit)"),
                outer_bytes,
                "gpu",
                f"{outer:,} × {pbytes} B unsharded, less this GPU's shard",
                FSDP_ROOT,
            )
        )
    parts.extend(_activations(arch, setup, context, batch))
    parts.extend(_step_temporary(setup, states[0], parts))
    freed = sum(p.bytes for p in parts if p.category == "activations" and p.where == "gpu")
    zero = zero_step(setup, params // shard if setup.method == "full" else 0, pbytes, freed)
    if zero is not None:  # DeepSpeed ZeRO's step: a sub-group's gradient in fp32 (training_zero)
        parts.append(Part("optimizer", zero[0], zero[1], "gpu", zero[2], ZERO_STEP_SOURCE))
    if shard > 1 and setup.method in prof.full_state_dict_load:
        # the unsharded checkpoint each rank loads stays allocated beside training (LitGPT's LoRA rows on
        # two and four GPUs grow with the micro-batch on top of it)
        parts.append(
            Part(
                "weights",
                tr("full checkpoint loaded on each GPU"),
                pbytes * params,
                "gpu",
                f"{params:,} × {pbytes} B: the unsharded checkpoint each rank loads (a full state dict)",
                FULL_LOAD,
            )
        )
    parts.append(Part("overhead", tr("CUDA context"), CUDA_CONTEXT, "gpu", "0.5 GiB", CONTEXT_SOURCE))
    return TrainingMemory(tuple(p for p in parts if p.bytes > 0), trainable)


def _unsharded_gradients(setup: Setup) -> bool:
    """Full fine-tuning sharded over several GPUs that accumulates micro-batches under FSDP's no_sync():
    every rank keeps the whole model's gradients until the step's last micro-batch syncs them."""
    return (
        setup.gpus > 1
        and setup.grad_accumulation > 1
        and setup.profile.fsdp_no_sync_accumulation
        and not setup.offload_states
    )


def with_paged(memory: TrainingMemory, gpu_capacity: int) -> TrainingMemory:
    """Paged optimizer states count on the GPU when they fit next to the rest, else in host RAM."""
    paged = memory.on("paged")
    if not paged:
        return memory
    where: Where = "gpu" if memory.gpu_bytes + paged <= gpu_capacity else "host"
    parts = tuple(
        Part(p.category, p.name, p.bytes, where, p.formula, p.source) if p.where == "paged" else p
        for p in memory.parts
    )
    return TrainingMemory(parts, memory.trainable_params)


def max_context(
    arch: ArchConfig, setup: Setup, batch: int, gpu_capacity: int, limit: int = 4 * 1024 * 1024
) -> int:
    """The largest context whose step fits ``gpu_capacity`` bytes of GPU (process total); 0 if none."""

    def fits(ctx: int) -> bool:
        return with_paged(training_memory(arch, setup, ctx, batch), gpu_capacity).gpu_bytes <= gpu_capacity

    if not fits(1):
        return 0
    low, high = 1, limit
    if fits(high):
        return high
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if fits(mid) else (low, mid)
    return low
