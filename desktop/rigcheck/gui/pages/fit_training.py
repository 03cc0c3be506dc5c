"""The Fit page's training GPUs: how many of the machine's GPUs a fine-tuning run uses, the CLI's way.

``rigcheck fit --workload lora|qlora|full`` without ``--gpus`` takes every GPU of the machine for the
frameworks that shard by their own default on several GPUs (LitGPT, torchtune: FSDP) and one for the
data-parallel stacks, whose GPUs each hold the whole step (training_profiles.run_gpus); ``--gpus N``
overrides. The page offers the same: "framework default" (what the CLI does without ``--gpus``) or a count,
so a multi-GPU machine's Fit page gives the CLI's verdict for the same settings.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import QSpinBox

from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.training_profiles import run_gpus
from rigcheck.core.machine import Machine
from rigcheck.gui.i18n import tr

#: the spin box's value for "the framework's default" (the CLI without --gpus)
FRAMEWORK_DEFAULT = 0
#: the most GPUs the box offers past the machine's own (a what-if of a larger node stays on Upgrade)
MAX_GPUS = 64


def gpu_count_box() -> QSpinBox:
    """The "Training GPUs" choice: framework default, or 1 … the machine's GPUs."""
    box = QSpinBox()
    box.setRange(FRAMEWORK_DEFAULT, MAX_GPUS)
    box.setValue(FRAMEWORK_DEFAULT)
    box.setSpecialValueText(tr("framework default"))
    box.setAccessibleName(tr("Training GPUs"))
    box.setToolTip(
        tr(
            "GPUs the model states are sharded over (FSDP / ZeRO-3), as rigcheck fit --gpus. Framework "
            "default: every GPU for LitGPT and torchtune, which shard by default; one for the stacks whose "
            "GPUs each hold the whole step"
        )
    )
    return box


def training_gpus(request: Request, chosen: int, machine: Machine | None) -> int:
    """The GPUs ``request`` trains on: the count chosen, else the framework's default on this machine
    (``rigcheck fit`` without ``--gpus``); 1 for inference."""
    if request.workload == "inference":
        return 1
    if chosen != FRAMEWORK_DEFAULT:
        return chosen
    return run_gpus(request.framework, request.workload, len(machine.gpus) if machine is not None else 0)


def refresh_box(box: QSpinBox, request: Request, machine: Machine | None) -> None:
    """Bound the box by the machine's GPUs (at least one) and name what the default comes to here."""
    count = len(machine.gpus) if machine is not None else 0
    box.blockSignals(True)
    box.setMaximum(max(count, 1))
    box.blockSignals(False)
    resolved = training_gpus(request, FRAMEWORK_DEFAULT, machine)
    box.setSpecialValueText(tr("framework default ({count})", count=resolved))


def with_training_gpus(request: Request, chosen: int, machine: Machine | None) -> Request:
    """``request`` with the GPUs it trains on."""
    return replace(request, gpus=training_gpus(request, chosen, machine))
