"""Each framework's training efficiency (achieved ÷ peak dense tensor FLOPs), fitted on the cited speed rows.

Run: ``.venv/bin/python benchmarks/training_speed_fit.py`` (``--rows`` for each row's implied efficiency).

For every tokens/s row of ``benchmarks/data/training.csv`` outside the held-out quarter, the row is run
through ``fit`` on its own GPU with its own settings (``training_accuracy.request``) twice, at efficiency 1
and 1/2. A step's time is ``a / efficiency + b`` (``a``: the matmul and attention FLOPs at the tensor
peak; ``b``: what does not scale with it, QLoRA's dequantisation), so the two runs give ``a`` and ``b`` and
the row's measured tokens/s gives its implied efficiency ``a / (t_measured - b)``. MegaTrain's
TFLOPS rows (one GPU) give theirs directly (``megatrain_implied``). A framework's
efficiency is the median over its rows; the fallback for frameworks without rows is the median over all.
Held-out rows are never used; ``training_accuracy.py`` reports them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.speed import training as speed_training
from rigcheck.core.models.resolve import from_catalog
from training_accuracy import FRAMEWORK_IDS, NotEstimableError, _speed
from training_measurements import TrainingMeasurement, load


@dataclass(frozen=True)
class Implied:
    row: TrainingMeasurement
    framework: str
    efficiency: float


@contextmanager
def _efficiency(value: float) -> Iterator[None]:
    saved = dict(speed_training.TRAIN_EFFICIENCY), speed_training.FALLBACK_EFFICIENCY
    speed_training.TRAIN_EFFICIENCY.clear()
    speed_training.FALLBACK_EFFICIENCY = value
    try:
        yield
    finally:
        speed_training.TRAIN_EFFICIENCY.update(saved[0])
        speed_training.FALLBACK_EFFICIENCY = saved[1]


def implied(row: TrainingMeasurement, catalog: Catalog) -> Implied | None:
    """The efficiency at which the estimate gives the row's measured tokens/s (None if it cannot)."""
    spec = catalog.model(row.model_id) if row.model_id else None
    if spec is None or row.base_value is None:
        return None
    model = from_catalog(spec)
    try:
        with _efficiency(1.0):
            full = _speed(row, model, catalog).estimate
        with _efficiency(0.5):
            half = _speed(row, model, catalog).estimate
    except NotEstimableError:
        return None
    if not full or not half:
        return None
    tokens = 1.0  # times per token (tokens/s are per run; the ratio is what matters)
    t1, t2 = tokens / full, tokens / half
    a, b = t2 - t1, 2 * t1 - t2
    measured = tokens / row.base_value
    if measured <= b or a <= 0:
        return None
    return Implied(row, FRAMEWORK_IDS.get(row.framework, row.framework), a / (measured - b))


def megatrain_implied(row: TrainingMeasurement, catalog: Catalog) -> Implied | None:
    """A MegaTrain TFLOPS row's efficiency. The row runs through ``fit --offload full`` on its GPU
    (``training_accuracy._megatrain``: TFLOPS as its train.py counts them, 6·N per token ÷ step time) at
    efficiency 1 and 1/2; a step is ``a / efficiency + b`` (``b``: the CPU optimizer, which train.py runs
    after the GPU's pass), so the two runs give ``a`` and ``b`` and the measured TFLOPS its efficiency."""
    from training_accuracy import _megatrain

    spec = catalog.model(row.model_id) if row.model_id else None
    if spec is None or row.base_value is None or row.gpu_count != 1:
        return None
    model = from_catalog(spec)
    saved = speed_training.MEGATRAIN_MFU
    try:
        speed_training.MEGATRAIN_MFU = 1.0
        full = _megatrain(row, model, catalog).estimate
        speed_training.MEGATRAIN_MFU = 0.5
        half = _megatrain(row, model, catalog).estimate
    except NotEstimableError:
        return None
    finally:
        speed_training.MEGATRAIN_MFU = saved
    if not full or not half:
        return None
    t1, t2 = 1 / full, 1 / half  # seconds per TFLOP-as-counted: the ratio is what matters
    a, b = t2 - t1, 2 * t1 - t2
    measured = 1 / row.base_value
    if measured <= b or a <= 0:
        return None
    return Implied(row, "megatrain", a / (measured - b))


def megatrain_rows(catalog: Catalog) -> list[Implied]:
    rows = [r for r in load() if r.metric == "tflops" and r.framework == "megatrain" and r.split == "fit"]
    return [i for i in (megatrain_implied(r, catalog) for r in rows) if i is not None]


def fit_rows(catalog: Catalog) -> list[Implied]:
    rows = [
        r for r in load() if r.metric == "tokens_per_s" and r.split == "fit" and r.framework != "megatrain"
    ]
    return [i for i in (implied(r, catalog) for r in rows) if i is not None]


def fitted(found: Sequence[Implied]) -> tuple[dict[str, float], float]:
    """(per-framework median efficiency, the median over all rows), rounded to 0.01."""
    by: dict[str, list[float]] = defaultdict(list)
    for i in found:
        by[i.framework].append(i.efficiency)
    per = {fw: round(statistics.median(v), 2) for fw, v in sorted(by.items())}
    return per, round(statistics.median(i.efficiency for i in found), 2)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", action="store_true", help="print each row's implied efficiency")
    args = parser.parse_args(argv)
    found = fit_rows(load_catalog())
    if args.rows:
        for i in found:
            print(f"{i.row.id:44} {i.framework:14} {i.efficiency:.3f}")
    per, fallback = fitted(found)
    print(f"TRAIN_EFFICIENCY = {per}")
    print(f"FALLBACK_EFFICIENCY = {fallback}")
    streamed = megatrain_rows(load_catalog())
    if args.rows:
        for i in streamed:
            print(f"{i.row.id:44} {i.framework:14} {i.efficiency:.3f}")
    print(f"MEGATRAIN_EFFICIENCY = {round(statistics.median(i.efficiency for i in streamed), 2)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
