"""MegaTrain's memory, counted from what its code allocates.

The code read is the one its published runs used (DLYuanGod/MegaTrain @2a9f977: README 'Performance'
table, examples/train.py, infinity/model/cpu_master.py). What sits where:

Host RAM (the authoritative copy):
- the model's own parameters, loaded in bf16 (train.py: ``from_pretrained(torch_dtype=config.dtype)``,
  ``CPUMasterConfig.dtype = torch.bfloat16``): 2 B/param. There is no separate fp32 master copy.
- DeepSpeedCPUAdam's m and v in fp32 (deepspeedai/DeepSpeed deepspeed/ops/adam/cpu_adam.py:
  ``state_dtype = torch.float if self.fp32_optimizer_states``, default True): 8 B/param.
- the bf16 ``.grad`` the gradient worker accumulates (cpu_master.py ``_grad_worker``: ``empty_like``
  of the bf16 slab): 2 B/param, freed after the step by ``optimizer.zero_grad()`` (set_to_none).
- pinned staging: 2 flat layer buffers, 12 gradient slabs of the largest layer, one head and one
  embedding slab, all bf16.

So the step holds 2 + 2 + 8 = 12 B/param: the paper's own accounting as its summaries quote it ("12
bytes per parameter (BF16 weights + BF16 gradients + FP32 Adam moments)", ai-beat.github.io/news/2026/04/
megatrain-single-gpu-100b/; "2 for the BF16 weight, 2 for the BF16 gradient, and 8 for the FP32 first
and second moments", ai.thesatyajit.com/articles/megatrain-single-gpu-training, 2026-06-28), and
calc_resource.py's 12 (which names the parts "fp32 master + m + v"). What train.py logs, ``psutil``
RSS after the step with the gradients freed, is 10 B/param plus the staging: the README's ~327 GB
(Qwen2.5-32B) and ~275 GB (Qwen3.5-27B) are that reading. A machine must hold the step's 12. (Since
5cf47ac, 2026-04-17, the single-GPU code also pins a flat bf16 copy of every layer, layer_pinned_flats:
+2 B/param, with which 120B would need ~1.68 TB; this module counts the code of the published runs.)

GPU (train.py logs ``torch.cuda.max_memory_allocated``, the allocator peak):
- weights: 2 flat bf16 buffers of the largest layer, 2 bf16 templates per distinct layer structure
  (``gpu_layer_templates``, per structure group: a hybrid model has one group per layer kind), the
  embedding, final norm and head in bf16;
- checkpoints: the hidden state every K layers and after the last, B·T·h bf16 each, alive until the
  backward ends;
- then the larger of two phases: the loss, computed in 128-token chunks but with the graph kept until
  one ``loss.backward()``, so every chunk's bf16 logits stay (B·(T-1)·V: flash-attn's CrossEntropyLoss
  saves its logits input for the backward, ``ctx.save_for_backward(logits, lse, labels)``) beside the
  normed hidden state; or one layer's backward: the block's K recomputed hidden states
  (``recompute_cache`` holds all K outputs until the first of them is differentiated), that layer's saved
  activations and its input gradients (the per-token rules of training_mixers, by layer kind: a hybrid's
  Gated DeltaNet layers save other tensors than its attention layers, and the larger counts), and its bf16
  weight gradients. Samples are padded to ``max_seq_len`` (infinity/data/datasets.py
  ``padding="max_length"``), so T is the configured length whatever the data.

Several GPUs (data parallel since 5cf47ac, 2026-04-17: infinity/model/mp_state.py, mp_worker.py): one
worker process per GPU, each with the GPU state above for its share of the batch
(``batch_size // world_size``); host RAM holds one shared copy: the bf16 parameters, a shared flat bf16
copy of every layer (``layer_shared_flats``), shared bf16 gradients allocated once and zeroed in place
(``grad = torch.zeros_like(p.data); grad.share_memory_()``), the fp32 Adam m and v, and per worker its
pinned gradient slabs (12 of the largest layer, one head and one embedding slab). The CPU optimizer
steps once per step for all workers.
"""

from __future__ import annotations

from rigcheck.core.estimate.training_mixers import backward_token_bytes, kinds_counted, layer_token_bytes
from rigcheck.core.models.spec import ArchConfig

SOURCE = "DLYuanGod/MegaTrain infinity/model/cpu_master.py, examples/train.py @2a9f977"
#: checkpoint_interval and num_grad_slabs defaults (infinity/config/training.py)
CHECKPOINT_INTERVAL = 4
GRAD_SLABS = 12
#: bf16 parameters + fp32 Adam m, v: what stays in RAM between steps
HOST_RESIDENT_BYTES = 2 + 8
#: + the bf16 gradients during the step
HOST_STEP_BYTES = HOST_RESIDENT_BYTES + 2
#: several GPUs: shared bf16 parameters, shared layer flats, shared bf16 gradients, fp32 m and v (layers);
#: the embedding and head have no shared flat
SHARED_LAYER_BYTES = 2 + 2 + 2 + 8
SHARED_OUTSIDE_BYTES = 2 + 2 + 8
#: the CUDA context calc_resource.py budgets (CUDA_CONTEXT_GB); outside the allocator peak
CUDA_CONTEXT = 2 * 10**9
#: the chunked loss's chunk (cpu_master.py chunk_size)
LOSS_CHUNK = 128
BF16 = 2


def _largest(arch: ArchConfig) -> int:
    return max(arch.layer_params) if arch.layer_params else arch.params_total // max(arch.num_layers, 1)


def _groups(arch: ArchConfig) -> int:
    """Bytes of one template of each distinct layer structure (by layer kind and MoE-ness)."""
    sizes: dict[tuple[str, bool], int] = {}
    moe = arch.moe_layers or (False,) * arch.num_layers
    for kind, is_moe, params in zip(arch.layer_kinds, moe, arch.layer_params, strict=False):
        sizes[(kind, is_moe)] = max(sizes.get((kind, is_moe), 0), params)
    return sum(sizes.values()) or _largest(arch)


def staging_bytes(arch: ArchConfig) -> int:
    """Pinned host buffers: 2 flat layer buffers, the gradient slabs, the head and embedding slabs."""
    outside = arch.embed_params + arch.head_params
    return BF16 * ((2 + GRAD_SLABS) * _largest(arch) + outside)


def worker_staging_bytes(arch: ArchConfig) -> int:
    """Pinned host buffers of one worker on several GPUs: its gradient slabs, head and embedding slabs
    (the workers read the shared layer flats directly, no flat staging buffers)."""
    return BF16 * (GRAD_SLABS * _largest(arch) + arch.embed_params + arch.head_params)


def _shared_bytes(arch: ArchConfig) -> int:
    outside = arch.embed_params + arch.head_params
    return SHARED_LAYER_BYTES * (arch.params_total - outside) + SHARED_OUTSIDE_BYTES * outside


def host_resident_bytes(arch: ArchConfig, ranks: int = 1) -> int:
    """RAM between steps (what MegaTrain's log reads): bf16 parameters, fp32 m and v, the staging; on
    several GPUs the shared state (gradients included: allocated once) and each worker's slabs."""
    if ranks > 1:
        return _shared_bytes(arch) + ranks * worker_staging_bytes(arch)
    return HOST_RESIDENT_BYTES * arch.params_total + staging_bytes(arch)


def host_step_bytes(arch: ArchConfig, ranks: int = 1) -> int:
    """RAM at the optimizer step, the peak a machine must hold: the resident part + bf16 gradients
    (on several GPUs the shared gradients are resident already)."""
    if ranks > 1:
        return host_resident_bytes(arch, ranks)
    return HOST_STEP_BYTES * arch.params_total + staging_bytes(arch)


def weight_bytes(arch: ArchConfig) -> int:
    """GPU-resident weights: 2 flat buffers, 2 templates per layer structure, embedding and head."""
    return BF16 * (2 * _largest(arch) + 2 * _groups(arch) + arch.embed_params + arch.head_params)


def sample_bytes(arch: ArchConfig, context: int, kernels: str = "fla") -> int:
    """GPU bytes one sample of ``context`` tokens adds at the peak (``kernels``: the Gated DeltaNet
    kernels, Request.linear_kernels)."""
    h = arch.hidden_size
    checkpoints = checkpoint_bytes(arch, context)
    # every chunk's logits, the normed hidden state and the RMSNorm's fp32 input copy
    loss = logits_bytes(arch, context) + context * h * (BF16 + 4)
    # the layer kind whose backward holds the most (a hybrid's Gated DeltaNet or attention layer)
    layer = max(
        layer_token_bytes(arch, False, "flash", context, kind, kernels=kernels)
        + backward_token_bytes(arch, kind, False)
        for kind in kinds_counted(arch)
    )
    backward = context * (CHECKPOINT_INTERVAL * h * BF16 + layer)
    return checkpoints + max(loss, backward)


def fixed_bytes(arch: ArchConfig) -> int:
    """GPU bytes that do not grow with the batch: the weights and one layer's (or the head's) gradients."""
    return weight_bytes(arch) + BF16 * max(_largest(arch), arch.head_params)


def gpu_peak_bytes(arch: ArchConfig, context: int, batch: int, kernels: str = "fla") -> int:
    """The allocator peak (``torch.cuda.max_memory_allocated``, what train.py logs)."""
    return fixed_bytes(arch) + batch * sample_bytes(arch, context, kernels)


def gpu_bytes(arch: ArchConfig, context: int, batch: int, kernels: str = "fla") -> int:
    """The process total on the GPU: the allocator peak and the CUDA context."""
    return CUDA_CONTEXT + gpu_peak_bytes(arch, context, batch, kernels)


def logits_bytes(arch: ArchConfig, context: int) -> int:
    """One sample's bf16 logits of every loss chunk, which the graph keeps until ``loss.backward()``."""
    return max(context - 1, 0) * arch.vocab_size * BF16


def checkpoint_bytes(arch: ArchConfig, context: int) -> int:
    """One sample's saved hidden states: every K layers and after the last, alive to the backward's end."""
    return (-(-arch.num_layers // CHECKPOINT_INTERVAL) + 1) * context * arch.hidden_size * BF16


def largest_batch(arch: ArchConfig, budget: int, context: int, kernels: str = "fla") -> int:
    """The largest batch whose process total fits ``budget`` bytes (0 if the fixed part does not)."""
    free = budget - CUDA_CONTEXT - fixed_bytes(arch)
    return max(free // sample_bytes(arch, context, kernels), 0) if free > 0 else 0


def layer_work_per_weight() -> int:
    """FLOPs per layer weight per token: each layer runs forward 3 times (the pass, the block's recompute,
    the forward autograd.grad differentiates) and backward once (4): cpu_master.py forward_and_backward."""
    return 3 * 2 + 4


#: MegaTrain's TFLOPS as it reports them: 6 × parameters × tokens ÷ step time (train.py)
REPORTED_FLOPS_PER_PARAM = 6
