"""How much memory a model needs: inference (weights, KV cache, compute buffers, runtime) and
training (full, LoRA, QLoRA: weights, gradients, optimizer states, activations).

Every figure is a :class:`Term` that carries its provenance (``file``: read from the weight files;
``config``/``catalog``: computed exactly from the architecture; ``estimate``: a formula with a
source) and the formula in words, so the user can see why. Constants name where they come from;
``shared/reference/memory-formulas.md`` in the project's design notes collects the sources.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from rigcheck.core.catalog import Backend, Catalog, QuantFormat
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.exllamav3 import EXL3_SOURCE, chunk_activation_bytes
from rigcheck.core.estimate.mlx import MLX_LM_SOURCE, prefill_activation_bytes
from rigcheck.core.estimate.training_memory import (
    Setup,
    TrainingMemory,
    max_context,
    training_memory,
    with_paged,
)
from rigcheck.core.estimate.training_profiles import OPTIMIZERS, PROFILES, default_framework, stack_name
from rigcheck.core.estimate.ud_mix import SOURCE as UD_SOURCE
from rigcheck.core.estimate.ud_mix import ud_weights
from rigcheck.core.models.spec import ArchConfig, ModelInfo
from rigcheck.core.said import Joined, Num, Sig, Text, render, render_all, say

Provenance = Literal["file", "config", "catalog", "estimate"]
Workload = Literal["inference", "lora", "qlora", "full"]
#: ktransformers (kvcache-ai/ktransformers): GGUF mixtures of experts with every routed expert in host RAM,
#: computed by its CPU kernels, and attention, shared experts and the KV cache on the GPU (fit.py, placement/)
#: ollama: Ollama serves GGUF models through upstream llama-server (ollama/ollama llm/server.go@fb30760
#: NewLlamaServer), so llama.cpp's memory terms and kernels apply, with Ollama's own defaults
#: (core/estimate/ollama.py)
#: sglang: SGLang, whose weights and KV cache live in its static share of each GPU (placement/sglang.py)
#: mlx: mlx-lm on Apple silicon: its formats, fp16 cache, one prompt step's activations (estimate/mlx.py)
#: exllamav3: ExLlamaV3 on NVIDIA CUDA: EXL3 formats, its fp16 paged cache and reserve (estimate/exllamav3.py)
Engine = Literal["llama.cpp", "vllm", "transformers", "ktransformers", "ollama", "sglang", "mlx", "exllamav3"]
#: engines whose weights, KV cache and buffers are llama.cpp's
LLAMA_CPP_ENGINES = ("llama.cpp", "ollama")
Checkpointing = Literal["none", "selective", "full", "offloaded"]
Category = Literal["weights", "kv_cache", "activations", "overhead", "gradients", "optimizer"]

GIB = 1024**3
MIB = 1024**2
DEFAULT_CONTEXT = 8192
#: llama.cpp's default micro-batch (-ub), which sizes its compute buffer and sliding-window cache
LLAMA_CPP_UBATCH = 512

# Sources of the constants below (cited again in each Term's ``source``):
LLAMA_CPP_BUFFER = "llama.cpp compute buffer n_ctx·n_ubatch·n_head·4 B (logdetective PR #106 logs)"
LLAMA_CPP_FA_BUFFER = (
    "unslothai/unsloth PR #7637 (flash-attn KQ mask: n_ubatch × 2 B per context token); logits term: a "
    "llama.cpp gpt-oss log (vocabulary 201,088) shows 398.38 MiB on the device holding the output head, "
    "34.76 MiB on the others"
)
VLLM_PROFILE = "vLLM start-up profile, Llama-3-8B on H100 (vllm-project/vllm PR #10511)"
ELEUTHER_20 = "EleutherAI Transformer Math via HF model-memory-usage Space: +20% at inference"


@dataclass(frozen=True)
class Term:
    """One part of the memory: how many bytes, what it is, and why we think so."""

    category: Category
    #: what it is and how it was counted, as said (core/said.py): :attr:`name` and :attr:`formula` in words
    name_said: Text
    bytes: int
    provenance: Provenance
    formula_said: Text
    source: str = ""

    @property
    def name(self) -> str:
        return render(self.name_said)

    @property
    def formula(self) -> str:
        return render(self.formula_said)


@dataclass(frozen=True)
class Request:
    """What the user wants to run. ``quant`` and ``kv_type`` are catalog ids or common names."""

    quant: str | None = None
    context: int | None = None
    batch: int = 1
    kv_type: str = "f16"
    workload: Workload = "inference"
    engine: Engine = "llama.cpp"
    #: llama.cpp flash attention: without it the compute buffer grows with n_ctx × n_ubatch × n_head.
    #: On by default: llama.cpp's default is ``-fa auto`` (llama_context_default_params:
    #: flash_attn_type = LLAMA_FLASH_ATTN_TYPE_AUTO), which enables it where the backend supports it
    flash_attention: bool = True
    #: None = the framework's default
    lora_rank: int | None = None
    #: LoRA target modules; None = the framework's
    lora_targets: tuple[str, ...] | None = None
    #: None = the framework's default
    checkpointing: Checkpointing | None = None
    #: LoRA alpha: scales the update, costs no memory; carried to the answer and its commands
    lora_alpha: int | None = None
    #: the GPU backend the engine runs (llama.cpp: CUDA, ROCm, Metal, Vulkan, SYCL); None = the vendor's usual
    backend: Backend | None = None
    #: training: the fine-tuning stack (training_profiles.PROFILES). None = the workload's usual stack
    #: (training_profiles.default_framework: TRL + PEFT on transformers); the framework's own defaults
    #: fill every field below left at None, and lora_rank/lora_targets/checkpointing given here override them
    framework: str | None = None
    optimizer: str | None = None
    precision: Literal["bf16", "fp16", "fp32"] = "bf16"
    attention: Literal["flash", "eager"] = "flash"
    #: data-parallel GPUs the model states are sharded over (FSDP / ZeRO-3)
    gpus: int = 1
    #: FSDP CPU offload / ZeRO-3 offload of parameters, gradients and optimizer states
    offload_states: bool = False
    #: training: micro-batches per optimizer step (gradient accumulation)
    grad_accumulation: int = 1
    #: CPU threads the engine computes with (llama.cpp -t); None = its default, the physical cores
    threads: int | None = None


@dataclass(frozen=True)
class MemoryEstimate:
    model: ModelInfo
    quant: QuantFormat | None
    #: the weight format's name as shown to users: "Q4_K_M", "bf16", or the file's own types
    quant_name: str
    context: int
    batch: int
    kv_type: str
    workload: Workload
    engine: Engine
    terms: tuple[Term, ...]
    #: KV bytes one more token of context costs, all attention layers counted as if uncapped
    kv_cache_bytes_per_token: int
    checkpointing: Checkpointing = "full"
    #: bytes of weights per layer and outside the layers (embedding, head), for placement
    layer_weight_bytes: tuple[int, ...] = ()
    other_weight_bytes: int = 0
    #: KV cache per layer, for placement
    layer_kv_bytes: tuple[int, ...] = ()
    #: weights the engine keeps in host memory wherever the layers go (llama.cpp's input embedding,
    #: memory-mapped from the file); not part of ``other_weight_bytes``
    host_weight_bytes: int = 0
    #: bytes of routed experts in each layer (0 for dense layers), for expert offload and decode reads
    layer_expert_bytes: tuple[int, ...] = ()
    backend: Backend | None = None
    #: CPU threads (llama.cpp -t), as requested; None = the physical cores
    threads: int | None = None
    #: what the estimate assumed, as said: :attr:`notes` in words
    notes_said: tuple[Text, ...] = field(default_factory=tuple)
    #: training with a framework profile: the PyTorch allocator's peak on one GPU
    #: (torch.cuda.max_memory_allocated), the process total with the CUDA context (nvidia-smi), the host
    #: RAM the run keeps, and the trained parameters
    gpu_peak_bytes: int = 0
    training_gpu_bytes: int = 0
    training_host_bytes: int = 0
    trainable_params: int = 0
    #: training: the GPUs the model states are sharded over (Request.gpus), each holding the figures above
    training_gpus: int = 1
    framework: str | None = None
    #: LoRA/QLoRA: the rank and targets the estimate used (the framework's or the request's), and alpha
    lora_rank: int | None = None
    lora_targets: tuple[str, ...] = ()
    lora_alpha: int | None = None

    def total(self, category: Category | None = None) -> int:
        return sum(t.bytes for t in self.terms if category is None or t.category == category)

    @property
    def total_bytes(self) -> int:
        return self.total()

    @property
    def notes(self) -> tuple[str, ...]:
        return render_all(self.notes_said)

    def summary(self) -> dict[str, int]:
        """The CLI contract: bytes per category, integers."""
        return {
            "weights_bytes": self.total("weights"),
            "kv_cache_bytes": self.total("kv_cache"),
            "activations_bytes": self.total("activations"),
            "overhead_bytes": self.total("overhead"),
            "gradients_bytes": self.total("gradients"),
            "optimizer_bytes": self.total("optimizer"),
            "total_bytes": self.total_bytes,
        }


# -- names ----------------------------------------------------------------------------------------

_QUANT_ALIASES = {
    "fp8": "fp8-e4m3",
    "e4m3": "fp8-e4m3",
    "f16": "fp16",
    "f32": "fp32",
    "float16": "fp16",
    "bfloat16": "bf16",
    "gptq-4bit": "gptq-4bit-g128",
    "gptq": "gptq-4bit-g128",
    "awq-4bit": "awq-4bit-g128",
    "awq": "awq-4bit-g128",
    "nf4-double": "nf4-dq",
    # GGUF file types name the mix, not the block format of the same name
    "q2_k": "q2_k-mix",
    "q6_k": "q6_k-mix",
    # Gemma's quantization-aware-trained GGUFs (google/gemma-*-it-qat-q4_0-gguf)
    "qat-q4_0": "q4_0-qat",
    "q4_0_qat": "q4_0-qat",
    "qat_q4_0": "q4_0-qat",
    "qat": "q4_0-qat",
}
_KV_ALIASES = {"fp16": "f16", "fp32": "f32", "fp8": "fp8-e4m3", "e4m3": "fp8-e4m3", "float16": "f16"}


def resolve_quant(catalog: Catalog, name: str) -> QuantFormat:
    key = name.strip().lower()
    key = _QUANT_ALIASES.get(key, key)
    quant = catalog.quant(key)
    if quant is None:
        known = ", ".join(sorted(q.name for q in catalog.quants if q.kind != "gguf" or "_" in q.id))
        raise InputError("--quant", f"unknown quantization {name!r} (known: {known})")
    return quant


def kv_bytes_per_element(catalog: Catalog, name: str) -> tuple[str, float]:
    key = name.strip().lower()
    key = _KV_ALIASES.get(key, key)
    for kv in catalog.kv_caches:
        if kv.id == key:
            return kv.id, kv.bytes_per_element
    known = ", ".join(k.id for k in catalog.kv_caches)
    raise InputError("--kv-cache-type", f"unknown KV cache type {name!r} (known: {known})")


def default_context(arch: ArchConfig) -> int:
    """8192, or the model's maximum if smaller: never the maximum by default (users saw 26 GB for a 5 GB
    file when a tool sized the cache for 262k tokens)."""
    return min(DEFAULT_CONTEXT, arch.max_context) if arch.max_context else DEFAULT_CONTEXT


# -- weights --------------------------------------------------------------------------------------


#: llama.cpp's MXFP4 GGUFs of gpt-oss (ggml-org/gpt-oss-*-GGUF) keep the routed experts in MXFP4 and
#: the other 2-D weights in Q8_0 (34 bytes per 32 weights): experts × 4.25 + the rest × 8.5 bits gives
#: 11.24 GiB and 58.9 GiB against llama-bench's 11.27 GiB and 59.02 GiB ("gpt-oss 20B/120B MXFP4 MoE")
LLAMA_CPP_MX_OTHER_BPW = 8.5
#: Q6_K's bits per weight: llama.cpp's quantize gives the output head this type in its K and I mixes
#: unless the base type is wider (llama-quant.cpp: "else if (new_type != GGML_TYPE_Q8_0) new_type = Q6_K")
Q6_K_BPW = 6.5625
#: Llama-3.1-8B, the model tools/quantize/README.md measured the mixes on: parameters, and the input
#: embedding and the output head (128,256 × 4,096 each, untied)
_CALIBRATION_PARAMS = 8_030_261_248
_CALIBRATION_EMBED = 128_256 * 4_096


def _gguf_body_bpw(file_bpw: float, embed_bpw: float, out_bpw: float) -> float:
    """Bits per weight of the layers that make the calibration model's whole file ``file_bpw``."""
    body = _CALIBRATION_PARAMS - 2 * _CALIBRATION_EMBED
    return (file_bpw * _CALIBRATION_PARAMS - (embed_bpw + out_bpw) * _CALIBRATION_EMBED) / body


LLAMA_CPP_MX_SOURCE = (
    "llama-bench size column of ggml-org/gpt-oss-20b-GGUF (11.27 GiB) and -120b (59.02 GiB), "
    "e.g. ggml-org/llama.cpp PR #16894; non-expert tensors at Q8_0 derived from those sizes"
)
#: llama.cpp never offloads the input embedding (a row lookup): "there is very little benefit to
#: offloading the input layer, so always keep it on the CPU" (src/llama-model.cpp, load_tensors)
LLAMA_CPP_INPUT_ON_CPU = "llama.cpp src/llama-model.cpp: the input layer is always kept on the CPU"


def _weights(
    model: ModelInfo, quant: QuantFormat | None, engine: Engine = "llama.cpp"
) -> tuple[Term, tuple[int, ...], int, int]:
    """Weight bytes in total, per layer, outside the layers, and of the input embedding alone."""
    arch = model.arch
    weights = model.weights
    embed_share = arch.embed_params / max(arch.embed_params + arch.head_params, 1)
    if weights is not None and (quant is None or quant.id == weights.quant_id):
        layers = weights.layer_bytes or _spread(weights.total_bytes - weights.other_bytes, arch)
        other = weights.other_bytes if weights.layer_bytes else weights.total_bytes - sum(layers)
        files = ", ".join(weights.files[:2]) + (" …" if len(weights.files) > 2 else "")
        term = Term(
            "weights",
            say("weights"),
            weights.total_bytes,
            "file",
            say("sum of tensor sizes in {files}", files=files),
        )
        return term, layers, other, int(other * embed_share)
    if quant is None:
        raise InputError(model.source, "no weight format known: pass --quant (e.g. Q4_K_M or bf16)")

    embed_head = arch.embed_params + arch.head_params
    layer_params = arch.layer_params or _spread_params(arch)
    if quant.kind == "gguf" and quant.layer_bpw is not None:
        term, per_layer, other, embed = _derived_mix(model, quant, layer_params)
        return term, per_layer, other, embed
    if quant.kind == "gguf" and quant.file_bpw is not None:
        # llama.cpp's mixes: the output head at Q6_K (unless the base type is wider), the input embedding
        # at the base block type, and the layers at whatever bits per weight makes the mix's whole-file
        # figure measured on Llama-3.1-8B come out (so the split carries to other shapes: a 70B has a
        # far smaller share of embedding than an 8B).
        out_bpw = max(quant.bits_per_weight, Q6_K_BPW)
        body_bpw = _gguf_body_bpw(quant.file_bpw, quant.bits_per_weight, out_bpw)
        per_layer = tuple(int(p * body_bpw / 8) for p in layer_params)
        if arch.tie_word_embeddings:  # one tensor, quantized as the output
            embed = int(arch.embed_params * out_bpw / 8)
            other = embed + int(arch.head_params * out_bpw / 8)
        else:
            embed = int(arch.embed_params * quant.bits_per_weight / 8)
            other = embed + int(arch.head_params * out_bpw / 8)
        formula = say(
            "layers × {body} bits ({quant} layer average) + output × {out} bits + input embedding "
            "× {embed} bits, / 8",
            body=Num(body_bpw, 3, group=False),
            quant=quant.name,
            out=Sig(out_bpw, 6),
            embed=Sig(quant.bits_per_weight, 6),
        )
        source = (
            f"{quant.file_bpw_source or quant.source} (whole-file {quant.file_bpw} bpw on Llama-3.1-8B); "
            "output.weight at Q6_K: llama.cpp src/llama-quant.cpp"
        )
    elif quant.kind == "mx" and arch.is_moe and engine in LLAMA_CPP_ENGINES:
        # llama.cpp's own layout: MXFP4 experts, Q8_0 for attention, router, embeddings and head.
        bpw, rest = quant.bits_per_weight, LLAMA_CPP_MX_OTHER_BPW
        per_layer = tuple(
            int(expert * bpw / 8 + (p - expert) * rest / 8)
            for p, expert in zip(layer_params, expert_params_per_layer(arch), strict=True)
        )
        other = int(embed_head * rest / 8)
        embed = int(arch.embed_params * rest / 8)
        formula = say(
            "routed experts × {bpw} bits / 8 + other weights × {rest} bits (Q8_0) / 8, as llama.cpp's GGUF",
            bpw=bpw,
            rest=rest,
        )
        source = LLAMA_CPP_MX_SOURCE
    elif quant.kind in ("bitsandbytes", "gptq", "awq", "mx", "linear"):
        # Only the linear layers are quantized; embeddings and the output head stay 16-bit.
        bpw = quant.bits_per_weight
        other = embed_head * 2
        embed = arch.embed_params * 2
        if quant.kind == "mx" and arch.is_moe and quant.dense_bpw is not None:
            # DeepSeek-V4: FP4 experts, FP8 block-scaled layers and lookup tables, BF16 token embedding
            dense = quant.dense_bpw
            per_layer = tuple(
                int(expert * bpw / 8 + (p - expert) * dense / 8)
                for p, expert in zip(layer_params, expert_params_per_layer(arch), strict=True)
            )
            tables = max(arch.embed_params - arch.vocab_size * arch.hidden_size, 0)
            embed = int((arch.embed_params - tables) * 2 + tables * dense / 8)
            other = embed + arch.head_params * 2
            formula = say(
                "routed experts × {bpw} bits / 8 + other layer weights and lookup tables × {dense} bits / 8 "
                "+ token embedding and head × 2 bytes",
                bpw=bpw,
                dense=Sig(dense, 6),
            )
        elif quant.kind == "mx" and arch.is_moe:
            per_layer = tuple(
                int(expert * bpw / 8 + (p - expert) * 2)
                for p, expert in zip(layer_params, expert_params_per_layer(arch), strict=True)
            )
            formula = say(
                "routed experts × {bpw} bits / 8 + other layer weights × 2 bytes + embeddings × 2 bytes",
                bpw=bpw,
            )
        else:
            per_layer = tuple(int(p * bpw / 8) for p in layer_params)
            formula = say(
                "layer parameters × {bpw} bits / 8 + embedding and head × 2 bytes (kept 16-bit)", bpw=bpw
            )
        source = quant.source
    else:
        bpw = quant.bits_per_weight
        per_layer = tuple(int(p * bpw / 8) for p in layer_params)
        other = int(embed_head * bpw / 8)
        embed = int(arch.embed_params * bpw / 8)
        formula = say("{params} parameters × {bpw} bits / 8", params=Num(arch.params_total), bpw=Sig(bpw, 6))
        source = quant.source
    provenance: Provenance = "catalog" if model.source_kind == "catalog" else "config"
    if quant.kind == "gguf" and quant.file_bpw is not None:
        provenance = "estimate"
    total = sum(per_layer) + other
    term = Term("weights", say("weights ({quant})", quant=quant.name), total, provenance, formula, source)
    return term, per_layer, other, embed


def _derived_mix(
    model: ModelInfo, quant: QuantFormat, layer_params: tuple[int, ...]
) -> tuple[Term, tuple[int, ...], int, int]:
    """A GGUF mix sized from a published file (Unsloth UD, QAT Q4_0): the layers at ``layer_bpw``, the
    embedding and head at ``outside_bpw``, or else as llama.cpp's mixes (head at Q6_K unless the base is
    wider, an untied input embedding at the base block, a tied one as the head)."""
    arch = model.arch
    by_role = ud_weights(arch, quant.id, layer_params, expert_params_per_layer(arch))
    if by_role is not None:  # Unsloth UD: each tensor role at its block type (core/estimate/ud_mix.py)
        per_layer, other, embed, formula = by_role
        label = say("weights ({quant})", quant=quant.name)
        return (
            Term("weights", label, sum(per_layer) + other, "estimate", formula, UD_SOURCE),
            per_layer,
            other,
            embed,
        )
    body_bpw = quant.layer_bpw or quant.bits_per_weight
    out_bpw = quant.outside_bpw or max(quant.bits_per_weight, Q6_K_BPW)
    in_bpw = quant.outside_bpw or (out_bpw if arch.tie_word_embeddings else quant.bits_per_weight)
    per_layer = tuple(int(p * body_bpw / 8) for p in layer_params)
    embed = int(arch.embed_params * in_bpw / 8)
    other = embed + int(arch.head_params * out_bpw / 8)
    formula = say(
        "layers × {body} bits ({quant} layer average) + output × {out} bits + input embedding "
        "× {embed} bits, / 8",
        body=Sig(body_bpw, 6),
        quant=quant.name,
        out=Sig(out_bpw, 6),
        embed=Sig(in_bpw, 6),
    )
    source = quant.layer_bpw_source or quant.source
    term = Term(
        "weights",
        say("weights ({quant})", quant=quant.name),
        sum(per_layer) + other,
        "estimate",
        formula,
        source,
    )
    return term, per_layer, other, embed


def _expert_bytes(
    model: ModelInfo, quant: QuantFormat | None, layer_weights: tuple[int, ...], req: Request
) -> tuple[int, ...]:
    """Routed-expert bytes per layer: exact where the format stores experts apart (MXFP4), else pro rata."""
    arch = model.arch
    if not arch.is_moe:
        return ()
    experts = expert_params_per_layer(arch)
    params = arch.layer_params or _spread_params(arch)
    from_file = model.weights is not None and quant is not None and quant.id == model.weights.quant_id
    if quant is not None and quant.kind == "mx" and not from_file:
        return tuple(int(e * quant.bits_per_weight / 8) for e in experts)
    return tuple(int(w * e / p) if p else 0 for w, e, p in zip(layer_weights, experts, params, strict=True))


def _spread_params(arch: ArchConfig) -> tuple[int, ...]:
    body = arch.params_total - arch.embed_params - arch.head_params
    return tuple(body // arch.num_layers for _ in range(arch.num_layers))


def _spread(total: int, arch: ArchConfig) -> tuple[int, ...]:
    return tuple(total // arch.num_layers for _ in range(arch.num_layers))


def expert_params_per_layer(arch: ArchConfig) -> tuple[int, ...]:
    per_layer_moe = (arch.num_experts or 0) * arch.expert_params
    moe = arch.moe_layers or tuple(arch.is_moe for _ in range(arch.num_layers))
    return tuple(per_layer_moe if is_moe else 0 for is_moe in moe)


# -- KV cache -------------------------------------------------------------------------------------


def _kv_elements_per_token(arch: ArchConfig, kind: str) -> int:
    """Cached elements per token in one layer of this kind."""
    if kind in ("full", "sliding"):
        return arch.num_kv_heads * (arch.head_dim + (arch.v_head_dim or arch.head_dim))
    if kind == "mla":
        # Only the compressed latent and the shared RoPE key are cached (DeepSeek-V3 inference/model.py).
        return (arch.kv_lora_rank or 0) + (arch.qk_rope_head_dim or 0)
    return 0


def _kv_listed(
    arch: ArchConfig,
    context: int,
    *,
    batch: int,
    elem: float,
    engine: Engine,
    by_kind: dict[str, tuple[int, int]],
) -> tuple[list[int], int]:
    """The cache per layer from ``ArchConfig.layer_kv_elements`` (Gemma 4 global layers, DSA indexer keys)."""
    extra = LLAMA_CPP_UBATCH if engine == "llama.cpp" else 0
    per_layer: list[int] = []
    per_token = 0
    for kind, elements in zip(arch.layer_kinds, arch.layer_kv_elements, strict=True):
        if kind == "linear":
            per_layer.append(by_kind[kind][1])
            continue
        window = arch.sliding_window
        tokens = min(context, window + extra) if kind == "sliding" and window else context
        per_layer.append(int(tokens * elements * elem * batch))
        per_token += int(elements * elem)
    return per_layer, per_token


def _kv_cache(
    arch: ArchConfig, context: int, batch: int, kv: tuple[str, float], engine: Engine
) -> tuple[list[Term], tuple[int, ...], int]:
    kv_type, elem = kv
    # Each kind of layer caches the same per token: work each out once, then lay them out per layer.
    by_kind: dict[str, tuple[int, int]] = {}  # kind -> (bytes per token, bytes in the cache)
    for kind in set(arch.layer_kinds):
        elements = _kv_elements_per_token(arch, kind)
        if kind == "sliding" and arch.sliding_window:
            # llama.cpp keeps min(n_ctx, n_swa + n_ubatch) cells for SWA layers (llama-kv-cache-iswa.cpp).
            extra = LLAMA_CPP_UBATCH if engine in LLAMA_CPP_ENGINES else 0
            cached = int(min(context, arch.sliding_window + extra) * elements * elem * batch)
        elif kind == "linear":
            cached = int((arch.linear_state_elements or 0) * 4 * batch)  # fp32 recurrent state
        else:
            cached = int(context * elements * elem * batch)
        by_kind[kind] = (int(elements * elem), cached)
    per_layer = [by_kind[kind][1] for kind in arch.layer_kinds]
    per_token = sum(by_kind[kind][0] for kind in arch.layer_kinds)
    if arch.layer_kv_elements:  # layers of different widths: each layer its own elements per token
        per_layer, per_token = _kv_listed(
            arch, context, batch=batch, elem=elem, engine=engine, by_kind=by_kind
        )
    capped = arch.layer_kinds.count("sliding") if arch.sliding_window else 0
    terms = []
    attention = sum(b for b, k in zip(per_layer, arch.layer_kinds, strict=True) if k != "linear")
    kinds = sorted({k for k in arch.layer_kinds if k not in ("linear", "none")})
    clauses: list[Text] = [
        say(
            "{context} tokens × {batch} sequence(s) × {kv_type} ({elem} B/element) over {kinds} layers",
            context=Num(context),
            batch=batch,
            kv_type=kv_type,
            elem=Sig(elem, 6),
            kinds=", ".join(kinds),
        )
    ]
    if capped:
        clauses.append(
            say(
                "{capped} sliding-window layers capped at {window} tokens",
                capped=capped,
                window=Num(arch.sliding_window or 0),
            )
        )
    if "mla" in kinds:
        clauses.append(
            f"MLA caches kv_lora_rank + qk_rope_head_dim = {_kv_elements_per_token(arch, 'mla')} per layer"
        )
    formula = Joined("; ", tuple(clauses))
    source = "2·n_kv_heads·head_dim per token per layer (memory-formulas §4.1); MLA §4.2; sliding §4.3"
    terms.append(Term("kv_cache", say("KV cache"), attention, "estimate", formula, source))
    linear = sum(b for b, k in zip(per_layer, arch.layer_kinds, strict=True) if k == "linear")
    if linear:
        n_linear = sum(1 for k in arch.layer_kinds if k == "linear")
        terms.append(
            Term(
                "kv_cache",
                say("recurrent state"),
                linear,
                "estimate",
                say(
                    "{layers} linear-attention layers × {elements} fp32 elements per sequence",
                    layers=n_linear,
                    elements=Num(arch.linear_state_elements or 0),
                ),
                "Gated DeltaNet state, memory-formulas §4.3 (engine layout not verified)",
            )
        )
    return terms, tuple(per_layer), per_token


# -- inference runtime ----------------------------------------------------------------------------

#: what each GPU backend's context is called; a CPU-only run opens none (its compute buffer is counted)
_CONTEXT_NAMES = {
    "cuda": "CUDA",
    "rocm": "ROCm (HIP)",
    "metal": "Metal",
    "vulkan": "Vulkan",
    "sycl": "SYCL",
    "ktransformers": "CUDA",
}


def _device_context(backend: Backend | None) -> Term | None:
    """The GPU backend's context and buffers, named by the backend that runs (None = a GPU whose vendor's
    usual backend the estimate does not know); none where llama.cpp runs on the CPU alone."""
    if backend == "cpu":
        return None
    name = _CONTEXT_NAMES.get(backend or "")
    return Term(
        "overhead",
        say("{backend} context and buffers", backend=name)
        if name
        else say("GPU backend context and buffers"),
        300 * MIB,
        "estimate",
        say("300 MiB: the low end of the 300 MiB–2 GiB a CUDA context takes")
        if name in (None, "CUDA")
        else say(
            "300 MiB: the low end of the 300 MiB–2 GiB a CUDA context takes, assumed alike for {backend}",
            backend=name,
        ),
        "vram.asmirnov.xyz calculator notes (memory-formulas §5)",
    )


def _inference_runtime(arch: ArchConfig, req: Request, context: int, weights: int) -> list[Term]:
    # ktransformers' GPU buffers are not measured here: llama.cpp's terms (one micro-batch's logits, the
    # attention mask, a CUDA context) stand in for them (its tutorial's "at least 14GB VRAM" for DeepSeek-V3
    # Q4_K_M is the non-expert weights and the KV cache, which are counted exactly)
    if req.engine in (*LLAMA_CPP_ENGINES, "ktransformers"):
        terms = []
        logits = LLAMA_CPP_UBATCH * arch.vocab_size * 4
        if not req.flash_attention:
            buffer = context * LLAMA_CPP_UBATCH * arch.num_heads * 4
            terms.append(
                Term(
                    "activations",
                    say("compute buffer"),
                    buffer,
                    "estimate",
                    say(
                        "n_ctx {context} × n_ubatch {ubatch} × {heads} heads × 4 B "
                        "(one layer's f32 attention scores; much smaller with -fa)",
                        context=Num(context),
                        ubatch=LLAMA_CPP_UBATCH,
                        heads=arch.num_heads,
                    ),
                    LLAMA_CPP_BUFFER,
                )
            )
        else:
            mask = context * LLAMA_CPP_UBATCH * 2
            terms.append(
                Term(
                    "activations",
                    say("compute buffer"),
                    logits + mask,
                    "estimate",
                    say(
                        "f32 logits of one micro-batch, n_ubatch {ubatch} × {vocab} tokens × 4 B, "
                        "+ the flash-attention KQ mask n_ctx {context} × n_ubatch × 2 B",
                        ubatch=LLAMA_CPP_UBATCH,
                        vocab=Num(arch.vocab_size),
                        context=Num(context),
                    ),
                    LLAMA_CPP_FA_BUFFER,
                )
            )
        context_term = _device_context(req.backend)
        if context_term is not None:
            terms.append(context_term)
        return terms
    if req.engine == "mlx":
        peak, formula = prefill_activation_bytes(arch)
        return [
            Term("activations", say("prefill step activations"), peak, "estimate", formula, MLX_LM_SOURCE)
        ]
    if req.engine == "exllamav3":
        peak, formula = chunk_activation_bytes(arch)
        return [
            Term("activations", say("forward chunk activations"), peak, "estimate", formula, EXL3_SOURCE),
            Term(
                "overhead",
                say("CUDA context and buffers"),
                300 * MIB,
                "estimate",
                say("300 MiB: the low end of the 300 MiB–2 GiB a CUDA context takes"),
                "vram.asmirnov.xyz calculator notes (memory-formulas §5)",
            ),
        ]
    if req.engine == "sglang":
        # activations and CUDA-graph buffers live outside --mem-fraction-static, in the memory SGLang reserves
        # by its own rule (placement/sglang.py), which the GPU budget leaves out
        return []
    if req.engine == "vllm":
        return [
            Term(
                "activations",
                say("activation peak"),
                int(1.26 * GIB),
                "estimate",
                "1.26 GiB peak activations measured for an 8B model at default settings",
                VLLM_PROFILE,
            ),
            Term(
                "overhead",
                say("non-torch memory (CUDA context, NCCL)"),
                int(1.79 * GIB),
                "estimate",
                "1.79 GiB measured outside PyTorch's allocator",
                VLLM_PROFILE,
            ),
        ]
    return [
        Term(
            "overhead",
            say("runtime overhead"),
            int(weights * 0.2),
            "estimate",
            "20% of the weights for activations, CUDA context and allocator slack",
            ELEUTHER_20,
        )
    ]


# -- training -------------------------------------------------------------------------------------


def training_framework(req: Request) -> str:
    """The framework a training request runs: the one asked for, else the workload's usual stack
    (training_profiles.default_framework)."""
    return req.framework or default_framework(req.workload)


def training_setup(req: Request) -> Setup:
    """The framework profile with the request's overrides; raises InputError for unknown names."""
    framework = training_framework(req)
    if framework not in PROFILES:
        raise InputError("--framework", f"unknown framework {framework!r} (known: {', '.join(PROFILES)})")
    prof = PROFILES[framework]
    default = prof.optimizer_full if req.workload == "full" else prof.optimizer_lora
    if req.workload == "full" and req.gpus > 1 and prof.optimizer_full_sharded:
        default = prof.optimizer_full_sharded  # the framework's distributed recipe
    name = req.optimizer or default
    if name not in OPTIMIZERS:
        raise InputError("--optimizer", f"unknown optimizer {name!r} (known: {', '.join(OPTIMIZERS)})")
    if req.lora_rank is not None and req.lora_rank < 1:
        raise InputError("--lora-rank", f"must be at least 1, got {req.lora_rank}")
    if req.gpus < 1:
        raise InputError("--gpus", f"must be at least 1, got {req.gpus}")
    if req.grad_accumulation < 1:
        raise InputError("--grad-accum", f"must be at least 1, got {req.grad_accumulation}")
    return Setup(
        method=req.workload,  # type: ignore[arg-type]
        profile=prof,
        optimizer=OPTIMIZERS[name],
        precision=req.precision,
        checkpointing=req.checkpointing,
        lora_rank=req.lora_rank,
        lora_targets=req.lora_targets,
        attention=req.attention,
        gpus=req.gpus,
        offload_states=req.offload_states,
        grad_accumulation=req.grad_accumulation,
    )


def _framework_memory(
    model: ModelInfo, req: Request, context: int, gpu_capacity: int | None
) -> TrainingMemory:
    setup = training_setup(req)
    try:
        memory = training_memory(model.arch, setup, context, req.batch)
    except ValueError as exc:
        raise InputError("--lora-targets", str(exc)) from None
    # paged optimizer states sit on the GPU while they fit and move to host RAM when it is full, so
    # they never make a run run out of GPU memory: without a GPU size, count them in host RAM
    return with_paged(memory, gpu_capacity or 0)


def training_max_context(model: ModelInfo, req: Request, catalog: Catalog, gpu_capacity: int) -> int:
    """The largest context a framework's training step fits in ``gpu_capacity`` bytes (process total)."""
    return max_context(model.arch, training_setup(req), req.batch, gpu_capacity)


# -- the estimate ---------------------------------------------------------------------------------


def _tied_head_copy(arch: ArchConfig, embed_bytes: int) -> int:
    """The GPU copy of a tied output head: the vocabulary × hidden token table only. A model with per-layer
    embeddings (Gemma 3n/4 E-series: a second table of vocabulary × layers × hidden_size_per_layer_input,
    counted with the embedding) keeps that table in host memory with the input embedding, uncopied."""
    table = arch.vocab_size * arch.hidden_size
    return embed_bytes if arch.embed_params <= table else embed_bytes * table // arch.embed_params


def estimate_memory(
    model: ModelInfo, req: Request, catalog: Catalog, gpu_capacity: int | None = None
) -> MemoryEstimate:
    """Memory for ``model`` under ``req``; raises ``InputError`` for unknown names or bad numbers.
    ``gpu_capacity`` (bytes of one GPU) decides where a framework's paged optimizer states land."""
    arch = model.arch
    if req.batch < 1:
        raise InputError("--batch", f"must be at least 1, got {req.batch}")
    context = req.context if req.context is not None else default_context(arch)
    if context < 1:
        raise InputError("--context", f"must be at least 1, got {context}")
    kv_type, elem = kv_bytes_per_element(catalog, req.kv_type)
    notes: list[Text] = []
    if arch.max_context and context > arch.max_context:
        notes.append(
            say(
                "context {context} is beyond the model's maximum of {limit}",
                context=Num(context),
                limit=Num(arch.max_context),
            )
        )

    kv_terms, layer_kv, per_token = _kv_cache(arch, context, req.batch, (kv_type, elem), req.engine)
    host = 0
    training: TrainingMemory | None = None
    if req.workload == "inference":
        quant = resolve_quant(catalog, req.quant) if req.quant else None
        if quant is None and model.weights is None:
            quant = resolve_quant(catalog, model.native_quant or "bf16")
            notes.append(
                say(
                    "no weight format asked for: sized as {quant}, the format it is released in",
                    quant=quant.name,
                )
                if model.native_quant
                else say(
                    "no weight format asked for: sized as {quant}, bf16, its format being unknown",
                    quant=quant.name,
                )
            )
        weights, layer_weights, other, embed = _weights(model, quant, req.engine)
        if req.engine in (*LLAMA_CPP_ENGINES, "ktransformers"):
            # The input embedding stays in host memory; a tied head is a second copy on the GPU. ktransformers
            # too: its injection rules put model.embed_tokens on "cpu" (kvcache-ai/ktransformers
            # ktransformers/optimize/optimize_rules/DeepSeek-V3-Chat.yaml@4e1359d).
            host = embed
            other = other - embed + (_tied_head_copy(arch, embed) if arch.tie_word_embeddings else 0)
        terms = [weights, *kv_terms, *_inference_runtime(arch, req, context, weights.bytes)]
        if quant is not None:
            name = quant.name
        else:
            name = (model.weights.quant_id if model.weights else None) or "file"
    else:
        if req.framework is None:
            notes.append(
                say(
                    "no training framework asked for: sized as {stack}, the usual stack for {workload}",
                    stack=stack_name(default_framework(req.workload)),
                    workload=req.workload,
                )
            )
        memory = _framework_memory(model, req, context, gpu_capacity)
        terms = [
            Term(p.category, p.name, p.bytes, "estimate", p.formula, p.source)
            for p in memory.parts
            if p.where == "gpu"
        ]
        quant = catalog.quant("nf4-dq" if req.workload == "qlora" else "bf16")
        layer_weights = tuple(2 * p for p in arch.layer_params)
        other = 2 * (arch.embed_params + arch.head_params)
        name = quant.name if quant else req.workload
        layer_kv = ()
        training = memory
    return MemoryEstimate(
        model=model,
        quant=quant,
        quant_name=name,
        context=context,
        batch=req.batch,
        kv_type=kv_type,
        workload=req.workload,
        engine=req.engine,
        checkpointing=(training_setup(req).mode if training else None) or req.checkpointing or "full",
        terms=tuple(t for t in terms if t.bytes > 0 or t.category == "weights"),
        kv_cache_bytes_per_token=per_token,
        layer_weight_bytes=layer_weights,
        other_weight_bytes=other,
        layer_kv_bytes=layer_kv,
        host_weight_bytes=host,
        layer_expert_bytes=_expert_bytes(model, quant, layer_weights, req)
        if req.workload == "inference"
        else (),
        backend=req.backend,
        threads=req.threads,
        notes_said=tuple(notes),
        gpu_peak_bytes=training.gpu_peak_bytes if training else 0,
        training_gpu_bytes=training.gpu_bytes if training else 0,
        training_host_bytes=training.host_bytes if training else 0,
        trainable_params=training.trainable_params if training else 0,
        training_gpus=req.gpus if training else 1,
        framework=training_framework(req) if training else None,
        lora_rank=_lora_shape(req)[0] if req.workload in ("lora", "qlora") else None,
        lora_targets=_lora_shape(req)[1] if req.workload in ("lora", "qlora") else (),
        lora_alpha=req.lora_alpha,
    )


def _lora_shape(req: Request) -> tuple[int, tuple[str, ...]]:
    """The rank and targets of a LoRA estimate: the request's, else the framework's."""
    prof = PROFILES[training_framework(req)]
    return req.lora_rank or prof.lora_rank, req.lora_targets or prof.lora_targets


def with_context(req: Request, context: int) -> Request:
    return replace(req, context=context)
