"""Training: MoE FLOPs from active parameters, QLoRA's dequantisation, LoRA with offload, ZeRO-3, MegaTrain."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fakes.archs import DENSE_120B, LLAMA_31_8B, dense, model
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import (
    GIB,
    fit,
    largest_layer_params,
    zero2_offload_bytes,
    zero3_offload_bytes,
)
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.placement import megatrain
from rigcheck.core.estimate.placement.training import zero3_buffer_bytes
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def box(catalog: Catalog, gpu: str = "nvidia-h100-sxm5", ram_gib: int = 1024) -> Machine:
    bare = Machine(cpu=CPU(logical_cores=64), memory=Memory(total_bytes=ram_gib * GIB), gpus=())
    spec = catalog.gpu(gpu)
    assert spec is not None
    return simulate(bare, [spec], ram_gib)


def test_megatrain_counts_what_its_code_allocates_on_its_published_qwen2_5_32b_run(catalog: Catalog) -> None:
    """MegaTrain README@2a9f977: Qwen2.5-32B on one H100, batch 96 × 1024: ~327 GB host, ~259 TFLOPS (its
    train.py prints GiB as 'GB'). RAM between steps is bf16 weights + fp32 m, v (10 B/param) + the pinned
    staging, within 5% of the logged RSS; the step adds the bf16 gradients (12 B/param), which the machine
    must hold. TFLOPS as train.py counts them (6·N per token) within ±15%."""
    qwen = from_catalog(catalog.model("qwen2.5-32b"))  # type: ignore[arg-type]
    arch = qwen.arch
    req = Request(workload="full", context=1024, batch=96)
    result = fit(qwen, box(catalog), req, catalog, offload="full", live=False)
    assert result.verdict == "fits_with_offload" and result.placement.offload == "full"
    assert megatrain.host_resident_bytes(arch) == pytest.approx(327 * GIB, rel=0.05)
    assert result.placement.cpu_bytes == megatrain.host_step_bytes(arch)
    assert result.placement.cpu_bytes - megatrain.host_resident_bytes(arch) == 2 * arch.params_total
    assert sum(result.placement.gpu_bytes) == megatrain.gpu_bytes(arch, 1024, 96)
    assert result.placement.gpu_peak_bytes[0] == megatrain.gpu_peak_bytes(arch, 1024, 96)
    assert result.speed.train_tokens_per_s is not None
    tflops = result.speed.train_tokens_per_s * 6 * arch.params_total / 1e12
    assert tflops == pytest.approx(259, rel=0.15)


def test_megatrains_gpu_memory_follows_the_layer_kinds_and_the_vocabulary(catalog: Catalog) -> None:
    """A hybrid keeps one pair of templates per layer structure (linear and full attention: two pairs), and
    the chunked loss keeps every chunk's logits: a sample costs more with a larger vocabulary."""
    qwen35 = from_catalog(catalog.model("qwen3.5-27b")).arch  # type: ignore[arg-type]
    assert set(qwen35.layer_kinds) == {"linear", "full"}
    one_kind = replace(qwen35, layer_kinds=("full",) * qwen35.num_layers)
    assert megatrain.weight_bytes(qwen35) > megatrain.weight_bytes(one_kind)
    small_vocab = replace(qwen35, vocab_size=32000)
    assert megatrain.sample_bytes(qwen35, 1024) > megatrain.sample_bytes(small_vocab, 1024)
    assert megatrain.gpu_peak_bytes(qwen35, 1024, 2) - megatrain.gpu_peak_bytes(qwen35, 1024, 1) == (
        megatrain.sample_bytes(qwen35, 1024)
    )


def test_megatrain_headline_holds_at_120b_and_not_at_141b(catalog: Catalog) -> None:
    """arXiv 2604.05091: up to 120B on one H200 with 1.5 TB of host memory; a 141B model (Mixtral-8x22B's
    size) needs 12 × 141e9 = 1.69 TB at the step and must not pass."""
    h200 = box(catalog, "nvidia-h200", ram_gib=1536)
    req = Request(workload="full", context=1024, batch=8)
    assert (
        fit(model(DENSE_120B), h200, req, catalog, offload="full", live=False).verdict == "fits_with_offload"
    )
    big = dense(hidden=12288, layers=75, heads=96, kv_heads=8, intermediate=40960, vocab=128256)
    assert 139e9 < big.params_total < 143e9
    assert fit(model(big), h200, req, catalog, offload="full", live=False).verdict == "does_not_fit"


def test_megatrains_largest_batch_fits_and_one_more_does_not(catalog: Catalog) -> None:
    """MegaTrain ran Qwen2.5-7B at batch 148 × 1024 on an 80 GB H100 (calc_resource.py@2a9f977 line 80):
    the largest batch this accounting allows on that card is at least that, and one more does not fit."""
    qwen = from_catalog(catalog.model("qwen2.5-7b"))  # type: ignore[arg-type]
    machine = box(catalog)
    budget = fit(qwen, machine, Request(workload="full", context=1024, batch=1), catalog, offload="full",
                 live=False).budget.gpu_bytes[0]  # fmt: skip
    batch = megatrain.largest_batch(qwen.arch, budget, 1024)
    assert batch >= 148

    def verdict(b: int) -> str:
        req = Request(workload="full", context=1024, batch=b)
        return fit(qwen, machine, req, catalog, offload="full", live=False).verdict

    assert verdict(batch) == "fits_with_offload" and verdict(batch + 1) == "does_not_fit"


def test_deepspeed_estimators_match_their_worked_example() -> None:
    """DeepSpeed docs/code-docs/source/memory.rst: t5-3b (2851M parameters, largest layer 32M), 1 node × 8
    GPUs: ZeRO-3 with parameter offload 71.71 GB CPU / 0.12 GB per GPU; ZeRO-2 offload 127.48 GB CPU."""
    cpu3, gpu3 = zero3_offload_bytes(2851 * 10**6, 32 * 10**6)
    assert cpu3 / GIB == pytest.approx(71.71, abs=0.05)
    assert gpu3 / GIB == pytest.approx(0.12, abs=0.01)
    cpu2, _ = zero2_offload_bytes(2851 * 10**6, gpus=8)
    assert cpu2 / GIB == pytest.approx(127.48, abs=0.1)


def test_zero3_offload_keeps_only_the_largest_layer_on_the_gpu(catalog: Catalog) -> None:
    m = model(LLAMA_31_8B)
    req = Request(workload="full", context=1024)
    result = fit(m, box(catalog, ram_gib=512), req, catalog, offload="params", live=False)
    assert result.placement.offload == "params" and result.verdict == "fits_with_offload"
    cpu, gpu = zero3_offload_bytes(m.arch.params_total, largest_layer_params(m.arch))
    assert result.placement.cpu_bytes == cpu
    runtime = result.estimate.total("activations") + result.estimate.total("overhead")
    # the estimator's model states exactly, plus DeepSpeed's live-parameter, prefetch and reduce buffers
    assert sum(result.placement.gpu_bytes) == gpu + runtime + zero3_buffer_bytes(m.arch.params_total)
    assert zero3_buffer_bytes(m.arch.params_total) == 2 * (10**9 + 5 * 10**7 + 5 * 10**8)
    assert "ZeRO-3" in result.reasons[0]
    assert result.speed.train_tokens_per_s is not None
    short = fit(m, box(catalog, ram_gib=128), req, catalog, offload="params", live=False)
    assert short.verdict == "does_not_fit"
    assert "keeps" in short.reasons[0] and "available" in short.reasons[0]


def test_moe_training_flops_follow_the_active_parameters(catalog: Catalog) -> None:
    gpt = from_catalog(catalog.model("gpt-oss-20b"))  # type: ignore[arg-type]
    dense_like = replace(gpt, arch=replace(gpt.arch, layer_active_params=gpt.arch.layer_params))
    req = Request(workload="qlora", context=2048)
    moe = fit(gpt, box(catalog), req, catalog, live=False)
    dense = fit(dense_like, box(catalog), req, catalog, live=False)
    assert moe.speed.train_tokens_per_s is not None and dense.speed.train_tokens_per_s is not None
    assert moe.speed.train_tokens_per_s > 3 * dense.speed.train_tokens_per_s


def test_qlora_pays_for_dequantising_its_base(catalog: Catalog) -> None:
    m = model(LLAMA_31_8B)
    lora = fit(m, box(catalog), Request(workload="lora", context=512), catalog, live=False)
    qlora = fit(m, box(catalog), Request(workload="qlora", context=512), catalog, live=False)
    assert lora.speed.train_tokens_per_s is not None and qlora.speed.train_tokens_per_s is not None
    assert qlora.speed.train_tokens_per_s < lora.speed.train_tokens_per_s
    assert any("dequantises" in line for line in qlora.speed.explanation)


def test_lora_with_offload_is_consistent(catalog: Catalog) -> None:
    """The old bug: --workload lora --offload optimizer said does_not_fit with a reason saying it fits."""
    m = model(LLAMA_31_8B)
    req = Request(workload="lora", context=2048)
    optimizer = fit(
        m, box(catalog, "nvidia-geforce-rtx-4090", 64), req, catalog, offload="optimizer", live=False
    )
    assert optimizer.verdict == "fits_with_offload" and optimizer.placement.offload == "optimizer"
    assert optimizer.placement.cpu_bytes > 0 and "ZeRO-Offload" in optimizer.reasons[0]
    full = fit(m, box(catalog, "nvidia-geforce-rtx-4090", 64), req, catalog, offload="full", live=False)
    assert full.verdict == "does_not_fit"
    assert "full fine-tuning" in full.reasons[0] and "fits" not in full.reasons[0]
    for mode in ("none", "optimizer", "params", "full"):
        result = fit(m, box(catalog, "nvidia-geforce-rtx-3060", 16), req, catalog, offload=mode, live=False)  # type: ignore[arg-type]
        if result.verdict == "does_not_fit":
            assert "fits" not in result.reasons[0] and "fit the GPU without" not in result.reasons[0], mode


def test_the_120b_headline_still_holds(catalog: Catalog) -> None:
    """MegaTrain abstract: one H200 with 1.5 TB of host memory trains models up to 120B."""
    result = fit(
        model(DENSE_120B), box(catalog, "nvidia-h200", 1536), Request(workload="full", context=1024, batch=8),
        catalog, live=False,
    )  # fmt: skip
    assert result.verdict == "fits_with_offload" and result.placement.offload == "full"


def test_zero2_offload_uses_every_gpu_and_deepspeeds_host_rule(catalog: Catalog) -> None:
    """DeepSpeed's estimate_zero2_model_states_mem_needs: host = P · max(4·G, 16) · 1.5, so 8 GPUs double
    the 1-GPU figure; each GPU is a data-parallel rank with its 2·P of 16-bit parameters."""
    spec = catalog.gpu("nvidia-h100-sxm5")
    assert spec is not None
    bare = Machine(cpu=CPU(logical_cores=64), memory=Memory(total_bytes=1024 * GIB), gpus=())
    eight = simulate(bare, [spec] * 8, 1024)
    m = model(LLAMA_31_8B)
    req = Request(workload="full", context=1024)
    result = fit(m, eight, req, catalog, offload="optimizer", live=False)
    params = m.arch.params_total
    assert result.placement.cpu_bytes == zero2_offload_bytes(params, gpus=8)[0] == int(params * 32 * 1.5)
    assert zero2_offload_bytes(params, gpus=8)[0] == 2 * zero2_offload_bytes(params, gpus=1)[0]
    assert sum(1 for b in result.placement.gpu_bytes if b) == 8
    one = fit(m, box(catalog, "nvidia-h100-sxm5", 1024), req, catalog, offload="optimizer", live=False)
    assert one.placement.cpu_bytes == zero2_offload_bytes(params)[0]  # one GPU: DeepSpeed's figure exactly
    assert result.speed.train_tokens_per_s is not None and one.speed.train_tokens_per_s is not None
    assert result.speed.train_tokens_per_s > 4 * one.speed.train_tokens_per_s


def test_a_streamed_run_is_named_megatrain_unless_a_framework_is_asked_for(catalog: Catalog) -> None:
    qwen = from_catalog(catalog.model("qwen2.5-7b"))  # type: ignore[arg-type]
    req = Request(workload="full", context=1024, batch=8)
    streamed = fit(qwen, box(catalog), req, catalog, offload="full", live=False, advise=False)
    assert streamed.placement.offload == "full" and streamed.estimate.framework == "megatrain"
    asked = fit(qwen, box(catalog), replace(req, framework="deepspeed"), catalog, offload="full", live=False)
    assert asked.estimate.framework == "deepspeed"
    on_gpu = fit(qwen, box(catalog), req, catalog, offload="none", live=False, advise=False)
    assert on_gpu.estimate.framework == "transformers"


def test_megatrain_on_four_gpus_runs_one_worker_each_over_one_shared_host_copy(catalog: Catalog) -> None:
    """MegaTrain@5cf47ac (mp_state.py, mp_worker.py): a worker per GPU, each at its share of the batch with
    the single-GPU state on its GPU; host RAM holds one shared copy (bf16 parameters, layer flats and
    gradients, fp32 m and v) and each worker's pinned slabs; one CPU optimizer step for all of them, so four
    workers move four times the tokens of one in the same step (README 4/17: 1290 vs 272 TFLOPS)."""
    qwen = from_catalog(catalog.model("qwen2.5-7b"))  # type: ignore[arg-type]
    arch = qwen.arch
    spec = catalog.gpu("nvidia-h100-sxm5")
    assert spec is not None
    bare = Machine(cpu=CPU(logical_cores=64), memory=Memory(total_bytes=1024 * GIB), gpus=())
    four = simulate(bare, [spec] * 4, 1024)
    req = Request(workload="full", context=1024, batch=158)
    many = fit(qwen, four, req, catalog, offload="full", live=False, advise=False)
    one = fit(qwen, box(catalog), req, catalog, offload="full", live=False, advise=False)
    assert many.placement.gpu_bytes == (megatrain.gpu_bytes(arch, 1024, 158),) * 4
    outside = arch.embed_params + arch.head_params
    shared = 14 * (arch.params_total - outside) + 12 * outside
    assert many.placement.cpu_bytes == shared + 4 * megatrain.worker_staging_bytes(arch)
    assert megatrain.host_resident_bytes(arch, 4) - megatrain.host_resident_bytes(arch, 2) == (
        2 * megatrain.worker_staging_bytes(arch)
    )
    assert many.speed.train_tokens_per_s is not None and one.speed.train_tokens_per_s is not None
    assert many.speed.train_tokens_per_s == pytest.approx(4 * one.speed.train_tokens_per_s, rel=1e-9)
    assert "on 4 GPUs" in many.reasons[0] and "on 4 GPUs" not in one.reasons[0]


def test_megatrain_keeps_every_recomputed_state_of_the_block_at_its_first_backward(catalog: Catalog) -> None:
    """cpu_master.py@2a9f977 backward: recompute_cache holds the outputs of all K layers of the block when
    its last layer is differentiated; a sample's backward phase grows by K·h·2 bytes per token, not K-1."""
    from rigcheck.core.estimate.training_memory import backward_token_bytes, layer_token_bytes

    arch = from_catalog(catalog.model("qwen2.5-32b")).arch  # type: ignore[arg-type]
    h = arch.hidden_size
    assert megatrain.CHECKPOINT_INTERVAL == 4
    assert megatrain.logits_bytes(arch, 1024) == 1023 * arch.vocab_size * 2
    assert megatrain.checkpoint_bytes(arch, 1024) == (64 // 4 + 1) * 1024 * h * 2
    layer = layer_token_bytes(arch, False, "flash", 1024) + backward_token_bytes(arch)
    backward = 1024 * (4 * h * 2 + layer)
    loss = megatrain.logits_bytes(arch, 1024) + 1024 * h * 6
    assert backward > loss  # the 32B at 1024 tokens: one layer's backward is the larger phase
    assert megatrain.sample_bytes(arch, 1024) == megatrain.checkpoint_bytes(arch, 1024) + backward


def test_megatrains_estimate_is_the_figure_its_placement_uses(catalog: Catalog) -> None:
    """`estimate --framework megatrain` and `fit` count the same step: the GPU parts add up to the streamed
    placement's GPU total and the host parts to its RAM at the step; asked for by name, MegaTrain is
    placed streamed (it has no on-the-GPU mode)."""
    from rigcheck.core.estimate.memory import estimate_memory

    qwen = from_catalog(catalog.model("qwen3.5-27b"))  # type: ignore[arg-type]
    arch = qwen.arch
    req = Request(workload="full", context=1024, batch=64, framework="megatrain")
    est = estimate_memory(qwen, req, catalog)
    assert est.training_gpu_bytes == est.total_bytes == megatrain.gpu_bytes(arch, 1024, 64)
    assert est.gpu_peak_bytes == megatrain.gpu_peak_bytes(arch, 1024, 64)
    assert est.training_host_bytes == megatrain.host_step_bytes(arch)
    result = fit(qwen, box(catalog, ram_gib=2048), req, catalog, live=False, advise=False)
    assert result.placement.offload == "full"
    assert result.placement.gpu_bytes[0] == est.training_gpu_bytes
    assert result.placement.cpu_bytes == est.training_host_bytes
