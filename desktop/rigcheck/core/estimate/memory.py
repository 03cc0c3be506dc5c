"""How much memory a model needs: inference (weights, KV cache, compute buffers, runtime) and
training (full, LoRA, QLoRA: weights, gradients, optimizer states, activations).

Every figure is a :class:`Term` that carries its provenance (``file``: read from the weight files;
``config``/``catalog``: computed exactly from the architecture; ``estimate``: a formula with a
source) and the formula in words, so the user can see why. Constants name where they come from;
``shared/reference/memory-formulas.md`` in the project's design notes collects the sources.
"""

from __future__ import annotations

from dataclasses import replace

from rigcheck.core.catalog import Catalog, QuantFormat
from rigcheck.core.errors import InputError
from rigcheck.core.estimate import ud_names
from rigcheck.core.estimate.memory_cache import _kv_cache
from rigcheck.core.estimate.memory_runtime import _inference_runtime
from rigcheck.core.estimate.memory_types import (
    DEFAULT_CONTEXT,
    GIB,
    LLAMA_CPP_ENGINES,
    LLAMA_CPP_UBATCH,
    MIB,
    Category,
    Checkpointing,
    Engine,
    MemoryEstimate,
    Provenance,
    Request,
    Term,
    Workload,
)
from rigcheck.core.estimate.memory_weights import (
    _expert_bytes,
    _outside_decoder,
    _tied_head_copy,
    _weights,
    expert_params_per_layer,
)
from rigcheck.core.estimate.training_memory import (
    Setup,
    TrainingMemory,
    max_context,
    training_memory,
    with_paged,
)
from rigcheck.core.estimate.training_profiles import OPTIMIZERS, PROFILES, default_framework, stack_name
from rigcheck.core.models.spec import ArchConfig, ModelInfo
from rigcheck.core.said import Num, Text, say

__all__ = [
    "DEFAULT_CONTEXT",
    "GIB",
    "LLAMA_CPP_ENGINES",
    "LLAMA_CPP_UBATCH",
    "MIB",
    "Category",
    "Checkpointing",
    "Engine",
    "MemoryEstimate",
    "Provenance",
    "Request",
    "Term",
    "Workload",
    "default_context",
    "estimate_memory",
    "expert_params_per_layer",
    "kv_bytes_per_element",
    "resolve_quant",
    "training_framework",
    "training_max_context",
    "training_setup",
    "with_context",
]


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
    """The catalog's format of this name or alias; a QAT name (``UD-Q4_K_XL-QAT``) its QAT entry; a UD name
    the catalog lacks (``UD-Q4_K_M``, ``UD-IQ2_M``) built over its base type (core/estimate/ud_names.py)."""
    key = name.strip().lower()
    key = _QUANT_ALIASES.get(key, key)
    key = ud_names.qat_key(key) or key
    quant = catalog.quant(key)
    base_key = ud_names.ud_base(key) if quant is None else None
    if base_key is not None:
        base = catalog.quant(_QUANT_ALIASES.get(base_key, base_key))
        quant = ud_names.ud_format(key, base) if base is not None and base.kind == "gguf" else None
    if quant is None:
        known = ", ".join(sorted(q.name for q in catalog.quants if q.kind != "gguf" or "_" in q.id))
        raise InputError(
            "--quant", f"unknown quantization {name!r} (known: {known}; UD-<type> for any GGUF type above)"
        )
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
        linear_kernels=req.linear_kernels,
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
    if req.ubatch is not None and req.ubatch < 1:
        raise InputError("--ubatch", f"must be at least 1, got {req.ubatch}")
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
    host = outside_bytes = 0
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
        if quant is not None and weights.provenance != "file":
            assumed = ud_names.assumed_note(quant, catalog.quant(quant.id) is not None)
            notes.extend((assumed,) if assumed is not None else ())
        if req.engine in (*LLAMA_CPP_ENGINES, "ktransformers"):
            # The input embedding stays in host memory; a tied head is a second copy on the GPU. ktransformers
            # too: its injection rules put model.embed_tokens on "cpu" (kvcache-ai/ktransformers
            # ktransformers/optimize/optimize_rules/DeepSeek-V3-Chat.yaml@4e1359d).
            host = embed
            other = other - embed + (_tied_head_copy(arch, embed) if arch.tie_word_embeddings else 0)
        # a multimodal tower, MTP layers for MTP drafting: placed with the embedding and head
        outside = _outside_decoder(arch, req, weights, layer_weights)
        outside_bytes = sum(t.bytes for t in outside)
        other += outside_bytes
        terms = [weights, *outside, *kv_terms, *_inference_runtime(arch, req, context, weights.bytes)]
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
        outside_weight_bytes=outside_bytes,
        layer_expert_bytes=_expert_bytes(model, quant, layer_weights, req)
        if req.workload == "inference"
        else (),
        backend=req.backend,
        threads=req.threads,
        engine_build=req.engine_build,
        ubatch=req.ubatch or LLAMA_CPP_UBATCH,
        speculative=req.speculative if req.workload == "inference" else None,
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
        linear_kernels=req.linear_kernels,
    )


def _lora_shape(req: Request) -> tuple[int, tuple[str, ...]]:
    """The rank and targets of a LoRA estimate: the request's, else the framework's."""
    prof = PROFILES[training_framework(req)]
    return req.lora_rank or prof.lora_rank, req.lora_targets or prof.lora_targets


def with_context(req: Request, context: int) -> Request:
    return replace(req, context=context)
