"""The weights' terms of a memory estimate: bytes in total, per layer, outside the layers and of the input
embedding, read from the files or worked out from the format (llama.cpp's mixes, MXFP4 experts, 16-bit
embeddings beside quantized linear layers), and the routed experts' share of each layer."""

from __future__ import annotations

from rigcheck.core.catalog import QuantFormat
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.memory_types import LLAMA_CPP_ENGINES, Engine, Provenance, Request, Term
from rigcheck.core.estimate.router_bytes import ROUTER_BITS, router_params_per_layer, with_f32_router
from rigcheck.core.estimate.row_fallback import SOURCE as FALLBACK_SOURCE
from rigcheck.core.estimate.row_fallback import expert_down_extra_bytes, routed_expert_width
from rigcheck.core.estimate.ud_mix import SOURCE as UD_SOURCE
from rigcheck.core.estimate.ud_mix import rule_name, ud_weights
from rigcheck.core.estimate.ud_names import names_file
from rigcheck.core.models.spec import ArchConfig, ModelInfo
from rigcheck.core.said import Bytes, Joined, Num, Said, Sig, Text, say

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
    if weights is not None and (quant is None or names_file(quant.id, weights.quant_id)):
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
        per_layer = with_f32_router(tuple(int(p * body_bpw / 8) for p in layer_params), arch, body_bpw)
        # routed experts whose rows are not whole K-quant blocks are stored in a wider fallback type
        fallback = expert_down_extra_bytes(model, quant.id)
        per_layer = tuple(w + x for w, x in zip(per_layer, fallback, strict=True))
        if arch.tie_word_embeddings:  # one tensor, quantized as the output
            embed = int(arch.embed_params * out_bpw / 8)
            other = embed + int(arch.head_params * out_bpw / 8)
        else:
            embed = int(arch.embed_params * quant.bits_per_weight / 8)
            other = embed + int(arch.head_params * out_bpw / 8)
        formula: Text = _mix_formula(
            arch, Num(body_bpw, 3, group=False), quant.name, Sig(out_bpw, 6), Sig(quant.bits_per_weight, 6)
        )
        source = (
            f"{quant.file_bpw_source or quant.source} (whole-file {quant.file_bpw} bpw on Llama-3.1-8B); "
            "output.weight at Q6_K: llama.cpp src/llama-quant.cpp"
        )
        if any(fallback):
            formula = Joined(
                "",
                (
                    formula,
                    say(
                        " + {bytes} more for the routed experts' down projections, whose rows of {width} "
                        "weights are not whole 256-weight blocks (llama-quantize's fallback types)",
                        bytes=Bytes(sum(fallback)),
                        width=routed_expert_width(arch),
                    ),
                ),
            )
            source = f"{source}; fallback types: {FALLBACK_SOURCE}"
    elif quant.kind == "mx" and arch.is_moe and engine in LLAMA_CPP_ENGINES:
        # llama.cpp's own layout: MXFP4 experts, Q8_0 for attention, router, embeddings and head.
        bpw, rest = quant.bits_per_weight, LLAMA_CPP_MX_OTHER_BPW
        per_layer = with_f32_router(
            tuple(
                int(expert * bpw / 8 + (p - expert) * rest / 8)
                for p, expert in zip(layer_params, expert_params_per_layer(arch), strict=True)
            ),
            arch,
            rest,
        )
        other = int(embed_head * rest / 8)
        embed = int(arch.embed_params * rest / 8)
        formula = say(
            "routed experts × {bpw} bits / 8 + routers × 32 bits (F32) / 8 + other weights × {rest} bits "
            "(Q8_0) / 8, as llama.cpp's GGUF",
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


def _mix_formula(arch: ArchConfig, body: Num | Sig, quant: str, out: Sig, embed: Sig) -> Said:
    """A llama.cpp mix's weights formula; a mixture of experts' routers are named, at the F32 they keep."""
    if any(router_params_per_layer(arch)):
        return say(
            "layers × {body} bits ({quant} layer average), their routers × 32 bits (F32), + output × {out} "
            "bits + input embedding × {embed} bits, / 8",
            body=body,
            quant=quant,
            out=out,
            embed=embed,
        )
    return say(
        "layers × {body} bits ({quant} layer average) + output × {out} bits + input embedding "
        "× {embed} bits, / 8",
        body=body,
        quant=quant,
        out=out,
        embed=embed,
    )


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
        source = f"{rule_name(quant.id)} per-role rule (core/estimate/ud_mix.py): {UD_SOURCE}"
        return (
            Term("weights", label, sum(per_layer) + other, "estimate", formula, source),
            per_layer,
            other,
            embed,
        )
    body_bpw = quant.layer_bpw or quant.bits_per_weight
    out_bpw = quant.outside_bpw or max(quant.bits_per_weight, Q6_K_BPW)
    in_bpw = quant.outside_bpw or (out_bpw if arch.tie_word_embeddings else quant.bits_per_weight)
    per_layer = with_f32_router(tuple(int(p * body_bpw / 8) for p in layer_params), arch, body_bpw)
    embed = int(arch.embed_params * in_bpw / 8)
    other = embed + int(arch.head_params * out_bpw / 8)
    formula = _mix_formula(arch, Sig(body_bpw, 6), quant.name, Sig(out_bpw, 6), Sig(in_bpw, 6))
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
    from_file = (
        model.weights is not None and quant is not None and names_file(quant.id, model.weights.quant_id)
    )
    if quant is not None and quant.kind == "mx" and not from_file:
        return tuple(int(e * quant.bits_per_weight / 8) for e in experts)
    # pro rata over the layer's weights less its router, which a GGUF keeps at F32 (router_bytes.py)
    # (sized by a GGUF mix here, or read from a .gguf file's headers, where the router's F32 is in the bytes)
    files = model.weights.files if model.weights is not None and (from_file or quant is None) else ()
    gguf = any(f.lower().endswith(".gguf") for f in files) or (
        not files and quant is not None and quant.kind == "gguf"
    )
    routers = router_params_per_layer(arch) if gguf else (0,) * len(layer_weights)
    # the bytes a mix's fallback types add are all in the routed experts (row_fallback.py)
    fallback = (
        expert_down_extra_bytes(model, quant.id)
        if quant is not None and quant.kind == "gguf" and quant.file_bpw is not None and not from_file
        else (0,) * len(layer_weights)
    )
    return tuple(
        int(max(w - x - r * ROUTER_BITS / 8, 0) * e / (p - r)) + x if p > r else 0
        for w, e, p, r, x in zip(layer_weights, experts, params, routers, fallback, strict=True)
    )


def _spread_params(arch: ArchConfig) -> tuple[int, ...]:
    body = arch.params_total - arch.embed_params - arch.head_params
    return tuple(body // arch.num_layers for _ in range(arch.num_layers))


def _spread(total: int, arch: ArchConfig) -> tuple[int, ...]:
    return tuple(total // arch.num_layers for _ in range(arch.num_layers))


def expert_params_per_layer(arch: ArchConfig) -> tuple[int, ...]:
    per_layer_moe = (arch.num_experts or 0) * arch.expert_params
    moe = arch.moe_layers or tuple(arch.is_moe for _ in range(arch.num_layers))
    return tuple(per_layer_moe if is_moe else 0 for is_moe in moe)


def _tied_head_copy(arch: ArchConfig, embed_bytes: int) -> int:
    """The GPU copy of a tied output head: the vocabulary × hidden token table only. A model with per-layer
    embeddings (Gemma 3n/4 E-series: a second table of vocabulary × layers × hidden_size_per_layer_input,
    counted with the embedding) keeps that table in host memory with the input embedding, uncopied."""
    table = arch.vocab_size * arch.hidden_size
    return embed_bytes if arch.embed_params <= table else embed_bytes * table // arch.embed_params


#: engines that load a multimodal checkpoint's towers with the language model. vLLM does unless every
#: modality is limited to 0 (--language-model-only, or --limit-mm-per-prompt at 0 per modality): "a text-only
#: mode can be enabled by setting all multimodal modalities to 0 using --language-model-only. This prevents
#: loading multimodal modules, freeing up GPU memory for KV cache" (vLLM's multimodal-models page, as
#: https://www.mintlify.com/vllm-project/vllm/models/multimodal-models mirrors it; vllm-project/vllm
#: PR #26767, docs/configuration/conserving_memory.md: unused modalities disabled with a limit of 0).
#: SGLang and transformers build the whole ...ForConditionalGeneration model. llama.cpp and Ollama load
#: a tower only from a separate mmproj GGUF (llama-server --mmproj), which the estimate does not add;
#: mlx-lm, ExLlamaV3 and ktransformers are sized for their language model alone
TOWER_ENGINES: tuple[Engine, ...] = ("vllm", "sglang", "transformers")
TOWER_SOURCE = (
    'vLLM\'s multimodal-models page (--language-model-only "prevents loading multimodal modules"), '
    "https://www.mintlify.com/vllm-project/vllm/models/multimodal-models; towers assumed 16-bit"
)
#: engines that run a model's own MTP layers as a speculative draft, sharing the target's embedding and
#: output head: vLLM (tests/v1/spec_decode/test_mtp.py@c78eee75 test_mtp_load_model_unified: "MTP shares
#: lm_head ... embed_tokens with target model"), SGLang (python/sglang/srt/speculative/eagle_worker.py
#: set_embed_and_head), llama.cpp --spec-type draft-mtp (ggml-org/llama.cpp PR #22673, merged 2026-05-16;
#: DeepSeek-V3.2 in PR #26457) with a GGUF that keeps the MTP layers
MTP_ENGINES: tuple[Engine, ...] = ("vllm", "sglang", "llama.cpp")
MTP_SOURCE = (
    "vllm-project/vllm tests/v1/spec_decode/test_mtp.py@c78eee75 (the draft shares embed_tokens and "
    "lm_head); ggml-org/llama.cpp PR #22673 (--spec-type draft-mtp)"
)


def _outside_decoder(
    arch: ArchConfig, req: Request, weights: Term, layer_weights: tuple[int, ...]
) -> list[Term]:
    """Weights the engine loads beside the decoder: a multimodal tower (engines in TOWER_ENGINES) and,
    when MTP speculative decoding is asked, the MTP layers at the decoder layers' bytes per parameter.
    Nothing is added to weights read from the files, whose term already holds every tensor in them.
    Neither is read per generated token; what MTP drafting does to speed is not modelled."""
    terms = []
    from_file = weights.provenance == "file"
    if arch.tower_params and not from_file and req.engine in TOWER_ENGINES:
        terms.append(
            Term(
                "weights",
                say("multimodal towers (16-bit)"),
                2 * arch.tower_params,
                "estimate",
                say(
                    "{params} tower parameters × 2 bytes; {engine} loads them with the language model",
                    params=Num(arch.tower_params),
                    engine=req.engine,
                ),
                TOWER_SOURCE,
            )
        )
    if req.speculative != "mtp":
        return terms
    if req.engine not in MTP_ENGINES:
        engines = ", ".join(MTP_ENGINES)
        raise InputError("--speculative", f"mtp: RigCheck sizes MTP drafting for {engines}, not {req.engine}")
    if not arch.mtp_params:
        raise InputError(
            "--speculative",
            "mtp: this model's config names no MTP layers (num_nextn_predict_layers, mtp_num_hidden_layers)",
        )
    if from_file:
        return terms  # the files' weights already hold the MTP layers
    loaded = arch.mtp_params - arch.mtp_shared_params
    params = sum(arch.layer_params)
    per_param = sum(layer_weights) / params if params else 2.0
    terms.append(
        Term(
            "weights",
            say("MTP layers (speculative draft)"),
            int(loaded * per_param),
            "estimate",
            say(
                "{params} MTP parameters, less the embedding and head copies the draft shares, × "
                "{bpp} bytes (the decoder layers' average)",
                params=Num(loaded),
                bpp=Num(per_param, 3, group=False),
            ),
            MTP_SOURCE,
        )
    )
    return terms
