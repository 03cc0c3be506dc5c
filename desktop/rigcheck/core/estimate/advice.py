"""What would help: advice after a verdict (a shorter context, a smaller format, more GPUs, more RAM), each
worked out by the solvers, not guessed.
"""

from __future__ import annotations

from rigcheck.core.catalog import Catalog
from rigcheck.core.estimate.memory import GIB, MemoryEstimate, Request
from rigcheck.core.estimate.placement.budget import budgets
from rigcheck.core.estimate.placement.training import MEGATRAIN_HOST_BYTES
from rigcheck.core.estimate.placement.types import Placement
from rigcheck.core.estimate.solvers import best_quant, fewest_gpus, max_context
from rigcheck.core.estimate.verdict import Verdict
from rigcheck.core.i18n import tr
from rigcheck.core.machine import Machine
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.units import fmt_bytes


def advice_for(
    model: ModelInfo, machine: Machine, req: Request, catalog: Catalog, est: MemoryEstimate,
    *, verdict: Verdict, placement: Placement, live: bool,
) -> list[str]:  # fmt: skip
    advice: list[str] = []
    if verdict == "fits":
        spare = sum(b for b in budgets(machine, live, req.engine).gpu_bytes) - sum(placement.gpu_bytes)
        advice.append(tr("{quant} fits with {spare} to spare", quant=est.quant_name, spare=fmt_bytes(spare)))
        return advice
    if est.workload == "inference" and machine.gpus and req.engine != "ktransformers":
        # (ktransformers always keeps the routed experts in RAM: "entirely on the GPU" is not its choice)
        longest = max_context(model, machine, req, catalog, live=live)
        if longest is not None and longest < est.context:
            advice.append(tr("reduce context to {k}k to fit entirely on the GPU", k=longest // 1024))
        if model.weights is None or req.quant:
            best = best_quant(model, machine, req, catalog, live=live)
            if best is not None and best[0] != est.quant_name:
                advice.append(
                    tr(
                        "{quant} fits on the GPU with {spare} to spare",
                        quant=best[0],
                        spare=fmt_bytes(best[1]),
                    )
                )
        if verdict == "fits_with_offload" and placement.gpu_layers < placement.total_layers:
            advice.append(
                tr(
                    "{count} layers run from RAM: expect decode bound by RAM bandwidth",
                    count=placement.total_layers - placement.gpu_layers,
                )
            )
        first = machine.gpus[0]
        spec = catalog.gpu(first.catalog_id) if first.catalog_id else None
        if spec is not None:
            count = fewest_gpus(model, machine, spec, req, catalog, limit=8)
            if count is not None and count > len(machine.gpus):
                advice.append(
                    tr("{count} × {gpu} would hold it entirely in GPU memory", count=count, gpu=spec.name)
                )
    if est.workload == "full" and verdict == "does_not_fit":
        host_need = MEGATRAIN_HOST_BYTES * model.arch.params_total
        have = budgets(machine, live).cpu_bytes
        if host_need > have:
            extra = (host_need - have + GIB - 1) // GIB
            advice.append(
                tr(
                    "add {extra} GiB RAM for MegaTrain-style training (about {bytes} bytes per "
                    "parameter in RAM)",
                    extra=extra,
                    bytes=MEGATRAIN_HOST_BYTES,
                )
            )
    if est.workload in ("lora", "full") and verdict == "does_not_fit":
        advice.append(tr("QLoRA (4-bit base) needs about a quarter of the weight memory"))
    if verdict == "does_not_fit" and est.workload == "inference":
        advice.append(tr("a smaller quantization, a shorter context, or a GPU with more memory would help"))
    return advice
