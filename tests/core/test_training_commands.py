"""A training answer's command is the stack's own (TRL, LitGPT, torchtune, LLaMA-Factory), never another's,
and carries the settings the estimate was made with; stacks without a command line get a note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes.cli import run_cli

HGX = str(Path(__file__).parent.parent / "fixtures" / "machines" / "hgx-h100x8-2tb.json")


def fit(*args: str) -> dict[str, object]:
    code, out = run_cli("fit", "llama-3.1-8b", "--machine", HGX, "--context", "2048", *args, "--json")
    assert code == 0, out
    return json.loads(out)


@pytest.mark.parametrize(
    ("framework", "key", "start"),
    [
        ("transformers", "transformers", "trl sft "),
        ("deepspeed", "transformers", "trl sft "),
        ("litgpt", "litgpt", "litgpt finetune_lora "),
        ("torchtune", "torchtune", "tune run "),
        ("llama-factory", "llama-factory", "llamafactory-cli train "),
    ],
)
def test_each_stack_gets_its_own_command(framework: str, key: str, start: str) -> None:
    data = fit("--workload", "lora", "--framework", framework)
    commands = data["commands"]
    assert isinstance(commands, dict) and list(commands) == [key]
    assert commands[key].startswith(start)
    assert "trl sft" not in commands[key] or framework in ("transformers", "deepspeed")


def test_litgpt_carries_rank_targets_quantization_and_gpus() -> None:
    data = fit(
        "--workload", "qlora", "--framework", "litgpt", "--lora-rank", "32", "--lora-targets", "q,k,v,o"
    )
    command = data["commands"]["litgpt"]  # type: ignore[index]
    training = data["estimate"]["training"]  # type: ignore[index]
    assert "--lora_r 32" in command and "--quantize bnb.nf4" in command
    assert (
        "--lora_key true" in command and "--lora_projection true" in command and "--lora_mlp false" in command
    )
    assert f"--devices {training['gpus']}" in command
    assert "--train.max_seq_length 2048" in command
    full = fit("--workload", "full", "--framework", "litgpt")["commands"]["litgpt"]  # type: ignore[index]
    assert full.startswith("litgpt finetune_full ") and "--lora_r" not in full


def test_torchtune_picks_the_recipe_by_method_and_gpu_count() -> None:
    several = fit("--workload", "lora", "--framework", "torchtune", "--gpus", "2")["commands"]["torchtune"]  # type: ignore[index]
    assert several.startswith("tune run --nproc_per_node 2 lora_finetune_distributed --config ")
    one = fit("--workload", "full", "--framework", "torchtune", "--gpus", "1")["commands"]["torchtune"]  # type: ignore[index]
    assert one.startswith("tune run full_finetune_single_device --config ") and "_full_single_device" in one
    assert "tokenizer.max_seq_len=2048" in one and "model.lora_rank" not in one


def test_llama_factory_names_its_targets() -> None:
    command = fit("--workload", "lora", "--framework", "llama-factory", "--lora-targets", "q,v")["commands"]
    assert "--lora_target q_proj,v_proj" in command["llama-factory"]  # type: ignore[index]
    qlora = fit("--workload", "qlora", "--framework", "llama-factory")["commands"]["llama-factory"]  # type: ignore[index]
    assert "--quantization_bit 4" in qlora and "--finetuning_type lora" in qlora


@pytest.mark.parametrize(
    ("framework", "said"), [("unsloth", "FastLanguageModel.from_pretrained("), ("axolotl", "axolotl train")]
)
def test_stacks_without_a_command_line_get_a_note(framework: str, said: str) -> None:
    data = fit("--workload", "qlora", "--framework", framework)
    assert data["commands"] == {}
    note = data["command_notes"][framework]  # type: ignore[index]
    assert said in note and "2048" in note
    full = fit("--workload", "full", "--framework", "unsloth")["command_notes"]["unsloth"]  # type: ignore[index]
    assert "full_finetuning=True" in full and "get_peft_model" not in full
