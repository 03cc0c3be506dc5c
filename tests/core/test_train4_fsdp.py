"""Full fine-tuning sharded with FSDP as LitGPT runs it: model states divided over the GPUs, gradients kept
whole while micro-batches accumulate under ``no_sync()``, no whole checkpoint on each rank (the full script
builds the model on the meta device), checkpointing on by default when sharded; and the CLI takes the
GPU count and the accumulation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.archs import LLAMA_31_8B
from rigcheck.cli import main
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.memory import Request, training_setup
from rigcheck.core.estimate.training_memory import Setup, training_memory
from rigcheck.core.estimate.training_profiles import OPTIMIZERS, PROFILES


def litgpt(method: str = "full", **kw: object) -> Setup:
    return Setup(method=method, profile=PROFILES["litgpt"], optimizer=OPTIMIZERS["adamw"], **kw)  # type: ignore[arg-type]


def grads(mem: object) -> int:
    return sum(p.bytes for p in mem.parts if p.category == "gradients")  # type: ignore[attr-defined]


def named(mem: object, word: str) -> int:
    return sum(p.bytes for p in mem.parts if word in p.name)  # type: ignore[attr-defined]


def test_sharded_states_divide_by_the_gpu_count() -> None:
    a = LLAMA_31_8B
    one = training_memory(a, litgpt(checkpointing="full"), 512, 1)
    four = training_memory(a, litgpt(checkpointing="full", gpus=4), 512, 1)
    for category in ("gradients", "optimizer"):
        whole = sum(p.bytes for p in one.parts if p.category == category and "sqrt" not in p.name)
        quarter = sum(p.bytes for p in four.parts if p.category == category and "sqrt" not in p.name)
        assert quarter == pytest.approx(whole / 4, rel=1e-6)
    # bf16-true: weights, gradients and both AdamW states in bf16, no fp32 master copy
    assert named(one, "master") == 0
    assert grads(one) == 2 * a.params_total


def test_accumulating_under_no_sync_keeps_whole_gradients() -> None:
    a = LLAMA_31_8B
    step_each = training_memory(a, litgpt(gpus=4, grad_accumulation=1), 512, 4)
    accumulate = training_memory(a, litgpt(gpus=4, grad_accumulation=4), 512, 4)
    assert grads(step_each) == 2 * a.params_total // 4
    assert grads(accumulate) == 2 * a.params_total
    assert accumulate.gpu_peak_bytes - step_each.gpu_peak_bytes == grads(accumulate) - grads(step_each)
    # on one GPU nothing is sharded, so accumulation changes nothing
    alone = [training_memory(a, litgpt(grad_accumulation=n), 512, 4).gpu_peak_bytes for n in (1, 16)]
    assert alone[0] == alone[1]
    # a stack that reduce-scatters every micro-batch keeps its shards
    torchtune = Setup(method="full", profile=PROFILES["torchtune"], optimizer=OPTIMIZERS["adamw"], gpus=4,
                      grad_accumulation=4)  # fmt: skip
    assert grads(training_memory(a, torchtune, 512, 4)) < 2 * a.params_total // 3


def test_whole_checkpoint_on_each_rank_only_for_the_lora_script() -> None:
    a = LLAMA_31_8B
    assert named(training_memory(a, litgpt("full", gpus=2), 512, 1), "full checkpoint") == 0
    lora = training_memory(a, litgpt("lora", gpus=2, checkpointing="full"), 512, 1)
    assert named(lora, "full checkpoint") == 2 * a.params_total


def test_sharded_litgpt_checkpoints_every_block_by_default() -> None:
    assert litgpt(gpus=1).mode == "none"
    assert litgpt(gpus=2).mode == "full"
    assert litgpt(gpus=2, checkpointing="none").mode == "none"


def test_request_carries_accumulation_and_rejects_zero() -> None:
    req = Request(workload="full", framework="litgpt", context=512, gpus=2, grad_accumulation=4)
    assert training_setup(req).grad_accumulation == 4
    with pytest.raises(InputError, match="--grad-accum"):
        training_setup(Request(workload="full", framework="litgpt", grad_accumulation=0))


def test_cli_takes_gpus_and_grad_accum(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["estimate", "llama-3.1-8b", "--workload", "full", "--framework", "litgpt", "--context", "512",
            "--batch", "4", "--json"]  # fmt: skip
    peaks = []
    for extra in ([], ["--gpus", "4"], ["--gpus", "4", "--grad-accum", "4"]):
        assert main([*base, *extra]) == 0
        peaks.append(json.loads(capsys.readouterr().out)["training"]["gpu_peak_bytes"])
    single, sharded, accumulating = peaks
    assert sharded < single / 2
    assert accumulating - sharded == pytest.approx(2 * LLAMA_31_8B.params_total * 3 / 4, rel=0.02)
    assert main([*base, "--grad-accum", "0"]) == 2


def test_litgpt_trains_a_separate_head_for_a_tied_model() -> None:
    from dataclasses import replace

    tied = replace(LLAMA_31_8B, tie_word_embeddings=True, head_params=0)
    hf = Setup(method="full", profile=PROFILES["transformers"], optimizer=OPTIMIZERS["adamw"])
    lit = training_memory(tied, litgpt(), 512, 1)
    assert grads(lit) == 2 * (tied.params_total + tied.embed_params)
    assert grads(training_memory(tied, hf, 512, 1)) == 2 * tied.params_total


def test_fsdp_root_unit_keeps_embedding_and_head_whole() -> None:
    a = LLAMA_31_8B
    outer = a.embed_params + a.head_params
    assert named(training_memory(a, litgpt(), 512, 1), "root unit") == 0
    four = training_memory(a, litgpt(gpus=4), 512, 1)
    assert named(four, "root unit") == 2 * outer - 2 * outer // 4


def test_fit_shards_over_the_machines_gpus_when_the_framework_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without --gpus, fit takes the machine's GPUs for a framework that shards on several GPUs by its own
    default (LitGPT: FSDPStrategy when devices > 1): every A10G holds the same sharded step, smaller than
    one GPU's share with --gpus 1. A data-parallel stack (transformers' Trainer: DDP) keeps the
    single-GPU figure on one GPU."""
    four = [a for _ in range(4) for a in ("--gpu", "nvidia-a10g")]
    base = ["fit", "llama-3.2-1b", *four, "--ram-gb", "128", "--workload", "full", "--context", "512",
            "--batch", "1", "--json"]  # fmt: skip

    def placed(*extra: str) -> list[int]:
        assert main([*base, *extra]) == 0
        return json.loads(capsys.readouterr().out)["placement"]["gpu_bytes"]

    sharded = placed("--framework", "litgpt")
    assert len(sharded) == 4 and len(set(sharded)) == 1 and sharded[0] > 0
    one = placed("--framework", "litgpt", "--gpus", "1")
    assert sum(1 for b in one if b) == 1 and max(one) > sharded[0]
    replica = placed("--framework", "transformers")
    assert sum(1 for b in replica if b) == 1
    assert placed("--framework", "litgpt", "--gpus", "2").count(0) == 2


def test_a_run_sharded_over_more_gpus_than_the_machine_has_does_not_fit_on_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--gpus 4 on a one-GPU machine: the sharded step is a quarter's, but there is one GPU to hold it, so
    it is not placed on that one as if the other three existed, and the answer says why."""
    args = ["fit", "llama-3.2-1b", "--gpu", "nvidia-a10g", "--ram-gb", "64", "--workload", "full",
            "--framework", "litgpt", "--gpus", "4", "--context", "512", "--offload", "none", "--json"]  # fmt: skip
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"] == "does_not_fit"
    assert "sharded over 4 GPUs" in data["reasons"][0] and "1 of this machine's GPUs" in data["reasons"][0]


def test_torchtune_sharded_full_runs_its_distributed_recipe() -> None:
    """torchtune@0031bfb: the single-device full recipe steps PagedAdamW8bit inside the backward
    (8B_full_single_device.yaml optimizer_in_bwd: True); the distributed one (8B_full.yaml) runs torch AdamW
    after a whole backward, so sharded gradients and bf16 AdamW states are counted, not one tensor's."""
    one = training_setup(Request(workload="full", framework="torchtune", context=2048))
    four = training_setup(Request(workload="full", framework="torchtune", context=2048, gpus=4))
    assert one.optimizer.name == "paged-adamw-8bit" and four.optimizer.name == "adamw"
    a = LLAMA_31_8B
    assert grads(training_memory(a, one, 2048, 1)) < a.params_total // 4
    assert grads(training_memory(a, four, 2048, 1)) == 2 * a.params_total // 4
    asked = training_setup(Request(workload="full", framework="torchtune", gpus=4, optimizer="sgd"))
    assert asked.optimizer.name == "sgd"


def test_one_gpu_too_small_for_a_training_run_is_said_in_the_singular() -> None:
    from fakes.cli import run_cli

    machine = str(Path(__file__).parent.parent / "fixtures" / "machines" / "hgx-h100x8-2tb.json")
    code, out = run_cli("fit", "qwen3.5-27b", "--machine", machine, "--workload", "lora", "--json")
    data = json.loads(out)
    reason = data["reasons"][0]
    assert code == 0 and data["verdict"] == "does_not_fit"
    assert reason.startswith("on one GPU it needs ") and "1 GPUs" not in reason
    assert "--gpus N" in reason
