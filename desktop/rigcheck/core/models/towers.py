"""What a checkpoint holds beside its decoder: multimodal towers and multi-token-prediction layers.

Neither is part of :attr:`ArchConfig.params_total` (the decoder every generated token runs), so both
are counted apart, in :attr:`ArchConfig.tower_params` and :attr:`ArchConfig.mtp_params`, and the
memory estimate adds them where an engine loads them (core/estimate/memory_runtime.py).

**MTP / NextN layers** (``num_nextn_predict_layers``: DeepSeek-V3, GLM-4.5/4.7, GLM-5;
``mtp_num_hidden_layers``: Qwen3-Next, Qwen3.5; ``num_mtp_modules``): one module is a decoder layer
laid out as the decoder's last attention layer (MoE where that layer is), its input projection
``eh_proj`` / ``fc`` (2 · hidden → hidden, no bias) and three norms (``enorm``, ``hnorm`` and the
output norm). DeepSeek-style modules (``num_nextn_predict_layers``) carry their own copies of the token
embedding and output head in the checkpoint (``model.layers.61.embed_tokens``,
``model.layers.61.shared_head.head``: vllm-project/vllm ``vllm/model_executor/models/deepseek_mtp.py``,
``DeepSeekMultiTokenPredictorLayer``); Qwen's ``mtp.*`` modules do not (``qwen3_next_mtp.py``). A
DeepSeek-V4.1 DSpark draft block (``dspark_n_routed_experts``) is counted as a trunk layer with the
draft's expert count and nothing else, an assumption stated in the notes.

**Towers** (``vision_config``, ``audio_config`` of a multimodal checkpoint): counted from config by the
ViT block rule — per block q/k/v/o projections with biases (unless ``attn_bias`` / ``linear_bias``
is false), a two-matrix MLP (three when the activation
is SiLU, as Qwen2.5-VL's gated one), two norms — plus the patch embedding, a learned position table
where the config sizes one, and one projection into the text model's width (Qwen's PatchMerger, with
``spatial_merge_size``: a norm and two layers, merged → merged → text width). It is an estimate, said so
in the notes: the tensor table (core/models/tensors.py) counts a tower exactly when headers are at hand.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from rigcheck.core.errors import InputError
from rigcheck.core.models.spec import ArchConfig

#: the keys that say how many MTP modules a checkpoint carries, in the order they are read
MTP_KEYS: Final = ("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_modules")
#: no published model has more than a handful
MAX_MTP: Final = 64
#: the towers a multimodal wrapper config names
TOWER_KEYS: Final = ("vision_config", "audio_config")
_DEPTH: Final = ("depth", "num_hidden_layers", "vt_num_hidden_layers", "num_layers")
_WIDTH: Final = ("hidden_size", "embed_dim", "vt_hidden_size", "width")
_INNER: Final = ("intermediate_size", "vt_intermediate_size", "mlp_dim")
_LIMIT: Final = 2**31 - 1


def with_outside(
    arch: ArchConfig, outer: Mapping[str, Any], text: Mapping[str, Any], source: str
) -> ArchConfig:
    """``arch`` with its towers (from ``outer``, the wrapper config) and MTP layers (from ``text``, the
    text model's config) counted apart, each with a note in :attr:`ArchConfig.assumed`."""
    notes: list[str] = []
    mtp, shared = _mtp_params(arch, text, source, notes)
    tower = sum(_tower_params(outer.get(key), key, arch.hidden_size, source, notes) for key in TOWER_KEYS)
    if not (mtp or tower or notes):
        return arch
    return replace(
        arch,
        tower_params=tower,
        mtp_params=mtp,
        mtp_shared_params=shared,
        tower_source="config" if tower else "",
        mtp_source="config" if mtp else "",
        assumed=(*arch.assumed, *notes),
    )


def _int(config: Mapping[str, Any], key: str, source: str, prefix: str = "") -> int | None:
    value = config.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _LIMIT:
        raise InputError(source, f"{prefix}{key}: must be a whole number of at least 0, got {value!r}"[:200])
    return value


def _mtp_params(arch: ArchConfig, text: Mapping[str, Any], source: str, notes: list[str]) -> tuple[int, int]:
    """All MTP parameters the checkpoint carries, and of those its own embedding and head copies."""
    key = next((k for k in MTP_KEYS if _int(text, k, source)), None)
    if key is None or not arch.layer_params:
        return 0, 0
    modules = int(text[key])
    if modules > MAX_MTP:
        raise InputError(source, f"{key}: must be at most {MAX_MTP}, got {modules}")
    d = arch.hidden_size
    # the MTP block is laid out as a full-attention decoder layer: the last one that is not linear
    template = max(
        (i for i, kind in enumerate(arch.layer_kinds) if kind != "linear"), default=arch.num_layers - 1
    )
    block = arch.layer_params[template]
    draft_experts = _int(text, "dspark_n_routed_experts", source)
    is_moe = bool(arch.moe_layers and arch.moe_layers[template] and arch.num_experts)
    if draft_experts is not None and is_moe and arch.num_experts:
        # DeepSeek-V4.1's DSpark blocks: the trunk layer with fewer routed experts (and router rows)
        fewer = max(arch.num_experts - draft_experts, 0)
        block -= fewer * (arch.expert_params + d + 1)
        notes.append(
            f"{key} {modules}: DSpark draft blocks counted apart, each as decoder layer {template} with "
            f"{draft_experts} routed experts (dspark_n_routed_experts) and no projection of its own: "
            f"{modules * block:,} parameters, an assumption (not run per token)"
        )
        return modules * block, 0
    own = 2 * arch.vocab_size * d if key == "num_nextn_predict_layers" else 0
    per_module = block + 2 * d * d + 3 * d
    total = modules * (per_module + own)
    copies = f" + its own embedding and head copies ({own:,})" if own else ""
    notes.append(
        f"{key} {modules}: MTP layers counted apart, {modules} × (decoder layer {template}, {block:,}, "
        f"+ 2·hidden → hidden projection and three norms{copies}) = {total:,} parameters, "
        "loaded only for MTP speculative decoding"
    )
    return total, modules * own


def _first(config: Mapping[str, Any], keys: tuple[str, ...], source: str, prefix: str) -> int | None:
    for key in keys:
        value = _int(config, key, source, prefix)
        if value:
            return value
    return None


def _tower_params(config: object, key: str, text_hidden: int, source: str, notes: list[str]) -> int:
    """A vision or audio tower by the ViT block rule; 0, with a note, when its config lacks a size."""
    if config is None:
        return 0
    if not isinstance(config, Mapping):
        raise InputError(source, f"{key}: must be a JSON object, got {type(config).__name__}")
    prefix = f"{key}."
    depth = _first(config, _DEPTH, source, prefix)
    width = _first(config, _WIDTH, source, prefix)
    if depth is None or width is None:
        missing = "/".join(_DEPTH if depth is None else _WIDTH)
        notes.append(
            f"{key}: tower not counted from config (no {missing}); the tensor table counts it "
            "where safetensors headers are read"
        )
        return 0
    inner = _first(config, _INNER, source, prefix)
    assumed = []
    if inner is None:
        ratio = config.get("mlp_ratio")
        inner = int(width * ratio) if isinstance(ratio, (int, float)) and ratio > 0 else 4 * width
        if not isinstance(ratio, (int, float)):
            assumed.append("MLP 4 × width")
    qkv = _first(config, ("qkv_hidden_size",), source, prefix) or width
    act = str(config.get("hidden_act") or config.get("activation_func") or "").lower()
    matrices = 3 if act in ("silu", "swiglu", "swish") else 2
    rms = str(config.get("norm_type") or "").lower().startswith("rms")
    # biases on every projection (SigLIP, Qwen-VL) unless the config turns them off (MoonViT's attn_bias,
    # linear_bias); the projector follows the MLP's
    attn_bias = not any(config.get(k) is False for k in ("attn_bias", "qkv_bias", "linear_bias", "use_bias"))
    mlp_bias = not any(config.get(k) is False for k in ("linear_bias", "mlp_bias", "use_bias"))
    attention = 3 * width * qkv + qkv * width + (3 * qkv + width if attn_bias else 0)
    mlp = matrices * width * inner + ((matrices - 1) * inner + width if mlp_bias else 0)
    norms = 2 * width * (1 if rms else 2)
    blocks = depth * (attention + mlp + norms)
    patch = _first(config, ("patch_size",), source, prefix) or 14
    if "patch_size" not in config:
        assumed.append("patch 14")
    channels = _first(config, ("num_channels", "in_channels", "in_chans"), source, prefix) or 3
    temporal = _first(config, ("temporal_patch_size",), source, prefix) or 1
    embed = channels * temporal * patch * patch * width
    positions = _first(config, ("num_position_embeddings",), source, prefix)
    image = _first(config, ("image_size",), source, prefix)
    grid_h = _first(config, ("init_pos_emb_height",), source, prefix)
    grid_w = _first(config, ("init_pos_emb_width",), source, prefix)
    if positions is None and image is not None:
        positions = (image // patch) ** 2
    if positions is None and grid_h and grid_w:
        positions = grid_h * grid_w
    embed += (positions or 0) * width
    merge = _merge_factor(config)
    out = _first(config, ("out_hidden_size", "text_hidden_size", "output_proj_dims"), source, prefix)
    target, merged = out or text_hidden, width * merge
    projector = merged * target + (target if mlp_bias else 0)
    if "spatial_merge_size" in config:
        # Qwen2-VL/2.5-VL/3-VL's PatchMerger: a norm, then merged -> merged -> target with biases
        projector += merged * merged + (merged if mlp_bias else 0) + width * (1 if rms else 2)
    total = blocks + embed + projector
    notes.append(
        f"{key}: tower counted apart by the ViT block rule, {depth} blocks of {width} "
        f"(MLP {inner}, {matrices} matrices), patch embedding, {positions or 0:,} learned positions and "
        f"a projection of {merged} → {target}: {total:,} parameters, an estimate"
        + (f" ({', '.join(assumed)} assumed)" if assumed else "")
        + "; in memory, not run per token"
    )
    return total


def _merge_factor(config: Mapping[str, Any]) -> int:
    """How many tower outputs one projected token concatenates (Qwen's spatial merge 2 → 4)."""
    spatial = config.get("spatial_merge_size")
    if isinstance(spatial, int) and not isinstance(spatial, bool) and 0 < spatial <= 64:
        return spatial * spatial
    kernel = config.get("merge_kernel_size")
    if isinstance(kernel, list) and kernel and all(isinstance(n, int) and 0 < n <= 64 for n in kernel):
        return math.prod(kernel)
    ratio = config.get("downsample_ratio")
    if isinstance(ratio, int) and not isinstance(ratio, bool) and 0 < ratio <= 64:
        return ratio * ratio
    return 1
