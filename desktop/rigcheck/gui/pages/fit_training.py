"""The Fit page's training choices: how many of the machine's GPUs a fine-tuning run uses, the CLI's
way, and the optimizer, precision, LoRA targets and Gated DeltaNet kernels (``TrainingExtras``).

``rigcheck fit --workload lora|qlora|full`` without ``--gpus`` takes every GPU of the machine for the
frameworks that shard by their own default on several GPUs (LitGPT, torchtune: FSDP) and one for the
data-parallel stacks, whose GPUs each hold the whole step (training_profiles.run_gpus); ``--gpus N``
overrides. The page offers the same: "framework default" (what the CLI does without ``--gpus``) or a count,
so a multi-GPU machine's Fit page gives the CLI's verdict for the same settings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from PySide6.QtWidgets import QComboBox, QSpinBox

from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.training_profiles import OPTIMIZERS, parse_targets, run_gpus
from rigcheck.core.machine import Machine
from rigcheck.core.models.spec import ModelInfo
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


#: the optimizer, precision, LoRA targets and Gated DeltaNet kernels, as rigcheck fit's flags (issue 27)
PRECISIONS = ("bf16", "fp16", "fp32")
TARGET_CHOICES = (
    ("", "framework default"),
    ("all", "all linear layers"),
    ("attention", "attention (q, k, v, o)"),
    ("mlp", "MLP (gate, up, down)"),
    ("q,v", "q, v"),
)
KERNEL_CHOICES = (
    ("fla", "flash-linear-attention"),
    ("torch", "PyTorch fallback (no fla)"),
)


@dataclass(frozen=True)
class TrainingExtras:
    """The training settings past framework, rank and checkpointing: each "framework default" unless
    chosen, read into a Request as rigcheck fit's --optimizer/--precision/--lora-targets/--linear-kernels."""

    optimizer: QComboBox
    precision: QComboBox
    targets: QComboBox
    kernels: QComboBox

    def widgets(self) -> tuple[QComboBox, ...]:
        return (self.optimizer, self.precision, self.targets, self.kernels)

    def rows(self) -> tuple[tuple[str, QComboBox], ...]:
        """(label, widget) for the settings form, in the CLI's order."""
        return (
            (tr("Optimizer"), self.optimizer),
            (tr("Precision"), self.precision),
            (tr("LoRA targets"), self.targets),
            (tr("Gated DeltaNet kernels"), self.kernels),
        )

    def apply(self, request: Request) -> Request:
        """``request`` with the chosen settings; inference is left as it is."""
        if request.workload == "inference":
            return request
        targets = self.targets.currentData()
        return replace(
            request,
            optimizer=self.optimizer.currentData() or None,
            precision=self.precision.currentData(),
            lora_targets=parse_targets(targets) if targets else None,
            linear_kernels=self.kernels.currentData(),
        )

    def enable(self, workload: str, model: ModelInfo | None) -> None:
        """Training settings for training; LoRA targets for LoRA and QLoRA; the Gated DeltaNet kernels only
        for a model that has such layers (the choice changes nothing elsewhere)."""
        training = workload != "inference"
        self.optimizer.setEnabled(training)
        self.precision.setEnabled(training)
        self.targets.setEnabled(workload in ("lora", "qlora"))
        linear = model is not None and "linear" in model.arch.layer_kinds
        self.kernels.setEnabled(training and linear)


def training_extras(combo: Callable[[str, list[tuple[str, str]]], QComboBox]) -> TrainingExtras:
    """The four choices, made with the page's ``combo`` (its accessible name and sizing)."""
    optimizer = combo(
        tr("Optimizer"), [("", tr("framework default"))] + [(name, name) for name in OPTIMIZERS]
    )
    optimizer.setToolTip(
        tr("Optimizer states per trained parameter, as rigcheck fit --optimizer (framework default: its own)")
    )
    precision = combo(tr("Precision"), [(p, p) for p in PRECISIONS])
    precision.setToolTip(tr("Weights and compute precision of the trained model (rigcheck fit --precision)"))
    targets = combo(tr("LoRA targets"), [(key, tr(text)) for key, text in TARGET_CHOICES])
    targets.setToolTip(tr("The modules LoRA adapters wrap (rigcheck fit --lora-targets)"))
    kernels = combo(tr("Gated DeltaNet kernels"), [(key, tr(text)) for key, text in KERNEL_CHOICES])
    kernels.setToolTip(
        tr(
            "The linear-attention kernels a hybrid model trains with: flash-linear-attention installed, or "
            "transformers' slower, larger pure-PyTorch fallback (rigcheck fit --linear-kernels)"
        )
    )
    return TrainingExtras(optimizer, precision, targets, kernels)
