"""Training activations: the 16-bit tensors autograd saves per token by checkpointing mode and kernel, one
layer's backward gradients, and the logits and loss by how the framework computes them."""

from __future__ import annotations

from rigcheck.core.estimate import training_mixers as mixers
from rigcheck.core.estimate.training_mixers import Attention
from rigcheck.core.estimate.training_profiles import Profile
from rigcheck.core.estimate.training_types import Part, Setup
from rigcheck.core.i18n import tr
from rigcheck.core.models.spec import ArchConfig

KORTHIKANTI = "Korthikanti et al. 2022 (arXiv 2205.05198) tensor accounting, per saved tensor"


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
    # a fully checkpointed or offloaded run recomputes one layer's saved tensors at a time in the backward
    recomputed = Part(
        "activations",
        tr("one layer recomputed"),
        per_layer,
        "gpu",
        f"saved tensors of one layer ({kernel}) × {tokens:,} tokens",
        mixers.source(arch, KORTHIKANTI),
    )
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
        parts.append(recomputed)
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
        parts.append(recomputed)
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
