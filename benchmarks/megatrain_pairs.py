"""MegaTrain's published TFLOPS and GPU memory of one model, read together, against the estimate at every
batch, on fla's Gated DeltaNet kernels and on transformers' pure-torch fallback.

Run: ``PYTHONPATH=desktop .venv/bin/python benchmarks/megatrain_pairs.py``.

The README@2a9f977 'Performance' table gives each model's TFLOPS, CPU RAM and GPU VRAM in one line but
not the batch (issue 27). A row's batch is assumed in benchmarks/data/training.csv; this script asks
instead which batches, if any, make the estimate meet both published figures at once (within ±15%), for
each kernel choice (Request.linear_kernels). A diagnostic of the unstated batch and kernels: nothing here
is fed back into the estimate.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rigcheck.core.catalog import load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import Request
from rigcheck.core.estimate.placement import megatrain
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.whatif import simulate
from training_accuracy import GIB, _model
from training_measurements import TrainingMeasurement, load

WITHIN = 0.15
KERNELS = ("fla", "torch")


def pairs(rows: list[TrainingMeasurement]) -> dict[tuple[str, str], dict[str, TrainingMeasurement]]:
    """MegaTrain's one-GPU rows by (model, source line), each with its tflops and gpu_memory row."""
    found: dict[tuple[str, str], dict[str, TrainingMeasurement]] = defaultdict(dict)
    for r in rows:
        if r.framework == "megatrain" and r.gpu_count == 1 and r.metric in ("tflops", "gpu_memory"):
            found[(r.model_id, r.verbatim)][r.metric] = r
    return {k: v for k, v in found.items() if len(v) == 2}


def sweep(tflops: TrainingMeasurement, kernels: str) -> list[tuple[int, float, float]]:
    """(batch, TFLOPS as train.py counts them, allocator peak bytes) for every batch that fits the GPU."""
    catalog = load_catalog()
    model = _model(tflops, catalog)
    spec = catalog.gpu(tflops.gpu_id)
    bare = Machine(cpu=CPU(logical_cores=64), memory=Memory(total_bytes=2048 * GIB), gpus=())
    machine = simulate(bare, [spec], 2048)
    context = tflops.seq_len or 1
    out = []
    for batch in range(1, 257):
        req = Request(workload="full", context=context, batch=batch, linear_kernels=kernels)  # type: ignore[arg-type]
        result = fit(model, machine, req, catalog, offload="full", live=False, advise=False)
        p, tps = result.placement, result.speed.train_tokens_per_s
        if p is None or not sum(p.gpu_bytes) or tps is None:
            break
        value = tps * megatrain.REPORTED_FLOPS_PER_PARAM * model.arch.params_total / 1e12
        out.append((batch, value, float(megatrain.gpu_peak_bytes(model.arch, context, batch, kernels))))
    return out


def lines() -> list[str]:
    said = []
    for (model_id, _), rows in sorted(pairs(load()).items()):
        t, g = rows["tflops"], rows["gpu_memory"]
        tv, gv = t.value, g.base_value or 0.0
        said.append(f"{model_id}: published {tv:.0f} TFLOPS, {gv / 1e9:.1f} GB (row batch {t.batch})")
        for kernels in KERNELS:
            points = sweep(t, kernels)
            both = [b for b, tf, gb in points if abs(tf / tv - 1) <= WITHIN and abs(gb / gv - 1) <= WITHIN]
            at_gpu = min(points, key=lambda p: abs(p[2] - gv))
            at_tf = min(points, key=lambda p: abs(p[1] - tv))
            said.append(
                f"  {kernels}: largest batch {points[-1][0]}; GPU figure at batch {at_gpu[0]} "
                f"({at_gpu[1]:.0f} TFLOPS there, {at_gpu[1] / tv - 1:+.0%}); TFLOPS figure at batch "
                f"{at_tf[0]} ({at_tf[2] / 1e9:.1f} GB there, {at_tf[2] / gv - 1:+.0%}); both within "
                f"±{WITHIN:.0%} at batch " + (f"{both[0]}-{both[-1]}" if both else "none")
            )
    return said


if __name__ == "__main__":
    print("\n".join(lines()))
