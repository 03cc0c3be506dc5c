"""Routed experts whose rows are not whole K-quant blocks: the type llama-quantize stores them in instead.

A K-quant (Q2_K … Q6_K) packs 256 weights a block along a tensor's rows (ne[0]). An expert's down projection
runs along the expert's width, and narrow experts are often not a multiple of 256 (Gemma 4 26B-A4B: 704).
``llama_tensor_get_type`` then swaps the type for one with 32-weight blocks: "tensor cols … are not
divisible by 256 … using fallback quantization", Q2_K/Q3_K → IQ4_NL, Q4_K → Q5_0, Q5_K → Q5_1, Q6_K → Q8_0,
and F16 where even 32 does not divide the row (ggml-org/llama.cpp
src/llama-quant.cpp@8784689fee07c6daabf3487d24e1535534ef6e6b). Each of those has more bits per weight, so
the file, and the experts a token reads, are larger than the mix's layer average says (the average is
measured on Llama-3.1-8B, where every row divides).

Which K type a mix gives a layer's ``ffn_down`` (the routed experts' ``ffn_down_exps`` included: the rule
matches the name, and a mixture of experts reads the layer from it, ``layer_info``) is the same function's
``ffn_down`` branch: Q4_K_M and Q5_K_M take Q6_K on ``use_more_bits`` layers, Q4_K_S and Q2_K_S widen the
first eighth, Q3_K_M the first sixteenth. Only the routed experts' down projections are corrected here (the
bulk of such a file); their width is the config's, or the expert's parameters over 3 × the hidden size for a
gated expert (gate, up, down), and none is assumed where that does not divide. Models published with MXFP4
experts (gpt-oss) are left as they were: their GGUF mixes are not sized from a K-quant layer average here.
"""

from __future__ import annotations

from rigcheck.core.models.spec import ArchConfig, ModelInfo

SOURCE = (
    "ggml-org/llama.cpp src/llama-quant.cpp@8784689fee07c6daabf3487d24e1535534ef6e6b llama_tensor_get_type"
)
#: weights per block of the K-quants, and of the 32-weight types they fall back to
QK_K = 256
QK_32 = 32
#: bits per weight of each ggml type involved (ggml-common.h block layouts)
BITS = {
    "Q2_K": 2.625,
    "Q3_K": 3.4375,
    "Q4_K": 4.5,
    "Q5_K": 5.5,
    "Q6_K": 6.5625,
    "IQ4_NL": 4.5,
    "Q5_0": 5.5,
    "Q5_1": 6.0,
    "Q8_0": 8.5,
    "F16": 16.0,
}
#: llama_tensor_get_type's ``convert_incompatible_tensor`` switch
FALLBACK = {"Q2_K": "IQ4_NL", "Q3_K": "IQ4_NL", "Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0"}


def use_more_bits(i_layer: int, n_layers: int) -> bool:
    """llama-quant.cpp's ``use_more_bits``: the first and last eighth of the layers, every third between."""
    return i_layer < n_layers // 8 or i_layer >= 7 * n_layers // 8 or (i_layer - n_layers // 8) % 3 == 2


def down_type(quant_id: str, i_layer: int, n_layers: int) -> str | None:
    """The K type a llama.cpp mix gives layer ``i_layer``'s ``ffn_down`` (not Falcon); None for a format this
    module does not cover."""
    if quant_id == "q4_k_m":
        return "Q6_K" if use_more_bits(i_layer, n_layers) else "Q4_K"
    if quant_id == "q5_k_m":
        return "Q6_K" if use_more_bits(i_layer, n_layers) else "Q5_K"
    if quant_id == "q4_k_s":
        return "Q5_K" if i_layer < n_layers // 8 else "Q4_K"
    if quant_id == "q2_k_s":
        return "Q4_K" if i_layer < n_layers // 8 else "Q2_K"
    if quant_id == "q3_k_m":
        return "Q5_K" if i_layer < n_layers // 16 else "Q4_K"
    fixed = {"q2_k-mix": "Q3_K", "q3_k_s": "Q3_K", "q3_k_l": "Q5_K", "q5_k_s": "Q5_K", "q6_k-mix": "Q6_K"}
    return fixed.get(quant_id)


def stored_type(kind: str, width: int) -> str:
    """The type a row of ``width`` weights meant for ``kind`` is stored in."""
    if kind not in FALLBACK or width % QK_K == 0:
        return kind
    fallback = FALLBACK[kind]
    return fallback if width % QK_32 == 0 else "F16"


def routed_expert_width(arch: ArchConfig) -> int | None:
    """The routed experts' width (the length of their down projection's rows); None where not known."""
    if not arch.is_moe:
        return None
    if arch.moe_intermediate_size:
        return arch.moe_intermediate_size
    matrices = 3 * arch.hidden_size
    if arch.expert_params <= 0 or arch.expert_params % matrices:
        return None
    return arch.expert_params // matrices


def expert_down_extra_bytes(model: ModelInfo, quant_id: str) -> tuple[int, ...]:
    """Per layer, the bytes the routed experts' down projections hold beyond the mix's layer average because
    their rows are not whole K-quant blocks (0 where they are, for a format not covered, and for a model
    published with MXFP4 experts, gpt-oss, whose GGUF mixes this does not size)."""
    arch = model.arch
    n = arch.num_layers
    width = routed_expert_width(arch)
    if width is None or width % QK_K == 0 or not arch.num_experts or down_type(quant_id, 0, n) is None:
        return (0,) * n
    if (model.native_quant or "").lower() == "mxfp4":
        return (0,) * n
    moe = arch.moe_layers or (True,) * n
    down_params = arch.num_experts * width * arch.hidden_size
    extra: list[int] = []
    for i in range(n):
        kind = down_type(quant_id, i, n)
        if not moe[i] or kind is None:
            extra.append(0)
            continue
        extra.append(int(down_params * (BITS[stored_type(kind, width)] - BITS[kind]) / 8))
    return tuple(extra)
