"""CPU-only decode factors by the host's memory class (core/estimate/speed/cpu_host.py memory_class), fitted
on the fit split of benchmarks/data/measurements.csv only (never a held-out or blind row).

Each CPU-only llama.cpp decode row is placed as the estimator places a user's machine: the CPU platform
(catalog/cpu_platforms.toml) for the peak bandwidth, cores × clock × FLOPs per cycle for the compute peak
(benchmarks/data/cpu_hosts.csv stands in for the probe, threads as the run set them). Two shares follow:

- ``decode_compute_efficiency``: a CPU cannot decode faster than its arithmetic allows, so every row's
  2 × active parameters × tokens/s ÷ compute peak is at or below the true share; the highest any fit row
  reached is the envelope taken (a roofline's compute ceiling, the lowest one the rows allow).
- ``decode_bandwidth_efficiency``: the median of bytes read per token × tokens/s ÷ the platform's peak over
  the rows that ceiling does not hold back (their compute-bound rate at least ``COMPUTE_MARGIN`` × the
  measured one), per class where it has ``MIN_CLASS_ROWS`` such rows, else over every class's (said so).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

from cpu_hosts import host_cpu, host_memory
from measurements import Measurement, row_context, row_quant
from rigcheck.core.catalog import Catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import _active_bytes
from rigcheck.core.estimate.memory import GIB, Request, estimate_memory
from rigcheck.core.estimate.speed.cpu_host import MEMORY_CLASSES, cpu_peak, memory_class
from rigcheck.core.estimate.speed.cpu_kernel import cpu_kernel
from rigcheck.core.machine import Machine
from rigcheck.core.models.resolve import from_catalog

#: rows a memory class needs for a share of its own
MIN_CLASS_ROWS = 3
#: a row whose compute-bound rate is within this factor of its measured one says little about bandwidth
COMPUTE_MARGIN = 1.2


@dataclass(frozen=True)
class CpuRow:
    row: Measurement
    cls: str
    #: bytes read per token ÷ the platform's peak bandwidth: the seconds per token at a share of 1
    read_s: float
    #: 2 × active parameters ÷ the compute peak: the seconds per token at a compute share of 1
    compute_s: float | None
    #: the int8 kernel's rate in that peak (speed/cpu_kernel.py: 1 for x86's kernels, which the shares
    #: describe; more with Arm's dot-product and i8mm instructions)
    kernel_factor: float = 1.0

    @property
    def share(self) -> float:
        return self.read_s * self.row.value

    @property
    def compute_share(self) -> float | None:
        return self.compute_s * self.row.value if self.compute_s else None


def _threads(row: Measurement) -> int | None:
    found = re.search(r"(\d+) threads", row.offload)
    return int(found.group(1)) if found else None


def cpu_rows(rows: list[Measurement], catalog: Catalog) -> list[CpuRow]:
    """The fit split's CPU-only llama.cpp decode rows on a host whose platform the catalog knows."""
    found: list[CpuRow] = []
    for row in rows:
        if (
            row.split != "fit"
            or row.device_class != "cpu"
            or row.metric != "decode_tokens_per_s"
            or row.engine.lower().startswith(("ik_llama", "ktransformers"))
        ):
            continue
        spec = catalog.model(row.model_id) if row.model_id else None
        if spec is None or row.moe:
            # an MoE token reads scattered experts through MUL_MAT_ID (another kernel, another share): the
            # dense rows set the memory system's share
            continue
        memory = host_memory(row.host, int((row.ram_gb or 64) * GIB))
        if memory.bandwidth_source == "measured":
            continue  # read at speed.MEASURED_READ_SHARE of that figure: says nothing about a peak's share
        machine = Machine(cpu=host_cpu(row.host), memory=memory, gpus=())
        host = speed.host_bandwidth(machine, catalog)
        if host.source != "catalog":
            continue  # a host no platform places: its bandwidth would be the default's guess
        model = from_catalog(spec)
        try:
            est = estimate_memory(
                model, Request(quant=row_quant(row), context=row_context(row), ubatch=row.ubatch), catalog
            )
        except InputError:
            continue
        per_layer, _experts, head = _active_bytes(est)
        compute = cpu_peak(
            machine, catalog, quant_id=est.quant.id if est.quant else None, threads=_threads(row)
        )
        flops = 2 * model.arch.params_active
        platform = speed.cpu_platform(catalog, row.host)
        found.append(
            CpuRow(
                row,
                memory_class(platform),
                (sum(per_layer) + head) / host.bytes_per_s,
                flops / compute.flops_per_s if compute else None,
                cpu_kernel(machine.cpu.flags, est.quant.id if est.quant else None).factor,
            )
        )
    return found


@dataclass(frozen=True)
class ClassFit:
    cls: str
    bandwidth: float
    compute: float
    #: rows the bandwidth share came from, and whether they were the class's own
    n_rows: int
    own: bool
    error: float
    urls: tuple[str, ...]


def fit_cpu_classes(rows: list[Measurement], catalog: Catalog) -> list[ClassFit]:
    placed = cpu_rows(rows, catalog)
    if not placed:
        return []
    # the compute ceiling: no row decodes faster than its arithmetic allows, so the highest share any row
    # reached is the lowest ceiling consistent with them all, Arm rows included: their peak holds
    # cpu_kernel's instruction-count factor, and leaving them out would set a ceiling below what they reached
    compute = min(max(s for p in placed if (s := p.compute_share) is not None), 1.0)
    # the bandwidth share, from the rows that ceiling does not hold back
    free = [p for p in placed if not p.compute_s or compute / p.compute_s >= COMPUTE_MARGIN * p.row.value]
    pooled = statistics.median(min(max(p.share, 0.05), 0.95) for p in free) if free else 0.5
    fits = []
    for cls in MEMORY_CLASSES:
        own = [p for p in free if p.cls == cls]
        mine = len(own) >= MIN_CLASS_ROWS
        share = statistics.median(min(max(p.share, 0.05), 0.95) for p in own) if mine else pooled
        used = [p for p in placed if p.cls == cls] if mine else placed
        errors = [
            abs(1 / max(p.read_s / share, (p.compute_s or 0) / compute) / p.row.value - 1) for p in used
        ]
        fits.append(
            ClassFit(
                cls,
                share,
                compute,
                len(own if mine else free),
                mine,
                statistics.median(errors),
                tuple(sorted({p.row.source_url for p in used})),
            )
        )
    return fits


def print_cpu_classes(rows: list[Measurement], catalog: Catalog) -> None:
    fits = fit_cpu_classes(rows, catalog)
    if not fits:
        return
    print("# ---- CPU-only decode by the host's memory class (benchmarks/cpu_fit.py) ----\n")
    for found in fits:
        print("[[speed_factor]]")
        print(f'id = "cpu-{found.cls}-cpu"')
        print(f'hw_class = "cpu-{found.cls}"')
        print('backend = "cpu"')
        print("default = true")
        print(f"decode_bandwidth_efficiency = {found.bandwidth:.2f}")
        print(f"decode_compute_efficiency = {found.compute:.2f}")
        print("per_layer_us = 0")
        print('source = "benchmarks/data/measurements.csv (fit split; benchmarks/cpu_fit.py)"')
        whose = (
            f"the median of its own {found.n_rows} bandwidth-bound CPU-only dense rows"
            if found.own
            else f"pooled: the median of {found.n_rows} bandwidth-bound CPU-only dense rows of every class "
            f"(fewer than {MIN_CLASS_ROWS} of its own)"
        )
        print(
            f'measured = "bandwidth share {whose}; compute share the highest any CPU-only fit row '
            "reached (2 × active parameters × tokens/s ÷ cores × clock × FLOPs per cycle); "
            f'|error| {found.error:.0%}"'
        )
        print("sources = [")
        for url in found.urls:
            print(f'  "{url}",')
        print("]")
        print()
