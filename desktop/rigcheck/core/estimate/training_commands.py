"""The command that starts a training run: TRL's ``trl sft`` (transformers + PEFT) as the estimate sized it.

Flag references: TRL ``trl sft`` (its CLI over SFTTrainer, PEFT's LoRA and bitsandbytes 4-bit loading);
DeepSpeed ZeRO-2 optimizer offload through ``accelerate launch --use_deepspeed``.
"""

from __future__ import annotations

import shlex

from rigcheck.core.catalog import Catalog
from rigcheck.core.estimate.fit import FitResult


def _q(text: str) -> str:
    return shlex.quote(text)


def training_command(result: FitResult, catalog: Catalog, lora_rank: int = 16) -> str | None:
    """TRL's ``trl sft`` (transformers + PEFT); None for MegaTrain-style offload, which it does not do."""
    est, p = result.estimate, result.placement
    if p.offload == "full":
        return None
    spec = catalog.model(est.model.id)
    repo = spec.hf_id if spec else est.model.source
    parts = ["trl sft", f"--model_name_or_path {_q(repo)}", "--dataset_name YOUR_DATASET"]
    if est.workload in ("lora", "qlora"):
        targets = est.lora_targets or ("q", "k", "v", "o", "gate", "up", "down")
        modules = "all-linear" if len(targets) == 7 else " ".join(f"{t}_proj" for t in targets)
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
