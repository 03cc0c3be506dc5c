"""The fixed cost of a token on a GPU, whatever the bytes: kernel launches and synchronisation per layer, and
a hand-off per GPU (``per_layer_us`` and ``per_gpu_us`` per hardware class × backend in catalog/speed.toml,
fitted by benchmarks/fit_speed.py). It is what dominates small models on fast GPUs.

The hand-off is each GPU boundary of llama.cpp's layer split: the hidden state copied to the next device and
the two synchronised (ggml_backend_sched_compute_splits), a latency, not a bandwidth; ``per_gpu_us`` is the
median of one-vs-N-GPU runs of one source (benchmarks/per_hop_fit.py). Tensor parallelism pays all-reduces
instead (``multigpu``), not this.

A layer whose MLP is a mixture of experts runs more kernels than a dense one: llama.cpp's
``llm_graph_context::build_moe_ffn`` (src/llama-graph.cpp) adds the router's matrix product, its softmax or
sigmoid, a top-k (argsort and a view), a get_rows for the chosen experts' weights (and a sum and a divide
where they are renormalised), three MUL_MAT_ID launches in place of the dense up/gate/down products, the
multiply by the weights, and k - 1 adds that sum the k experts' outputs: ~14 more nodes for k = 8 than the
dense MLP's four. Each costs a launch and a synchronised hand-over of a small result, whatever the bytes,
so a mixture-of-experts layer pays ``moe_layer_us`` on top of ``per_layer_us``. Backends that fuse the
routing into one kernel (CUDA's topk-moe fusion, ggml/src/ggml-cuda/topk-moe.cu) and replay whole graphs
(CUDA graphs) pay little; the figure is fitted per hardware class × backend with the other two
(benchmarks/fit_speed.py), 0 where the rows show none.

Why one figure per MoE layer and not one per routed expert (issue 28 audit, ggml-org/ggml@d99724f2): the
graph's only nodes that grow with k are the k - 1 adds, and CUDA/HIP fuse a chain of up to 8 adds into one
kernel (src/ggml-cuda/ggml-cuda.cu, ggml_cuda_op_fused_add, since llama/15631), Vulkan up to MAX_FUSED_ADDS
= 9 (src/ggml-vulkan/ggml-vulkan.cpp, since llama/15252); the softmax/sigmoid, top-k and weight get_rows run
as one topk-moe kernel on both (llama/16130, llama/16641); a decode MUL_MAT_ID is one mat-vec launch for all
k experts. n_expert only widens the router's product (its bytes: router_bytes.py) and the top-k's one row.
SYCL fuses neither the adds nor the routing, and before llama/21920 (2026-04-22: fused MoE mat-vec for one
token) copied the expert ids to the host with a queue wait in each MUL_MAT_ID and ran one mat-vec per used
expert (src/ggml-sycl/ggml-sycl.cpp, ggml_sycl_mul_mat_id): a part that grows with k. Every SYCL MoE row in
the fit routes top-8, so that part cannot be told from the per-layer one there, and the figure stands for
k = 8.

``per_layer_us`` is a transformer layer's: two norms, a token mixer and an MLP, each with its residual add. A
stack whose blocks hold one of those each (Nemotron-H: a norm and one Mamba-2, attention or MLP mixer,
transformers models/nemotron_h/modeling_nemotron_h.py NemotronHBlock) runs about half a layer's kernels a
block, so its blocks count as half a layer each (ArchConfig.layer_mixers, block_layers).

A prompt pays the same per-layer cost once per micro-batch (``prompt_fixed_seconds``): llama_decode splits a
prompt into micro-batches of n_ubatch tokens (512 by default) and ggml_backend_sched computes the whole graph
for each one, so every layer's norms, rope, attention, activation quantisation (quantize_mmq_q8_1 before
each MMQ GEMM, ggml/src/ggml-cuda/mmq.cu) and GEMM launches are issued and synchronised once per micro-batch,
whatever its FLOPs. Per prompt token that is layers × ``per_layer_us`` ÷ tokens in the micro-batch: ~3 µs
for a 16-layer model at 100 µs per layer, next to the 40 µs that 2.4 GFLOPs per token (a 1B model) take at
60 TFLOPS, and a larger share of the time the faster the GPU multiplies. It is the decode figure,
which on CUDA is replayed from a CUDA graph; a prompt's graph runs without one
(ggml/src/ggml-cuda/ggml-cuda.cu, check_node_graph_compatibility: "disable CUDA graphs for batch size > 1"),
so the figure is a lower bound for prompts there.
"""

from __future__ import annotations

from rigcheck.core.catalog import SpeedFactor


def fixed_seconds(
    layers: float, factor: SpeedFactor, *, hand_off: bool = False, moe_layers: int = 0
) -> float:
    """Seconds per token a GPU spends on ``layers`` layers' fixed costs, ``moe_layers`` of them with a
    mixture-of-experts MLP, plus its per-GPU cost when the token is handed to it from another GPU (a further
    GPU of a layer split, as catalog/speed.toml says)."""
    return (
        layers * factor.per_layer_us
        + moe_layers * factor.moe_layer_us
        + (factor.per_gpu_us if hand_off else 0.0)
    ) * 1e-6


def prompt_fixed_seconds(layers: float, factor: SpeedFactor, ubatch: int) -> float:
    """Seconds per prompt token that ``layers`` layers' fixed cost adds when each micro-batch of ``ubatch``
    tokens runs every layer's kernels once (the module's docstring)."""
    return layers * factor.per_layer_us * 1e-6 / max(ubatch, 1)


def block_layers(layer_mixers: tuple[int, ...], start: int, stop: int, kernels: float = 1.0) -> float:
    """Layers ``start`` to ``stop`` - 1 as transformer layers for their fixed cost: each holds 2 sub-blocks
    (token mixer, MLP) unless ``layer_mixers`` says it holds fewer (empty: every layer holds both), and runs
    ``kernels`` times a plain layer's kernels (ArchConfig.layer_kernels)."""
    if not layer_mixers:
        return float(max(stop - start, 0)) * kernels
    return sum(layer_mixers[start:stop]) / 2 * kernels


def moe_layers_between(moe_layers: tuple[bool, ...], start: int, stop: int) -> int:
    """How many of layers ``start`` to ``stop`` - 1 have a mixture-of-experts MLP."""
    return sum(1 for flag in moe_layers[start:stop] if flag)
