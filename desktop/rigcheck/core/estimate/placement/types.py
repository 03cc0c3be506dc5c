"""What goes where: a placement of the model on the GPUs and RAM, and the memory each device may use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Offload = Literal["auto", "none", "layers", "experts", "optimizer", "params", "full"]


Split = Literal["layer", "tensor"]


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


@dataclass(frozen=True)
class Budget:
    """What each device may use: bytes and why."""

    gpu_bytes: tuple[int, ...]
    cpu_bytes: int
    reasons: tuple[str, ...]
