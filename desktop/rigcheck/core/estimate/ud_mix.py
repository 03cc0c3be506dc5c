"""Unsloth Dynamic GGUF mixes sized per tensor role, not at one fitted rate.

A UD file is llama.cpp's mix of its ``general.file_type`` (7, Q8_0, for UD-Q8_K_XL: unsloth/granite-4.1-8b-
GGUF's header dumped in https://github.com/ROCm/ROCm/issues/6227; 15, "Q4_K - Medium", in llama-bench's model
column for UD-Q4_K_XL files: kyuz0/amd-strix-halo-toolboxes benchmark/results/*UD-Q4_K_XL*__vulkan_radv.log
@006aaa64) with the tensors Unsloth measured as sensitive kept wider.
Each role below takes a ggml block type, so nothing here is fitted to a file:

- llama.cpp's own layout (ggml-org/llama.cpp src/llama-quant.cpp@007dbbf3, llama_tensor_get_type_impl):
  the output head at Q6_K unless the base is wider, a tied embedding as the head, an untied one at the
  base; in Q4_K_M ``ffn_down`` at Q6_K in the layers ``use_more_bits`` picks (i < n/8, i >= 7n/8, or
  (i - n/8) % 3 == 2); norms and conv1d are left unquantized (small: counted at the base); routers stay
  F32, which a decode token reads whole (core/estimate/router_bytes.py).
- Unsloth's measurements (https://unsloth.ai/docs/models/qwen3.5/gguf-benchmarks, "Some tensors are very
  sensitive to quantization"): ``ssm_out`` "dramatically increases KLD and the disk space savings is
  minuscule", "quantizing any attn_* is especially sensitive for hybrid architectures, and so leaving them
  in higher precision works well", ``ffn_down_exps`` "slightly more sensitive" than up/gate.

So: a linear-attention / SSM layer's mixer is kept one tier up (Q6_K in UD-Q4_K_XL, BF16 in
UD-Q8_K_XL, where Q8_0 is already the base); in hybrid or MoE models the other non-FFN layer tensors
(attention, shared experts) take Q6_K in UD-Q4_K_XL; routed experts' ``ffn_down`` takes Q6_K in every
layer; UD-Q8_K_XL keeps the token embedding and output head at BF16, and in a plain dense model the
ffn_down of the first and last eighth of the layers (a llama.cpp selector chosen by the published dense
sizes: no type table names those tensors). docs/architectures.md lists how far
each published file lands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from rigcheck.core.estimate.router_bytes import ROUTER_BITS, router_params_per_layer
from rigcheck.core.models.spec import ArchConfig
from rigcheck.core.said import Said, Sig, say

# ggml block sizes in bits per weight (ggml/src/ggml-common.h block structs)
Q4_K: Final = 4.5
Q6_K: Final = 6.5625
Q8_0: Final = 8.5
BF16: Final = 16.0

#: architectures whose blocks hold one mixer each (a Mamba, attention, MLP or MoE block, never two):
#: Nemotron-H's NemotronHBlock (rigcheck.core.models.config, the hybrid_override_pattern reading)
ONE_MIXER_PER_BLOCK: Final = frozenset({"nemotron_h"})
#: architectures whose experts are two matrices, up and down (relu², no gate): Nemotron-H
#: (transformers models/nemotron_h/modeling_nemotron_h.py, NemotronHMLP: up_proj and down_proj)
UP_DOWN_EXPERTS: Final = frozenset({"nemotron_h"})

SOURCE: Final = (
    "ggml-org/llama.cpp src/llama-quant.cpp@007dbbf3fd17eefe9b47fee45f48f7ba5e62b714 (base mix); "
    "https://unsloth.ai/docs/models/qwen3.5/gguf-benchmarks (tensors kept wider)"
)


@dataclass(frozen=True)
class UdRule:
    """Bits per weight of each tensor role in one UD format."""

    #: the llama.cpp file type the mix starts from: every tensor not named below
    base: float
    #: output head; the token embedding when tied
    head: float
    #: an untied token embedding; None: the base block, as llama.cpp lays it out
    embed: float | None
    #: the non-FFN tensors of a linear-attention / SSM layer (qkv, gate, ssm_out, ...)
    linear_mixer: float
    #: attention and shared experts of a hybrid or MoE model (a plain dense model keeps them at base)
    mixer_hybrid_or_moe: float
    #: routed experts' ffn_down (up and gate at base)
    expert_down: float
    #: a dense FFN's ffn_down in the layers llama.cpp's use_more_bits picks
    dense_down_more_bits: float
    #: a plain dense model's ffn_down in its first and last eighth of layers (llama.cpp's i < n/8,
    #: i >= 7n/8 selector; chosen by published sizes, no type table names these tensors)
    dense_down_edges: float


RULES: Final[dict[str, UdRule]] = {
    "ud-q4_k_xl": UdRule(
        base=Q4_K,
        head=Q6_K,
        embed=None,
        linear_mixer=Q6_K,
        mixer_hybrid_or_moe=Q6_K,
        expert_down=Q6_K,
        dense_down_more_bits=Q6_K,
        dense_down_edges=Q6_K,
    ),
    "ud-q8_k_xl": UdRule(
        base=Q8_0,
        head=BF16,
        embed=BF16,
        linear_mixer=BF16,
        mixer_hybrid_or_moe=Q8_0,
        expert_down=Q8_0,
        dense_down_more_bits=Q8_0,
        dense_down_edges=BF16,
    ),
}
#: UD names sized by another name's rule: UD-Q4_K_M is Q4_K_M with the roles Unsloth raises, which is what
#: the UD-Q4_K_XL rule is (it starts from Q4_K_M and raises only those roles); checked against Unsloth's
#: UD-Q4_K_M of Qwen3.6-35B-A3B (core/estimate/ud_names.py)
RULE_OF: Final = {"ud-q4_k_xl": "ud-q4_k_xl", "ud-q8_k_xl": "ud-q8_k_xl", "ud-q4_k_m": "ud-q4_k_xl"}
RULES.update({alias: RULES[rule] for alias, rule in RULE_OF.items()})


def rule_name(quant_id: str) -> str | None:
    """The rule a UD id is sized by, as Unsloth writes it (``ud-q4_k_m`` -> ``UD-Q4_K_XL``)."""
    rule = RULE_OF.get(quant_id)
    return rule.upper() if rule else None


def use_more_bits(i_layer: int, n_layers: int) -> bool:
    """llama.cpp's choice of the layers whose ffn_down / attn_v a K-quant M mix keeps wider."""
    return i_layer < n_layers // 8 or i_layer >= 7 * n_layers // 8 or (i_layer - n_layers // 8) % 3 == 2


@dataclass(frozen=True)
class LayerRoles:
    """One layer's parameters by role."""

    mixer: int
    dense_ffn: int
    experts: int


def layer_roles(
    arch: ArchConfig, layer_params: tuple[int, ...], experts: tuple[int, ...]
) -> list[LayerRoles]:
    """Split each layer into its mixer (attention / SSM, shared experts, router, norms), dense FFN
    (gate, up, down: 3 × hidden × intermediate) and routed experts."""
    moe = arch.moe_layers or tuple(arch.is_moe for _ in range(arch.num_layers))
    one_mixer = arch.model_type in ONE_MIXER_PER_BLOCK
    gated_ffn = 3 * arch.hidden_size * (arch.intermediate_size or 0)
    out = []
    for params, routed, is_moe in zip(layer_params, experts, moe, strict=True):
        ffn = 0 if one_mixer or is_moe else min(gated_ffn, params - routed)
        out.append(LayerRoles(mixer=params - routed - ffn, dense_ffn=ffn, experts=routed))
    return out


def _expert_bpw(arch: ArchConfig, rule: UdRule) -> float:
    """Gated experts hold gate, up and down; Nemotron-H's relu² experts only up and down."""
    if arch.model_type in UP_DOWN_EXPERTS:
        return (rule.base + rule.expert_down) / 2
    return (2 * rule.base + rule.expert_down) / 3


def ud_weights(
    arch: ArchConfig, quant_id: str, layer_params: tuple[int, ...], experts: tuple[int, ...]
) -> tuple[tuple[int, ...], int, int, Said] | None:
    """Bytes per layer, bytes outside the layers, bytes of the input embedding and the formula; None
    when the format has no per-role rule."""
    rule = RULES.get(quant_id)
    return None if rule is None else weights_by_rule(arch, rule, layer_params, experts)


def weights_by_rule(
    arch: ArchConfig, rule: UdRule, layer_params: tuple[int, ...], experts: tuple[int, ...]
) -> tuple[tuple[int, ...], int, int, Said]:
    """``ud_weights`` for one rule."""
    roles = layer_roles(arch, layer_params, experts)
    hybrid_or_moe = arch.is_moe or "linear" in arch.layer_kinds
    expert_bpw = _expert_bpw(arch, rule)
    routers = router_params_per_layer(arch)
    per_layer = []
    for i, (kind, r) in enumerate(zip(arch.layer_kinds, roles, strict=True)):
        if kind == "linear":
            mixer_bpw = rule.linear_mixer
        else:
            mixer_bpw = rule.mixer_hybrid_or_moe if hybrid_or_moe else rule.base
        n = arch.num_layers
        down = rule.dense_down_more_bits if use_more_bits(i, n) else rule.base
        if not hybrid_or_moe and (i < n // 8 or i >= 7 * n // 8):
            down = max(down, rule.dense_down_edges)
        bits = r.mixer * mixer_bpw + r.dense_ffn * (2 * rule.base + down) / 3 + r.experts * expert_bpw
        bits += routers[i] * max(ROUTER_BITS - mixer_bpw, 0.0)  # the router, in the mixer's count, is F32
        per_layer.append(int(bits / 8))
    embed_bpw = rule.head if arch.tie_word_embeddings else (rule.embed or rule.base)
    embed = int(arch.embed_params * embed_bpw / 8)
    other = embed + int(arch.head_params * rule.head / 8)
    formula = say(
        "per tensor role: layers at {base} bits, linear-attention mixers {linear}, attention and shared "
        "experts of hybrid or MoE models {mixer}, routed experts {experts} (ffn_down {down}), output {head}, "
        "input embedding {embed}, / 8",
        base=Sig(rule.base, 6),
        linear=Sig(rule.linear_mixer, 6),
        mixer=Sig(rule.mixer_hybrid_or_moe, 6),
        experts=Sig(expert_bpw, 6),
        down=Sig(rule.expert_down, 6),
        head=Sig(rule.head, 6),
        embed=Sig(embed_bpw, 6),
    )
    return tuple(per_layer), other, embed, formula
