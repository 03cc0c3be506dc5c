"""One way for tests to ask fit() about a catalog model on a machine, with a format and a backend, and read a
speed from the answer (failing with the explanation when there is none)."""

from __future__ import annotations

from typing import Literal

from rigcheck.core.catalog import Catalog
from rigcheck.core.estimate.fit import FitResult, fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.machine import Machine
from rigcheck.core.models.resolve import from_catalog


def fit_on(catalog: Catalog, machine: Machine, model_id: str, quant: str, backend: str) -> FitResult:
    """fit() for a catalog model at 4,096 tokens of context, everything on the GPU, no live reading, no advice."""
    return fit(
        from_catalog(catalog.model(model_id)),  # type: ignore[arg-type]
        machine,
        Request(quant=quant, context=4096, backend=backend),  # type: ignore[arg-type]
        catalog,
        offload="none",
        live=False,
        advise=False,
    )


def tokens_per_s(result: FitResult, metric: Literal["decode", "prefill"]) -> float:
    value = result.speed.decode_tokens_per_s if metric == "decode" else result.speed.prefill_tokens_per_s
    assert value is not None, result.speed.explanation
    return value
