"""What goes where: a placement of the model on the GPUs and RAM, and the memory each device may use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rigcheck.core.said import Text, render_all

Offload = Literal["auto", "none", "layers", "experts", "optimizer", "params", "full"]


#: multi-GPU: llama.cpp --split-mode layer (by layers), tensor (every matrix split: -sm row, tensor
#: parallel), none (the main GPU alone)
Split = Literal["layer", "tensor", "none"]


TrainOffload = Literal["none", "optimizer", "params", "full"]


@dataclass(frozen=True)
class Placement:
    gpu_bytes: tuple[int, ...]
    cpu_bytes: int
    gpu_layers: int
    total_layers: int
    offload: Literal["none", "layers", "experts", "optimizer", "params", "full"]
    split: Split = "layer"
    #: layers whose routed experts live in RAM (llama.cpp --n-cpu-moe N)
    cpu_expert_layers: int = 0
    #: training: each GPU's PyTorch allocator peak (torch.cuda.max_memory_allocated), i.e. ``gpu_bytes``
    #: (the process total nvidia-smi shows) less the CUDA context; empty for inference placements
    gpu_peak_bytes: tuple[int, ...] = ()


@dataclass(frozen=True)
class Budget:
    """What each device may use: bytes and why."""

    gpu_bytes: tuple[int, ...]
    cpu_bytes: int
    #: why, as said (made into words when shown: :attr:`reasons`)
    reasons_said: tuple[Text, ...]

    @property
    def reasons(self) -> tuple[str, ...]:
        return render_all(self.reasons_said)
