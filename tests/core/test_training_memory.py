"""Training memory by framework: each term follows its mechanism (optimizer, precision, checkpointing,
loss, LoRA shape, sharding), the allocator peak and the process total are told apart, and the CLI speaks
for a training stack. Accuracy against published runs lives in ``benchmarks/training_accuracy.py``."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from fakes.archs import LLAMA_31_8B, LLAMA_31_70B, model
from rigcheck.cli import main
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.memory import Request, estimate_memory, training_max_context
from rigcheck.core.estimate.training_memory import (
    CUDA_CONTEXT,
    Setup,
    lora_param_count,
    max_context,
    training_memory,
    with_paged,
)
from rigcheck.core.estimate.training_profiles import OPTIMIZERS, PROFILES, parse_targets, stack_name

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def setup(framework: str = "transformers", method: str = "lora", **kw: object) -> Setup:
    prof = PROFILES[framework]
    name = kw.pop("optimizer", prof.optimizer_full if method == "full" else prof.optimizer_lora)
    return Setup(method=method, profile=prof, optimizer=OPTIMIZERS[str(name)], **kw)  # type: ignore[arg-type]


def part(mem: object, name: str) -> int:
    return sum(p.bytes for p in mem.parts if p.name == name)  # type: ignore[attr-defined]


def test_lora_parameters_follow_rank_and_targets() -> None:
    a = LLAMA_31_8B
    # q (4096→4096) and v (4096→1024), rank 8, 32 layers: the count torchtune's recipe trains
    assert lora_param_count(a, 8, ("q", "v")) == 8 * (8192 + 5120) * 32
    assert lora_param_count(a, 16, ("q", "v")) == 2 * lora_param_count(a, 8, ("q", "v"))
    every = lora_param_count(a, 8, parse_targets("all"))
    assert every > lora_param_count(a, 8, parse_targets("attention")) > lora_param_count(a, 8, ("q",))
    with pytest.raises(ValueError, match="unknown LoRA target 'x'"):
        lora_param_count(a, 8, ("q", "x"))


def test_target_names_as_frameworks_write_them() -> None:
    assert parse_targets("q_proj,v_proj") == ("q", "v")
    assert parse_targets("q,k,v,output_proj") == ("q", "k", "v", "o")
    assert parse_targets("all-linear") == parse_targets("all") == ("all-linear",)
    assert parse_targets("mlp") == ("gate", "up", "down")
    # a hybrid's own module names are kept as PEFT would match them (out_proj is not o_proj)
    assert parse_targets("in_proj_qkvz,out_proj,q_proj") == ("in_proj_qkvz", "out_proj", "q")
    # on a llama-style decoder all-linear is exactly the seven projections
    assert lora_param_count(LLAMA_31_8B, 16, ("all-linear",)) == lora_param_count(
        LLAMA_31_8B, 16, ("q", "k", "v", "o", "gate", "up", "down")
    )


def test_optimizer_states_by_optimizer_and_master_precision() -> None:
    a = LLAMA_31_8B
    p = a.params_total

    def states(framework: str, optimizer: str, precision: str = "bf16") -> int:
        s = setup(framework, "full", optimizer=optimizer, precision=precision)
        parts = training_memory(a, s, 512, 1).parts
        return sum(x.bytes for x in parts if x.category == "optimizer" and "step" not in x.name)

    assert states("deepspeed", "adamw") == 12 * p  # fp32 master + m + v (ZeRO §3)
    assert states("transformers", "adamw") == 4 * p  # pure bf16: m and v in the parameters' dtype
    assert states("transformers", "adamw", "fp32") == 8 * p
    assert states("transformers", "adamw-8bit") == 2 * p
    assert states("transformers", "sgd") == 0 and states("transformers", "adafactor") == 0


def test_optimizer_in_backward_keeps_one_gradient_and_paged_states_spill() -> None:
    a = LLAMA_31_8B
    tt = training_memory(a, setup("torchtune", "full"), 2048, 2)
    grads = sum(x.bytes for x in tt.parts if x.category == "gradients")
    assert grads == 2 * max(a.embed_params, a.head_params)  # only the largest tensor's gradient at once
    assert tt.on("paged") == 2 * a.params_total  # PagedAdamW8bit: 2 B per parameter, paged
    small, big = with_paged(tt, 24 * GIB), with_paged(tt, 48 * GIB)
    assert small.on("host") == tt.on("paged") and small.gpu_bytes == tt.gpu_bytes
    assert big.gpu_bytes == tt.gpu_bytes + tt.on("paged")


def test_checkpointing_modes_order_and_offloaded_inputs_go_to_host() -> None:
    a = LLAMA_31_8B

    def acts(mode: str) -> tuple[int, int]:
        mem = training_memory(a, setup("transformers", checkpointing=mode), 4096, 1)
        return sum(
            x.bytes for x in mem.parts if x.category == "activations" and x.where == "gpu"
        ), mem.host_bytes

    (none, _), (full, _), (off, host) = acts("none"), acts("full"), acts("offloaded")
    assert off < full < none
    assert host == 2 * a.hidden_size * 4096 * a.num_layers  # every layer's input, 16-bit


def test_eager_attention_stores_the_score_matrix() -> None:
    a = LLAMA_31_8B
    flash = training_memory(a, setup(checkpointing="none"), 4096, 1)
    eager = training_memory(a, setup(checkpointing="none", attention="eager"), 4096, 1)
    extra = eager.gpu_bytes - flash.gpu_bytes
    assert extra == 5 * a.num_heads * 4096 * 4096 * a.num_layers  # 5·a·s² per layer (Korthikanti §3)


def test_loss_kinds_order_per_token() -> None:
    a = LLAMA_31_8B
    loss = {
        f: part(training_memory(a, setup(f), 8192, 1), "logits and loss")
        for f in ("transformers", "torchtune", "unsloth")
    }
    assert loss["unsloth"] < loss["torchtune"] < loss["transformers"]
    assert loss["transformers"] == 16 * a.vocab_size * 8192  # bf16 logits, fp32 log-softmax, both gradients


def test_qlora_base_and_fp32_casts() -> None:
    a = LLAMA_31_8B
    outside = a.embed_params + a.head_params
    hf = part(training_memory(a, setup("transformers", "qlora"), 1024, 1), "base weights")
    us = part(training_memory(a, setup("unsloth", "qlora"), 1024, 1), "base weights")
    body = a.params_total - outside
    assert (
        hf == int(body * 4.5 / 8) + 4 * outside
    )  # bnb NF4 without double quant; embedding/head cast to fp32
    assert us == int(body * 4.127 / 8) + 2 * outside


def test_sharding_divides_model_states_and_adds_gathered_layers() -> None:
    a = LLAMA_31_70B
    one = training_memory(a, setup("torchtune", "lora"), 2048, 2)
    eight = training_memory(a, setup("torchtune", "lora", gpus=8), 2048, 2)
    assert part(eight, "base weights") == part(one, "base weights") // 8
    assert (
        part(eight, "gathered layers (running + prefetched)")
        > 0
        == part(one, "gathered layers (running + prefetched)")
    )
    assert eight.gpu_bytes < one.gpu_bytes


def test_allocator_peak_and_process_total_are_told_apart(catalog: Catalog) -> None:
    req = Request(workload="qlora", context=4096, framework="unsloth")
    est = estimate_memory(model(LLAMA_31_8B), req, catalog)
    assert est.training_gpu_bytes - est.gpu_peak_bytes == CUDA_CONTEXT
    assert est.training_gpu_bytes == est.total_bytes
    assert est.training_host_bytes > 0 and est.checkpointing == "offloaded"


def test_max_context_is_monotonic_and_frameworks_differ(catalog: Catalog) -> None:
    m = model(LLAMA_31_8B)
    req = Request(workload="qlora", lora_rank=32, framework="transformers")
    small, large = (training_max_context(m, req, catalog, g * GIB) for g in (24, 48))
    assert 0 < small < large
    us = training_max_context(m, replace(req, framework="unsloth"), catalog, 24 * GIB)
    assert us > 5 * small  # fused loss + offloaded checkpoints
    assert max_context(LLAMA_31_8B, setup("transformers", "qlora"), 1, 2 * GIB) == 0


@pytest.mark.parametrize("workload", ["full", "lora", "qlora"])
def test_without_a_framework_a_training_run_is_sized_as_trl_peft(catalog: Catalog, workload: str) -> None:
    """No --framework: the workload's usual stack (TRL + PEFT on transformers) with all its defaults, named
    in the estimate and its notes -- the same figures as asking for it."""
    req = Request(workload=workload, context=1024)  # type: ignore[arg-type]
    default = estimate_memory(model(LLAMA_31_8B), req, catalog)
    named = estimate_memory(model(LLAMA_31_8B), replace(req, framework="transformers"), catalog)
    assert (
        default.framework == "transformers" and stack_name(default.framework) == "TRL + PEFT (transformers)"
    )
    assert default.terms == named.terms and default.gpu_peak_bytes == named.gpu_peak_bytes > 0
    assert any("TRL + PEFT" in n for n in default.notes) and not any("TRL + PEFT" in n for n in named.notes)


@pytest.mark.parametrize(
    ("req", "flag"),
    [
        (Request(workload="lora", framework="keras"), "--framework"),
        (Request(workload="lora", framework="unsloth", optimizer="adam9"), "--optimizer"),
        (Request(workload="lora", framework="unsloth", lora_targets=("q", "zz")), "--lora-targets"),
    ],
)
def test_bad_training_settings_name_the_flag(catalog: Catalog, req: Request, flag: str) -> None:
    with pytest.raises(InputError) as info:
        estimate_memory(model(LLAMA_31_8B), req, catalog)
    assert str(info.value).startswith(flag)


def test_every_profile_cites_its_defaults_and_names_a_stack() -> None:
    for name, prof in PROFILES.items():
        assert prof.source and prof.stack and prof.framework == name
        assert prof.optimizer_full in OPTIMIZERS and prof.optimizer_lora in OPTIMIZERS
    assert stack_name(None) == "TRL + PEFT (transformers)" and stack_name("unsloth") == "Unsloth"


def test_cli_training_flags_reach_the_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["estimate", "llama-3.1-8b", "--workload", "lora", "--framework", "torchtune", "--lora-rank", "16",
         "--lora-targets", "q,k,v", "--checkpointing", "none", "--context", "2048", "--json"]
    )  # fmt: skip
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    training = data["training"]
    assert training["stack"] == "torchtune" and training["checkpointing"] == "none"
    assert training["trainable_params"] == 16 * (8192 + 5120 + 5120) * 32
    assert training["gpu_bytes"] - training["gpu_peak_bytes"] == CUDA_CONTEXT
    assert "max_memory_allocated" in training["gpu_peak_reading"]


def test_cli_bad_targets_are_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "llama-3.1-8b", "--workload", "qlora", "--lora-targets", "q,nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--lora-targets" in err and "nope" in err


def test_cli_training_answer_names_a_training_stack(capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "fit",
        "llama-3.1-8b",
        "--workload",
        "qlora",
        "--gpu",
        "nvidia-geforce-rtx-4090",
        "--ram-gb",
        "64",
    ]
    assert main([*args, "--framework", "unsloth"]) == 0
    out = capsys.readouterr().out
    assert "with Unsloth" in out and "with llama.cpp" not in out
    # without --framework: TRL + PEFT, whose unchunked fp32 loss does not train 8,192 tokens in 24 GB (Unsloth's
    # table measured 5,789 for HF + FA2 at rank 32), so the default context is too long for the 4090
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["training_stack"] == "TRL + PEFT (transformers)" and data["verdict"] == "does_not_fit"
    assert main([*args, "--json", "--context", "2048"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["training_stack"] == "TRL + PEFT (transformers)" and data["verdict"] != "does_not_fit"
    assert data["placement"]["gpu_peak_bytes"][0] < data["placement"]["gpu_bytes"][0]


def test_cli_context_max_solves_per_framework(capsys: pytest.CaptureFixture[str]) -> None:
    """Unsloth's README tables: Llama 3.1 8B QLoRA rank 32 on 24 GB trains 78,475 tokens with Unsloth and
    5,789 with HF + FA2; the solver follows each framework's own memory and keeps the ratio's order."""
    base = ["fit", "llama-3.1-8b", "--workload", "qlora", "--lora-rank", "32", "--context", "max", "--json",
            "--gpu", "nvidia-geforce-rtx-4090", "--ram-gb", "64"]  # fmt: skip
    contexts = {}
    for framework in ("transformers", "unsloth"):
        assert main([*base, "--framework", framework]) == 0
        contexts[framework] = json.loads(capsys.readouterr().out)["estimate"]["context"]
    assert 2048 < contexts["transformers"] < 16384
    assert 32768 < contexts["unsloth"] <= 131072
    assert main(["estimate", "llama-3.1-8b", "--workload", "qlora", "--context", "max"]) == 2
    assert "--context max" in capsys.readouterr().err


def test_the_training_command_carries_rank_alpha_and_targets(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["fit", "llama-3.1-8b", "--workload", "lora", "--lora-rank", "8", "--lora-alpha", "16",
            "--lora-targets", "q,v", "--context", "2048", "--gpu", "nvidia-geforce-rtx-4090", "--ram-gb", "64"]  # fmt: skip
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    training = data["estimate"]["training"]
    assert (training["lora_rank"], training["lora_alpha"], training["lora_targets"]) == (8, 16, ["q", "v"])
    command = data["commands"]["transformers"]
    assert "--lora_r 8" in command and "--lora_alpha 16" in command and "q_proj v_proj" in command


def test_litgpt_on_several_gpus_keeps_the_full_checkpoint_it_loads(catalog: Catalog) -> None:
    """LitGPT's FSDP run loads the whole checkpoint on each rank (load_raw, full state dict): its table
    shows Llama 2 7B LoRA at 22.18 GB on each of 2 A100s, about 13.5 GB of bf16 weights above the sharded
    step. One GPU, or a stack that shards before loading, has no such copy."""
    name = "full checkpoint loaded on each GPU"
    base = Request(workload="lora", context=1304, framework="litgpt", gpus=2)
    several = estimate_memory(model(LLAMA_31_8B), base, catalog)
    (copy,) = [t for t in several.terms if t.name == name]
    assert copy.bytes == 2 * LLAMA_31_8B.params_total
    for req in (replace(base, gpus=1), replace(base, framework="transformers")):
        assert not [t for t in estimate_memory(model(LLAMA_31_8B), req, catalog).terms if t.name == name]


def test_llama_2_13b_is_in_the_catalog_from_its_published_config(catalog: Catalog) -> None:
    spec = catalog.model("llama-2-13b")
    assert spec is not None and "scaleapi/llm-engine" in spec.sources[0]
    from rigcheck.core.models.resolve import from_catalog

    arch = from_catalog(spec).arch
    # 40 layers of 4·5120² attention + 3·5120·13824 MLP + 2 norms, 32000 × 5120 embedding and head
    assert arch.params_total == 40 * (4 * 5120**2 + 3 * 5120 * 13824 + 2 * 5120) + 2 * 32000 * 5120 + 5120
    assert round(arch.params_total / 1e9, 1) == spec.params_b
