"""Optimizer states in training memory: their bytes by optimizer and precision, fp32 master weights, and
torch AdamW's foreach step temporary."""

from __future__ import annotations

from rigcheck.core.estimate.training_types import Part, Setup, Where
from rigcheck.core.i18n import tr

ZERO_MASTER = "ZeRO (arXiv 1910.02054) §3: mixed precision keeps fp32 master weights"


def _states(setup: Setup, trainable: int, param_bytes: int, where: Where, label: str) -> list[Part]:
    opt, prof = setup.optimizer, setup.profile
    master = setup.method == "full" and param_bytes < 4 and prof.fp32_master
    if opt.param_dtype_states is not None and param_bytes < 4 and not master:
        per = opt.param_dtype_states * 2  # two states in the parameter's 16-bit dtype
        how = f"{opt.name}: 2 states × {opt.param_dtype_states} B (the parameters' dtype)"
    else:
        per = int(opt.fp32_state_bytes)
        how = f"{opt.name}: {opt.fp32_state_bytes:g} B per parameter"
    place: Where = "host" if opt.on_host else ("paged" if opt.paged and where == "gpu" else where)
    parts = [
        Part(
            "optimizer",
            tr("model optimizer states") if label == "model" else tr("adapter optimizer states"),
            per * trainable,
            place,
            f"{trainable:,} × {per} B ({how})",
            opt.source,
        )
    ]
    if master:
        parts.append(
            Part(
                "optimizer",
                tr("fp32 master weights"),
                4 * trainable,
                "host" if opt.on_host else where,
                f"{trainable:,} × 4 B",
                ZERO_MASTER,
            )
        )
    return parts


#: torch.optim.AdamW's default on CUDA tensors is the foreach implementation (_default_to_fused_or_foreach),
#: whose step materialises sqrt(v) for every parameter at once beside the gradients and states
FOREACH_SQRT = (
    "pytorch/pytorch torch/optim/adam.py _multi_tensor_adam: exp_avg_sq_sqrt = torch._foreach_sqrt(v)"
)
#: stacks whose "adamw" is torch.optim.AdamW with its defaults: HF Trainer's optim "adamw_torch" (TRL,
#: axolotl, LLaMA-Factory; transformers TrainingArguments default) and LitGPT's configs (optimizer
#: class_path torch.optim.AdamW); torchtune's recipes pass fused: True, DeepSpeed steps its own FusedAdam
FOREACH_ADAMW_STACKS = frozenset({"transformers", "axolotl", "llama-factory", "litgpt"})


def _step_temporary(setup: Setup, adam: Part, parts: list[Part]) -> list[Part]:
    """torch AdamW's step: a v-sized temporary (half of ``adam``, the m and v part) while the gradients
    and states live and the activations are freed, so it adds only what it exceeds the activations by."""
    opt = setup.optimizer
    if opt.name != "adamw" or opt.on_host or setup.offload_states or adam.where != "gpu":
        return []
    if setup.profile.framework not in FOREACH_ADAMW_STACKS:
        return []
    if setup.method == "full" and setup.profile.optimizer_in_backward:
        return []
    sqrt_v = adam.bytes // 2
    freed = sum(p.bytes for p in parts if p.category == "activations" and p.where == "gpu")
    if sqrt_v <= freed:
        return []
    return [
        Part(
            "optimizer",
            tr("AdamW step: sqrt(v) for every parameter"),
            sqrt_v - freed,
            "gpu",
            f"{sqrt_v:,} B of sqrt(v) beyond the {freed:,} B of activations the step has freed",
            FOREACH_SQRT,
        )
    ]
