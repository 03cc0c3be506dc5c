"""The command that starts a training run in the stack the estimate sized it for, with its settings.

Each stack's own command line, keyed by the stack's name:

- transformers and DeepSpeed: TRL's ``trl sft`` (its CLI over SFTTrainer, PEFT's LoRA and bitsandbytes
  4-bit loading); ZeRO-2 optimizer offload through ``accelerate launch --use_deepspeed``.
- LitGPT: ``litgpt finetune_lora`` / ``finetune_full`` (Lightning-AI/litgpt litgpt/finetune/lora.py@2685705:
  ``--quantize bnb.nf4``, ``--lora_r``, ``--lora_alpha``, ``--lora_query/key/value/projection/mlp``,
  ``--devices``, ``--train.micro_batch_size``, ``--train.max_seq_length``; tutorials/finetune_lora.md:
  ``--data JSON --data.json_path``).
- torchtune: ``tune run <recipe> --config <model config>`` with key=value overrides (torchtune's README and
  docs: ``tune run lora_finetune_single_device --config llama3/8B_lora_single_device``); the model's config
  name is left for the user (``tune ls`` lists them).
- LLaMA-Factory: ``llamafactory-cli train`` with its arguments (``--stage sft --finetuning_type lora
  --lora_target all --quantization_bit 4 --cutoff_len``).
- Unsloth runs from Python and Axolotl from a YAML file: a note says which settings to carry over.
"""

from __future__ import annotations

import shlex

from rigcheck.core.catalog import Catalog
from rigcheck.core.estimate.fit import FitResult
from rigcheck.core.estimate.lora_targets import ALL_LINEAR, MIXER_NAMES, SHORT
from rigcheck.core.said import Text, say


def _q(text: str) -> str:
    return shlex.quote(text)


#: LitGPT's switches for the adapters' targets (its defaults: query and value only)
_LITGPT_TARGETS = {"q": "--lora_query", "k": "--lora_key", "v": "--lora_value", "o": "--lora_projection"}
_LITGPT_MLP = ("gate", "up", "down")


def _repo(result: FitResult, catalog: Catalog) -> str:
    est = result.estimate
    spec = catalog.model(est.model.id)
    return spec.hf_id if spec else est.model.source


def _targets(result: FitResult) -> tuple[str, ...]:
    """The targets the estimate used, PEFT's ``all-linear`` spelled out as the seven projections."""
    targets = result.estimate.lora_targets or (ALL_LINEAR,)
    return SHORT if ALL_LINEAR in targets else targets


def _module_name(target: str) -> str:
    """A target as PEFT matches it: a short name (``q``) is its ``q_proj``; a mixer's own module name
    (``in_proj_qkv``) and ``all-linear`` stay as they are."""
    return target if target == ALL_LINEAR or target in MIXER_NAMES or "." in target else f"{target}_proj"


def training_commands(result: FitResult, catalog: Catalog) -> tuple[dict[str, Text], dict[str, Text]]:
    """(commands, notes) keyed by the training stack the estimate was made for (``transformers`` when it
    names none); a stack without a command line gets a note instead."""
    framework = result.estimate.framework or "transformers"
    if result.placement.offload == "full":
        streams = say("MegaTrain-style offload streams layers from RAM: not a transformers option")
        return {}, {framework: streams}
    if framework == "litgpt":
        return {"litgpt": litgpt_command(result, catalog)}, {}
    if framework == "torchtune":
        return {"torchtune": torchtune_command(result)}, {}
    if framework == "llama-factory":
        return {"llama-factory": llama_factory_command(result, catalog)}, {}
    if framework == "unsloth":
        est = result.estimate
        load = (
            f"FastLanguageModel.from_pretrained({_repo(result, catalog)!r}, max_seq_length={est.context}, "
            f"load_in_4bit={est.workload == 'qlora'})"
        )
        if est.workload == "full":
            full = load.removesuffix(")") + ", full_finetuning=True)"
            note = say("Unsloth runs from Python: {load} and TRL's SFTTrainer with {batch}", load=full,
                       batch=f"per_device_train_batch_size={est.batch}")  # fmt: skip
            return {}, {"unsloth": note}
        peft = f"FastLanguageModel.get_peft_model(model, r={est.lora_rank or 16})"
        note = say(
            "Unsloth runs from Python: {load}, then {peft} and TRL's SFTTrainer with {batch}",
            load=load,
            peft=peft,
            batch=f"per_device_train_batch_size={est.batch}",
        )
        return {}, {"unsloth": note}
    if framework == "axolotl":
        est = result.estimate
        adapter = {"lora": "lora", "qlora": "qlora"}.get(est.workload)
        parts = [f"base_model: {_repo(result, catalog)}", f"sequence_len: {est.context}"]
        parts.append(f"micro_batch_size: {est.batch}")
        if adapter:
            parts += [f"adapter: {adapter}", f"lora_r: {est.lora_rank or 16}"]
        settings = ", ".join(parts)
        note = say("Axolotl reads a YAML file: axolotl train config.yml, with {settings}", settings=settings)
        return {}, {"axolotl": note}
    command = training_command(result, catalog)
    return ({"transformers": command}, {}) if command else ({}, {})


def litgpt_command(result: FitResult, catalog: Catalog) -> str:
    est = result.estimate
    method = "finetune_full" if est.workload == "full" else "finetune_lora"
    parts = [f"litgpt {method}", _q(_repo(result, catalog)), "--data JSON --data.json_path YOUR_DATASET.json"]
    if est.workload in ("lora", "qlora"):
        targets = _targets(result)
        parts.append(f"--lora_r {est.lora_rank or 8}")
        if est.lora_alpha:
            parts.append(f"--lora_alpha {est.lora_alpha}")
        for target, switch in _LITGPT_TARGETS.items():
            parts.append(f"{switch} {'true' if target in targets else 'false'}")
        parts.append(f"--lora_mlp {'true' if any(t in targets for t in _LITGPT_MLP) else 'false'}")
    if est.workload == "qlora":
        parts.append("--quantize bnb.nf4")
    parts += ["--precision bf16-true", f"--devices {est.training_gpus}"]
    parts += [f"--train.micro_batch_size {est.batch}", f"--train.max_seq_length {est.context}"]
    return " ".join(parts)


def torchtune_command(result: FitResult) -> str:
    est = result.estimate
    kind = "full" if est.workload == "full" else "lora"
    several = est.training_gpus > 1
    recipe = f"{kind}_finetune_{'distributed' if several else 'single_device'}"
    config = {"full": "full", "lora": "lora", "qlora": "qlora"}[est.workload]
    suffix = config if several else f"{config}_single_device"
    launch = f"tune run --nproc_per_node {est.training_gpus} {recipe}" if several else f"tune run {recipe}"
    parts = [launch, f"--config YOUR_MODEL/SIZE_{suffix}", f"batch_size={est.batch}"]
    parts.append(f"tokenizer.max_seq_len={est.context}")
    if est.workload in ("lora", "qlora"):
        parts.append(f"model.lora_rank={est.lora_rank or 8}")
        if est.lora_alpha:
            parts.append(f"model.lora_alpha={est.lora_alpha}")
    return " ".join(parts)


def llama_factory_command(result: FitResult, catalog: Catalog) -> str:
    est = result.estimate
    parts = ["llamafactory-cli train --stage sft --do_train"]
    parts.append(f"--model_name_or_path {_q(_repo(result, catalog))}")
    parts.append("--dataset YOUR_DATASET --template default")
    if est.workload in ("lora", "qlora"):
        targets = _targets(result)
        names = "all" if set(targets) >= set(SHORT) else ",".join(_module_name(t) for t in targets)
        parts += ["--finetuning_type lora", f"--lora_rank {est.lora_rank or 8}", f"--lora_target {names}"]
        if est.lora_alpha:
            parts.append(f"--lora_alpha {est.lora_alpha}")
    else:
        parts.append("--finetuning_type full")
    if est.workload == "qlora":
        parts.append("--quantization_bit 4")
    parts += [f"--cutoff_len {est.context}", f"--per_device_train_batch_size {est.batch}"]
    parts += ["--bf16", "--output_dir out"]
    return " ".join(parts)


def training_command(result: FitResult, catalog: Catalog, lora_rank: int = 16) -> str | None:
    """TRL's ``trl sft`` (transformers + PEFT); None for MegaTrain-style offload, which it does not do."""
    est, p = result.estimate, result.placement
    if p.offload == "full":
        return None
    spec = catalog.model(est.model.id)
    repo = spec.hf_id if spec else est.model.source
    parts = ["trl sft", f"--model_name_or_path {_q(repo)}", "--dataset_name YOUR_DATASET"]
    if est.workload in ("lora", "qlora"):
        targets = est.lora_targets or (ALL_LINEAR,)
        modules = " ".join(_module_name(t) for t in targets)
        parts += ["--use_peft", f"--lora_r {est.lora_rank or lora_rank}", f"--lora_target_modules {modules}"]
        if est.lora_alpha:
            parts.append(f"--lora_alpha {est.lora_alpha}")
    if est.workload == "qlora":
        parts.append("--load_in_4bit")
    parts += [
        f"--max_length {est.context}",
        f"--per_device_train_batch_size {est.batch}",
        "--gradient_checkpointing" if est.checkpointing != "none" else "",
        "--bf16",
        "--output_dir out",
    ]
    command = " ".join(x for x in parts if x)
    if p.offload == "optimizer":
        command = (
            "accelerate launch --use_deepspeed --zero_stage 2 --offload_optimizer_device cpu "
            "$(python -c 'import trl.scripts.sft as s; print(s.__file__)') "
            + command.removeprefix("trl sft ")
        )
    return command
