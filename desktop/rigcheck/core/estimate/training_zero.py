"""DeepSpeed ZeRO's optimizer step on the GPU: each sub-group's gradient, flattened and cast to fp32.

ZeRO-3 steps its fp32 master partition one sub-group at a time. Before each sub-group's step it builds
that sub-group's fp32 gradient from the 16-bit gradient partition the backward reduced into:
``single_grad_partition = self.flatten(self.averaged_gradients[sub_group_id]).to(fp32)`` (a flat 16-bit
copy, then its fp32 cast, both alive while the cast runs), assigned as the fp32 master's ``.grad`` and
released after that sub-group's step. A sub-group closes once it holds ``sub_group_size`` parameters
(``_create_fp16_sub_groups``; DeepSpeedZeroConfig's default, and the 1e9 the usual ds_config_zero3.json
files set). The activations are freed by then, so the temporary adds only what it exceeds them by.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rigcheck.core.i18n import tr

if TYPE_CHECKING:
    from rigcheck.core.estimate.training_memory import Setup


#: DeepSpeed ZeRO config ``sub_group_size``: its default, 1e9 parameters
SUB_GROUP_SIZE = 1_000_000_000
ZERO_STEP_SOURCE = (
    "microsoft/DeepSpeed deepspeed/runtime/zero/stage3.py _prepare_fp32_grad_for_sub_group: "
    "self.flatten(self.averaged_gradients[sub_group_id]).to(fp32_partitioned_groups_flat[...].dtype); "
    "zero/config.py sub_group_size default 1e9 (QwenLM/Qwen finetune/ds_config_zero3.json@2df8e8a: 1e9)"
)


def zero_step_elements(partition_params: int) -> int:
    """Parameters in the largest sub-group of a GPU's partition of ``partition_params``."""
    return min(SUB_GROUP_SIZE, max(partition_params, 0))


def zero_step_bytes(partition_params: int, grad_bytes: int) -> int:
    """Bytes alive while one sub-group's gradient is flattened (``grad_bytes`` each) and cast to fp32;
    an fp32 run's cast is the flat copy itself."""
    cast = 0 if grad_bytes == 4 else 4
    return zero_step_elements(partition_params) * (grad_bytes + cast)


def zero_step(setup: Setup, partition: int, pbytes: int, freed: int) -> tuple[str, int, str] | None:
    """DeepSpeed ZeRO's full fine-tuning step on the GPU, as (name, bytes, formula): one sub-group's
    gradient flattened and cast to fp32, beyond the ``freed`` bytes of activations the step has freed;
    None where it does not apply (another stack, states offloaded, LoRA) or ``freed`` covers it."""
    prof = setup.profile
    if prof.framework != "deepspeed" or not prof.fp32_master or setup.offload_states or partition <= 0:
        return None
    temp = zero_step_bytes(partition, pbytes)
    if temp <= freed:
        return None
    size = zero_step_elements(partition)
    cast = 0 if pbytes == 4 else 4
    formula = f"{size:,} × ({pbytes} + {cast}) B beyond the {freed:,} B of activations freed"
    return tr("ZeRO step: one sub-group's gradient in fp32"), temp - freed, formula
