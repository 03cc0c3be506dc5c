"""What a training memory estimate is made of: the run's :class:`Setup`, each :class:`Part` with where it
lives, and the :class:`TrainingMemory` that sums them (``training_memory.py`` assembles it;
``training_activations.py``, ``training_states.py`` and ``training_megatrain.py`` make its parts)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rigcheck.core.estimate.training_mixers import Attention
from rigcheck.core.estimate.training_profiles import (
    Optimizer,
    Precision,
    Profile,
    TrainCheckpointing,
)

Method = Literal["full", "lora", "qlora"]
Where = Literal["gpu", "host", "paged"]


@dataclass(frozen=True)
class Part:
    category: Literal["weights", "gradients", "optimizer", "activations", "overhead"]
    name: str
    bytes: int
    where: Where
    formula: str
    source: str = ""


@dataclass(frozen=True)
class TrainingMemory:
    parts: tuple[Part, ...]
    trainable_params: int

    def on(self, where: Where) -> int:
        return sum(p.bytes for p in self.parts if p.where == where)

    @property
    def gpu_peak_bytes(self) -> int:
        """The allocator's peak: every GPU part but the CUDA context (paged states excluded)."""
        return sum(p.bytes for p in self.parts if p.where == "gpu" and p.category != "overhead")

    @property
    def gpu_bytes(self) -> int:
        """The process on the GPU as nvidia-smi shows it: the allocator peak and the CUDA context."""
        return self.on("gpu")

    @property
    def host_bytes(self) -> int:
        return self.on("host")


@dataclass(frozen=True)
class Setup:
    """How a run trains; ``None`` fields take the profile's own default."""

    method: Method
    profile: Profile
    optimizer: Optimizer
    precision: Precision = "bf16"
    checkpointing: TrainCheckpointing | None = None
    lora_rank: int | None = None
    lora_targets: tuple[str, ...] | None = None
    attention: Attention = "flash"
    #: data-parallel GPUs the model states are sharded over (FSDP / ZeRO-3); 1 = no sharding
    gpus: int = 1
    #: FSDP CPU offload / ZeRO-3 offload: parameters, gradients and optimizer states in host RAM
    offload_states: bool = False
    #: micro-batches per optimizer step (gradient accumulation); 1 = a step after every micro-batch
    grad_accumulation: int = 1
    #: the Gated DeltaNet kernels: fla's, or transformers' pure-torch fallback (Request.linear_kernels)
    linear_kernels: str = "fla"

    @property
    def mode(self) -> TrainCheckpointing:
        if self.checkpointing:
            return self.checkpointing
        sharded = self.profile.checkpointing_sharded
        return sharded if sharded and self.gpus > 1 else self.profile.checkpointing

    @property
    def rank(self) -> int:
        return self.lora_rank or self.profile.lora_rank

    @property
    def targets(self) -> tuple[str, ...]:
        return self.lora_targets or self.profile.lora_targets
