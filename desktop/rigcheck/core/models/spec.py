"""What the estimator needs to know about a model, whatever it came from.

:class:`ArchConfig` is the architecture, normalised across model families and sources (a
``config.json``, a GGUF header, a catalog entry), with the parameter counts worked out per layer.
:class:`ModelInfo` wraps it with where it came from and, when real weight files are known, their
exact bytes.

Provenance travels with the numbers: ``source_kind`` says whether the architecture came from a
``file`` (GGUF, safetensors), a ``config`` (config.json, local or from the hub) or the ``catalog``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

#: how one layer attends: full attention (grows with context), a sliding window (capped), MLA (a
#: compressed latent per token), linear/recurrent (a fixed-size state), or none (an MLP-only layer)
LayerKind = Literal["full", "sliding", "mla", "linear", "none"]
SourceKind = Literal["file", "config", "catalog"]
ParamsSource = Literal["tensor_table", "config", "catalog"]
#: how core/models/tensors.py's note starts when the tensor table gave the count
TENSOR_TABLE_NOTE = "parameters: from the tensor table"


@dataclass(frozen=True)
class LinearMixer:
    """The widths of a Gated DeltaNet token mixer (Qwen3-Next, Qwen3.5: the config's ``linear_*`` keys,
    transformers models/qwen3_5/modular_qwen3_5.py Qwen3_5GatedDeltaNet)."""

    key_heads: int
    value_heads: int
    key_head_dim: int
    value_head_dim: int
    conv_kernel: int

    @property
    def key_dim(self) -> int:
        return self.key_heads * self.key_head_dim

    @property
    def value_dim(self) -> int:
        return self.value_heads * self.value_head_dim

    @property
    def conv_dim(self) -> int:
        """Channels of the depthwise conv1d: q, k and v (2·key_dim + value_dim)."""
        return 2 * self.key_dim + self.value_dim


@dataclass(frozen=True)
class ArchConfig:
    """A decoder-only transformer, per layer where layers differ. Counts are exact integers."""

    model_type: str
    hidden_size: int
    num_layers: int
    num_heads: int
    #: key/value heads of full and sliding attention layers (== num_heads for MHA, 1 for MQA)
    num_kv_heads: int
    head_dim: int
    vocab_size: int
    #: per layer: how it attends (len == num_layers)
    layer_kinds: tuple[LayerKind, ...]
    tie_word_embeddings: bool = False
    intermediate_size: int | None = None
    max_context: int | None = None
    sliding_window: int | None = None
    #: value head dim when it differs from head_dim (MLA v_head_dim); None: same as head_dim
    v_head_dim: int | None = None
    # -- MLA (DeepSeek-V2/V3, Kimi K2): what is cached per token per MLA layer --------------------
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    #: MLA query compression (q_a_proj hidden → q_lora_rank, q_b_proj); None: one q_proj
    q_lora_rank: int | None = None
    #: q_proj also yields a per-head output gate (Qwen3-Next, Qwen3.5: hidden → 2·heads·head_dim)
    attn_output_gate: bool = False
    # -- linear attention / recurrent layers: a fixed state per sequence per such layer ----------
    #: elements of recurrent + convolution state per linear layer per sequence
    linear_state_elements: int | None = None
    #: the linear layers' Gated DeltaNet widths, when the config names them (None: not known)
    linear_mixer: LinearMixer | None = None
    #: per layer, cached elements per token where layers differ (Gemma 4's global layers, a sparse-
    #: attention indexer's keys, layers that reuse another layer's KV: 0); empty: the uniform rule
    layer_kv_elements: tuple[int, ...] = ()
    #: per layer, how many of a transformer layer's two sub-blocks (token mixer, MLP) it holds, where a
    #: layer holds one (Nemotron-H: each block is a norm and one mixer, Mamba-2, attention or an MLP);
    #: empty: both in every layer
    layer_mixers: tuple[int, ...] = ()
    #: a layer's kernels per token as a plain transformer layer's multiple, for the fixed per-layer cost
    #: (the ops its family's llama.cpp graph adds: models/config/kernels.py, gemma3n.py); 1.0: a plain layer
    layer_kernels: float = 1.0
    # -- mixture of experts ----------------------------------------------------------------------
    #: routed experts per MoE layer (None for dense models)
    num_experts: int | None = None
    #: routed experts each token uses
    experts_per_token: int | None = None
    #: per layer: whether its MLP is a mixture of experts (len == num_layers; all False when dense)
    moe_layers: tuple[bool, ...] = ()
    # -- parameter counts (exact) ----------------------------------------------------------------
    #: input embedding
    embed_params: int = 0
    #: output head (0 when tied to the embedding); final norm included here
    head_params: int = 0
    #: every parameter of each layer, all experts included (len == num_layers)
    layer_params: tuple[int, ...] = ()
    #: parameters one token touches in each layer: shared parts + experts_per_token experts
    layer_active_params: tuple[int, ...] = ()
    #: parameters of one routed expert (for offloading experts to RAM), 0 when dense
    expert_params: int = 0
    #: routed experts' intermediate width (moe_intermediate_size), when the config gives it
    moe_intermediate_size: int | None = None
    #: the width of the gated MLP every token's shared expert(s) run (Qwen's
    #: shared_expert_intermediate_size, DeepSeek's n_shared_experts × moe_intermediate_size); 0: none known
    shared_expert_width: int = 0
    #: a 1-wide shared_expert_gate linear beside the shared expert (Qwen2-MoE, Qwen3-Next, Qwen3.5 MoE)
    shared_expert_gate: bool = False
    #: keys this config had to assume (family defaults applied); shown in explanations
    assumed: tuple[str, ...] = ()
    # -- outside the decoder: counted apart, never in params_total (core/models/towers.py) ----------
    #: vision/audio towers and their projectors into the text model: in memory, not run per token
    tower_params: int = 0
    #: multi-token-prediction (MTP, NextN) or draft layers the checkpoint carries, all of them
    mtp_params: int = 0
    #: of mtp_params, the MTP modules' own copies of the token embedding and output head, which an
    #: engine running the MTP layers as a draft shares with the target instead of loading
    mtp_shared_params: int = 0
    #: how tower_params and mtp_params were counted: "tensor_table", "config" or "" (none)
    tower_source: str = ""
    mtp_source: str = ""

    @property
    def params_total(self) -> int:
        return self.embed_params + sum(self.layer_params) + self.head_params

    @property
    def params_active(self) -> int:
        """Parameters read per generated token: the embedding row is a lookup, the head is read whole."""
        return self.embed_params + sum(self.layer_active_params) + self.head_params

    @property
    def is_moe(self) -> bool:
        return bool(self.num_experts and self.num_experts > 1)


@dataclass(frozen=True)
class WeightsInfo:
    """Real weight files: their exact bytes and formats, read from headers only."""

    total_bytes: int
    #: bytes per storage format: {"Q4_K": 3.9e9, "F32": 1.2e6} for GGUF, {"BF16": …} for safetensors
    bytes_by_format: dict[str, int] = field(default_factory=dict)
    tensor_count: int = 0
    files: tuple[str, ...] = ()
    #: the dominant weight format in RigCheck's quant ids ("q4_k_m", "bf16", "gptq-4bit-g128"), if known
    quant_id: str | None = None
    #: bytes of each layer's tensors (for layer offload), when the file says which layer a tensor is in
    layer_bytes: tuple[int, ...] = ()
    #: bytes outside the layers: embedding, output head, final norm
    other_bytes: int = 0


@dataclass(frozen=True)
class ModelInfo:
    id: str
    name: str
    arch: ArchConfig
    source_kind: SourceKind
    #: where it came from: a path, "catalog:<id>", "hf:<org/name>@<revision>"
    source: str
    weights: WeightsInfo | None = None
    #: the format the weights are released in (a quant id), used when no format is asked for
    native_quant: str | None = None
    #: notes for the explanation ("config.json omits head_dim: hidden_size / heads used")
    notes: tuple[str, ...] = ()

    @property
    def params_source(self) -> ParamsSource:
        """Where the parameter count came from: a tensor table (a GGUF file's, or safetensors headers
        read by core/models/tensors.py), config.json arithmetic, or a catalog entry's config."""
        if self.source_kind == "file" or any(n.startswith(TENSOR_TABLE_NOTE) for n in self.notes):
            return "tensor_table"
        return "catalog" if self.source_kind == "catalog" else "config"
