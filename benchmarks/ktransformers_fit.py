"""ktransformers' own CPU kernels: the CPU class × "ktransformers" factors from its rows, after their GPU
part (benchmarks/fit_speed.py).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from measurements import Measurement, row_quant
from rigcheck.core.catalog import Catalog, SpeedFactor
from rigcheck.core.errors import InputError
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.memory import Request
from rigcheck.core.models.resolve import from_catalog


@dataclass(frozen=True)
class EngineCpuFit:
    """An engine's own CPU kernels (ktransformers): the host's share of its peak bandwidth when they read the
    routed experts of a decoded token, and of the CPU's compute peak in a prompt's expert products."""

    decode_efficiency: float
    decode_rows: int
    decode_error: float
    prefill_efficiency: float | None
    prefill_rows: int
    prefill_error: float
    urls: list[str]


def fit_ktransformers(rows: list[Measurement], catalog: Catalog) -> EngineCpuFit | None:
    """ktransformers' two CPU efficiencies from its fit-split rows, each row placed and timed by fit() as a
    user's machine would be (estimate_accuracy.row_machine: the catalog GPU, the host's CPU from
    data/cpu_hosts.csv, a bandwidth the source measured as a snapshot's measured figure). What the GPU part
    (attention, shared experts, KV cache, at the GPU class's own factors) takes of the measured time per token
    is subtracted; the rest is the CPU's: routed-expert bytes ÷ (host bandwidth × e) for decode, routed-expert
    FLOPs ÷ (cores × clock × FLOPs per cycle × e) for prefill. Each efficiency is the median over its rows;
    prefill rows at the memory floor (reading the experts a chunk touches) say nothing of compute and are
    left out. The host bandwidth is taken as the estimator takes it, so a measured figure is treated alike
    in the fit and in the product."""
    from estimate_accuracy import NotEstimableError, row_machine
    from rigcheck.core.estimate.fit import fit, ktransformers_parts

    probe = SpeedFactor(
        id="cpu-ktransformers", hw_class=speed.CPU_CLASS, backend="ktransformers",
        decode_bandwidth_efficiency=1.0, prefill_compute_efficiency=1.0, source="fit_speed.py probe",
    )  # fmt: skip
    probing = replace(
        catalog, speed_factors=(*(f for f in catalog.speed_factors if f.backend != "ktransformers"), probe)
    )
    decode: list[float] = []
    prefill: list[tuple[float, float, float]] = []  # (share, floor seconds at e=1, CPU seconds needed)
    urls: set[str] = set()
    for row in rows:
        if not row.engine.lower().startswith("ktransformers") or not row.model_id or row.split == "blind":
            continue
        spec = catalog.model(row.model_id)
        if spec is None:
            continue
        try:
            machine = row_machine(row, catalog)
            req = Request(
                quant=row_quant(row), context=max(row.tokens or 512, 128), engine="ktransformers",
                backend=row.backend if row.backend in ("cuda", "rocm") else None,  # type: ignore[arg-type]
            )  # fmt: skip
            result = fit(from_catalog(spec), machine, req, probing, live=False, advise=False)
        except (
            InputError,
            NotEstimableError,
        ):  # a row the estimator cannot place: not estimable there either
            continue
        parts = ktransformers_parts(result.estimate, result.placement, machine, probing)
        if parts is None or result.verdict == "does_not_fit" or parts.host.source == "default":
            continue  # (a host whose bandwidth would be the default's guess says nothing: as in fit_cpu)
        host = parts.host.bytes_per_s
        if row.metric == "decode_tokens_per_s" and result.speed.decode_tokens_per_s:
            gpu_s = 1 / result.speed.decode_tokens_per_s - parts.cpu_read_bytes / host
            left = 1 / row.value - gpu_s
            if left > 0:
                decode.append(parts.cpu_read_bytes / (host * left))
                urls.add(row.source_url)
        elif row.metric == "prefill_tokens_per_s" and parts.cpu_compute and parts.gpu_prefill_s is not None:
            left = 1 / row.value - parts.gpu_prefill_s
            if left > 0:
                floor = parts.cpu_expert_bytes * parts.touched / host / parts.chunk
                share = parts.cpu_flops_per_token / (parts.cpu_compute.flops_per_s * left)
                prefill.append((share, floor, left))
                urls.add(row.source_url)
    if not decode:
        return None
    d_eff = statistics.median(min(max(x, 0.05), 0.95) for x in decode)
    d_err = statistics.median(abs(x / d_eff - 1) for x in decode)
    # at the memory floor: the measured CPU time is within 15% of reading the touched experts at d_eff
    compute_rows = [share for share, floor, left in prefill if left >= 1.15 * floor / d_eff]
    p_eff = statistics.median(compute_rows) if compute_rows else None
    p_err = statistics.median(abs(x / p_eff - 1) for x in compute_rows) if p_eff else 0.0
    return EngineCpuFit(d_eff, len(decode), d_err, p_eff, len(compute_rows), p_err, sorted(urls))


def print_ktransformers(rows: list[Measurement], catalog: Catalog) -> None:
    found = fit_ktransformers(rows, catalog)
    if found is None:
        return
    print("# ---- engines with CPU kernels of their own: the CPU class's factors for ktransformers ----\n")
    print("[[speed_factor]]")
    print('id = "cpu-ktransformers"')
    print(f'hw_class = "{speed.CPU_CLASS}"')
    print('backend = "ktransformers"')
    print(f"decode_bandwidth_efficiency = {found.decode_efficiency:.2f}")
    print("per_layer_us = 0")
    if found.prefill_efficiency is not None:
        print(f"prefill_compute_efficiency = {found.prefill_efficiency:.2f}")
    print(
        'source = "benchmarks/data/measurements.csv (fit split; benchmarks/fit_speed.py fit_ktransformers)"'
    )
    said = (
        f"decode: median of {found.decode_rows} ktransformers rows (routed experts read from RAM; |error| "
        f"{found.decode_error:.0%} on them); prefill: median of {found.prefill_rows} rows (routed-expert FLOPs "
        f"on the CPU; |error| {found.prefill_error:.0%})"
    )
    print(f'measured = "{said}"')
    print("sources = [")
    for url in found.urls:
        print(f'  "{url}",')
    print("]")
    print()
