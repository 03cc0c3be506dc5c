"""The records of an upgrade comparison (:class:`Outcome`, :class:`ModelChange`, :class:`Option`,
:class:`UpgradeReport`), its constants, and the helpers the comparison (``upgrade.py``) and the options
(``upgrade_options.py``) both read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rigcheck.core.catalog import Catalog, GpuSpec
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.cost import GpuCost
from rigcheck.core.estimate.fit import (
    FitResult,
)
from rigcheck.core.estimate.memory import Workload
from rigcheck.core.estimate.power import PowerBudget
from rigcheck.core.machine import Machine
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.said import Joined, Num, Text, render, render_all

Verdict = Literal["fits", "fits_with_offload", "does_not_fit"]
WORKLOADS: tuple[Workload, ...] = ("inference", "lora", "qlora", "full")

#: shown when the user names no models: 1B to 235B, dense and mixture-of-experts, smallest first
POPULAR_MODELS: tuple[str, ...] = (
    "llama-3.2-1b",
    "llama-3.2-3b",
    "qwen3-4b",
    "llama-3.1-8b",
    "qwen3-8b",
    "gemma-3-12b",
    "qwen3-14b",
    "gpt-oss-20b",
    "mistral-small-3.1-24b",
    "gemma-3-27b",
    "qwen3-30b-a3b",
    "qwen3-32b",
    "llama-3.3-70b",
    "qwen2.5-72b",
    "llama-4-scout-17b-16e",
    "gpt-oss-120b",
    "qwen3-235b-a22b",
)
#: GPUs one server holds (HGX/DGX boards carry 8); more means several machines
NODE_GPUS = 8

# -- records --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """One model on one machine."""

    verdict: Verdict
    #: inference: the best format that fits entirely on the GPUs, else the smallest that fits with
    #: offload, else None; training: the workload's own format (bf16, NF4) when it fits
    quant: str | None
    decode_tokens_per_s: float | None
    train_tokens_per_s: float | None
    #: where it runs, or why not ("everything on the GPU: …", "needs 57.7 GiB; GPUs offer …"), as said:
    #: :attr:`placement` in words
    placement_said: Text = ""
    #: "none", "layers", "experts", "optimizer", "params" or "full" (see fit.Placement.offload)
    offload: str = "none"
    #: gpu, gpu+ram or cpu (recommend.where_of); None when it does not run
    where: str | None = None
    #: the quant id asked for (None: the model's own files or the workload's format), to pin it again
    quant_id: str | None = None

    @property
    def placement(self) -> str:
        return render(self.placement_said)


@dataclass(frozen=True)
class ModelChange:
    model_id: str
    name: str
    before: Outcome
    after: Outcome
    #: before does_not_fit → after fits or fits_with_offload, or before offload → after entirely on GPU
    newly_runnable: bool
    #: what the recommendation is after the upgrade when it differs from ``after`` (which keeps the
    #: format used before, to compare like with like): a better format the upgrade makes possible
    better: Outcome | None = None


@dataclass(frozen=True)
class Option:
    """One way to make a model run."""

    #: "2 × GeForce RTX 5090", "1024 GiB RAM (+960 GiB, MegaTrain-style, keeps your GeForce RTX 4090)", as
    #: said: :attr:`description` in words
    description_said: Text
    machine: Machine
    verdict: str
    #: decode for inference, train tokens/s for training; None when it cannot be estimated (see notes)
    tokens_per_s: float | None
    #: for everything bought; None when a price is unknown (``notes`` say so)
    purchase_usd: float | None
    #: the cloud alternative's hourly price for the same GPUs, when the catalog has one
    rent_usd_hour: float | None
    #: as said: :attr:`notes` in words
    notes_said: tuple[Text, ...]
    #: "gpu" (buy or rent GPUs) or "ram" (add RAM, keep the GPUs)
    kind: Literal["gpu", "ram"] = "gpu"
    model_id: str = ""
    gpu_id: str | None = None
    #: how many of ``gpu_id``
    count: int = 0
    #: the RAM the option has, GiB (RAM options)
    ram_gib: float | None = None
    #: the GPU's cost figures (one unit), when it is a catalog GPU
    cost: GpuCost | None = None
    #: the weight format it was sized with ("Q4_K_M", "NF4 …", "bf16")
    quant: str | None = None
    #: the GPUs do not fit the machine the option is for (an SXM module for a desktop): rent them
    rent_only: bool = False
    #: how many of the ``count`` GPUs the machine has already (only ``count - owned`` are bought)
    owned: int = 0
    #: how the purchase price may rank it (:mod:`rigcheck.core.estimate.buying`): "current", "launch",
    #: "superseded" or "unknown"
    price_standing: str = "unknown"

    @property
    def description(self) -> str:
        return render(self.description_said)

    @property
    def notes(self) -> tuple[str, ...]:
        return render_all(self.notes_said)


@dataclass(frozen=True)
class UpgradeReport:
    before: Machine
    after: Machine
    #: "inference" | "lora" | "qlora" | "full"
    workload: str
    models: tuple[ModelChange, ...]
    power_before: PowerBudget
    power_after: PowerBudget
    #: one per distinct GPU model in ``after`` that is not in ``before`` (the purchase)
    costs: tuple[GpuCost, ...]
    #: plain sentences, as said: :attr:`suggestions` in words
    suggestions_said: tuple[Text, ...]
    #: tokens of context asked for (None: each model's default, 8192 or its maximum)
    context: int | None = None
    #: for every model that still does not run entirely on the GPUs after the upgrade: the cheapest
    #: catalog GPUs that would, and the cheapest to rent
    alternatives: tuple[Option, ...] = ()
    #: what the purchase costs in all (every added GPU counted); None when a price is unknown
    purchase_usd: float | None = None

    @property
    def suggestions(self) -> tuple[str, ...]:
        return render_all(self.suggestions_said)


# -- helpers --------------------------------------------------------------------------------------


def catalog_model(model_id: str, catalog: Catalog) -> ModelInfo:
    """A catalog model by id (case-insensitive); an InputError naming close ids when there is none."""
    spec = catalog.model(model_id.strip().lower())
    if spec is None:
        words = model_id.lower().replace("-", " ").split()
        close = [m.id for m in catalog.models if any(w in m.id for w in words)][:5]
        hint = f"; did you mean {', '.join(close)}?" if close else "; see 'rigcheck models'"
        raise InputError(model_id, f"not a catalog model id{hint}")
    return from_catalog(spec)


def _workload(workload: str) -> Workload:
    for known in WORKLOADS:
        if workload == known:
            return known
    raise InputError("--workload", f"unknown workload {workload!r} (known: {', '.join(WORKLOADS)})")


def _specs(machine: Machine, catalog: Catalog) -> list[GpuSpec | None]:
    return [
        catalog.gpu(g.catalog_id) if g.catalog_id and catalog.gpu(g.catalog_id) else catalog.match_gpu(g)
        for g in machine.gpus
    ]


def _gpu_names(machine: Machine) -> str:
    counts: dict[str, int] = {}
    for gpu in machine.gpus:
        counts[gpu.name] = counts.get(gpu.name, 0) + 1
    return " + ".join(f"{n} × {name}" if n > 1 else name for name, n in counts.items()) or "no GPU"


def _tokens(result: FitResult) -> float | None:
    speed = result.speed
    return speed.decode_tokens_per_s if result.estimate.workload == "inference" else speed.train_tokens_per_s


def _money(value: float) -> Joined:
    return Joined("", ("$", Num(value))) if value >= 100 else Joined("", ("$", Num(value, 2)))
