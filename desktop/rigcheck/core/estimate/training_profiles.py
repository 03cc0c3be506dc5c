"""How each fine-tuning stack trains by default, and what each optimizer keeps per parameter.

A :class:`Profile` is one framework's own defaults, each with where it comes from: how the loss treats
the logits (materialised in fp32, chunked, or fused so they never exist), the activation checkpointing
it turns on, whether its kernels are fused, the LoRA shape its recipes use, the dtype of LoRA adapters,
whether QLoRA's preparation casts the embedding and head to fp32, and the optimizer. The memory terms
(``training_memory.py``) read these; nothing here computes bytes of a model.

:data:`OPTIMIZERS` are bytes of optimizer state per trained parameter, by state precision, and whether
the states are paged (bitsandbytes' paged optimizers allocate CUDA unified memory, which the driver
moves to host RAM when the GPU is full, so the PyTorch allocator peak does not include them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rigcheck.core.estimate.lora_targets import MIXER_NAMES, SHORT

Framework = Literal[
    "transformers", "unsloth", "torchtune", "axolotl", "llama-factory", "litgpt", "deepspeed", "megatrain"
]
OptimizerName = Literal[
    "adamw", "adamw-8bit", "paged-adamw", "paged-adamw-8bit", "adafactor", "sgd", "deepspeed-cpu-adam"
]
Precision = Literal["bf16", "fp16", "fp32"]
TrainCheckpointing = Literal["none", "selective", "full", "offloaded"]
#: how the loss holds the logits: ``full`` (every token's logits, an fp32 copy, its log-softmax and
#: gradient), ``chunked`` (bf16 logits kept, fp32 work one chunk at a time), ``fused`` (logits never
#: materialised: Cut Cross-Entropy / fused linear-cross-entropy kernels)
LossKind = Literal["full", "chunked", "fused"]

FRAMEWORKS: tuple[Framework, ...] = (
    "transformers", "unsloth", "torchtune", "axolotl", "llama-factory", "litgpt", "deepspeed", "megatrain"
)  # fmt: skip
#: the seven projections of a llama-style layer, by name (Unsloth's default target_modules)
ALL_LINEAR = SHORT
#: every linear module but the head, whatever its name (PEFT target_modules="all-linear", LLaMA-Factory
#: lora_target all, axolotl lora_target_linear); on a llama-style model the same seven as ALL_LINEAR
ALL = ("all-linear",)


@dataclass(frozen=True)
class Optimizer:
    name: OptimizerName
    #: bytes of state per trained parameter when the states are kept in fp32 (AdamW: m and v)
    fp32_state_bytes: float
    #: bytes per trained parameter when the states follow 16-bit parameters (torch optimizers keep
    #: their states in the parameter's dtype); None when the optimizer fixes its own width
    param_dtype_states: int | None
    paged: bool = False
    #: the states live in host memory and the step runs on the CPU
    on_host: bool = False
    source: str = ""


OPTIMIZERS: dict[str, Optimizer] = {
    "adamw": Optimizer("adamw", 8, 2, source="torch.optim.AdamW: exp_avg and exp_avg_sq, zeros_like(param)"),
    "adamw-8bit": Optimizer(
        "adamw-8bit",
        2,
        None,
        source="bitsandbytes AdamW8bit: two 8-bit states with blockwise (2048) fp32 scales",
    ),
    "paged-adamw": Optimizer(
        "paged-adamw", 8, 2, paged=True, source="bitsandbytes PagedAdamW (32-bit states)"
    ),
    "paged-adamw-8bit": Optimizer(
        "paged-adamw-8bit",
        2,
        None,
        paged=True,
        source="bitsandbytes PagedAdamW8bit (torchtune 8B full recipe)",
    ),
    "adafactor": Optimizer(
        "adafactor",
        0,
        None,
        source="Adafactor (arXiv 1804.04235): factored second moment, rows + columns per matrix",
    ),
    "sgd": Optimizer("sgd", 0, None, source="torch.optim.SGD with momentum 0 keeps no state"),
    "deepspeed-cpu-adam": Optimizer(
        "deepspeed-cpu-adam",
        8,
        None,
        on_host=True,
        source="DeepSpeed DeepSpeedCPUAdam: fp32 m and v in host RAM",
    ),
}


@dataclass(frozen=True)
class Profile:
    framework: Framework
    #: the training stack as users know it, for answers ("TRL + PEFT (transformers)")
    stack: str
    loss: LossKind
    #: logits chunks a ``chunked`` loss works through one at a time
    loss_chunks: int
    checkpointing: TrainCheckpointing
    #: fused RMSNorm / SwiGLU / RoPE kernels save their inputs only (Unsloth's Triton kernels)
    fused_kernels: bool
    optimizer_full: OptimizerName
    optimizer_lora: OptimizerName
    #: full fine-tuning: the optimizer steps each parameter inside backward, so only one gradient lives
    optimizer_in_backward: bool
    #: bf16 training keeps fp32 master weights (mixed precision) rather than pure bf16 parameters
    fp32_master: bool
    lora_rank: int
    lora_alpha: int
    lora_targets: tuple[str, ...]
    #: LoRA A/B dtype bytes (PEFT upcasts adapters of a 16-bit base to fp32)
    adapter_bytes: int
    #: QLoRA preparation casts the 16-bit modules left (embedding, head, norms) to fp32
    qlora_fp32_casts: bool
    #: bits per NF4 weight including its quantisation constants
    nf4_bits: float
    source: str
    #: a chunked loss that works through a fixed number of tokens at a time (litgpt: 128), 0 = ``loss_chunks``
    loss_chunk_tokens: int = 0
    #: sharded over several GPUs, each rank loads the whole 16-bit checkpoint into its sharded model (a
    #: full state dict), which the run's allocator peak keeps; only the methods whose script builds the
    #: model whole on the GPU before sharding it (LitGPT's LoRA script: ``init_module(empty_init=False)``;
    #: its full script builds it on the meta device on several GPUs and fills the shards)
    full_state_dict_load: tuple[str, ...] = ()
    #: micro-batches accumulated under FSDP's ``no_sync()`` (no reduce-scatter until the last one), which
    #: keeps every rank's gradients unsharded: "FSDP will accumulate the full model gradients (instead of
    #: gradient shards) until the eventual sync" (torch FullyShardedDataParallel.no_sync docstring)
    fsdp_no_sync_accumulation: bool = False
    #: FSDP wraps each decoder block (auto_wrap_policy={Block}), leaving the embedding and head in the
    #: root unit, whose parameters FSDP keeps unsharded from the forward to the end of the backward
    fsdp_root_unsharded: bool = False
    #: the framework's converted checkpoint keeps a separate output head for a model that ties it to the
    #: embedding, and trains both (LitGPT convert_hf_checkpoint.py@00af8b0: lm_head.weight = wte.weight)
    unties_embeddings: bool = False
    #: the checkpointing the framework turns on when it shards over several GPUs (None: ``checkpointing``)
    checkpointing_sharded: TrainCheckpointing | None = None
    #: launched on several GPUs, the framework shards the model states over them by its own default
    #: (FSDP); otherwise each GPU is a data-parallel replica holding the whole step (DDP)
    shards_over_gpus: bool = False
    #: full fine-tuning sharded over several GPUs: the optimizer the distributed recipe uses (None: the
    #: single-GPU ``optimizer_full``), and whether it still steps inside the backward
    optimizer_full_sharded: OptimizerName | None = None
    in_backward_sharded: bool = True


_HF_LOSS = (
    "transformers LlamaForCausalLM.forward / ForCausalLMLoss: bf16 logits, logits.float(), cross_entropy's "
    "log-softmax and its gradient in fp32"
)
_PEFT = (
    "PEFT LoraModel autocast_adapter_dtype=True (adapters of a bf16/fp16 base in fp32); "
    "prepare_model_for_kbit_training casts non-quantised parameters to fp32; bitsandbytes NF4 blocksize 64 "
    "(4.5 bits, 4.127 with double quantisation, QLoRA arXiv 2305.14314 §3)"
)
_QLORA_RECIPE = (
    "artidoro/qlora qlora.py TrainingArguments: optim paged_adamw_32bit, gradient_checkpointing True"
)

PROFILES: dict[str, Profile] = {
    "transformers": Profile(
        "transformers", "TRL + PEFT (transformers)", "full", 1, "full", False, "adamw", "adamw",
        False, False, 16, 32, ALL, 4, True, 4.5,
        f"{_HF_LOSS}; {_PEFT}; {_QLORA_RECIPE}",
    ),
    "unsloth": Profile(
        "unsloth", "Unsloth", "fused", 1, "offloaded", True, "adamw-8bit", "adamw-8bit",
        False, False, 16, 16, ALL_LINEAR, 4, False, 4.127,
        "unslothai/unsloth README.md@000252c: Cut Cross Entropy, use_gradient_checkpointing='unsloth' "
        "(checkpoints offloaded to RAM), Triton kernels, r=16 alpha=16 on q/k/v/o/gate/up/down_proj "
        "(unsloth/models/llama.py@015bdef FastLlamaModel.get_peft_model target_modules: names, so a Gated "
        "DeltaNet layer's projections are not among them), "
        "optim adamw_8bit, "
        "pre-quantised bnb-4bit models (double quantisation)",
    ),
    "torchtune": Profile(
        "torchtune", "torchtune", "chunked", 8, "full", False, "paged-adamw-8bit", "adamw",
        True, False, 8, 16, ("q", "v"), 2, False, 4.127,
        "pytorch/torchtune recipes/configs/llama3_1/*.yaml@0031bfb: CEWithChunkedOutputLoss (8 chunks), "
        "enable_activation_checkpointing True, 8B full: PagedAdamW8bit with optimizer_in_bwd, "
        "LoRA r=8 alpha=16 "
        "on q,v in bf16; torchao NF4 (block 64, double-quantised scales); on several GPUs the distributed "
        "recipes (full_finetune_distributed.py, lora_finetune_distributed.py) shard with "
        "training.shard_model (FSDP); the distributed full recipe (8B_full.yaml: torch.optim.AdamW, "
        "fused) has no optimizer_in_bwd (recipes/full_finetune_distributed.py@0031bfb)",
        shards_over_gpus=True,
        optimizer_full_sharded="adamw",
        in_backward_sharded=False,
    ),
    "axolotl": Profile(
        "axolotl", "Axolotl (transformers)", "full", 1, "full", False, "adamw", "adamw",
        False, False, 8, 16, ALL, 4, True, 4.127,
        "axolotl runs transformers' Trainer with PEFT (lora_target_linear: every linear layer; "
        "examples/qwen3-next/qwen3-next-80b-a3b-qlora.yaml@34f8854 names the Gated DeltaNet, shared-expert "
        "and attention projections); {_HF_LOSS}; {_PEFT}",
    ),
    "llama-factory": Profile(
        "llama-factory", "LLaMA-Factory (transformers)", "full", 1, "full", False, "adamw", "adamw",
        False, False, 8, 16, ALL, 4, True, 4.5,
        "hiyouga/LLaMA-Factory hparams: lora_rank 8, lora_target all, gradient checkpointing unless "
        f"disable_gradient_checkpointing; transformers' Trainer; {_HF_LOSS}",
    ),
    "litgpt": Profile(
        "litgpt", "LitGPT", "chunked", 1, "none", False, "adamw", "adamw",
        False, False, 8, 16, ("q", "v"), 2, False, 4.5,
        "Lightning-AI/litgpt finetune/lora.py@0010d8e: --precision bf16-true (pure bf16), "
        "lora_r 8, lora_alpha 16 "
        "on query and value, lm_head_chunk_size=128 with chunked_cross_entropy, "
        "no activation checkpointing on one GPU (FSDP with activation_checkpointing_policy={Block} "
        "on several); lit_gpt/utils.py@b732986 load_checkpoint: fabric.load_raw under "
        "FSDPStrategy(state_dict_type='full') on several GPUs; litgpt/finetune/full.py@00af8b0: "
        "init_module(empty_init=(fabric.world_size > 1)), accumulation inside "
        "fabric.no_backward_sync(model, enabled=is_accumulating), which under FSDP is module.no_sync()",
        128,
        ("lora",),
        True,
        True,
        True,
        "full",
        True,
    ),
    "deepspeed": Profile(
        "deepspeed", "DeepSpeed (transformers Trainer)", "full", 1, "full", False, "adamw", "adamw",
        False, True, 16, 32, ALL, 4, True, 4.5,
        f"ZeRO (arXiv 1910.02054) §3 mixed precision: fp32 master + m + v = 12 bytes; {_HF_LOSS}",
    ),
    "megatrain": Profile(
        "megatrain", "MegaTrain", "chunked", 8, "full", False, "deepspeed-cpu-adam", "deepspeed-cpu-adam",
        False, True, 16, 32, ALL, 4, False, 4.5,
        "DLYuanGod/MegaTrain: parameters and DeepSpeedCPUAdam states in host RAM, layers streamed",
    ),
}  # fmt: skip


#: the stack a training request runs when it names none, per workload: Hugging Face transformers' Trainer
#: (TRL's SFTTrainer) with PEFT for LoRA and QLoRA, and the same Trainer for full fine-tuning — the stack
#: the QLoRA paper's own script (artidoro/qlora qlora.py), PEFT's examples and the ``trl sft`` command
#: RigCheck prints all run. Full fine-tuning offloaded to host RAM (fit --offload) keeps this estimate of
#: the step and places its states the offload's way.
DEFAULT_FRAMEWORK: dict[str, Framework] = {
    "full": "transformers",
    "lora": "transformers",
    "qlora": "transformers",
}


def default_framework(workload: str) -> Framework:
    """The framework a ``workload`` (full, lora, qlora) trains with when none is asked for."""
    return DEFAULT_FRAMEWORK.get(workload, "transformers")


#: where the frameworks that shard by default say so
SHARDING_SOURCE = (
    "Lightning-AI/litgpt litgpt/finetune/full.py@00af8b0, lora.py: 'if devices * num_nodes > 1: strategy = "
    "FSDPStrategy(...)'; pytorch/torchtune recipes/*_distributed.py: training.shard_model"
)


def default_gpus(framework: str, machine_gpus: int) -> int:
    """The GPUs a training run shards over when the user does not say: all of the machine's for a
    framework that shards by default on several GPUs (LitGPT, torchtune), else 1 (each GPU of a
    data-parallel run holds the whole step, so the estimate per GPU is the single-GPU one)."""
    prof = PROFILES.get(framework)
    return max(machine_gpus, 1) if prof is not None and prof.shards_over_gpus else 1


def run_gpus(framework: str | None, workload: str, machine_gpus: int) -> int:
    """:func:`default_gpus` for a run that may name no framework (then the workload's default one): what
    ``rigcheck fit`` without ``--gpus`` and the Fit page's "framework default" train on."""
    return default_gpus(framework or default_framework(workload), machine_gpus)


def stack_name(framework: str | None) -> str:
    """The training stack an answer names: the framework's, else the default one's (TRL + PEFT, the stack
    the ``trl sft`` command runs)."""
    return PROFILES[framework].stack if framework in PROFILES else PROFILES["transformers"].stack


def profile(framework: str) -> Profile:
    """The profile of ``framework``; raises KeyError for an unknown one (the CLI's choices list them)."""
    return PROFILES[framework]


def optimizer(name: str) -> Optimizer:
    return OPTIMIZERS[name]


def parse_targets(text: str) -> tuple[str, ...]:
    """``all`` (PEFT's ``all-linear``) / ``attention`` / ``mlp`` or names: ``q,v`` or ``q_proj,v_proj``
    (``o_proj``/``output_proj`` → ``o``), or a hybrid's own module names (``in_proj_qkvz``, ``out_proj``,
    ``kv_b_proj``: lora_targets.MIXER_NAMES). Unknown names are returned as given for the caller to reject
    with the known list."""
    words = [w.strip().lower() for w in text.replace(" ", ",").split(",") if w.strip()]
    if words in (["all"], ["all-linear"]):
        return ALL
    if words == ["attention"]:
        return ("q", "k", "v", "o")
    if words == ["mlp"]:
        return ("gate", "up", "down")
    found: list[str] = []
    for word in words:
        # PEFT matches a dotted name by suffix: linear_attn.out_proj, shared_expert.up_proj, self_attn.q_proj
        leaf = word.rsplit(".", 1)[-1]
        if leaf in MIXER_NAMES:  # a hybrid's own module names (in_proj_qkvz, out_proj) stay as given
            found.append(leaf)
            continue
        if "." in word and not leaf.endswith("_proj"):
            found.append(word)  # mlp.gate (a router) and the like: left for the caller to reject
            continue
        name = leaf.removesuffix("_proj")
        name = {"output": "o", "out": "o", "query": "q", "key": "k", "value": "v"}.get(name, name)
        if name not in found:
            found.append(name)
    return tuple(found)
