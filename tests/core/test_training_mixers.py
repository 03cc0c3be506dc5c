"""Training activations by layer kind: a hybrid's Gated DeltaNet layers save what their code saves, with
the widths their config names, and its attention layers keep the attention rule; a Gated DeltaNet
model's step pays its kernels' measured time. Dense models do not move."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from rigcheck.core.catalog import Catalog, GpuSpec, load_catalog
from rigcheck.core.estimate import training_mixers as mixers
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.placement import megatrain
from rigcheck.core.estimate.speed import linear_kernels
from rigcheck.core.estimate.training_memory import Setup, training_memory
from rigcheck.core.estimate.training_profiles import OPTIMIZERS, PROFILES
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.config import parse_config
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ArchConfig, ModelInfo
from rigcheck.core.whatif import simulate

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def _config(catalog: Catalog, model_id: str) -> dict[str, Any]:
    spec = catalog.model(model_id)
    assert spec is not None
    return dict(spec.config)


def _arch(config: dict[str, Any], **changes: Any) -> ArchConfig:
    return parse_config({**config, **changes}, "test:qwen3.5")


def _setup(framework: str = "transformers", **kw: Any) -> Setup:
    prof = PROFILES[framework]
    return Setup(method="full", profile=prof, optimizer=OPTIMIZERS[prof.optimizer_full], **kw)


def test_the_linear_widths_come_from_the_config_keys(catalog: Catalog) -> None:
    config = _config(catalog, "qwen3.5-27b")
    m = _arch(config).linear_mixer
    assert m is not None
    assert (m.key_heads, m.value_heads) == (config["linear_num_key_heads"], config["linear_num_value_heads"])
    assert (m.key_head_dim, m.value_head_dim) == (
        config["linear_key_head_dim"],
        config["linear_value_head_dim"],
    )
    assert m.conv_kernel == config["linear_conv_kernel_dim"]
    assert m.conv_dim == 2 * m.key_heads * m.key_head_dim + m.value_heads * m.value_head_dim
    assert _arch(config, linear_num_value_heads=32).linear_mixer == replace(m, value_heads=32)
    dense = from_catalog(catalog.model("qwen2.5-32b")).arch  # type: ignore[arg-type]
    assert dense.linear_mixer is None


def test_a_gated_deltanet_layer_saves_its_own_tensors_not_the_attention_rule(catalog: Catalog) -> None:
    arch = _arch(_config(catalog, "qwen3.5-27b"))
    m = arch.linear_mixer
    assert m is not None
    for fused in (True, False):
        full = mixers.layer_token_bytes(arch, fused, "flash", 1024, "full")
        linear = mixers.layer_token_bytes(arch, fused, "flash", 1024, "linear")
        assert linear != full
        # the same norms, residuals and MLP around either mixer: the difference is the mixers' alone
        qd, kvd = arch.num_heads * arch.head_dim, arch.num_kv_heads * arch.head_dim
        attention = (4 if fused else 6) * (qd + kvd)
        assert linear - full == mixers.gdn_token_bytes(m) - attention
    # the tensors transformers' Qwen3_5GatedDeltaNet and FLA's ChunkGatedDeltaRuleFunction keep, by name
    saved_bf16 = {
        "in_proj_qkv output (causal_conv1d input)": 2 * m.key_dim + m.value_dim,
        "q after l2norm, at the value heads": m.value_heads * m.key_head_dim,
        "k after l2norm, at the value heads": m.value_heads * m.key_head_dim,
        "v (contiguous copy)": m.value_dim,
        "z (in_proj_z output)": m.value_dim,
        "kernel output": m.value_dim,
        "gated norm output": m.value_dim,
        "A (64 per head)": 64 * m.value_heads,
        "beta": m.value_heads,
    }
    fp32_per_head = ("q_rstd", "k_rstd", "g", "softplus input", "gated norm rstd")
    assert mixers.gdn_token_bytes(m) == 2 * sum(saved_bf16.values()) + 4 * len(fp32_per_head) * m.value_heads


def test_activations_are_summed_layer_kind_by_layer_kind(catalog: Catalog) -> None:
    config = _config(catalog, "qwen3.5-27b")
    arch = _arch(config)
    kinds = mixers.kinds_counted(arch)
    assert kinds == {"full": arch.layer_kinds.count("full"), "linear": arch.layer_kinds.count("linear")}
    assert kinds["linear"] == 3 * kinds["full"]  # full_attention_interval 4
    mem = training_memory(arch, _setup(checkpointing="none"), 1024, 2)
    (part,) = [p for p in mem.parts if p.name.startswith("activations (none")]
    per_token = sum(n * mixers.layer_token_bytes(arch, False, "flash", 1024, k) for k, n in kinds.items())
    assert part.bytes == per_token * 1024 * 2
    assert "Gated DeltaNet" in part.formula and "modeling_qwen3_5.py" in part.source
    # more value heads in the config: more saved per linear layer, the attention layers unchanged
    wider = _arch(config, linear_num_value_heads=64)
    assert mixers.layer_token_bytes(wider, False, "flash", 1024, "full") == mixers.layer_token_bytes(
        arch, False, "flash", 1024, "full"
    )
    assert mixers.layer_token_bytes(wider, False, "flash", 1024, "linear") > mixers.layer_token_bytes(
        arch, False, "flash", 1024, "linear"
    )
    # full checkpointing recomputes one layer at a time: the larger kind's
    ckpt = training_memory(arch, _setup(checkpointing="full"), 1024, 2)
    (one,) = [p for p in ckpt.parts if p.name == "one layer recomputed"]
    assert one.bytes == 1024 * 2 * max(mixers.layer_token_bytes(arch, False, "flash", 1024, k) for k in kinds)


def test_dense_models_and_unknown_linear_widths_keep_the_attention_rule(catalog: Catalog) -> None:
    dense = from_catalog(catalog.model("qwen2.5-32b")).arch  # type: ignore[arg-type]
    assert mixers.layers_token_bytes(
        dense, True, "flash", 2048
    ) == dense.num_layers * mixers.layer_token_bytes(dense, True, "flash", 2048)
    hybrid = _arch(_config(catalog, "qwen3.5-27b"))
    blind = replace(hybrid, linear_mixer=None)  # a linear layer whose widths nothing names
    assert mixers.layer_token_bytes(blind, False, "flash", 1024, "linear") == mixers.layer_token_bytes(
        blind, False, "flash", 1024, "full"
    )


def test_a_gated_deltanet_backward_peaks_in_its_larger_phase(catalog: Catalog) -> None:
    arch = _arch(_config(catalog, "qwen3.5-27b"))
    m = arch.linear_mixer
    assert m is not None
    h, ffn = arch.hidden_size, arch.intermediate_size or 0
    mlp_phase = 2 * (2 * h + 2 * ffn)
    # FLA's backward: recomputed w, u, v_new, the chunk states h and dh, dv, dq, dk, dw and the output grad
    states = 2 * m.value_heads * m.key_head_dim * m.value_head_dim // 64
    kernel = 2 * (4 * m.value_heads * (m.key_head_dim + m.value_head_dim) + states)
    assert mixers.gdn_backward_token_bytes(m) == kernel
    for fused, mlp_saved in ((True, 4 * ffn), (False, 8 * ffn)):
        mixer_phase = 2 * 2 * h + kernel - mlp_saved
        assert mixers.backward_token_bytes(arch, "linear", fused) == max(mlp_phase, mixer_phase)


def test_megatrain_takes_the_layer_kind_whose_backward_holds_most(catalog: Catalog) -> None:
    arch = _arch(_config(catalog, "qwen3.5-27b"))
    per_kind = {
        k: mixers.layer_token_bytes(arch, False, "flash", 1024, k)
        + mixers.backward_token_bytes(arch, k, False)
        for k in ("full", "linear")
    }
    assert per_kind["linear"] > per_kind["full"]
    h = arch.hidden_size
    backward = 1024 * (megatrain.CHECKPOINT_INTERVAL * h * 2 + per_kind["linear"])
    loss = megatrain.logits_bytes(arch, 1024) + 1024 * h * 6
    assert megatrain.sample_bytes(arch, 1024) == megatrain.checkpoint_bytes(arch, 1024) + max(loss, backward)


def _megatrain_tflops(catalog: Catalog, info: ModelInfo, batch: int) -> tuple[float, tuple[str, ...]]:
    spec: GpuSpec | None = catalog.gpu("nvidia-h100-sxm5")
    assert spec is not None
    bare = Machine(cpu=CPU(logical_cores=64), memory=Memory(total_bytes=2048 * GIB), gpus=())
    result = fit(info, simulate(bare, [spec], 2048), Request(workload="full", context=1024, batch=batch),
                 catalog, offload="full", live=False, advise=False)  # fmt: skip
    tps = result.speed.train_tokens_per_s
    assert tps is not None
    return tps * megatrain.REPORTED_FLOPS_PER_PARAM * info.arch.params_total / 1e12, result.speed.explanation


def test_gated_deltanet_kernels_add_their_measured_time_and_dense_models_do_not(catalog: Catalog) -> None:
    qwen = from_catalog(catalog.model("qwen3.5-27b"))  # type: ignore[arg-type]
    arch = qwen.arch
    m = arch.linear_mixer
    assert m is not None
    one = linear_kernels.per_token_seconds(arch, 989.0, forwards=1)
    assert one > 0
    # linear in the value heads and in the forwards; inverse in the GPU's peak
    assert linear_kernels.per_token_seconds(
        replace(arch, linear_mixer=replace(m, value_heads=96)), 989.0, 1
    ) == (pytest.approx(2 * one))
    assert linear_kernels.per_token_seconds(arch, 2 * 989.0, 1) == pytest.approx(one / 2)
    three = linear_kernels.per_token_seconds(arch, 989.0, forwards=3)
    assert three - one == pytest.approx(
        2 * arch.layer_kinds.count("linear") * m.value_heads * linear_kernels.FORWARD_S
    )
    dense = from_catalog(catalog.model("qwen2.5-32b"))  # type: ignore[arg-type]
    assert linear_kernels.per_token_seconds(dense.arch, 989.0, forwards=3) == 0
    # MegaTrain's 27B step: slower by exactly the kernels' time; the 32B's says nothing of them
    with_kernels, said = _megatrain_tflops(catalog, qwen, 64)
    blind = replace(qwen, arch=replace(arch, linear_mixer=None))
    without, _ = _megatrain_tflops(catalog, blind, 64)
    assert with_kernels < without
    work = megatrain.REPORTED_FLOPS_PER_PARAM * arch.params_total * 1024 * 64 / 1e12
    assert work / with_kernels - work / without == pytest.approx(three * 1024 * 64, rel=1e-6)
    assert any("Gated DeltaNet kernels" in line and "FlashQLA" in line for line in said)
    _, dense_said = _megatrain_tflops(catalog, dense, 96)
    assert not any("Gated DeltaNet" in line for line in dense_said)


def test_a_gguf_names_the_gated_deltanet_widths_in_its_ssm_keys(catalog: Catalog) -> None:
    """llama.cpp's converter writes linear_* as ssm.* (convert_hf_to_gguf.py Qwen3NextModel): the GGUF
    reading gives the same widths the config does; a Mamba-style architecture's ssm.* keys give none."""
    from rigcheck.core.models.files.gguf_model import _gdn_widths, _Meta

    config = _config(catalog, "qwen3.5-27b")
    keys = {
        "ssm.conv_kernel": config["linear_conv_kernel_dim"],
        "ssm.state_size": config["linear_key_head_dim"],
        "ssm.group_count": config["linear_num_key_heads"],
        "ssm.time_step_rank": config["linear_num_value_heads"],
        "ssm.inner_size": config["linear_value_head_dim"] * config["linear_num_value_heads"],
    }
    for arch in ("qwen35", "qwen3next"):
        meta = _Meta({f"{arch}.{k}": v for k, v in keys.items()}, arch, "test.gguf")
        assert _gdn_widths(meta) == _arch(config).linear_mixer
    assert _gdn_widths(_Meta({f"nemotron_h.{k}": v for k, v in keys.items()}, "nemotron_h", "t.gguf")) is None
    partial = {f"qwen35.{k}": v for k, v in keys.items() if k != "ssm.time_step_rank"}
    assert _gdn_widths(_Meta(partial, "qwen35", "test.gguf")) is None
