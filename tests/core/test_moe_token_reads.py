"""What one decode token of a mixture-of-experts model reads in llama.cpp, derived here by hand from each
config.json (the catalog's [model.config]) and llama.cpp's graph: the top-k routed experts, the shared
expert(s), the router whole (F32 in a GGUF: core/estimate/router_bytes.py), the attention or recurrent mixer,
dense first layers, the output head, the KV read and a recurrent state read and written back; not the input
embedding (a row lookup), not MTP layers. The speed
model's count (speed/reads.py active_bytes) must match within 1 %.

The hand sums below name every tensor; BENCHMARKS.md (issue 28, 28-moe-dec) tabulates them per architecture.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes.gguf_files import FF, HIDDEN, write_gguf
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.memory import Request, estimate_memory
from rigcheck.core.estimate.router_bytes import router_params_per_layer
from rigcheck.core.estimate.row_fallback import expert_down_extra_bytes
from rigcheck.core.estimate.speed.reads import active_bytes
from rigcheck.core.models.files import read_gguf
from rigcheck.core.models.resolve import from_catalog

#: the Q4_K_M layer rate the estimate applies (its whole-file 4.8944 bpw on Llama-3.1-8B less the
#: embedding and the Q6_K head: memory_weights._gguf_body_bpw), Q6_K for the head
Q4_K_M_LAYERS = 4.799
Q6_K = 6.5625
CTX = 4096


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def reads(catalog: Catalog, model_id: str, quant: str) -> int:
    model = from_catalog(catalog.model(model_id))  # type: ignore[arg-type]
    est = estimate_memory(model, Request(quant=quant, context=CTX, engine="llama.cpp"), catalog)
    per_layer, _experts, head = active_bytes(est)
    return sum(per_layer) + head


def test_qwen3_5_35b_a3b_q4_k_m_reads_what_its_graph_does(catalog: Catalog) -> None:
    # hidden 2048, 40 layers (3 Gated DeltaNet : 1 gated full attention), 256 experts, top 8, expert 512
    # wide, one shared expert 512 wide with a 1-wide gate, vocabulary 248,320, untied head
    hidden, experts, k, width = 2048, 256, 8, 512
    expert = 3 * hidden * width  # gate, up, down
    router = hidden * experts
    moe = router + k * expert + expert + hidden  # routed top-k + shared expert + its gate
    norms = 2 * hidden
    # q_proj with its output gate (2 × 16 heads × 256), k and v (2 KV heads × 256), o_proj, q/k norms
    attention = hidden * 2 * 16 * 256 + 2 * hidden * 2 * 256 + 16 * 256 * hidden + 2 * 256
    # in_proj_qkvz (q, k: 16 × 128; v, z: 32 × 128), in_proj_ba (32 + 32), conv1d (kernel 4 over q, k, v),
    # A_log and dt_bias (32 each), the gated norm (128), out_proj
    gdn = hidden * (2 * 2048 + 2 * 4096) + hidden * 64 + 4 * (2 * 2048 + 4096) + 64 + 128 + 4096 * hidden
    layers = 30 * (gdn + norms + moe) + 10 * (attention + norms + moe)
    routers = 40 * router
    kv = 10 * CTX * 2 * 2 * 256 * 2  # f16 K and V of the 10 full-attention layers
    # fp32 delta state + conv state, read from the cache and the new one written back (reads.STATE_TRAFFIC)
    state = 2 * 30 * (32 * 128 * 128 + 3 * (2 * 2048 + 4096)) * 4
    head = 248_320 * hidden
    derived = (layers - routers) * Q4_K_M_LAYERS / 8 + routers * 4 + head * Q6_K / 8 + kv + state
    assert reads(catalog, "qwen3.5-35b-a3b", "q4_k_m") == pytest.approx(derived, rel=0.01)


def test_qwen3_30b_a3b_q4_k_m_reads_what_its_graph_does(catalog: Catalog) -> None:
    # hidden 2048, 48 layers, 32 heads × 128, 4 KV heads, 128 experts, top 8, expert 768 wide, no shared
    hidden, experts, k, width = 2048, 128, 8, 768
    attention = hidden * 32 * 128 * 2 + 2 * hidden * 4 * 128 + 2 * 128  # q, o; k, v; q/k norms
    router = hidden * experts
    layer = attention + 2 * hidden + router + k * 3 * hidden * width
    kv = 48 * CTX * 2 * 4 * 128 * 2
    derived = 48 * (layer - router) * Q4_K_M_LAYERS / 8 + 48 * router * 4 + 151_936 * hidden * Q6_K / 8 + kv
    assert reads(catalog, "qwen3-30b-a3b", "q4_k_m") == pytest.approx(derived, rel=0.01)


def test_gpt_oss_20b_mxfp4_reads_what_its_graph_does(catalog: Catalog) -> None:
    # hidden 2880, 24 layers, 64 heads × 64, 8 KV heads, 32 experts, top 4, expert 2880 wide with a fused
    # gate_up (2 × 2880) and biases; MXFP4 experts, Q8_0 elsewhere, F32 router; sliding window 128 on half
    hidden, k = 2880, 4
    attention = hidden * 4096 + 4096 + 2 * (hidden * 512 + 512) + 4096 * hidden + hidden + 64  # + sinks
    router = hidden * 32 + 32
    expert = hidden * 2 * 2880 + 2 * 2880 + 2880 * hidden + hidden
    rest = attention + 2 * hidden
    # llama.cpp's sliding cache holds n_swa + n_ubatch cells (128 + 512)
    kv = (12 * CTX + 12 * (128 + 512)) * 2 * 8 * 64 * 2
    derived = 24 * (rest * 8.5 / 8 + router * 4 + k * expert * 4.25 / 8) + 201_088 * hidden * 8.5 / 8 + kv
    assert reads(catalog, "gpt-oss-20b", "mxfp4") == pytest.approx(derived, rel=0.01)


@pytest.mark.parametrize(
    ("model_id", "hidden", "experts", "moe_layers"),
    [
        ("gpt-oss-120b", 2880, 128, 36),
        ("qwen3-30b-a3b", 2048, 128, 48),
        ("qwen3.5-35b-a3b", 2048, 256, 40),
        ("qwen3.5-122b-a10b", 3072, 256, 48),
        ("qwen3-next-80b-a3b", 2048, 512, 48),
        ("gemma-4-26b-a4b", 2816, 128, 30),
        ("nemotron-3-nano-30b-a3b", 2688, 128, 23),  # 23 of its 52 blocks are MoE
        ("deepseek-v3", 7168, 256, 58),  # the first 3 layers are dense
        ("glm-4.5-air", 4096, 128, 45),  # the first layer is dense
        ("llama-4-scout-17b-16e", 5120, 16, 48),
    ],
)
def test_every_moe_layer_reads_its_router_whole_at_f32(
    catalog: Catalog, model_id: str, hidden: int, experts: int, moe_layers: int
) -> None:
    model = from_catalog(catalog.model(model_id))  # type: ignore[arg-type]
    routers = router_params_per_layer(model.arch)
    assert sum(1 for r in routers if r) == moe_layers
    assert set(routers) - {0} == {hidden * experts}
    # each MoE layer's part a token reads whole (all but its routed experts) holds the router at F32,
    # and the routed experts keep the layers' rate (the router is not spread over them), plus the fallback
    # types' bytes where their rows are not whole K-quant blocks (Gemma 4's 704, GLM-4.5-Air's 1408:
    # core/estimate/row_fallback.py)
    est = estimate_memory(model, Request(quant="q4_k_m", context=CTX, engine="llama.cpp"), catalog)
    expert_params = [(model.arch.num_experts or 0) * model.arch.expert_params if r else 0 for r in routers]
    fallback = expert_down_extra_bytes(model, "q4_k_m")
    for w, e, r, ep, x in zip(
        est.layer_weight_bytes, est.layer_expert_bytes, routers, expert_params, fallback, strict=True
    ):
        assert w - e >= r * 4
        assert e == pytest.approx(ep * Q4_K_M_LAYERS / 8 + x, rel=0.01)


def test_a_dense_model_has_no_router(catalog: Catalog) -> None:
    model = from_catalog(catalog.model("llama-3.1-8b"))  # type: ignore[arg-type]
    assert not any(router_params_per_layer(model.arch))


def test_a_tied_head_is_read_whole_on_an_engine_that_keeps_the_embedding_on_the_gpu(catalog: Catalog) -> None:
    # Gemma 4 26B-A4B ties its head to the 262,144 × 2816 token table: mlx-lm and vLLM multiply every token
    # by that table (embed_tokens.as_linear), so the head a token reads is the table at the file's rate
    model = from_catalog(catalog.model("gemma-4-26b-a4b"))  # type: ignore[arg-type]
    est = estimate_memory(model, Request(quant="bf16", context=CTX, engine="mlx"), catalog)
    _per_layer, _experts, head = active_bytes(est)
    assert head == pytest.approx(262_144 * 2816 * 2, rel=0.01)


def test_a_gguf_files_routed_experts_are_its_expert_tensors_not_a_share_of_the_f32_router(
    tmp_path: Path, catalog: Catalog
) -> None:
    # a GGUF written as llama.cpp lays it out (fakes/gguf_files.py): F32 ffn_gate_inp, Q8_0 expert tensors
    path = tmp_path / "moe.gguf"
    write_gguf(path, experts=(4, 2))
    model = read_gguf(path, catalog=catalog)
    est = estimate_memory(model, Request(context=CTX, engine="llama.cpp"), catalog)
    experts_q8_0 = 4 * 3 * FF * HIDDEN * 34 // 32  # gate, up, down of 4 experts, 34 bytes per 32 weights
    assert est.layer_expert_bytes[0] == pytest.approx(experts_q8_0, rel=0.005)  # pro rata of all: +0.9%
    assert est.layer_weight_bytes[0] - est.layer_expert_bytes[0] >= 4 * HIDDEN * 4  # the router, F32
