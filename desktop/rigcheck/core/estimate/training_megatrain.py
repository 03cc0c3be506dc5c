"""MegaTrain's training memory: its own accounting of the step's state in host RAM and the GPU's buffers."""

from __future__ import annotations

from rigcheck.core.estimate.training_types import Part, TrainingMemory, Where
from rigcheck.core.i18n import tr
from rigcheck.core.models.spec import ArchConfig


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
