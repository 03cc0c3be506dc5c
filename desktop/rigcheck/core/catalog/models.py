"""Model records: models, weight formats, KV cache types and measured format quality."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from rigcheck.core.catalog.common import Confidence


@dataclass(frozen=True)
class ModelSpec:
    """One model at one size; ``config`` holds its published ``config.json`` keys verbatim."""

    id: str
    name: str
    family: str
    hf_id: str
    #: where the config came from: the config.json URL on the hub (with the revision if pinned)
    source: str
    config: dict[str, Any]
    license: str | None = None
    gated: bool = False
    release_year: int | None = None
    #: the published parameter count, in billions, and where it was published
    params_b: float | None = None
    active_params_b: float | None = None
    params_source: str | None = None
    #: the exact published count, e.g. the hub's safetensors total
    params_exact: int | None = None
    gguf_repos: tuple[str, ...] = ()
    #: MLX conversions a user can run with ``mlx_lm.generate --model REPO`` (e.g. mlx-community/…)
    mlx_repos: tuple[str, ...] = ()
    #: the names Ollama publishes this model under in its library, e.g. ("gpt-oss:120b",)
    ollama: tuple[str, ...] = ()
    #: the release date, ISO "YYYY-MM-DD" (the model card's or the hub repository's first commit)
    released: str | None = None
    #: the weight format the checkpoint is released in, a quant id ("mxfp4", "fp8-e4m3", "bf16"); when
    #: absent, read from the config (quantization_config.quant_method, else torch_dtype)
    native_format: str | None = None
    native_format_source: str | None = None
    tags: tuple[str, ...] = ()
    #: further sources for individual facts (a model card table, a mirror of the config)
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
    notes: str | None = None

    @property
    def model_type(self) -> str:
        return str(self.config["model_type"])

    @property
    def max_context(self) -> int | None:
        value = self.config.get("max_position_embeddings")
        return value if isinstance(value, int) else None

    @property
    def is_moe(self) -> bool:
        return any(
            isinstance(self.config.get(k), int) and self.config[k] > 1
            for k in ("num_local_experts", "num_experts", "n_routed_experts")
        )


@dataclass(frozen=True)
class QuantFormat:
    """A weight format and what it costs per weight, scales and block metadata included."""

    id: str
    name: str
    #: "linear": only the linear layers are stored in the format (embeddings and head stay 16-bit)
    kind: Literal["float", "int", "gguf", "gptq", "awq", "bitsandbytes", "mx", "linear"]
    #: storage per weight of the block format itself
    bits_per_weight: float
    source: str
    #: whole-file bits per weight llama.cpp measured for a mix (its Q4_K_M keeps some tensors wider)
    file_bpw: float | None = None
    file_bpw_source: str | None = None
    #: a mix whose layers' bits per weight come from one published file of another model (Unsloth UD,
    #: QAT): the layers at this rate, the embedding and head at outside_bpw (else as llama.cpp's mixes)
    layer_bpw: float | None = None
    layer_bpw_source: str | None = None
    outside_bpw: float | None = None
    #: a mixed checkpoint (kind "mx"): bits per weight of the non-expert layer weights and of lookup
    #: tables beyond the token embedding (DeepSeek-V4's FP8 blocks); None: they stay 16-bit
    dense_bpw: float | None = None
    #: ggml_type enum value, for reading GGUF tensor types
    ggml_type: int | None = None
    block_size: int | None = None
    #: further sources for individual facts
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
    notes: str | None = None


@dataclass(frozen=True)
class KvCacheType:
    id: str
    name: str
    bytes_per_element: float
    source: str
    #: further sources for individual facts
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
    notes: str | None = None


@dataclass(frozen=True)
class QualityMeasurement:
    """A weight format's measured perplexity change against 16-bit weights, on the model measured."""

    #: a quant id or a name ``resolve_quant`` accepts ("q4_k_m")
    quant: str
    #: perplexity increase (negative: lower) measured on ``measured_on``
    ppl_delta: float
    measured_on: str
    source: str
    #: mean KL divergence against the 16-bit model, where measured
    kld: float | None = None
    sources: tuple[str, ...] = ()
    confidence: Confidence = "primary"
    notes: str | None = None
