"""The inference runtime's terms of a memory estimate: each engine's compute buffers, activations and
device context."""

from __future__ import annotations

from rigcheck.core.catalog import Backend
from rigcheck.core.estimate.exllamav3 import EXL3_SOURCE, chunk_activation_bytes
from rigcheck.core.estimate.memory_types import (
    ELEUTHER_20,
    GIB,
    LLAMA_CPP_BUFFER,
    LLAMA_CPP_ENGINES,
    LLAMA_CPP_FA_BUFFER,
    LLAMA_CPP_UBATCH,
    MIB,
    VLLM_PROFILE,
    Request,
    Term,
)
from rigcheck.core.estimate.mlx import MLX_LM_SOURCE, prefill_activation_bytes
from rigcheck.core.models.spec import ArchConfig
from rigcheck.core.said import Num, say

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
        ubatch = req.ubatch or LLAMA_CPP_UBATCH
        logits = ubatch * arch.vocab_size * 4
        if not req.flash_attention:
            buffer = context * ubatch * arch.num_heads * 4
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
                        ubatch=ubatch,
                        heads=arch.num_heads,
                    ),
                    LLAMA_CPP_BUFFER,
                )
            )
        else:
            mask = context * ubatch * 2
            terms.append(
                Term(
                    "activations",
                    say("compute buffer"),
                    logits + mask,
                    "estimate",
                    say(
                        "f32 logits of one micro-batch, n_ubatch {ubatch} × {vocab} tokens × 4 B, "
                        "+ the flash-attention KQ mask n_ctx {context} × n_ubatch × 2 B",
                        ubatch=ubatch,
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
