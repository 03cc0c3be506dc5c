"""The CPU class's decode share of the host's peak bandwidth, from CPU-only and llama.cpp offload rows
(benchmarks/fit_speed.py).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import replace

from cpu_hosts import host_memory
from fit_points import GIB, Point
from measurements import Measurement, row_context, row_quant
from rigcheck.core.catalog import Catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import _active_bytes
from rigcheck.core.estimate.memory import Request
from rigcheck.core.machine import CPU, Machine
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.whatif import simulate


def fit_cpu(
    rows: list[Measurement], catalog: Catalog, cpu_points: list[Point]
) -> tuple[float, int, float, list[str]] | None:
    """The host's share of its peak bandwidth: from CPU-only rows, and from llama.cpp offload rows whose
    CPU part is what is left of the measured time after the GPU part (estimated with the GPU factors)."""
    from rigcheck.core.estimate.fit import fit

    # the class's share is of the platform's peak: a host whose source measured its bandwidth is read at
    # speed.MEASURED_READ_SHARE of that figure instead, and says nothing about the share of a peak
    cpu_points = [p for p in cpu_points if host_memory(p.row.host, GIB).bandwidth_source != "measured"]
    shares = [p.bytes_per_token * p.row.value / p.bandwidth for p in cpu_points]
    used_urls = [p.row.source_url for p in cpu_points]
    for row in rows:
        if (
            not row.offloaded
            or row.metric != "decode_tokens_per_s"
            or not row.llama_cpp
            or row.split == "blind"
        ):
            continue
        spec = catalog.model(row.model_id) if row.model_id else None
        gpu = catalog.gpu(row.gpu_id) if row.gpu_id else None
        if spec is None or gpu is None:
            continue
        memory = host_memory(row.host, int((row.ram_gb or 128) * GIB))
        machine = Machine(cpu=CPU(logical_cores=16, model=row.host), memory=memory, gpus=())
        host = speed.host_bandwidth(machine, catalog)
        if host.source != "catalog":
            continue  # a host we cannot place (its bandwidth would be a guess), or one measured (not a peak)
        # a figure the source measured is the snapshot's measured figure, and the efficiency applies to it as
        # the product applies it (speed/decode.py gpu_decode_seconds: the figure the snapshot holds × the efficiency)
        machine = replace(simulate(machine, [gpu] * max(row.gpu_count, 1), row.ram_gb or 128), memory=memory)
        ngl = re.search(r"-ngl (\d+)", row.offload)
        ncmoe = re.search(r"n-cpu-moe (\d+)", row.offload)
        kind = row.offload_kind
        try:
            result = fit(
                from_catalog(spec),
                machine,
                Request(quant=row_quant(row), context=row_context(row), ubatch=row.ubatch),
                catalog,
                offload=kind,
                live=False,
                advise=False,  # type: ignore[arg-type]
                gpu_layers=int(ngl.group(1)) if ngl and kind == "layers" else None,
                cpu_expert_layers=(len(spec.config) and 999)
                if "-cmoe" in row.offload
                else (int(ncmoe.group(1)) if ncmoe else None),
            )
        except InputError:
            continue
        cpu_line = next((line for line in result.speed.explanation if line.startswith("RAM: ")), None)
        if result.verdict == "does_not_fit" or cpu_line is None or not result.speed.decode_tokens_per_s:
            continue
        # the estimate's CPU seconds at efficiency e are cpu_bytes / (host × e); solve e from the measured total
        factor = speed.speed_factor(catalog, speed.CPU_CLASS, "cpu")
        e_now = factor.decode_bandwidth_efficiency if factor else 1.0
        per_layer, routed, _head = _active_bytes(result.estimate)
        placement = result.placement
        cpu_bytes = sum(per_layer[placement.gpu_layers :]) + sum(routed[: placement.cpu_expert_layers])
        cpu_s_now = cpu_bytes / (host.bytes_per_s * e_now)
        gpu_s = 1 / result.speed.decode_tokens_per_s - cpu_s_now
        left = 1 / row.value - gpu_s
        if left > 0 and cpu_bytes:
            shares.append(cpu_bytes / (host.bytes_per_s * left))
            used_urls.append(row.source_url)
    if not shares:
        return None
    clipped = [min(max(x, 0.05), 0.95) for x in shares]
    eff = statistics.median(clipped)
    err = statistics.median(abs(x / eff - 1) for x in clipped)
    return eff, len(clipped), err, sorted(set(used_urls))
