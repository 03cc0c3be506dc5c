"""A GGUF model from its headers: the architecture from the metadata, exact counts and bytes from the
tensors, the layer kinds and the weight format."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rigcheck.core.catalog import Catalog
from rigcheck.core.errors import InputError
from rigcheck.core.models.files.gguf_header import _Array, _Header, _Tensor
from rigcheck.core.models.files.helpers import _is_int, _show
from rigcheck.core.models.files.limits import (
    _FIXED_WINDOW,
    _FTYPE_GUESSED,
    _FTYPE_IDS,
    _GGUF_HEAD,
    _GGUF_LAYER,
    _RECURRENT_ARCHS,
    _SPLIT,
    _SWA_RULES,
    MAX_LAYERS,
)
from rigcheck.core.models.spec import ArchConfig, LayerKind, LinearMixer, ModelInfo, WeightsInfo
from rigcheck.core.text import one_line


class _Meta:
    """Typed look-ups in GGUF metadata, under the architecture's prefix."""

    def __init__(self, metadata: Mapping[str, Any], arch: str, source: str) -> None:
        self.metadata = metadata
        self.arch = arch
        self.source = source

    def raw(self, key: str) -> Any:
        return self.metadata.get(f"{self.arch}.{key}")

    def required(self, key: str, limit: int = 2**40) -> int:
        """A whole number 1..limit under ``{arch}.key``; an error when absent."""
        value = self.count(key, limit=limit)
        if not value:
            full = f"{self.arch}.{key}"
            problem = "is 0" if value == 0 else "is missing"
            raise InputError(
                self.source, f"metadata {full} {problem}: not a language model GGUF RigCheck reads"
            )
        return value

    def count(self, key: str, *, limit: int = 2**40) -> int | None:
        """A whole number 0..limit under ``{arch}.key``; None when absent."""
        full = f"{self.arch}.{key}"
        value = self.metadata.get(full)
        if value is None:
            return None
        if isinstance(value, _Array) and value.values is not None and len(set(value.values)) == 1:
            value = value.values[0]  # the same value for every layer
        if not _is_int(value) or not 0 <= value <= limit:
            raise InputError(
                self.source, f"metadata {full} is {_show(value)}, not a whole number up to {limit:,}"
            )
        return int(value)

    def per_layer(self, key: str, layers: int) -> list[int] | None:
        """A value that may be one number or an array with one per layer; None when absent."""
        full = f"{self.arch}.{key}"
        value = self.metadata.get(full)
        if value is None:
            return None
        if isinstance(value, _Array):
            if value.values is None or len(value.values) != layers:
                raise InputError(
                    self.source, f"metadata {full} has {value.length:,} entries for {layers} layers"
                )
            items = list(value.values)
        else:
            items = [value] * layers
        for item in items:
            if not _is_int(item) or not 0 <= item <= 2**31:
                raise InputError(self.source, f"metadata {full} holds {_show(item)}, not a whole number")
        return [int(item) for item in items]


def _gguf_model(parts: Sequence[Path], headers: Sequence[_Header], catalog: Catalog) -> ModelInfo:
    source = str(parts[0])
    metadata = headers[0].metadata
    arch_name = metadata.get("general.architecture")
    if not isinstance(arch_name, str) or not arch_name:
        raise InputError(source, "metadata lacks general.architecture")
    tensors = [tensor for header in headers for tensor in header.tensors]
    if not tensors:
        raise InputError(source, "holds no tensors (a vocabulary-only GGUF?)")
    meta = _Meta(metadata, arch_name, source)
    notes: list[str] = []
    assumed: list[str] = []

    layers = meta.required("block_count", limit=MAX_LAYERS)
    hidden = meta.required("embedding_length")
    heads = meta.per_layer("attention.head_count", layers)
    if heads is None:
        if arch_name not in _RECURRENT_ARCHS:
            raise InputError(source, f"metadata {arch_name}.attention.head_count is missing")
        heads = [0] * layers
    kv_heads = meta.per_layer("attention.head_count_kv", layers) or list(heads)
    for layer, (q, kv) in enumerate(zip(heads, kv_heads, strict=True)):
        if kv > q and q:
            raise InputError(
                source,
                f"metadata {arch_name}.attention.head_count_kv ({kv}) is above head_count ({q}) "
                f"in layer {layer}: each key/value head serves one or more query heads",
            )
    if arch_name not in _RECURRENT_ARCHS and not any(q and kv for q, kv in zip(heads, kv_heads, strict=True)):
        raise InputError(
            source,
            f"metadata {arch_name}.attention.head_count or head_count_kv is 0 in every layer: "
            "no attention, which a transformer needs",
        )
    num_heads = max(heads, default=0)
    num_kv = max((kv for kv in kv_heads if kv), default=0)
    if len({kv for kv in kv_heads if kv}) > 1:
        notes.append(
            f"key/value heads differ by layer ({min(kv for kv in kv_heads if kv)}..{num_kv}): {num_kv} used"
        )

    # -- attention dims, MLA --
    kv_lora = meta.count("attention.kv_lora_rank") or None
    if kv_lora:
        head_dim = meta.count("attention.key_length_mla") or meta.count("attention.key_length") or 0
        value_dim = meta.count("attention.value_length_mla") or meta.count("attention.value_length")
        qk_rope = meta.count("rope.dimension_count")
    else:
        head_dim = meta.count("attention.key_length") or 0
        value_dim = meta.count("attention.value_length")
        qk_rope = None
    if not head_dim and num_heads:
        head_dim = hidden // num_heads
        assumed.append("head_dim")
        notes.append(
            f"no {arch_name}.attention.key_length: head_dim = embedding_length / head_count = {head_dim}"
        )
    v_head_dim = value_dim if value_dim and value_dim != head_dim else None

    # -- vocabulary, context --
    vocab = meta.count("vocab_size")
    if not vocab:
        tokens = metadata.get("tokenizer.ggml.tokens")
        if isinstance(tokens, _Array) and tokens.length:
            vocab = tokens.length
        else:
            embd = next((t for t in tensors if t.name == "token_embd.weight"), None)
            vocab = embd.dims[1] if embd is not None and len(embd.dims) >= 2 else 0
            assumed.append("vocab_size")
    context = meta.count("context_length") or None

    # -- the tensors: parameters and bytes --
    counts = _count_tensors(tensors, layers, source)
    n_experts = meta.count("expert_count") or counts.experts_in_tensors or None
    per_token = meta.count("expert_used_count") or None
    if counts.moe_layers and per_token is None:
        assumed.append("experts_per_token")
        notes.append("no expert_used_count: every expert counted as active")
    layer_active = tuple(
        total - routed + (per_token * one if per_token else routed)
        for total, routed, one in zip(counts.layer_params, counts.routed, counts.per_expert, strict=True)
    )

    # -- layer kinds --
    window = meta.count("attention.sliding_window")
    kinds, window = _gguf_layer_kinds(
        meta,
        layers,
        heads=heads,
        kv_heads=kv_heads,
        mla=bool(kv_lora),
        window=window,
        notes=notes,
        assumed=assumed,
    )
    if window is not None and context is not None and window >= context:
        kinds = tuple("full" if kind == "sliding" else kind for kind in kinds)  # a window that never binds
        window = None
    if "sliding" not in kinds:
        window = None
    linear_state = _linear_state(meta, hidden) if "linear" in kinds else None

    ffn = meta.per_layer("feed_forward_length", layers)
    intermediate = max(ffn) if ffn else meta.count("expert_feed_forward_length")
    # NextN/MTP layers are the last block_count entries: llama.cpp creates their tensors with TENSOR_SKIP
    # and runs n_layer - nextn_predict_layers layers unless MTP drafting is on (ggml-org/llama.cpp
    # src/models/glm4-moe.cpp, deepseek2.cpp: "skip all tensors in the NextN layers")
    nextn = meta.count("nextn_predict_layers", limit=layers - 1) or 0
    decoder = layers - nextn
    if nextn:
        notes.append(
            f"{arch_name}.nextn_predict_layers {nextn}: the last {nextn} block(s) are MTP layers, "
            f"{sum(counts.layer_params[decoder:]):,} parameters counted apart from the decoder"
        )
        counts.other_bytes += sum(counts.layer_bytes[decoder:])  # still in the file's weights
    arch = ArchConfig(
        model_type=arch_name,
        hidden_size=hidden,
        num_layers=decoder,
        num_heads=num_heads,
        num_kv_heads=num_kv,
        head_dim=head_dim,
        vocab_size=vocab,
        layer_kinds=kinds[:decoder],
        tie_word_embeddings=not counts.has_output,
        intermediate_size=intermediate or None,
        max_context=context,
        sliding_window=window,
        v_head_dim=v_head_dim,
        kv_lora_rank=kv_lora,
        qk_rope_head_dim=qk_rope,
        linear_state_elements=linear_state,
        linear_mixer=_gdn_widths(meta) if "linear" in kinds[:decoder] else None,
        # Qwen3-Next and Qwen3.5 attention layers: q_proj also yields the output gate (2·heads·head_dim)
        attn_output_gate=arch_name in _GDN_ARCHS,
        num_experts=n_experts if counts.moe_layers else None,
        experts_per_token=per_token if counts.moe_layers else None,
        moe_layers=tuple(counts.moe_layers_flags[:decoder]),
        layer_mixers=counts.layer_mixers[:decoder],
        embed_params=counts.embed,
        head_params=counts.head,
        layer_params=tuple(counts.layer_params[:decoder]),
        layer_active_params=layer_active[:decoder],
        expert_params=max(counts.per_expert, default=0),
        assumed=tuple(assumed),
        mtp_params=sum(counts.layer_params[decoder:]),
        mtp_source="tensor_table" if nextn else "",
    )
    quant_id, quant_note = _gguf_quant_id(metadata, tensors, catalog)
    if quant_note:
        notes.append(quant_note)
    weights = WeightsInfo(
        total_bytes=sum(t.n_bytes for t in tensors),
        bytes_by_format=dict(sorted(counts.bytes_by_format.items(), key=lambda item: -item[1])),
        tensor_count=len(tensors),
        files=tuple(part.name for part in parts),
        quant_id=quant_id,
        layer_bytes=tuple(counts.layer_bytes[:decoder]) if counts.in_layers else (),
        other_bytes=counts.other_bytes if counts.in_layers else 0,
    )
    # File names and general.name are anyone's text: shown on one line, controls escaped (issue 17 #5)
    stem = one_line(_gguf_stem(parts[0]))
    name = metadata.get("general.name")
    return ModelInfo(
        id=stem,
        name=one_line(name.strip()[:200]) if isinstance(name, str) and name.strip() else stem,
        arch=arch,
        source_kind="file",
        source=source,
        weights=weights,
        notes=tuple(notes),
    )


@dataclass
class _Counts:
    layer_params: list[int]
    #: elements of routed-expert tensors per layer, and of one expert
    routed: list[int]
    per_expert: list[int]
    layer_bytes: list[int]
    moe_layers_flags: list[bool]
    embed: int = 0
    head: int = 0
    other_bytes: int = 0
    has_output: bool = False
    in_layers: bool = False
    experts_in_tensors: int = 0
    bytes_by_format: dict[str, int] = field(default_factory=dict)
    #: per layer: whether it has token-mixer tensors (attention, SSM, ...) and MLP tensors (_sub_block)
    has_mixer: list[bool] = field(default_factory=list)
    has_ffn: list[bool] = field(default_factory=list)

    @property
    def layer_mixers(self) -> tuple[int, ...]:
        """ArchConfig.layer_mixers: per layer, its sub-blocks, where the file has both kinds of tensor and
        some layer lacks one (a Nemotron-H block is one mixer); else () (both in every layer)."""
        if not (any(self.has_mixer) and any(self.has_ffn)):
            return ()  # tensor names this rule does not know (RWKV's channel mix...): assume both
        counts = tuple(int(m) + int(f) for m, f in zip(self.has_mixer, self.has_ffn, strict=True))
        return counts if any(c < 2 for c in counts) else ()

    @property
    def moe_layers(self) -> bool:
        return any(self.moe_layers_flags)


#: llama.cpp tensor names (after ``blk.N.``) of a block's token mixer and of its MLP; norms are neither
_MIXER_PREFIXES = ("attn_", "ssm_", "time_mix", "shortconv")
_FFN_PREFIXES = ("ffn_", "channel_mix")


def _sub_block(name: str) -> str | None:
    """ "mixer", "ffn" or None for a layer tensor's name after ``blk.N.``."""
    stem = name.split(".", 1)[0]
    if "norm" in stem:
        return None
    if stem.startswith(_MIXER_PREFIXES):
        return "mixer"
    return "ffn" if stem.startswith(_FFN_PREFIXES) else None


def _count_tensors(tensors: Iterable[_Tensor], layers: int, source: str) -> _Counts:
    counts = _Counts(
        layer_params=[0] * layers,
        routed=[0] * layers,
        per_expert=[0] * layers,
        layer_bytes=[0] * layers,
        moe_layers_flags=[False] * layers,
        has_mixer=[False] * layers,
        has_ffn=[False] * layers,
    )
    by_format = counts.bytes_by_format
    for tensor in tensors:
        by_format[tensor.type_name] = by_format.get(tensor.type_name, 0) + tensor.n_bytes
        match = _GGUF_LAYER.match(tensor.name)
        layer = int(match[1]) if match else None
        if layer is not None and layer < layers:
            counts.in_layers = True
            counts.layer_params[layer] += tensor.n_elements
            counts.layer_bytes[layer] += tensor.n_bytes
            part = _sub_block(tensor.name[match.end() :]) if match else None
            if part == "mixer":
                counts.has_mixer[layer] = True
            elif part == "ffn":
                counts.has_ffn[layer] = True
            if "_exps." in tensor.name and len(tensor.dims) >= 2:
                # routed experts are stacked on the last dimension: [.., n_expert]
                n_expert = tensor.dims[-1]
                if n_expert == 0:
                    continue
                counts.routed[layer] += tensor.n_elements
                counts.per_expert[layer] += tensor.n_elements // n_expert
                counts.moe_layers_flags[layer] = True
                counts.experts_in_tensors = max(counts.experts_in_tensors, n_expert)
            continue
        counts.other_bytes += tensor.n_bytes
        if tensor.name in _GGUF_HEAD:
            counts.head += tensor.n_elements
            counts.has_output = counts.has_output or tensor.name == "output.weight"
        else:
            counts.embed += tensor.n_elements
    if not counts.in_layers:
        raise InputError(source, "no tensor belongs to a layer (blk.N.*): not a model RigCheck reads")
    return counts


def _gguf_layer_kinds(
    meta: _Meta,
    layers: int,
    *,
    heads: Sequence[int],
    kv_heads: Sequence[int],
    mla: bool,
    window: int | None,
    notes: list[str],
    assumed: list[str],
) -> tuple[tuple[LayerKind, ...], int | None]:
    """How each layer attends, and the window of the sliding ones, as llama.cpp would load them."""
    recurrent_keys = any(
        meta.count(key) for key in ("ssm.inner_size", "ssm.state_size", "wkv.head_size", "shortconv.l_cache")
    )
    interval = meta.count("full_attention_interval")
    attention: LayerKind = "mla" if mla else "full"
    if meta.arch in _RECURRENT_ARCHS or (recurrent_keys and not any(heads)):
        linear: LayerKind = "linear"
        return (linear,) * layers, None

    swa = _swa_layers(meta, layers, window=window, notes=notes, assumed=assumed)
    if swa is not None and (not window or meta.arch in _FIXED_WINDOW):
        window = _SWA_RULES[meta.arch][1]
    kinds: list[LayerKind] = []
    for layer in range(layers):
        if interval and (layer + 1) % interval:
            kinds.append("linear")
        elif heads[layer] == 0 or kv_heads[layer] == 0:
            # no attention in this layer: a recurrent block (Jamba, LFM2, Granite 4) or only an MLP
            kinds.append("linear" if recurrent_keys else "none")
        elif swa is not None and swa[layer] and not mla:
            kinds.append("sliding")
        else:
            kinds.append(attention)
    return tuple(kinds), window if swa is not None else None


def _swa_layers(
    meta: _Meta, layers: int, *, window: int | None, notes: list[str], assumed: list[str]
) -> list[bool] | None:
    """Which layers use the sliding window: the GGUF's pattern key, else llama.cpp's rule for the arch."""
    key = f"{meta.arch}.attention.sliding_window_pattern"
    pattern = meta.raw("attention.sliding_window_pattern")
    rule = _SWA_RULES.get(meta.arch)
    if rule is not None and rule[2] is not None and rule[2] != layers:
        rule = None
    default_window = rule[1] if rule else None
    if window == 0:
        return None  # no window at all (Llama 4's MobileLLM variant writes 0)
    if window is None and default_window is None:
        if pattern is not None:
            notes.append(f"{key} without a window size: every layer counted as full attention")
        return None
    if window is None:
        assumed.append("sliding_window")
        notes.append(
            f"no {meta.arch}.attention.sliding_window: llama.cpp's default of {default_window} tokens used"
        )
    if isinstance(pattern, _Array):
        if pattern.values is None or len(pattern.values) != layers:
            raise InputError(
                meta.source, f"metadata {key} has {pattern.length:,} entries for {layers} layers"
            )
        return [bool(value) for value in pattern.values]
    if pattern is not None:
        period = meta.count("attention.sliding_window_pattern", limit=MAX_LAYERS)
    elif rule is not None:
        period = rule[0]
        assumed.append("sliding_window_pattern")
        notes.append(
            f"windowed layers placed as llama.cpp does for {meta.arch}: 1 layer in {period} full attention"
        )
    else:
        notes.append(
            f"{meta.arch}.attention.sliding_window is set, but llama.cpp applies no window to {meta.arch}: "
            "every layer counted as full attention"
        )
        return None
    if not period:
        return [True] * layers  # llama.cpp: a period of 0 windows every layer
    return [(layer + 1) % period != 0 for layer in range(layers)]


#: llama.cpp architectures whose linear layers are Gated DeltaNet, their widths written as ssm.* keys
#: (ggml-org/llama.cpp convert_hf_to_gguf.py@a458664 Qwen3NextModel.set_gguf_parameters: conv_kernel =
#: linear_conv_kernel_dim, state_size = linear_key_head_dim, group_count = linear_num_key_heads,
#: time_step_rank = linear_num_value_heads, inner_size = linear_value_head_dim × linear_num_value_heads)
_GDN_ARCHS = frozenset({"qwen3next", "qwen35", "qwen35moe"})


def _gdn_widths(meta: _Meta) -> LinearMixer | None:
    """A Gated DeltaNet layer's widths from the ssm.* keys, for the architectures that write them so."""
    if meta.arch not in _GDN_ARCHS:
        return None
    keys = ("ssm.group_count", "ssm.time_step_rank", "ssm.state_size", "ssm.inner_size", "ssm.conv_kernel")
    k_heads, v_heads, head_k, inner, kernel = (meta.count(key) or 0 for key in keys)
    if not all((k_heads, v_heads, head_k, inner, kernel)) or inner % v_heads:
        return None
    return LinearMixer(k_heads, v_heads, head_k, inner // v_heads, kernel)


def _linear_state(meta: _Meta, hidden: int) -> int | None:
    """Elements of recurrent state per linear layer per sequence: llama.cpp's n_embd_r() + n_embd_s()."""
    wkv = meta.count("wkv.head_size") or 0
    if wkv:
        return (meta.count("token_shift_count") or 2) * hidden + hidden * wkv
    l_cache = meta.count("shortconv.l_cache") or 0
    if l_cache:
        return hidden * (l_cache - 1)
    conv = meta.count("ssm.conv_kernel") or 0
    inner = meta.count("ssm.inner_size") or 0
    state = meta.count("ssm.state_size") or 0
    groups = meta.count("ssm.group_count") or 0
    total = (conv - 1 if conv else 0) * (inner + 2 * groups * state) + state * inner
    return total or None


def _gguf_quant_id(
    metadata: Mapping[str, Any], tensors: Sequence[_Tensor], catalog: Catalog
) -> tuple[str | None, str | None]:
    """RigCheck's quant id: from general.file_type (llama.cpp's LLAMA_FTYPE names), else from the type
    holding most bytes among the matrices."""
    from gguf import LlamaFileType

    known = {quant.id for quant in catalog.quants}
    file_type = metadata.get("general.file_type")
    ftype_name = None
    if _is_int(file_type):
        try:
            ftype_name = LlamaFileType(file_type & ~_FTYPE_GUESSED).name
        except ValueError:
            ftype_name = f"#{file_type}"
        base = ftype_name.removeprefix("MOSTLY_").removeprefix("ALL_").lower()
        quant_id = _FTYPE_IDS.get(base, base)
        if quant_id in known:
            return quant_id, None
    by_type: dict[int, int] = {}
    for tensor in tensors:
        if len(tensor.dims) >= 2:
            by_type[tensor.ggml_type] = by_type.get(tensor.ggml_type, 0) + tensor.n_bytes
    if not by_type:
        return None, None
    dominant = max(by_type, key=lambda t: by_type[t])
    type_name = next(t.type_name for t in tensors if t.ggml_type == dominant)
    why = f"file type {ftype_name} has no RigCheck quant id" if ftype_name else "no general.file_type"
    for quant in catalog.quants:
        if quant.ggml_type == dominant:
            return quant.id, f"{why}: named after the type of most weights, {type_name}"
    return None, f"{why}, nor has {type_name}, the type of most weights"


def _gguf_stem(path: Path) -> str:
    match = _SPLIT.fullmatch(path.name)
    if match:
        return match["stem"]
    return path.name[: -len(".gguf")] if path.name.lower().endswith(".gguf") else path.name
