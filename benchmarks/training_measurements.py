"""The cited training measurement set (``benchmarks/data/training.csv``): load, validate, split.

One row per published number from a fine-tuning run: a peak GPU memory, a host memory, a throughput
(tokens/s or TFLOPS), the largest context that trained in a given VRAM, or a run that ran out of
memory. Each row says how the run was set up as the source states it (framework, optimizer, precision,
LoRA rank/alpha/targets, checkpointing, attention kernel, batch, sequence length, GPUs), which
reading the memory is (``allocator``: ``torch.cuda.max_memory_*``; ``device capacity``: the GPU's size
the run filled or fitted; ``not stated``), the source a reader can open, where in it the number is, and
the text as read. Nothing here is estimated: a row is a copy; what a row had to assume is in ``notes``.

``load()`` checks every row and raises ``TrainingMeasurementError`` naming the file, line, row id and
the problem. The held-out quarter uses the inference set's rule (``benchmarks/measurements.py``): a
row is ``holdout`` when the SHA-256 of its id, read as an integer, is divisible by 4, so adding rows
never moves an existing one between the halves.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Literal

sys.path.insert(0, str(Path(__file__).resolve().parent))

# the inference set's CSV reader and held-out rule, so both data sets split one way
from measurements import read_rows, row_error, split_of

DATA = Path(__file__).resolve().parent / "data" / "training.csv"

METHODS = frozenset({"full", "lora", "qlora", "offload"})
FRAMEWORKS = frozenset(
    {
        "transformers",
        "transformers+peft",
        "unsloth",
        "torchtune",
        "axolotl",
        "llama-factory",
        "litgpt",
        "deepspeed",
        "megatrain",
        "ms-swift",
    }
)
CHECKPOINTING = frozenset({"none", "selective", "full", "offloaded", "block-4"})
#: metric -> the units a row may give it in, and the factor to the base unit (bytes, tokens/s, TFLOPS, tokens)
UNITS: dict[str, dict[str, float]] = {
    "gpu_memory": {"GB": 1e9, "GiB": 1024**3},
    "host_memory": {"GB": 1e9, "GiB": 1024**3},
    "tokens_per_s": {"tokens/s": 1.0},
    "tflops": {"TFLOPS": 1.0},
    "max_context": {"tokens": 1.0},
}
MEMORY_KINDS = frozenset({"allocator", "device capacity", "process RSS", "not stated", ""})
OUTCOMES = frozenset({"fits", "oom"})
REQUIRED = (
    "id",
    "method",
    "framework",
    "model",
    "gpu",
    "metric",
    "outcome",
    "source_url",
    "locator",
    "verbatim",
)

Split = Literal["fit", "holdout"]


class TrainingMeasurementError(ValueError):
    """A row of the training set is malformed; the message names the file, line and row."""


@dataclass(frozen=True)
class TrainingMeasurement:
    id: str
    #: full (all weights trained on the GPU), lora, qlora, offload (states or parameters in host memory)
    method: str
    framework: str
    #: as run: adamw, paged-adamw-8bit+in-backward, deepspeed-cpu-adam, "not stated" …
    optimizer: str
    #: bf16 (mixed: fp32 optimizer states), bf16-true (everything bf16, litgpt), fp32, fp16
    precision: str
    lora_rank: int | None
    lora_alpha: int | None
    #: comma-separated projections (q,k,v,o,gate,up,down); empty for full fine-tuning
    lora_targets: str
    checkpointing: str
    attention: str
    model: str
    #: catalog model id (``rigcheck models``); empty when the catalog lacks the model
    model_id: str
    gpu: str
    #: catalog GPU id; empty when the source does not name the GPU
    gpu_id: str
    gpu_count: int
    #: the VRAM the run was limited to, when the source gives it apart from the GPU (Unsloth's tables)
    gpu_memory_gb: float | None
    batch: int | None
    seq_len: int | None
    #: micro-batches per optimizer step (gradient accumulation) as the run's config sets it; None = not stated
    grad_accum: int | None
    metric: str
    #: the number as published, in ``unit``; None for an out-of-memory row
    value: float | None
    unit: str
    outcome: str
    memory_kind: str
    source_url: str
    locator: str
    verbatim: str
    notes: str

    @property
    def split(self) -> Split:
        return split_of(self.id)

    @property
    def base_value(self) -> float | None:
        """The value in the metric's base unit: bytes, tokens/s, TFLOPS or tokens."""
        return None if self.value is None else self.value * UNITS[self.metric][self.unit]

    @property
    def targets(self) -> tuple[str, ...]:
        return tuple(t for t in self.lora_targets.split(",") if t)


def _fail(path: Path, line: int, row_id: str, problem: str) -> TrainingMeasurementError:
    return row_error(TrainingMeasurementError, path, line, row_id, problem)


def _int(raw: str, path: Path, line: int, row_id: str, name: str) -> int | None:
    if not raw.strip():
        return None
    try:
        found = int(raw)
    except ValueError:
        raise _fail(path, line, row_id, f"{name} '{raw}' is not a whole number") from None
    if found < 1:
        raise _fail(path, line, row_id, f"{name} {found} is below 1")
    return found


def _parse(raw: dict[str, str], path: Path, line: int) -> TrainingMeasurement:
    row_id = (raw.get("id") or "").strip()
    for name in REQUIRED:
        if not (raw.get(name) or "").strip():
            raise _fail(path, line, row_id, f"missing {name}")
    cell = {k: (v or "").strip() for k, v in raw.items()}
    for name, allowed in (
        ("method", METHODS),
        ("framework", FRAMEWORKS),
        ("checkpointing", CHECKPOINTING),
        ("outcome", OUTCOMES),
        ("memory_kind", MEMORY_KINDS),
    ):
        if cell[name] not in allowed:
            raise _fail(
                path, line, row_id, f"unknown {name} '{cell[name]}' (one of {', '.join(sorted(allowed))})"
            )
    metric = cell["metric"]
    if metric not in UNITS:
        raise _fail(path, line, row_id, f"unknown metric '{metric}' (one of {', '.join(sorted(UNITS))})")
    if not cell["source_url"].startswith("https://"):
        raise _fail(
            path, line, row_id, f"source_url '{cell['source_url']}' is not an https address a reader can open"
        )
    value: float | None = None
    if cell["outcome"] == "oom":
        if cell["value"]:
            raise _fail(path, line, row_id, "an out-of-memory row has no value")
    else:
        try:
            value = float(cell["value"])
        except ValueError:
            raise _fail(path, line, row_id, f"value '{cell['value']}' is not a number") from None
        if not math.isfinite(value) or value <= 0:
            raise _fail(path, line, row_id, f"value {cell['value']} is not a positive number")
        if cell["unit"] not in UNITS[metric]:
            raise _fail(path, line, row_id, f"unit '{cell['unit']}' is not one of {', '.join(UNITS[metric])}")
    if cell["lora_rank"] and not cell["lora_targets"]:
        raise _fail(path, line, row_id, "a row with a LoRA rank names its targets")
    count = _int(cell["gpu_count"], path, line, row_id, "gpu_count")
    try:
        vram = float(cell["gpu_memory_gb"]) if cell["gpu_memory_gb"] else None
    except ValueError:
        raise _fail(path, line, row_id, f"gpu_memory_gb '{cell['gpu_memory_gb']}' is not a number") from None
    return TrainingMeasurement(
        id=row_id,
        method=cell["method"],
        framework=cell["framework"],
        optimizer=cell["optimizer"],
        precision=cell["precision"],
        lora_rank=_int(cell["lora_rank"], path, line, row_id, "lora_rank"),
        lora_alpha=_int(cell["lora_alpha"], path, line, row_id, "lora_alpha"),
        lora_targets=cell["lora_targets"],
        checkpointing=cell["checkpointing"],
        attention=cell["attention"],
        model=cell["model"],
        model_id=cell["model_id"],
        gpu=cell["gpu"],
        gpu_id=cell["gpu_id"],
        gpu_count=count or 1,
        gpu_memory_gb=vram,
        batch=_int(cell["batch"], path, line, row_id, "batch"),
        seq_len=_int(cell["seq_len"], path, line, row_id, "seq_len"),
        grad_accum=_int(cell["grad_accum"], path, line, row_id, "grad_accum"),
        metric=metric,
        value=value,
        unit=cell["unit"],
        outcome=cell["outcome"],
        memory_kind=cell["memory_kind"],
        source_url=cell["source_url"],
        locator=cell["locator"],
        verbatim=raw["verbatim"],
        notes=cell["notes"],
    )


COLUMNS = tuple(f.name for f in fields(TrainingMeasurement))


def load(path: Path = DATA) -> list[TrainingMeasurement]:
    """Every row of ``path``, validated; raises ``TrainingMeasurementError`` at the first bad row."""
    return read_rows(path, COLUMNS, _parse, TrainingMeasurementError, lambda row: row.id)


def holdout_share(rows: Sequence[TrainingMeasurement]) -> float:
    return sum(1 for r in rows if r.split == "holdout") / len(rows) if rows else 0.0
