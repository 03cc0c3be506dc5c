"""A mixture-of-experts router in a llama.cpp GGUF is F32, whatever the file's type.

llama.cpp's converter writes ``ffn_gate_inp`` (the router, hidden × experts) in F32 ("Some tensor types
are always in float32": gguf.MODEL_TENSOR.FFN_GATE_INP, ggml-org/llama.cpp
convert_hf_to_gguf.py@a458664fc83b6513baea7adafcb0ef0626b006f8, ModelBase.prepare_tensors), and its
quantizer never changes it ("do not quantize expert gating tensors":
``quantize &= name.find("ffn_gate_inp.weight") == std::string::npos``, ggml-org/llama.cpp
src/llama-quant.cpp@8784689fee07c6daabf3487d24e1535534ef6e6b, tensor_allows_quantization). So a Q4_K_M,
UD or MXFP4 file holds its routers at 32 bits a weight.

For the file's size that is a rounding error (0.1-0.4 %: the routers are under 0.1 % of the parameters),
but every decode token reads each MoE layer's router whole (``build_lora_mm(gate_inp, cur)``, the first
node of llm_graph_context::build_moe_ffn, src/llama-graph.cpp@00395eb285c7c6821ff372e3ca41dae9da33c2c7)
while it reads only k of the n routed experts, so of a token's bytes the router is not small: counted at
4.8 bits instead of 32 it leaves out 2 % of Qwen3-30B-A3B's Q4_K_M token and 7 % of Qwen3-Next-80B-A3B's
(512 experts). The weights' terms (memory_weights, ud_mix) add what F32 costs over the rate they give
the rest of the layer.
"""

from __future__ import annotations

from rigcheck.core.models.spec import ArchConfig

#: bits a GGUF router weight takes (F32)
ROUTER_BITS = 32.0


def router_params_per_layer(arch: ArchConfig) -> tuple[int, ...]:
    """The router's weights in each layer: hidden × routed experts in a MoE layer, 0 elsewhere (its bias,
    where one exists, is 1-D and F32 already in every rate)."""
    if not arch.is_moe or not arch.num_experts:
        return (0,) * arch.num_layers
    moe = arch.moe_layers or tuple(True for _ in range(arch.num_layers))
    per_layer = arch.hidden_size * arch.num_experts
    return tuple(per_layer if is_moe else 0 for is_moe in moe)


def with_f32_router(per_layer: tuple[int, ...], arch: ArchConfig, layer_bits: float) -> tuple[int, ...]:
    """``per_layer`` (every weight at ``layer_bits``) with each router's weights at F32 instead."""
    extra = max(ROUTER_BITS - layer_bits, 0.0)
    return tuple(
        b + int(r * extra / 8) for b, r in zip(per_layer, router_params_per_layer(arch), strict=True)
    )
