"""Parameters from the tensor table: safetensors headers counted, config arithmetic the fallback.

A checkpoint's headers list every tensor with its dtype and shape, so the parameters of any
architecture are there to be added up — vision towers, multi-token-prediction layers and per-layer
embeddings included — without knowing the family. Quantized checkpoints need two rules:

* **scales are not parameters**: ``weight_scale``, ``weight_scale_inv`` (FP8 blocks), ``scale``
  (DeepSeek-V4's reference names), any ``F8_E8M0`` tensor (MX exponent scales), ``scales`` /
  ``qzeros`` / ``g_idx`` (GPTQ/AWQ), ``*_scales`` (gpt-oss MXFP4), ``weight_global_scale`` /
  ``weight_scale_2`` / ``input_scale`` (NVFP4), ``biases`` beside ``scales`` (MLX) and
  ``weight_shape`` (compressed-tensors) are skipped;
* **packed integers hold several weights each**: an ``I32``/``U32`` word of a 4-bit checkpoint holds
  8 (compressed-tensors ``weight_packed``, GPTQ/AWQ ``qweight``, MLX), a ``U8`` byte of an FP4 one 2
  (gpt-oss ``*_blocks``, NVFP4, DeepSeek-V4's ``I8`` experts); the bit width comes from
  ``quantization_config`` (or MLX's ``quantization``, or DeepSeek-V4's ``expert_dtype`` "fp4"). A
  packed tensor whose width is unknown is not guessed: config.json counts then.

:func:`count_from_tensors` returns the architecture with its counts replaced, and one note saying
which count the estimate uses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from rigcheck.core.models.spec import TENSOR_TABLE_NOTE, ArchConfig

#: tensors that quantize a weight rather than being one
_NOT_PARAMS: Final = re.compile(
    r"(?:_scale|_scale_inv|_scale_2|_global_scale|_zero_point|\.scales|_scales|\.qzeros|\.g_idx"
    r"|\.weight_shape|\.input_scale|\.k_scale|\.v_scale|\.scale)$"
)
#: OCP MX exponent-only scales (E8M0): never a weight, whatever the tensor is named
_SCALE_DTYPES: Final = frozenset({"F8_E8M0"})
_PACKED_NAME: Final = re.compile(r"(?:weight|weight_packed|qweight|_blocks)$")
_INT_BITS: Final = {"I32": 32, "U32": 32, "I16": 16, "U16": 16, "I8": 8, "U8": 8}
_HEAD: Final = re.compile(
    r"(?:^|\.)(?:lm_head|output|head)\.|(?:^|\.)(?:norm|ln_f|final_layernorm|final_norm)\."
)
_LAYER: Final = re.compile(r"(?:^|\.)(?:layers|h|blocks)\.(\d+)\.")
#: towers and their projectors: loaded with a multimodal model, not run per generated token
_TOWER: Final = re.compile(
    r"vision|visual|image|audio|speech|mm_projector|multi_modal_projector", re.IGNORECASE
)
#: draft heads (Qwen3-Next/3.5 "mtp."): loaded for MTP speculative decoding only
_MTP: Final = re.compile(r"(?:^|\.)mtp\b", re.IGNORECASE)
#: an MTP module's own copy of the embedding or output head (DeepSeek's model.layers.61.embed_tokens,
#: model.layers.61.shared_head.head), which an engine running it as a draft shares with the target
_MTP_COPY: Final = re.compile(r"(?:^|\.)(?:embed_tokens|shared_head\.head|lm_head)\.")


@dataclass(frozen=True)
class TensorCount:
    embed: int
    head: int
    layers: tuple[int, ...]
    #: parameters in towers, MTP layers and layers past num_layers
    off_path: int
    #: quantization scales, zeros and shapes skipped
    skipped: int
    #: why the table cannot be used (None: it can)
    problem: str | None = None
    #: of off_path: the towers; the MTP layers (named mtp. or past num_layers) and their own
    #: embedding and head copies
    tower: int = 0
    mtp: int = 0
    mtp_copies: int = 0


def weight_bits(config: Mapping[str, Any]) -> int | None:
    """The bit width of packed weights, from ``quantization_config`` or MLX's ``quantization``."""
    for key in ("quantization_config", "quantization"):
        qc = config.get(key)
        if not isinstance(qc, dict):
            continue
        for bits_key in ("bits", "w_bit", "num_bits"):
            if isinstance(qc.get(bits_key), int):
                return int(qc[bits_key])
        groups = qc.get("config_groups")
        if isinstance(groups, dict):
            widths = {
                group["weights"].get("num_bits")
                for group in groups.values()
                if isinstance(group, dict) and isinstance(group.get("weights"), dict)
            }
            if len(widths) == 1 and isinstance(next(iter(widths)), int):
                return int(next(iter(widths)))
            return None  # mixed widths: which module has which is in the config, not the header
        text = " ".join(str(qc.get(k, "")) for k in ("quant_method", "quant_algo", "format")).lower()
        if "fp4" in text or "fp4" in (config.get("expert_dtype"), qc.get("expert_dtype")):
            return 4  # DeepSeek-V4: FP8 linears, experts FP4 two to an I8 byte (V4.1: expert_dtype inside)
    text_config = config.get("text_config")
    if isinstance(text_config, dict) and text_config is not config:
        return weight_bits(text_config)
    return None


def count_tensors(
    headers: Mapping[str, Mapping[str, Any]], config: Mapping[str, Any], num_layers: int
) -> TensorCount:
    """Parameters per part of the model from headers (file name -> header JSON, already checked)."""
    entries = {
        name: entry
        for header in headers.values()
        for name, entry in header.items()
        if name != "__metadata__" and isinstance(entry, dict)
    }
    quantized = any(
        isinstance(config.get(key), dict) for key in ("quantization_config", "quantization")
    ) or isinstance(_nested(config), dict)
    bits = weight_bits(config)
    embed = head = skipped = tower = mtp = mtp_copies = 0
    layers = [0] * num_layers
    problem = None
    for name, entry in entries.items():
        dtype, elements = str(entry.get("dtype")), math.prod(entry.get("shape") or [])
        is_mlx_bias = name.endswith(".biases") and name[: -len("biases")] + "scales" in entries
        if dtype in _SCALE_DTYPES or (
            (quantized or dtype.startswith("F8")) and (_NOT_PARAMS.search(name) or is_mlx_bias)
        ):
            skipped += 1
            continue
        storage = _INT_BITS.get(dtype)
        if storage and quantized and _PACKED_NAME.search(name):
            if bits is None or storage % bits:
                problem = f"tensor {name[:80]} is packed {dtype} and config.json names no bit width"
                break
            elements *= storage // bits
        match = _LAYER.search(name)
        prefix = name if match is None else name[: match.start()]
        if _TOWER.search(prefix):
            tower += elements
        elif _MTP.search(prefix) or (match is not None and int(match[1]) >= num_layers):
            mtp += elements  # Qwen's mtp.*, or DeepSeek's MTP layer past the decoder's
            mtp_copies += elements if _MTP_COPY.search(name[match.end() - 1 :] if match else name) else 0
        elif match is not None:
            layers[int(match[1])] += elements
        elif _HEAD.search(name):
            head += elements
        else:
            embed += elements  # embeddings, per-layer embedding tables and their projections
    if problem is None and not all(layers):
        problem = f"layer {layers.index(0)} of {num_layers} holds no tensor in the headers"
    return TensorCount(
        embed, head, tuple(layers), tower + mtp, skipped, problem, tower=tower, mtp=mtp, mtp_copies=mtp_copies
    )


def count_from_tensors(
    headers: Mapping[str, Mapping[str, Any]], config: Mapping[str, Any], arch: ArchConfig
) -> tuple[ArchConfig, str]:
    """``arch`` with its parameter counts from the tensor table where it can be used, and a note."""
    count = count_tensors(headers, config, arch.num_layers)
    if count.problem is not None:
        return arch, f"parameters: from config.json ({count.problem})"
    inactive = [
        total - active
        for total, active in zip(
            arch.layer_params or (0,) * arch.num_layers,
            arch.layer_active_params or (0,) * arch.num_layers,
            strict=True,
        )
    ]
    counted = replace(
        arch,
        embed_params=count.embed,
        head_params=count.head,
        layer_params=count.layers,
        layer_active_params=tuple(max(0, t - i) for t, i in zip(count.layers, inactive, strict=True)),
        tower_params=count.tower,
        tower_source="tensor_table" if count.tower else "",
        mtp_params=count.mtp,
        mtp_shared_params=count.mtp_copies,
        mtp_source="tensor_table" if count.mtp else "",
    )
    parts = [f"{counted.params_total:,} in the decoder"]
    if count.tower:
        parts.append(f"{count.tower:,} in multimodal towers, in memory but not run per token")
    if count.mtp:
        parts.append(f"{count.mtp:,} in MTP layers, loaded only for MTP speculative decoding")
    if count.skipped:
        parts.append(f"{count.skipped:,} scale/zero tensors not counted")
    note = f"{TENSOR_TABLE_NOTE} ({'; '.join(parts)})"
    if arch.params_total and abs(counted.params_total - arch.params_total) > arch.params_total * 0.005:
        note += f"; config.json arithmetic gave {arch.params_total:,}"
    return counted, note


def _nested(config: Mapping[str, Any]) -> object:
    text_config = config.get("text_config")
    return text_config.get("quantization_config") if isinstance(text_config, dict) else None
