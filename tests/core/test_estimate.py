"""The estimator against published figures, and its behaviour on machines we build."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakes.archs import DENSE_120B, LLAMA_31_8B, LLAMA_31_70B, dense, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.fit import MEGATRAIN_HOST_BYTES, best_quant, fewest_gpus, fit, max_context
from rigcheck.core.estimate.memory import Request, estimate_memory
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.config import parse_config
from rigcheck.core.models.spec import ArchConfig
from rigcheck.core.whatif import simulate

GIB = 1024**3
MIB = 1024**2


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def machine(catalog: Catalog, gpus: tuple[str, ...] = (), ram_gib: float = 64) -> Machine:
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=int(ram_gib * GIB)), gpus=())
    return simulate(bare, [catalog.gpu(g) for g in gpus], ram_gib)  # type: ignore[misc]


# -- memory ---------------------------------------------------------------------------------------


def test_kv_cache_matches_llama_cpp_logs(catalog: Catalog) -> None:
    """llama.cpp, Llama-3-8B shape: n_ctx 2048 → KV 256 MiB; n_ctx 32768 → 4096 MiB (logdetective PR #106)."""
    m = model(LLAMA_31_8B)
    assert estimate_memory(m, Request(quant="q4_k_m", context=2048), catalog).total("kv_cache") == 256 * MIB
    est = estimate_memory(m, Request(quant="q4_k_m", context=32768), catalog)
    assert est.total("kv_cache") == 4096 * MIB
    assert est.kv_cache_bytes_per_token == 128 * 1024  # 2 · 32 · 8 · 128 · 2 B


def test_kv_cache_types_and_batch(catalog: Catalog) -> None:
    m = model(LLAMA_31_8B)
    f16 = estimate_memory(m, Request(quant="q4_k_m", context=4096), catalog).total("kv_cache")
    q8 = estimate_memory(m, Request(quant="q4_k_m", context=4096, kv_type="q8_0"), catalog).total("kv_cache")
    q4 = estimate_memory(m, Request(quant="q4_k_m", context=4096, kv_type="Q4_0"), catalog).total("kv_cache")
    batched = estimate_memory(m, Request(quant="q4_k_m", context=4096, batch=4), catalog).total("kv_cache")
    assert q8 == pytest.approx(f16 * 34 / 32 / 2)
    assert q4 == pytest.approx(f16 * 18 / 32 / 2)
    assert batched == 4 * f16


def test_llama_cpp_compute_buffer_matches_its_log(catalog: Catalog) -> None:
    """CUDA0 compute buffer 2144 MiB at n_ctx 32768 (n_ubatch 512, 32 heads): 2048 MiB of it is the KQ term."""
    no_fa = Request(quant="q4_k_m", context=32768, flash_attention=False)  # the log was taken without -fa
    est = estimate_memory(model(LLAMA_31_8B), no_fa, catalog)
    assert est.total("activations") == 2048 * MIB


def test_weights_by_format(catalog: Catalog) -> None:
    m = model(LLAMA_31_8B)
    params = 8_030_261_248
    assert estimate_memory(m, Request(quant="bf16"), catalog).total("weights") == 2 * params
    q4 = estimate_memory(m, Request(quant="Q4_K_M"), catalog)
    # llama.cpp measured 4.8944 bpw for Llama-3.1-8B Q4_K_M (tools/quantize/README.md)
    assert q4.total("weights") == pytest.approx(params * 4.8944 / 8, rel=0.01)
    assert q4.terms[0].provenance == "estimate"
    nf4 = estimate_memory(m, Request(quant="nf4"), catalog).total("weights")
    embed_head = LLAMA_31_8B.embed_params + LLAMA_31_8B.head_params
    assert nf4 == pytest.approx((params - embed_head) * 4.5 / 8 + embed_head * 2, rel=0.001)


def test_default_context_is_8k_never_the_maximum(catalog: Catalog) -> None:
    assert estimate_memory(model(LLAMA_31_8B), Request(quant="q8_0"), catalog).context == 8192
    short = replace(LLAMA_31_8B, max_context=4096)
    assert estimate_memory(model(short), Request(quant="q8_0"), catalog).context == 4096


def test_mla_caches_the_latent_only(catalog: Catalog) -> None:
    """DeepSeek-V3: (512 + 64) × 61 layers = 35,136 elements per token = 68.6 KiB in bf16."""
    arch = replace(
        LLAMA_31_8B,
        num_layers=61,
        layer_kinds=("mla",) * 61,
        kv_lora_rank=512,
        qk_rope_head_dim=64,
        layer_params=(LLAMA_31_8B.layer_params[0],) * 61,
        layer_active_params=(LLAMA_31_8B.layer_params[0],) * 61,
        moe_layers=(False,) * 61,
    )
    est = estimate_memory(model(arch), Request(quant="q4_k_m", context=1000), catalog)
    assert est.kv_cache_bytes_per_token == 35_136 * 2
    assert est.total("kv_cache") == 35_136 * 2 * 1000


def test_hybrid_linear_attention_caches_full_layers_only(catalog: Catalog) -> None:
    """Qwen3.5-9B: 8 full-attention layers keep K and V (4 heads × 256) per token; the 24 Gated DeltaNet
    layers keep a fixed fp32 state (conv 8192 × 4 + recurrent 32 × 128 × 128) whatever the context."""
    spec = catalog.model("qwen3.5-9b")
    assert spec is not None
    m = model(parse_config(spec.config, "catalog:qwen3.5-9b"))
    per_token = 8 * 2 * 4 * 256 * 2
    state = 24 * (8192 * 4 + 32 * 128 * 128) * 4
    for context in (4096, 65536):
        est = estimate_memory(m, Request(quant="bf16", context=context), catalog)
        assert est.kv_cache_bytes_per_token == per_token
        assert est.total("kv_cache") == context * per_token + state


def test_sliding_window_layers_are_capped(catalog: Catalog) -> None:
    kinds = ("sliding", "full") * 21
    arch = dense(
        hidden=3584,
        layers=42,
        heads=16,
        kv_heads=8,
        head_dim=256,
        intermediate=14336,
        vocab=256000,
        kinds=kinds,
        window=4096,
    )  # type: ignore[arg-type]
    est = estimate_memory(model(arch), Request(quant="q8_0", context=32768), catalog)
    per_layer_token = 2 * 8 * 256 * 2
    expected = 21 * 32768 * per_layer_token + 21 * (4096 + 512) * per_layer_token
    assert est.total("kv_cache") == expected
    assert est.kv_cache_bytes_per_token == 42 * per_layer_token  # Gemma-2-9B: 336 KiB per token uncapped
    assert est.kv_cache_bytes_per_token == 336 * 1024


def test_training_full_model_states_follow_the_stack(catalog: Catalog) -> None:
    """TRL + PEFT (the default) trains bf16 parameters with AdamW states in their dtype: 2 + 2 + 2·2 bytes;
    DeepSpeed's mixed precision keeps fp32 master weights: ZeRO's 2 + 2 + 12 = 16 bytes per parameter."""
    est = estimate_memory(model(LLAMA_31_8B), Request(workload="full", context=1024), catalog)
    params = LLAMA_31_8B.params_total
    step = sum(t.bytes for t in est.terms if t.name.startswith("AdamW step"))  # torch AdamW's sqrt(v)
    assert 0 < step <= 2 * params
    assert est.total("weights") + est.total("gradients") + est.total("optimizer") - step == 8 * params
    mixed = estimate_memory(
        model(LLAMA_31_8B), Request(workload="full", context=1024, framework="deepspeed"), catalog
    )
    zero = sum(t.bytes for t in mixed.terms if t.name.startswith("ZeRO step"))  # a sub-group's fp32 grad
    assert 0 < zero <= 6 * params
    assert mixed.total("weights") + mixed.total("gradients") + mixed.total("optimizer") - zero == 16 * params
    assert est.total("activations") > 0
    lora = estimate_memory(model(LLAMA_31_8B), Request(workload="lora", context=1024), catalog)
    qlora = estimate_memory(model(LLAMA_31_8B), Request(workload="qlora", context=1024), catalog)
    # TRL + PEFT: 4.5-bit NF4 layers, and prepare_model_for_kbit_training casts the 128k-token embedding and
    # head to fp32, so ~0.53 of the bf16 size; Unsloth's double-quantised, 16-bit-kept base: ~0.38
    assert lora.total("weights") / 2 < qlora.total("weights") < lora.total("weights") / 1.8
    unsloth = estimate_memory(
        model(LLAMA_31_8B), Request(workload="qlora", context=1024, framework="unsloth"), catalog
    )
    assert unsloth.total("weights") < lora.total("weights") / 2.5
    # AdamW's two states in each parameter's dtype: bf16 for the full model, fp32 for PEFT's adapters
    assert est.total("optimizer") - step == 2 * 2 * params
    assert lora.total("optimizer") == 2 * 4 * lora.trainable_params < est.total("optimizer") / 90


def test_checkpointing_orders_activation_memory(catalog: Catalog) -> None:
    def acts(mode: str, attention: str = "eager") -> int:
        req = Request(workload="full", context=4096, checkpointing=mode, attention=attention)  # type: ignore[arg-type]
        return estimate_memory(model(LLAMA_31_8B), req, catalog).total("activations")

    assert acts("full") < acts("selective") < acts("none")
    # selective recomputation drops the attention scores, which flash attention never keeps
    assert acts("selective", "flash") == acts("none", "flash") == acts("selective")


@pytest.mark.parametrize(
    ("req", "expected"),
    [
        (Request(quant="q9_k"), "--quant: unknown quantization 'q9_k'"),
        (Request(quant="q4_k_m", kv_type="q3"), "--kv-cache-type: unknown KV cache type 'q3'"),
        (Request(quant="q4_k_m", batch=0), "--batch: must be at least 1"),
        (Request(quant="q4_k_m", context=0), "--context: must be at least 1"),
    ],
)
def test_bad_requests(catalog: Catalog, req: Request, expected: str) -> None:
    with pytest.raises(InputError) as info:
        estimate_memory(model(LLAMA_31_8B), req, catalog)
    assert str(info.value).startswith(expected)


@settings(max_examples=40, deadline=None)
@given(
    small=st.integers(min_value=1, max_value=64_000),
    extra=st.integers(min_value=0, max_value=64_000),
    kv=st.sampled_from(["f16", "q8_0", "q4_0"]),
)
def test_more_context_never_needs_less(small: int, extra: int, kv: str) -> None:
    catalog = load_catalog(use_overlay=False)
    m = model(LLAMA_31_8B)
    a = estimate_memory(m, Request(quant="q4_k_m", context=small, kv_type=kv), catalog).total_bytes
    b = estimate_memory(m, Request(quant="q4_k_m", context=small + extra, kv_type=kv), catalog).total_bytes
    assert b >= a


LADDER = ["fp32", "bf16", "q8_0", "fp8", "q6_k", "q5_k_m", "q4_k_m", "q3_k_m", "q2_k"]


@settings(max_examples=30, deadline=None)
@given(
    i=st.integers(min_value=0, max_value=len(LADDER) - 2),
    j=st.integers(min_value=1, max_value=len(LADDER) - 1),
)
def test_a_smaller_quant_never_needs_more(i: int, j: int) -> None:
    catalog = load_catalog(use_overlay=False)
    wider, narrower = LADDER[min(i, j)], LADDER[max(i, j)]
    m = model(LLAMA_31_8B)
    assert estimate_memory(m, Request(quant=narrower), catalog).total("weights") <= estimate_memory(
        m, Request(quant=wider), catalog
    ).total("weights")


# -- fit ------------------------------------------------------------------------------------------


def test_8b_q4_fits_a_4090_and_is_bandwidth_bound(catalog: Catalog) -> None:
    result = fit(
        model(LLAMA_31_8B),
        machine(catalog, ("nvidia-geforce-rtx-4090",)),
        Request(quant="q4_k_m"),
        catalog,
        live=False,
    )
    assert result.verdict == "fits"
    assert result.placement.gpu_layers == 32 and result.placement.cpu_bytes == 0
    assert result.speed.bound_by == "memory_bandwidth"
    decode = result.speed.decode_tokens_per_s
    assert decode is not None and 80 < decode < 200  # 1008 GB/s × 0.7 over ~5.6 GB read per token
    assert any("to spare" in a for a in result.advice)


def test_70b_on_one_4090_offloads_layers_and_says_so(catalog: Catalog) -> None:
    result = fit(
        model(LLAMA_31_70B),
        machine(catalog, ("nvidia-geforce-rtx-4090",), ram_gib=64),
        Request(quant="q4_k_m"),
        catalog,
        live=False,
    )
    assert result.verdict == "fits_with_offload"
    p = result.placement
    assert 0 < p.gpu_layers < p.total_layers == 80
    assert p.cpu_bytes > 0
    assert result.speed.bound_by == "ram_bandwidth"
    assert any("layers run from RAM" in a for a in result.advice)
    none = fit(
        model(LLAMA_31_70B),
        machine(catalog, ("nvidia-geforce-rtx-4090",), ram_gib=64),
        Request(quant="q4_k_m"),
        catalog,
        offload="none",
        live=False,
    )
    assert none.verdict == "does_not_fit"
    # Two 4090s hold it at 8k context (40 GiB of Q4_K_M + 2.5 GiB KV + buffers), as people run it.
    pair = machine(catalog, ("nvidia-geforce-rtx-4090",) * 2)
    two = fit(model(LLAMA_31_70B), pair, Request(quant="q4_k_m"), catalog, offload="none", live=False)
    assert two.verdict == "fits"
    assert two.placement.gpu_bytes[0] > 0 and two.placement.gpu_bytes[1] > 0
    spec = catalog.gpu("nvidia-geforce-rtx-4090")
    assert spec is not None
    bare = machine(catalog)
    assert fewest_gpus(model(LLAMA_31_70B), bare, spec, Request(quant="q4_k_m"), catalog) == 2
    assert fewest_gpus(model(LLAMA_31_70B), bare, spec, Request(quant="q4_k_m", context=32768), catalog) == 3


def test_cpu_only_machine_runs_from_ram(catalog: Catalog) -> None:
    result = fit(
        model(LLAMA_31_8B), machine(catalog, ram_gib=32), Request(quant="q4_k_m"), catalog, live=False
    )
    assert result.verdict == "fits_with_offload"
    assert result.placement.cpu_bytes > 0 and result.placement.gpu_bytes == ()
    assert result.speed.bound_by == "ram_bandwidth"
    small = fit(
        model(LLAMA_31_70B), machine(catalog, ram_gib=16), Request(quant="q4_k_m"), catalog, live=False
    )
    assert small.verdict == "does_not_fit"


def test_megatrain_headline_120b_on_one_h200_with_1_5_tb(catalog: Catalog) -> None:
    """MegaTrain (arXiv 2604.05091): a single H200 with 1.5 TB of host memory trains models up to 120B."""
    big_host = machine(catalog, ("nvidia-h200",), ram_gib=1536)
    req = Request(workload="full", context=1024, batch=8)
    result = fit(model(DENSE_120B), big_host, req, catalog, live=False)
    assert result.verdict == "fits_with_offload"
    assert result.placement.offload == "full"
    assert result.placement.gpu_bytes[0] < 141 * 10**9  # GPU memory follows the largest layer, not the model
    assert result.placement.cpu_bytes >= MEGATRAIN_HOST_BYTES * DENSE_120B.params_total
    assert result.speed.train_tokens_per_s is not None
    small_host = machine(catalog, ("nvidia-h200",), ram_gib=1024)
    short = fit(model(DENSE_120B), small_host, req, catalog, live=False)
    assert short.verdict == "does_not_fit"
    assert any(a.startswith("add ") and "GiB RAM for MegaTrain-style training" in a for a in short.advice)


def test_zero_offload_sits_between_none_and_full(catalog: Catalog) -> None:
    box = machine(catalog, ("nvidia-geforce-rtx-4090",), ram_gib=256)
    req = Request(workload="full", context=512)
    small = model(dense(hidden=2048, layers=16, heads=16, kv_heads=8, intermediate=8192, vocab=32000))
    assert fit(small, box, req, catalog, live=False).placement.offload in ("none", "optimizer")
    result = fit(model(LLAMA_31_8B), box, req, catalog, live=False)
    assert result.verdict == "fits_with_offload"
    assert result.placement.offload in ("optimizer", "full")


def test_solvers(catalog: Catalog) -> None:
    box = machine(catalog, ("nvidia-geforce-rtx-4060",))
    m = model(LLAMA_31_8B)
    longest = max_context(m, box, Request(quant="q4_k_m"), catalog, live=False)
    assert longest is not None and 512 <= longest < 131072
    assert (
        fit(m, box, Request(quant="q4_k_m", context=longest), catalog, offload="none", live=False).verdict
        == "fits"
    )
    assert (
        fit(
            m, box, Request(quant="q4_k_m", context=longest + 512), catalog, offload="none", live=False
        ).verdict
        != "fits"
    )
    best = best_quant(m, box, Request(), catalog, live=False)
    assert best is not None and best[0] in ("Q6_K (file mix)", "Q5_K_M", "Q4_K_M", "Q8_0")


def test_free_memory_is_the_budget_on_a_live_machine(catalog: Catalog) -> None:
    box = machine(catalog, ("nvidia-geforce-rtx-4090",))
    busy = replace(box, gpus=(replace(box.gpus[0], memory_free_bytes=6 * GIB),))
    m = model(LLAMA_31_8B)
    assert fit(m, busy, Request(quant="q4_k_m"), catalog, live=False).verdict == "fits"
    live = fit(m, busy, Request(quant="q4_k_m"), catalog, live=True)
    assert live.verdict == "fits_with_offload"
    assert "6.0 GiB free" in live.reasons[1]


def test_unknown_gpu_memory_is_not_counted(catalog: Catalog) -> None:
    box = machine(catalog, ("nvidia-geforce-rtx-4090",))
    blind = replace(box, gpus=(replace(box.gpus[0], memory_total_bytes=None),))
    result = fit(model(LLAMA_31_8B), blind, Request(quant="q4_k_m"), catalog, live=False)
    assert result.verdict == "fits_with_offload"
    assert any("memory size unknown" in r for r in result.reasons)


def _moe() -> ArchConfig:
    base = dense(hidden=2048, layers=24, heads=32, kv_heads=4, intermediate=768, vocab=151936)
    expert = 3 * 2048 * 768
    shared = base.layer_params[0] - expert
    return replace(
        base,
        num_experts=128,
        experts_per_token=8,
        expert_params=expert,
        moe_layers=(True,) * 24,
        layer_params=(shared + 128 * expert,) * 24,
        layer_active_params=(shared + 8 * expert,) * 24,
    )


def test_moe_decodes_from_active_parameters(catalog: Catalog) -> None:
    moe = model(_moe())
    box = machine(catalog, ("nvidia-geforce-rtx-4090",))
    result = fit(moe, box, Request(quant="q8_0"), catalog, live=False)
    assert result.verdict == "fits"
    dense_equivalent = fit(
        model(replace(_moe(), layer_active_params=_moe().layer_params)),
        box,
        Request(quant="q8_0"),
        catalog,
        live=False,
    )
    assert result.speed.decode_tokens_per_s > 3 * dense_equivalent.speed.decode_tokens_per_s  # type: ignore[operator]


def test_vllm_takes_its_memory_fraction(catalog: Catalog) -> None:
    box = machine(catalog, ("nvidia-geforce-rtx-4090",))
    llama = fit(model(LLAMA_31_8B), box, Request(quant="q4_k_m"), catalog, live=False)
    vllm = fit(model(LLAMA_31_8B), box, Request(quant="q4_k_m", engine="vllm"), catalog, live=False)
    assert vllm.budget.gpu_bytes[0] == int(24 * GIB * 0.9) < llama.budget.gpu_bytes[0]
    assert any("--gpu-memory-utilization" in r for r in vllm.reasons)


def test_llama_cpp_splits_layers_over_every_gpu_by_free_memory(catalog: Catalog) -> None:
    """llama.cpp's default --split-mode layer spreads a model over every visible GPU in proportion to its
    free memory even when one card would hold it (src/llama-model.cpp load_tensors); -sm none keeps it on
    the main GPU."""
    pair = machine(catalog, ("nvidia-geforce-rtx-3090", "nvidia-geforce-rtx-4090"))
    result = fit(model(LLAMA_31_8B), pair, Request(quant="q4_k_m"), catalog, live=False)
    assert result.verdict == "fits"
    first, second = result.placement.gpu_bytes
    assert first > 0 and second > 0
    # two cards of 24 GB: about half the layers each, the head on the last one, buffers on both
    runtime = result.estimate.total("activations") + result.estimate.total("overhead")
    weights = result.estimate.total_bytes - result.estimate.host_weight_bytes - runtime
    assert first + second == weights + 2 * runtime
    assert abs(first - second) < 0.2 * weights
    # all but the input embedding, which llama.cpp keeps in host memory, on the one GPU with -sm none
    alone = fit(model(LLAMA_31_8B), pair, Request(quant="q4_k_m"), catalog, live=False, split="none")
    assert alone.placement.gpu_bytes[1] == 0
    assert sum(alone.placement.gpu_bytes) == alone.estimate.total_bytes - alone.estimate.host_weight_bytes
    # -ts 3,1: three quarters of the layers on GPU 0
    skewed = fit(
        model(LLAMA_31_8B), pair, Request(quant="q4_k_m"), catalog, live=False, tensor_split=(3.0, 1.0)
    )
    assert skewed.placement.gpu_bytes[0] > 2 * skewed.placement.gpu_bytes[1]
