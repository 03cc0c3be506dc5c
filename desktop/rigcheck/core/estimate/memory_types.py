"""What a memory estimate is made of: the request, each :class:`Term` with its provenance, and the
estimate that sums them (``memory.py`` assembles it; ``memory_weights.py``, ``memory_cache.py`` and
``memory_runtime.py`` make its terms)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from rigcheck.core.catalog import Backend, QuantFormat
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.said import Text, render, render_all

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
#: the Gated DeltaNet kernels a training stack runs (Request.linear_kernels)
LinearKernels = Literal["fla", "torch"]

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
    #: speculative decoding with the model's own MTP layers as the draft (vLLM/SGLang --speculative-config
    #: method "mtp", llama.cpp --spec-type draft-mtp): their weights are loaded. None = plain decoding
    speculative: Literal["mtp"] | None = None
    #: training: the Gated DeltaNet kernels the stack runs: ``fla`` (flash-linear-attention installed,
    #: transformers' fast path) or ``torch`` (transformers' pure-torch fallback, estimate/gdn_fallback.py)
    linear_kernels: LinearKernels = "fla"
    #: the engine's build (llama.cpp release tag number, core/engine_builds.parse_build); None = a current one
    engine_build: int | None = None
    #: llama.cpp's prompt micro-batch, n_ubatch (llama-bench -ub, llama-server -ub); None = its default,
    #: LLAMA_CPP_UBATCH
    ubatch: int | None = None


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
    #: of other_weight_bytes: multimodal towers and MTP layers (memory_weights._outside_decoder), placed
    #: with the embedding and head but not read per generated token
    outside_weight_bytes: int = 0
    backend: Backend | None = None
    #: CPU threads (llama.cpp -t), as requested; None = the physical cores
    threads: int | None = None
    #: speculative decoding asked for (Request.speculative): the commands then turn it on
    speculative: Literal["mtp"] | None = None
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
    #: training: the Gated DeltaNet kernels assumed (Request.linear_kernels)
    linear_kernels: LinearKernels = "fla"
    #: the engine build the speed is for (Request.engine_build); None = a current one
    engine_build: int | None = None
    #: llama.cpp's prompt micro-batch, n_ubatch (Request.ubatch, or its default)
    ubatch: int = LLAMA_CPP_UBATCH

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
