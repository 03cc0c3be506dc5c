"""Ollama as an engine. It serves GGUF models through upstream llama-server (``llm/server.go``
NewLlamaServer), so llama.cpp's memory terms, kernels and speed factors apply; what is Ollama's own is its
defaults (ollama/ollama@fb30760, ``OLLAMA_SOURCE``):

- the context, when neither the request nor ``OLLAMA_CONTEXT_LENGTH`` sets one, by the GPUs' total memory:
  262,144 tokens from 47 GiB, 32,768 from 23 GiB, else 4,096 (``server/routes.go``, "vram-based default
  context"), never beyond the model's trained context (``llm/server.go``), and stepped down 262,144 →
  32,768 → 4,096 when the load runs out of memory (``server/sched.go`` nextLowerAutoNumCtx);
- parallel requests: ``OLLAMA_NUM_PARALLEL``, default 1 (``envconfig/config.go``); the KV cache holds
  num_ctx × that (the request's ``batch``);
- GPUs: the one GPU that holds the whole model, else all of them (``server/sched.go`` bestSingleGPUFit;
  placement/inference.py).
"""

from __future__ import annotations

from rigcheck.core.estimate.memory import GIB
from rigcheck.core.machine import Machine
from rigcheck.core.models.spec import ModelInfo

OLLAMA_SOURCE = "ollama/ollama@fb30760 server/routes.go, server/sched.go"
#: (total GPU memory from which, default num_ctx), largest first
DEFAULT_CONTEXTS = ((47 * GIB, 262144), (23 * GIB, 32768), (0, 4096))


def default_context(machine: Machine, model: ModelInfo) -> int:
    """The num_ctx Ollama picks for ``model`` on ``machine`` when nothing sets one."""
    total = sum(gpu.memory_total_bytes or 0 for gpu in machine.gpus)  # less OLLAMA_GPU_OVERHEAD, 0 by default
    context = next(tokens for floor, tokens in DEFAULT_CONTEXTS if total >= floor)
    trained = model.arch.max_context
    return min(context, trained) if trained else context


def smaller_context(context: int) -> int | None:
    """The next context Ollama tries after running out of memory at ``context``, or None at the floor."""
    if context > 32768:
        return 32768
    if context > 4096:
        return 4096
    return None
