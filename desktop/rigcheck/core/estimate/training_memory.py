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

from dataclasses import dataclass, replace
from typing import Literal

from rigcheck.core.estimate import training_mixers as mixers
from rigcheck.core.estimate.lora_targets import SOURCE as LORA_SOURCE
from rigcheck.core.estimate.lora_targets import lora_param_count, lora_plan
from rigcheck.core.estimate.training_mixers import (
    Attention,
    backward_token_bytes,
    ffn_width,
    layer_token_bytes,
)
from rigcheck.core.estimate.training_profiles import (
    Optimizer,
    Precision,
    Profile,
    TrainCheckpointing,
)
from rigcheck.core.estimate.training_zero import ZERO_STEP_SOURCE, zero_step
from rigcheck.core.i18n import tr
from rigcheck.core.models.spec import ArchConfig

__all__ = ["Attention", "backward_token_bytes", "layer_token_bytes", "lora_param_count"]

Method = Literal["full", "lora", "qlora"]
Where = Literal["gpu", "host", "paged"]

GIB = 1024**3
#: "When PyTorch uses CUDA for the first time, it allocates between 300 MiB and 2 GiB of VRAM"
#: (vram.asmirnov.xyz); vLLM's start-up profile measures 0.16-1.79 GiB of non-torch memory (PR #10511,
#: #12126, #14447). Half a GiB is the low end a bare PyTorch training process shows.
CUDA_CONTEXT = GIB // 2
CONTEXT_SOURCE = "PyTorch CUDA context: 300 MiB-2 GiB (vram.asmirnov.xyz); vLLM non-torch 0.16-1.79 GiB"
KORTHIKANTI = "Korthikanti et al. 2022 (arXiv 2205.05198) tensor accounting, per saved tensor"
ZERO_MASTER = "ZeRO (arXiv 1910.02054) §3: mixed precision keeps fp32 master weights"
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


@dataclass(frozen=True)
class Part:
    category: Literal["weights", "gradients", "optimizer", "activations", "overhead"]
    name: str
    bytes: int
    where: Where
    formula: str
    source: str = ""


@dataclass(frozen=True)
class TrainingMemory:
    parts: tuple[Part, ...]
    trainable_params: int

    def on(self, where: Where) -> int:
        return sum(p.bytes for p in self.parts if p.where == where)

    @property
    def gpu_peak_bytes(self) -> int:
        """The allocator's peak: every GPU part but the CUDA context (paged states excluded)."""
        return sum(p.bytes for p in self.parts if p.where == "gpu" and p.category != "overhead")

    @property
    def gpu_bytes(self) -> int:
        """The process on the GPU as nvidia-smi shows it: the allocator peak and the CUDA context."""
        return self.on("gpu")

    @property
    def host_bytes(self) -> int:
        return self.on("host")


@dataclass(frozen=True)
class Setup:
    """How a run trains; ``None`` fields take the profile's own default."""

    method: Method
    profile: Profile
    optimizer: Optimizer
    precision: Precision = "bf16"
    checkpointing: TrainCheckpointing | None = None
    lora_rank: int | None = None
    lora_targets: tuple[str, ...] | None = None
    attention: Attention = "flash"
    #: data-parallel GPUs the model states are sharded over (FSDP / ZeRO-3); 1 = no sharding
    gpus: int = 1
    #: FSDP CPU offload / ZeRO-3 offload: parameters, gradients and optimizer states in host RAM
    offload_states: bool = False
    #: micro-batches per optimizer step (gradient accumulation); 1 = a step after every micro-batch
    grad_accumulation: int = 1
    #: the Gated DeltaNet kernels: fla's, or transformers' pure-torch fallback (Request.linear_kernels)
    linear_kernels: str = "fla"

    @property
    def mode(self) -> TrainCheckpointing:
        if self.checkpointing:
            return self.checkpointing
        sharded = self.profile.checkpointing_sharded
        return sharded if sharded and self.gpus > 1 else self.profile.checkpointing

    @property
    def rank(self) -> int:
        return self.lora_rank or self.profile.lora_rank

    @property
    def targets(self) -> tuple[str, ...]:
        return self.lora_targets or self.profile.lora_targets


def _loss(arch: ArchConfig, profile: Profile, tokens: int) -> Part:
    v = arch.vocab_size
    if profile.loss == "fused":
        total = 4 * tokens
        text = "fused linear-cross-entropy: logits never materialised, 4 B of log-sum-exp per token"
    elif profile.loss == "chunked":
        n = max(
            profile.loss_chunks, -(-tokens // profile.loss_chunk_tokens) if profile.loss_chunk_tokens else 1
        )
        total = 2 * v * tokens + 14 * v * -(-tokens // n)
        text = (
            f"bf16 logits (2·V per token) + one of {n} chunks in fp32: its copy, log-softmax, "
            "their gradients "
            f"and the chunk's bf16 gradient (14·V per token of the chunk)"
        )
    else:
        total = 16 * v * tokens
        text = (
            "bf16 logits (2·V) + fp32 log-softmax (4·V) + the fp32 gradients of both (8·V)"
            " + the bf16 gradient (2·V)"
        )
    return Part(
        "activations",
        tr("logits and loss"),
        total,
        "gpu",
        f"{text}, V = {v:,}, {tokens:,} tokens",
        profile.source.split(";")[0],
    )


def _activations(arch: ArchConfig, setup: Setup, context: int, batch: int) -> list[Part]:
    tokens = context * batch
    mode = setup.mode
    # selective recomputation recomputes attention's scores and softmax instead of saving them
    # (Korthikanti et al. 2022 §4.2), which is what flash attention never materialises anyway
    attention: Attention = "flash" if mode == "selective" else setup.attention
    fused = setup.profile.fused_kernels
    kernels = setup.linear_kernels
    every_layer = mixers.layers_token_bytes(arch, fused, attention, context, kernels) * tokens
    per_layer = mixers.largest_layer_token_bytes(arch, fused, attention, context, kernels) * tokens
    backward = mixers.largest_backward_token_bytes(arch, fused) * tokens
    inputs = 2 * arch.hidden_size * tokens
    layers = arch.num_layers
    kernel = ("fused kernels" if fused else "unfused kernels") + mixers.by_kind(arch)
    parts: list[Part] = []
    if mode in ("none", "selective"):
        parts.append(
            Part(
                "activations",
                tr("activations ({checkpointing} checkpointing)", checkpointing=mode),
                every_layer,
                "gpu",
                f"{layers} layers × saved tensors per token ({kernel}, {attention} attention)"
                f" × {tokens:,} tokens",
                mixers.source(arch, KORTHIKANTI),
            )
        )
    elif mode == "full":
        parts.append(
            Part(
                "activations",
                tr("checkpointed layer inputs"),
                inputs * layers,
                "gpu",
                f"2·h bytes × {layers} layers × {tokens:,} tokens",
                KORTHIKANTI,
            )
        )
        parts.append(
            Part(
                "activations",
                tr("one layer recomputed"),
                per_layer,
                "gpu",
                f"saved tensors of one layer ({kernel}) × {tokens:,} tokens",
                mixers.source(arch, KORTHIKANTI),
            )
        )
    else:  # offloaded: the inputs go to host RAM; two stay on the GPU in flight
        parts.append(
            Part(
                "activations",
                tr("checkpointed inputs in flight"),
                2 * inputs,
                "gpu",
                f"2 layers × 2·h bytes × {tokens:,} tokens",
                setup.profile.source,
            )
        )
        parts.append(
            Part(
                "activations",
                tr("one layer recomputed"),
                per_layer,
                "gpu",
                f"saved tensors of one layer ({kernel}) × {tokens:,} tokens",
                mixers.source(arch, KORTHIKANTI),
            )
        )
        parts.append(
            Part(
                "activations",
                tr("checkpointed layer inputs (offloaded)"),
                inputs * layers,
                "host",
                f"2·h bytes × {layers} layers × {tokens:,} tokens",
                setup.profile.source,
            )
        )
    parts.append(
        Part(
            "activations",
            tr("one layer's backward gradients"),
            backward,
            "gpu",
            f"dL/dx, dL/d(gate, up), dL/dq,k,v of one layer{mixers.backward_words(arch)} × {tokens:,} tokens",
            mixers.source(arch, KORTHIKANTI),
        )
    )
    parts.append(_loss(arch, setup.profile, tokens))
    return parts


def _largest_layer(arch: ArchConfig) -> int:
    return max(arch.layer_params) if arch.layer_params else arch.params_total // max(arch.num_layers, 1)


def _states(setup: Setup, trainable: int, param_bytes: int, where: Where, label: str) -> list[Part]:
    opt, prof = setup.optimizer, setup.profile
    master = setup.method == "full" and param_bytes < 4 and prof.fp32_master
    if opt.param_dtype_states is not None and param_bytes < 4 and not master:
        per = opt.param_dtype_states * 2  # two states in the parameter's 16-bit dtype
        how = f"{opt.name}: 2 states × {opt.param_dtype_states} B (the parameters' dtype)"
    else:
        per = int(opt.fp32_state_bytes)
        how = f"{opt.name}: {opt.fp32_state_bytes:g} B per parameter"
    place: Where = "host" if opt.on_host else ("paged" if opt.paged and where == "gpu" else where)
    parts = [
        Part(
            "optimizer",
            tr("model optimizer states") if label == "model" else tr("adapter optimizer states"),
            per * trainable,
            place,
            f"{trainable:,} × {per} B ({how})",
            opt.source,
        )
    ]
    if master:
        parts.append(
            Part(
                "optimizer",
                tr("fp32 master weights"),
                4 * trainable,
                "host" if opt.on_host else where,
                f"{trainable:,} × 4 B",
                ZERO_MASTER,
            )
        )
    return parts


def _megatrain_memory(arch: ArchConfig, context: int, batch: int) -> TrainingMemory:
    """MegaTrain's own accounting (placement/megatrain.py): the step's state in host RAM, on the GPU the
    layer buffers and templates, one layer's (or the head's) gradients, the checkpoints and the larger of
    the loss and one layer's backward -- the figures its placement uses, so estimate and fit agree."""
    from rigcheck.core.estimate.placement import megatrain as mt

    params = arch.params_total
    weights = mt.weight_bytes(arch)
    checkpoints = batch * mt.checkpoint_bytes(arch, context)
    phase = batch * (mt.sample_bytes(arch, context) - mt.checkpoint_bytes(arch, context))
    src = mt.SOURCE
    tokens = f"{batch * context:,} tokens"
    bf16 = "bf16"

    def part(category: str, name: str, size: int, where: Where, formula: str) -> Part:
        return Part(category, name, size, where, formula, src)  # type: ignore[arg-type]

    parts = (
        part("weights", tr("weights ({precision})", precision=bf16), 2 * params, "host", f"{params:,} × 2 B"),
        part("optimizer", tr("fp32 Adam m and v"), 8 * params, "host", f"{params:,} × 8 B"),
        part(
            "gradients",
            tr("gradients ({precision})", precision=bf16),
            2 * params,
            "host",
            f"{params:,} × 2 B, at the step",
        ),
        part(
            "overhead",
            tr("pinned buffers"),
            mt.staging_bytes(arch),
            "host",
            f"2 flat layer buffers, {mt.GRAD_SLABS} gradient slabs, head and embedding slabs, bf16",
        ),
        part(
            "weights",
            tr("layer buffers, templates, embedding and head"),
            weights,
            "gpu",
            "2 flat buffers of the largest layer, 2 templates per layer structure, embedding and head, bf16",
        ),
        part(
            "gradients",
            tr("one layer's gradients"),
            mt.fixed_bytes(arch) - weights,
            "gpu",
            "the largest layer's or the head's bf16 gradients",
        ),
        part(
            "activations",
            tr("checkpointed hidden states"),
            checkpoints,
            "gpu",
            f"every {mt.CHECKPOINT_INTERVAL} layers and after the last, 2·h B × {tokens}",
        ),
        part(
            "activations",
            tr("the larger of the loss and one layer's backward"),
            phase,
            "gpu",
            f"every loss chunk's bf16 logits, or {mt.CHECKPOINT_INTERVAL} recomputed states and one layer's "
            f"saved tensors and gradients, × {tokens}",
        ),
        part("overhead", tr("CUDA context"), mt.CUDA_CONTEXT, "gpu", "2 GB (MegaTrain's calc_resource.py)"),
    )
    return TrainingMemory(tuple(p for p in parts if p.bytes > 0), params)


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


#: torch.optim.AdamW's default on CUDA tensors is the foreach implementation (_default_to_fused_or_foreach),
#: whose step materialises sqrt(v) for every parameter at once beside the gradients and states
FOREACH_SQRT = (
    "pytorch/pytorch torch/optim/adam.py _multi_tensor_adam: exp_avg_sq_sqrt = torch._foreach_sqrt(v)"
)
#: stacks whose "adamw" is torch.optim.AdamW with its defaults: HF Trainer's optim "adamw_torch" (TRL,
#: axolotl, LLaMA-Factory; transformers TrainingArguments default) and LitGPT's configs (optimizer
#: class_path torch.optim.AdamW); torchtune's recipes pass fused: True, DeepSpeed steps its own FusedAdam
FOREACH_ADAMW_STACKS = frozenset({"transformers", "axolotl", "llama-factory", "litgpt"})


def _step_temporary(setup: Setup, adam: Part, parts: list[Part]) -> list[Part]:
    """torch AdamW's step: a v-sized temporary (half of ``adam``, the m and v part) while the gradients
    and states live and the activations are freed, so it adds only what it exceeds the activations by."""
    opt = setup.optimizer
    if opt.name != "adamw" or opt.on_host or setup.offload_states or adam.where != "gpu":
        return []
    if setup.profile.framework not in FOREACH_ADAMW_STACKS:
        return []
    if setup.method == "full" and setup.profile.optimizer_in_backward:
        return []
    sqrt_v = adam.bytes // 2
    freed = sum(p.bytes for p in parts if p.category == "activations" and p.where == "gpu")
    if sqrt_v <= freed:
        return []
    return [
        Part(
            "optimizer",
            tr("AdamW step: sqrt(v) for every parameter"),
            sqrt_v - freed,
            "gpu",
            f"{sqrt_v:,} B of sqrt(v) beyond the {freed:,} B of activations the step has freed",
            FOREACH_SQRT,
        )
    ]


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
