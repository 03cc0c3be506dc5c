"""Fit the speed model's per-class factors (catalog/speed.toml) on the measurement set's fit split.

Run: ``.venv/bin/python benchmarks/fit_speed.py``. For every decode row run entirely on one kind of GPU
(no offload), it works out the bytes one token reads and the layers it runs, then for each hardware
class × backend finds the bandwidth efficiency and the fixed per-layer cost that minimise the squared
log error of tokens/s; prefill rows give the class's share of its compute peak (median of its dense rows,
or fitted with a board-power cap pooled over a vendor's classes on one backend: fit_power), its factor for
unquantized weights and for mixtures of experts (fit_prefill). Several GPUs in llama.cpp's
layer split count as one (they run one after another). Rows in the held-out quarter (``Measurement.split == "holdout"``) are never used. It prints TOML to paste into
``catalog/speed.toml`` with each class's row count and fit error, and the source URLs of its rows.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
import sys
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bf16_fit import fit_bf16, slow_bf16_row
from cpu_fit import _threads, print_cpu_classes
from cpu_hosts import host_cpu, host_memory
from dp4a_fit import fit_nodp4a, nodp4a_row
from intel_vulkan_path import old_intel_vulkan_path
from measurements import Measurement, load, row_build, row_context, row_micro_batch, row_quant
from per_hop_fit import HopFit, fit_per_hop
from prefill_fallback import GenericPrefill, generic_prefill
from rigcheck.core.catalog import Catalog, GpuSpec, SpeedFactor, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.fit import _active_bytes, prefill_flops_per_token
from rigcheck.core.estimate.memory import LLAMA_CPP_UBATCH, Request, estimate_memory
from rigcheck.core.estimate.speed.coopmat import vulkan_matrix_engines
from rigcheck.core.estimate.speed.cpu_host import cpu_peak
from rigcheck.core.estimate.speed.engine_build import build_correction
from rigcheck.core.estimate.speed.fixed import block_layers
from rigcheck.core.estimate.speed.reads import pcie_gbs
from rigcheck.core.estimate.speed.recurrent_scan import scan_flops_per_token
from rigcheck.core.estimate.speed.rocm_bf16 import rocm_bf16_on_fp32
from rigcheck.core.estimate.speed.stage_copy import boundary_seconds, staged_through_host
from rigcheck.core.estimate.speed.sycl_experts import ExpertLoop, sycl_expert_loop
from rigcheck.core.estimate.speed.vulkan_bf16 import intel_bf16_matrices
from rigcheck.core.machine import CPU, GPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ArchConfig
from rigcheck.core.whatif import simulate
from scan_fit import ScanFit, fit_scan
from sycl_expert_fit import expert_us as sycl_expert_us
from sycl_matvec_fit import fit_unreordered, unreordered_row

GIB = 1024**3
#: achieved DRAM bandwidth stays below ~95% of the peak on every device measured (stream-copy tests);
#: the fit is kept within it so that a fixed cost is not traded for an impossible efficiency
EFFICIENCIES = [e / 100 for e in range(5, 96)]
PER_LAYER_US = list(range(0, 301, 2))
#: fit the per-layer cost of a class only with this many rows; else take its vendor × backend pool's
MIN_ROWS_FOR_FIXED_COST = 4
#: the extra cost of a mixture-of-experts layer (SpeedFactor.moe_layer_us, speed/fixed.py) is fitted with the
#: efficiency and the per-layer cost only where the rows hold at least this many MoE and this many dense
#: rows (else the two cannot be told apart); elsewhere the vendor × backend pool's, else none
MIN_MOE_COST_ROWS = 2
MOE_LAYER_US = list(range(0, 601, 5))
#: classes whose rows stay out of their vendor × backend pool: GCN Instinct cards run community gfx906
#: builds of llama.cpp on an architecture without matrix units, unlike the RDNA/CDNA cards the pool serves
POOL_APART = frozenset({"amd-gcn"})


@dataclass(frozen=True)
class Point:
    row: Measurement
    hw_class: str
    backend: str
    bytes_per_token: float
    #: peak bandwidth, bytes/s (GPU) or host bandwidth (CPU)
    bandwidth: float
    layers: float
    #: 2 × active parameters, and the compute peak in FLOP/s (None when unpublished)
    flops_per_token: float
    peak_flops: float | None
    #: every weight byte on the device: what one prompt micro-batch streams (all experts of an MoE)
    weight_bytes: float = 0.0
    moe: bool = False
    #: prompt tokens each routed expert multiplies per micro-batch (speed.moe_tokens_per_expert)
    tokens_per_expert: float = speed.MOE_TOKENS_REF
    #: the GPU's board power (catalog ``tdp_watts``): the power limit it ran at, as far as anyone published
    watts: float | None = None
    #: GPU boundaries a token crosses in llama.cpp's layer split (GPUs - 1), and the µs each costs
    hops: int = 0
    per_hop_us: float = 0.0
    #: layers whose MLP is a mixture of experts (each pays SpeedFactor.moe_layer_us)
    moe_layers: int = 0
    #: prompt GEMMs on the matrix engines through Vulkan cooperative matrices where the catalog peak is the
    #: shader-core rate (Intel Xe2 and later on a build that enables them: speed/coopmat.py)
    coopmat: bool = False
    #: a hybrid's recurrent-scan FP32 FLOPs per prompt token (speed/recurrent_scan.py) and the GPU's FP32 peak
    scan_flops: float = 0.0
    fp32_flops: float | None = None
    #: the pooled share of the FP32 peak those scans reach (scan_fit; None: no scan time)
    scan_efficiency: float | None = None
    #: SYCL's per-expert loop for a prompt micro-batch of ``ubatch`` tokens (speed/sycl_experts.py; None:
    #: another path)
    expert_loop: ExpertLoop | None = None
    #: a prompt row's fixed cost per layer and micro-batch (the class's decode per_layer_us, as the estimator
    #: takes it: speed/fixed.py prompt_fixed_seconds) and the tokens in its micro-batch
    prompt_layer_us: float = 0.0
    ubatch: int = LLAMA_CPP_UBATCH
    #: seconds per prompt token a layer split's boundaries spend copying the hidden state (speed/stage_copy.py,
    #: without the hand-off latency, which ``per_hop_us`` adds once per micro-batch in gemm_rate)
    prompt_copy_s: float = 0.0

    @property
    def hop_seconds(self) -> float:
        return self.hops * self.per_hop_us * 1e-6

    @property
    def unquantized(self) -> bool:
        return self.row.format.upper() in UNQUANTISED


def point(row: Measurement, catalog: Catalog) -> Point | None:
    spec_model = catalog.model(row.model_id) if row.model_id else None
    # Several GPUs in llama.cpp's default layer split run one after another: per token, the same bytes at the
    # same bandwidth and the same FLOPs at the same peak as one of them (the estimator's "layers" split).
    if spec_model is None or row.offloaded or row.split == "blind":
        return None  # a blind row (benchmarks/data/blind.csv) is never a fit point, whoever passes it
    model = from_catalog(spec_model)
    gpu_spec = catalog.gpu(row.gpu_id) if row.gpu_count and row.gpu_id else None
    row = current_build_row(row, model.arch, gpu_spec)
    try:
        est = estimate_memory(
            model, Request(quant=row_quant(row), context=row_context(row), ubatch=row.ubatch), catalog
        )
    except InputError:
        return None
    per_layer, _experts, head = _active_bytes(est)
    flops = prefill_flops_per_token(model.arch)
    if row.gpu_count == 0:
        if row.engine.lower().startswith("ik_llama"):
            # a fork with CPU kernels of its own (ik_llama.cpp, Measurement.llama_cpp; its README describes
            # its own CPU quantisation and matrix kernels, https://github.com/ikawrakow/ik_llama.cpp) says
            # nothing about llama.cpp's CPU share, the only CPU engine the estimator models
            return None
        machine = Machine(
            cpu=CPU(logical_cores=8, model=row.host), memory=host_memory(row.host, 64 * GIB), gpus=()
        )
        host = speed.host_bandwidth(machine, catalog)
        if host.source == "default" and row.metric == "decode_tokens_per_s":
            return None  # a CPU we cannot place: its bandwidth would be a guess (prefill needs only compute)
        read = sum(per_layer) + head
        # the peak the estimator takes for this run (cpu_host.cpu_peak): the threads it ran, the platform's
        # cores and FLOPs per cycle, the int8 rate of the kernel llama.cpp picks for the type on that ISA
        cpu_machine = replace(machine, cpu=host_cpu(row.host))
        compute = cpu_peak(
            cpu_machine, catalog, quant_id=est.quant.id if est.quant else None, threads=_threads(row)
        )
        peak_cpu = compute.flops_per_s if compute else None
        return Point(row, speed.CPU_CLASS, "cpu", read, host.bytes_per_s, len(per_layer), flops, peak_cpu)
    gpu = catalog.gpu(row.gpu_id) if row.gpu_id else None
    if gpu is None or gpu.bandwidth_gbs is None:
        return None
    hw_class = speed.hardware_class(gpu.vendor, gpu.name, gpu, gpu.unified_memory)
    # BF16 on Vulkan's scalar shaders computes in FP32: the row is measured against the FP32 peak, as the
    # estimator does (speed.bf16_on_scalar_shaders; the rows name no NVIDIA driver nor OS; an Intel GPU the
    # row's build runs no cooperative matrices on has no BF16 matrix path)
    engines = (
        vulkan_matrix_engines(row.backend, gpu, llama_cpp_build(row.build)) if gpu.vendor == "intel" else None
    )  # type: ignore[arg-type]
    scalar = speed.bf16_on_scalar_shaders(row.backend, row.format.lower(), gpu.vendor, matrix_engines=engines)  # type: ignore[arg-type]
    # BF16 through hipBLAS on an AMD GPU without BF16 arithmetic: FP32 maths, as the estimator has it
    # (speed/rocm_bf16.py)
    rocm_fp32 = rocm_bf16_on_fp32(row.backend, row.format.lower(), gpu)  # type: ignore[arg-type]
    found = speed.prefill_peak_tflops(gpu, fp32=scalar is True or rocm_fp32)
    peak = found[0] if found else None
    read = sum(per_layer) + head
    ubatch = row_micro_batch(row)
    loop = sycl_expert_loop(
        row.backend,
        model.arch,
        quantized=row.format.upper() not in UNQUANTISED and est.quant is not None,
        ubatch=ubatch,
        expert_bytes=float(sum(est.layer_expert_bytes)),
        moe_layers=sum(1 for flag in model.arch.moe_layers if flag),
        bits_per_weight=est.quant.bits_per_weight if est.quant is not None else 16.0,
    )
    return Point(
        row,
        hw_class,
        row.backend,
        read,
        gpu.bandwidth_gbs * 1e9,
        # as transformer layers for the fixed cost (speed/fixed.py block_layers: a single-mixer block is half)
        block_layers(model.arch.layer_mixers, 0, len(per_layer), model.arch.layer_kernels),
        flops,
        peak * 1e12 if peak else None,
        float(sum(est.layer_weight_bytes) + head),
        model.arch.is_moe,
        speed.moe_tokens_per_expert(
            row_micro_batch(row),
            model.arch.experts_per_token or 1,
            model.arch.num_experts or 1,
        ),
        gpu.tdp_watts,
        max(row.gpu_count - 1, 0),
        moe_layers=sum(1 for flag in model.arch.moe_layers if flag) if model.arch.is_moe else 0,
        # GGML_VK_DISABLE_COOPMAT in the build column: a run with cooperative matrices turned off
        # BF16 on Intel keeps the shader-core share (vulkan_bf16.intel_bf16_matrices), as the estimator does
        coopmat=vulkan_matrix_engines(row.backend, gpu, llama_cpp_build(row.build))  # type: ignore[arg-type]
        and "GGML_VK_DISABLE_COOPMAT" not in row.build
        and not intel_bf16_matrices(row.backend, row.format.lower(), gpu, llama_cpp_build(row.build)),  # type: ignore[arg-type]
        scan_flops=scan_flops_per_token(model.arch),
        fp32_flops=gpu.fp32_tflops * 1e12 if gpu.fp32_tflops else None,
        expert_loop=loop,
        ubatch=ubatch,
        prompt_copy_s=max(row.gpu_count - 1, 0)
        * boundary_seconds(
            model.arch.hidden_size,
            ubatch,
            pcie_gbs(GPU(gpu.vendor, gpu.name, None), gpu),
            staged=staged_through_host(gpu),
            latency_us=0.0,
        ),
    )


def current_build_row(row: Measurement, arch: ArchConfig, gpu: GpuSpec | None) -> Measurement:
    """The row as a current llama.cpp would have run it: its tokens/s × the ratio of each kernel milestone
    newer than its build that applies to its model and hardware (catalog/engine_builds.toml, the same
    correction speed/engine_build.py divides a user's old-build estimate by), so the class factors fitted
    on it are a current build's. Unchanged for an unstated build and for other engines."""
    build = row.engine_build
    if build is None or not row.speed:
        return row
    backend = row.backend if row.gpu_count else "cpu"
    found = build_correction("llama.cpp", build, arch, backend, gpu)
    ratio = found.decode_divisor if row.metric == "decode_tokens_per_s" else found.prefill_divisor
    return replace(row, value=row.value * ratio) if ratio != 1.0 else row


def llama_cpp_build(text: str) -> int | None:
    """The llama.cpp build number a row's ``build`` column names ("a0dd7795 (5589)", "b8724 (b54cb2e3d)"),
    None where it names none (then the row is taken to be on a current build): measurements.row_build."""
    return row_build(text)


def gemm_rate(p: Point) -> float:
    """The row's prompt FLOP/s in its GEMMs: measured seconds per token less a hybrid's recurrent-scan time
    (at the pooled scan share) and less its layers' fixed cost once per micro-batch (speed/fixed.py
    prompt_fixed_seconds), never below a tenth of the measured time, × its FLOPs per token."""
    measured = 1 / p.row.value
    seconds = measured - p.layers * p.prompt_layer_us * 1e-6 / max(p.ubatch, 1)
    # a layer split's hand-offs, one per boundary and micro-batch, as the estimator adds them
    seconds -= p.prompt_copy_s + p.hops * p.per_hop_us * 1e-6 / max(p.ubatch, 1)
    if p.scan_flops and p.fp32_flops and p.scan_efficiency:
        seconds -= p.scan_flops / (p.fp32_flops * p.scan_efficiency)
    return p.flops_per_token / max(seconds, 0.1 * measured)


def decode_seconds(p: Point, eff: float, tau: float, moe_us: float = 0.0) -> float:
    """The decode model's seconds per token for one point (speed/decode.py, speed/fixed.py)."""
    return (
        p.bytes_per_token / (p.bandwidth * eff)
        + (p.layers * tau + p.moe_layers * moe_us) * 1e-6
        + p.hop_seconds
    )


def _decode_grid(points: list[Point], tau_fixed: float | None, moe_us: float) -> tuple[float, float, float]:
    """(efficiency, per-layer µs, squared log loss) at a fixed MoE-layer cost."""
    best = (1.0, 0.0, math.inf)
    for eff in EFFICIENCIES:
        for tau in PER_LAYER_US if tau_fixed is None else [tau_fixed]:
            loss = 0.0
            for p in points:
                loss += math.log(p.row.value * decode_seconds(p, eff, tau, moe_us)) ** 2
            if loss < best[2]:
                best = (eff, float(tau), loss)
    return best


def fit_decode(
    points: list[Point], tau_fixed: float | None = None, moe_us: float = 0.0
) -> tuple[float, float, float]:
    """(efficiency, per-layer µs, median |error|) minimising the squared log error, at ``moe_us`` µs more per
    mixture-of-experts layer."""
    eff, tau, _ = _decode_grid(points, tau_fixed, moe_us)
    errors = [abs(1 / decode_seconds(p, eff, tau, moe_us) / p.row.value - 1) for p in points]
    return eff, tau, statistics.median(errors)


def separates_moe(points: list[Point]) -> bool:
    """Whether ``points`` can tell a mixture-of-experts layer's extra cost from the per-layer one: MoE rows
    enough, and dense rows enough to fit the efficiency and the per-layer cost on their own."""
    moe = sum(1 for p in points if p.moe_layers)
    return moe >= MIN_MOE_COST_ROWS and len(points) - moe >= MIN_ROWS_FOR_FIXED_COST


def fit_moe_cost(points: list[Point], tau_fixed: float | None = None) -> tuple[float, float, float]:
    """(efficiency, per-layer µs, MoE-layer µs): the efficiency and the per-layer cost are the dense rows'
    (a dense layer's kernels are every layer's), and the extra cost of a mixture-of-experts layer
    (MOE_LAYER_US) the one that brings the MoE rows closest at those, least squared log error, as the MoE
    prefill factor is fitted against a class's dense rows (fit_prefill)."""
    dense = [p for p in points if not p.moe_layers]
    moe = [p for p in points if p.moe_layers]
    eff, tau, _ = _decode_grid(dense, tau_fixed, 0.0)
    loss = {
        m: sum(math.log(p.row.value * decode_seconds(p, eff, tau, m)) ** 2 for p in moe) for m in MOE_LAYER_US
    }
    return eff, tau, float(min(loss, key=lambda m: (loss[m], m)))


def keeps_median(
    points: list[Point], with_moe: tuple[float, float, float], without: tuple[float, float, float]
) -> bool:
    """Whether the factors with a MoE-layer cost do better on the class's fit rows (median |error|) than the
    plain fit: a cost the rows do not bear out is not kept (the joint fit lowers the squared log error by
    construction, trading the per-layer cost for it even where the MoE rows need nothing more)."""

    def median(eff: float, tau: float, moe_us: float) -> float:
        return statistics.median(
            abs(1 / decode_seconds(p, eff, tau, moe_us) / p.row.value - 1) for p in points
        )

    return median(*with_moe) < median(without[0], without[1], 0.0)


def slow_bf16_points(rows: list[Measurement], catalog: Catalog) -> list[Point]:
    """The decode points points_by_key sets apart for the BF16 fit (bf16_fit)."""
    found = [p for r in rows if slow_bf16_row(r.backend, r.format, r.metric) and (p := point(r, catalog))]
    return [p for p in found if not p.row.engine.lower().startswith("mlx")]


def points_by_key(
    rows: list[Measurement], catalog: Catalog
) -> tuple[dict[tuple[str, str], list[Point]], dict[tuple[str, str], list[Point]]]:
    """The decode and the prefill points of ``rows``, by hardware class × backend."""
    decode: dict[tuple[str, str], list[Point]] = defaultdict(list)
    prefill: dict[tuple[str, str], list[Point]] = defaultdict(list)
    for row in rows:
        p = point(row, catalog)
        if p is None:
            continue
        key = (p.hw_class, p.backend)
        if row.engine.lower().startswith("mlx"):
            # mlx-lm's own Metal kernels, not llama.cpp's Metal backend: never pooled into llama.cpp's rows;
            # benchmarks/engine_factors.py fits them (catalog/speed_engines.toml)
            continue
        if row.ollama and row.gpu_count:
            # Ollama on a GPU runs some architectures on graphs of its own (Measurement.llama_cpp), whose lag
            # would set the class's factor for every llama.cpp user; fit_maturity fits it as Ollama's
            continue
        if (
            row.metric == "decode_tokens_per_s"
            and p.moe
            and speed.tiled_expert_decode(
                row.backend,
                row.format.lower(),  # type: ignore[arg-type]
            )
        ):
            continue  # its experts run a tiled GEMM, not a read (speed.TILED_EXPERT_DECODE): not bandwidth
        if nodp4a_row(row, catalog):
            continue  # bound by emulated dot products, not the memory (dp4a_fit): fitted apart
        if old_intel_vulkan_path(row, llama_cpp_build(row.build), p.coopmat):
            continue  # a kernel or a Mesa current systems do not run (intel_vulkan_path)
        if slow_bf16_row(row.backend, row.format, row.metric):
            continue  # another mat-vec kernel (bf16_fit, slow_bf16_points): fitted apart
        if unreordered_row(row):
            continue  # SYCL's mat-vec without the reordered layout (sycl_matvec_fit): fitted apart
        (decode if row.metric == "decode_tokens_per_s" else prefill)[key].append(p)
    return decode, prefill


def main() -> None:
    catalog = load_catalog(use_overlay=False)
    rows = [r for r in load() if r.split == "fit" and r.speed]
    decode, prefill = points_by_key(rows, catalog)
    # each further GPU's hand-off, from one-GPU and N-GPU runs of one source, fitted first and then held
    # fixed in the efficiency and per-layer fits, so multi-GPU rows do not inflate the per-layer cost
    hop_fits = fit_per_hop(rows, catalog)
    decode = {
        key: [replace(p, per_hop_us=hop_fits[key].us if key in hop_fits else 0.0) for p in points]
        for key, points in decode.items()
    }
    cpu_efficiency = fit_cpu(rows, catalog, decode.get((speed.CPU_CLASS, "cpu"), []))
    # a hybrid's recurrent scans, against the catalog's class factors (scan_fit): the prompt rows' GEMM time is
    # what is left of them (gemm_rate)
    scan: ScanFit | None = fit_scan(rows, catalog, estimate)
    if scan is not None:
        prefill = {
            key: [replace(p, scan_efficiency=scan.efficiency) for p in points]
            for key, points in prefill.items()
        }
    #: each class × backend's decode factors, for a class that borrows its neighbour's on the same backend
    fitted: dict[tuple[str, str], tuple[float, float]] = {}
    #: every fitted class × backend row as printed, for a class that borrows its vendor's backend row
    printed: dict[tuple[str, str], list[str]] = {}
    print(HEADER)
    pools: dict[tuple[str, str], list[Point]] = defaultdict(list)
    for (cls, backend), points in decode.items():
        if cls not in POOL_APART:
            pools[(cls.split("-")[0], backend)].extend(points)
    pool_tau = {
        key: fit_decode(points)[1] for key, points in pools.items() if len(points) >= MIN_ROWS_FOR_FIXED_COST
    }
    decode_fits: dict[tuple[str, str], tuple[float, float, float, str, list[str]]] = {}
    moe_fits: dict[tuple[str, str], tuple[float, str]] = {}
    for key, points in decode.items():
        if not points:
            continue
        tau_fixed = None
        if len(points) < MIN_ROWS_FOR_FIXED_COST:
            tau_fixed = pool_tau.get((key[0].split("-")[0], key[1]))
            if tau_fixed is None:
                tau_fixed = next((t for (_v, b), t in pool_tau.items() if b == key[1]), 0.0)
        moe_found = (
            fit_moe_cost(points, tau_fixed) if key[0] != speed.CPU_CLASS and separates_moe(points) else None
        )
        plain = fit_decode(points, tau_fixed)
        if moe_found is not None and moe_found[2] and keeps_median(points, moe_found, plain):
            eff, tau, moe_us = moe_found
            moe_how = "the MoE rows' against the dense rows' efficiency and per-layer cost"
        else:
            # none: a pool's figure would be set by another class's rows (a vendor × backend pool fits one
            # efficiency for all its classes, so its MoE cost stands in for their differences too)
            moe_us, moe_how = 0.0, ""
            eff, tau, _err = plain
        err = statistics.median(
            abs(1 / decode_seconds(p, eff, tau, moe_us) / p.row.value - 1) for p in points
        )
        if moe_us:
            moe_fits[key] = (moe_us, moe_how)
        how = "fitted with the efficiency" if tau_fixed is None else "taken from its vendor × backend pool"
        extra_urls: list[str] = []
        if key == (speed.CPU_CLASS, "cpu") and cpu_efficiency is not None:
            eff, n_rows, err, extra_urls = cpu_efficiency
            tau = 0.0
            how = f"none; the efficiency is the median over {n_rows} CPU-only and offloaded rows, |error| on those"
        decode_fits[key] = (eff, tau, err, how, extra_urls)
    # each prompt row pays its layers' fixed cost once per micro-batch at the decode figure its class × backend
    # prints (a borrowing class: its neighbour's), as the estimator takes it (speed/fixed.py)
    prefill = {
        key: [
            replace(
                p,
                prompt_layer_us=printed_per_layer_us(key, decode_fits),
                per_hop_us=hop_fits[key].us if key in hop_fits else 0.0,
            )
            for p in points
        ]
        for key, points in prefill.items()
    }
    prefill_fits = fit_prefill(prefill, {key: f[0] for key, f in decode_fits.items()})
    # a class × backend with no prompt rows at all: its backend's median share (prefill_fallback)
    generic = generic_prefill(prefill_fits, prefill, POOL_APART)
    bf16 = fit_bf16(
        [
            replace(
                p,
                per_hop_us=hop_fits[(p.hw_class, p.backend)].us
                if (p.hw_class, p.backend) in hop_fits
                else 0.0,
            )
            for p in slow_bf16_points(rows, catalog)
        ],
        lambda cls, b: decode_fits[(cls, b)][:2] if (cls, b) in decode_fits else None,
    )
    unreordered = fit_unreordered(
        [
            replace(
                p,
                per_hop_us=hop_fits[(p.hw_class, p.backend)].us
                if (p.hw_class, p.backend) in hop_fits
                else 0.0,
            )
            for r in rows
            if unreordered_row(r) and (p := point(r, catalog)) is not None
        ],
        lambda cls, b: decode_fits[(cls, b)][:2] if (cls, b) in decode_fits else None,
    )
    nodp4a = fit_nodp4a(
        rows,
        catalog,
        {
            cls: (fit[1], hop_fits[(cls, b)].us if (cls, b) in hop_fits else 0.0)
            for (cls, b), fit in decode_fits.items()
            if b == "cuda"
        },
    )
    for key in sorted(decode_fits):
        points = decode[key]
        pre = prefill.get(key, [])
        eff, tau, err, how, extra_urls = decode_fits[key]
        prefill_fit = prefill_fits.get(key)
        prefill_from = ""
        if prefill_fit is None and not pre:
            # decode rows only: the class's default backend's prefill shares, as print_borrowed_backend does
            # for a class × backend with no rows at all (prefill rides the chip's matrix path)
            default = (key[0], DEFAULT_BACKEND.get(key[0].split("-")[0], "cpu"))
            prefill_fit = prefill_fits.get(default) if default != key else None
            prefill_from = f" (no prefill rows of its own: the {default[0]}-{default[1]} shares)"
        fallback = generic.get(key[1]) if prefill_fit is None else None
        urls = sorted({p.row.source_url for p in points + pre} | set(extra_urls))
        with_nodp4a = nodp4a is not None and key[0].startswith("nvidia") and key[1] == "cuda"
        if with_nodp4a:
            urls = sorted(set(urls) | set(nodp4a.urls))
        slow_bf16 = bf16.get(key[1])
        if slow_bf16 is not None:
            urls = sorted(set(urls) | set(slow_bf16.urls))
        slow_matvec = unreordered.get(key[1], [])
        for matvec in slow_matvec:
            urls = sorted(set(urls) | set(matvec.urls))
        if scan is not None and key[1] != "cpu":
            urls = sorted(set(urls) | set(scan.urls))
        print("[[speed_factor]]")
        print(f'id = "{key[0]}-{key[1]}"')
        print(f'hw_class = "{key[0]}"')
        print(f'backend = "{key[1]}"')
        if key[1] == DEFAULT_BACKEND.get(key[0].split("-")[0], "cpu"):
            print("default = true")
        factor_lines = [f"decode_bandwidth_efficiency = {eff:.2f}", f"per_layer_us = {tau:g}"]
        if key in moe_fits:
            factor_lines.append(f"moe_layer_us = {moe_fits[key][0]:g}")
        fitted[key] = (eff, tau)
        if key in hop_fits and hop_fits[key].us:
            factor_lines.append(f"per_gpu_us = {hop_fits[key].us:g}")
        if prefill_fit is not None:
            factor_lines += prefill_lines(prefill_fit)
        if fallback is not None and key[1] != "cpu":
            factor_lines += fallback.lines()
        if scan is not None and key[1] != "cpu":
            factor_lines.append(f"prefill_scan_efficiency = {scan.efficiency:.3f}")
        if with_nodp4a:
            factor_lines.append(f"decode_nodp4a_efficiency = {nodp4a.efficiency:.2f}")
        if slow_bf16 is not None:
            factor_lines.append(f"decode_bf16_factor = {slow_bf16.factor:.2f}")
        for matvec in slow_matvec:
            factor_lines.append(f"{matvec.field} = {matvec.factor:.2f}")
        print("\n".join(factor_lines))
        printed[key] = [line for line in factor_lines if not line.startswith("per_gpu_us")]
        print('source = "benchmarks/data/measurements.csv (fit split; benchmarks/fit_speed.py)"')
        print(
            f'measured = "{len(points)} decode rows (median |error| {err:.0%} on them; per-layer cost {how})'
            + (f", prefill{prefill_from}: {prefill_fit.said}" if prefill_fit is not None else "")
            + (f"; per further GPU: {hop_fits[key].said}" if key in hop_fits and hop_fits[key].us else "")
            + (f"; cost per mixture-of-experts layer {moe_fits[key][1]}" if key in moe_fits else "")
            + (f"; {scan.said}" if scan is not None and key[1] != "cpu" else "")
            + (f"; {nodp4a.said}" if with_nodp4a else "")
            + (f"; {slow_bf16.said}" if slow_bf16 is not None else "")
            + "".join(f"; {matvec.said}" for matvec in slow_matvec)
            + '"'
        )
        print("sources = [")
        for url in urls:
            print(f'  "{url}",')
        print("]")
        print()
    print_ktransformers(rows, catalog)
    print_cpu_classes(rows, catalog)
    print_borrowed(fitted, hop_fits, generic, prefill_fits=prefill_fits, prefill=prefill, scan=scan)
    print_borrowed_backend(printed, generic)


def prefill_lines(fit: PrefillFit) -> list[str]:
    """A class × backend's fitted prefill shares as TOML lines (the multipliers that differ from 1)."""
    lines = [f"prefill_compute_efficiency = {min(fit.efficiency, 2.0):.2f}"]
    if fit.float_factor != 1.0:
        lines.append(f"prefill_float_factor = {min(fit.float_factor, 2.0):.2f}")
    if fit.moe_factor != 1.0:
        lines.append(f"prefill_moe_factor = {min(fit.moe_factor, 2.0):.2f}")
        lines.append(f"prefill_moe_exponent = {fit.moe_exponent:.2f}")
    if fit.float_moe_factor != 1.0:
        lines.append(f"prefill_float_moe_factor = {min(fit.float_moe_factor, 2.0):.2f}")
    if fit.tflops_per_watt is not None:
        lines.append(f"prefill_tflops_per_watt = {fit.tflops_per_watt:.3f}")
    if fit.coopmat_factor != 1.0:
        lines.append(f"prefill_coopmat_factor = {min(fit.coopmat_factor, 16.0):.2f}")
    if fit.coopmat_moe_factor != 1.0:
        lines.append(f"prefill_coopmat_moe_factor = {min(fit.coopmat_moe_factor, 2.0):.2f}")
    if fit.expert_us:
        lines.append(f"prefill_expert_us = {min(fit.expert_us, 1000.0):.1f}")
    return lines


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


@dataclass(frozen=True)
class PrefillFit:
    efficiency: float
    float_factor: float
    moe_factor: float
    moe_exponent: float
    #: TFLOPS per watt of board power (speed.prefill_compute), None where no cap is fitted
    tflops_per_watt: float | None
    #: in words: how many rows of which kind set each figure
    said: str
    #: a mixture of experts with unquantized experts, relative to the dense quantised share (per backend)
    float_moe_factor: float = 1.0
    #: prompt GEMMs on matrix engines through Vulkan cooperative matrices (Point.coopmat), relative to the
    #: shader-core share
    coopmat_factor: float = 1.0
    #: µs per expert launch of SYCL's per-expert loop (sycl_expert_fit; 0: not fitted)
    expert_us: float = 0.0
    #: the MoE factor of rows on cooperative matrices (coop_moe_group), 1 where the class has none
    coopmat_moe_factor: float = 1.0


#: a matrix-engine factor needs this many rows on cooperative matrices and this many without in one class ×
#: backend; elsewhere the efficiency covers both
MIN_COOPMAT_ROWS = 2


#: a float-weight factor needs this many dense unquantized rows: a class × backend with that many of its own
#: gets its own factor, the others the median over their backend's rows. The GEMM path for F16/BF16 weights
#: is the backend's, but the units it runs on are the class's: GCN 5.1 (gfx906, amd-gcn) has no matrix
#: units (catalog/gpus/amd.toml, MI50 notes) while RDNA 3 has BF16 WMMA (catalog/compat/arch.toml), and
#: the FP16-accumulate peak the estimate measures against is twice the FP32-accumulate rate on GeForce
#: cards only (speed.prefill_peak_tflops). Leave-one-out over the fit split
#: (benchmarks/prefill_analysis.py --loo): all prefill 16.5% median |error|, 70% within ±35% per class
#: against 19.4%, 68% pooled per backend. An MoE factor needs this many MoE rows and dense rows in its class
MIN_FLOAT_ROWS = 3
MIN_MOE_ROWS = 2
#: a backend's factor for unquantized experts needs this many MoE rows with F16/BF16 experts, pooled over its
#: classes (the path is the backend's kernels). One: the set has one such prefill row per backend, and the
#: factor's decode consequence (speed.TILED_EXPERT_DECODE) is checked on rows it was not fitted on
MIN_FLOAT_MOE_ROWS = 1
#: classes with no MoE prefill row of their own take the MoE factor of a class running the same kernels
BORROWED_MOE = {"nvidia-datacenter": "nvidia-consumer"}
#: backends whose MUL_MAT_ID in a prompt is not one tiled kernel but a loop over experts, so their MoE rows set
#: a factor of their own instead of the class's: SYCL copies the expert ids to the host (``stream->wait()``),
#: sorts the rows by expert and runs one full ggml_sycl_mul_mat (to_fp16_sycl + a oneDNN/oneMKL GEMM) per used
#: expert (ggml-org/ggml src/ggml-sycl/ggml-sycl.cpp@d99724f, ggml_sycl_mul_mat_id), where Vulkan gathers each
#: expert's tokens inside one matmul_id dispatch (ggml_vk_mul_mat_id_q_f16, ggml-vulkan.cpp@d99724f)
OWN_MOE_BACKENDS = frozenset({"sycl"})


def moe_group(key: tuple[str, str]) -> str:
    """The rows that share one MoE prefill factor: the class's, except a backend of OWN_MOE_BACKENDS."""
    cls, backend = key
    return f"{cls}/{backend}" if backend in OWN_MOE_BACKENDS else cls


#: A MoE factor is the ratio of an expert GEMM to the dense GEMM of one kernel family, so rows whose prompt
#: GEMMs run on cooperative matrices (Point.coopmat: Intel Xe2 on Vulkan) fit one of their own: there
#: ``ggml_vk_mul_mat_id_q_f16`` runs the KHR_coopmat ``matmul_id_subgroup_*_f16`` shaders with the generic
#: 128-invocation ``l_warptile_mmqid`` beside the dense coopmat shaders on the 512-invocation tiles tuned for
#: Intel coopmat (``l_warptile``/``l_warptile_mmq``), where Alchemist runs both on the shader-core family's
#: 64 × 64 tiles (ggml-org/ggml src/ggml-vulkan/ggml-vulkan.cpp@d99724f, ggml_vk_load_shaders and the Intel
#: case of ``mul_mat_id_l``). Where a class has fewer than MIN_MOE_ROWS such rows, the factor is the one of
#: the class whose fitted Vulkan MoE rows run the same KHR_coopmat matmul_id shaders: Strix Halo's RDNA 3.5
#: on RADV ("matrix cores: KHR_coopmat", ggml-org/llama.cpp PR #21344's device line;
#: ``ggml_vk_khr_cooperative_matrix_support`` returns true for RADV), whose class factor pools those Vulkan
#: rows with its ROCm ones
BORROWED_COOPMAT_MOE = {"intel": "amd-apu"}


def coop_moe_group(key: tuple[str, str]) -> str:
    """The rows on cooperative matrices of ``key`` that share one MoE factor (BORROWED_COOPMAT_MOE)."""
    return f"{moe_group(key)}/coopmat"


#: a power cap is fitted for a class × backend only when its dense rows hold at least this many GPUs with a
#: published board power on each side of it: below the cap (their peak × efficiency sets their rate) and at
#: it (their watts do); with fewer, one regime would be a single card's, and the class keeps the plain share
MIN_POWER_GPUS = 2


def power_pool(key: tuple[str, str], power: str) -> tuple[str, str]:
    """The rows that share one TFLOPS-per-watt figure: ``pooled``, a vendor's classes on one backend (one
    set of kernels; what a tensor operation costs in watts is the silicon's, not the market segment's),
    except the classes kept apart from their vendor's pool (POOL_APART); ``class``, each class × backend."""
    cls, backend = key
    if power == "pooled" and cls not in POOL_APART:
        return (cls.split("-")[0], backend)
    return key


def dense_rate(p: Point, efficiency: float, per_watt: float | None) -> float:
    """FLOP/s the class model gives a dense quantised-weight row: speed.prefill_compute's min(peak ×
    efficiency, board power × TFLOPS per watt)."""
    rate = (p.peak_flops or 0.0) * efficiency
    if per_watt and p.watts:
        rate = min(rate, p.watts * per_watt * 1e12)
    return rate


def fit_power(
    groups: dict[tuple[str, str], list[tuple[Point, float]]],
) -> tuple[dict[tuple[str, str], float], float | None]:
    """Each class × backend's efficiency and one TFLOPS per watt for all of ``groups``, minimising the sum
    of |log error| of min(peak × e, watts × k) against the rows' FLOP rates: the median's own loss, so one
    stray row (a published figure far off its card's other rows) moves them no more than the plain median
    would. The model is linear in log e and log k on each side of the cap, so the optimum lies on rows'
    breakpoints: k is tried at each row's own watts-set rate, then e and k are refined in turn over every
    breakpoint. Without GPUs enough on both sides of the cap (MIN_POWER_GPUS), or when the cap does not
    lower the loss, the plain median shares and no cap.
    """
    plain = {
        key: statistics.median(r / (p.peak_flops or 1.0) for p, r in rows) for key, rows in groups.items()
    }
    logs = {
        key: [(math.log(p.peak_flops or 1.0), math.log(p.watts * 1e12) if p.watts else math.inf, math.log(r), p)
              for p, r in rows]
        for key, rows in groups.items()
    }  # fmt: skip
    with_watts = {p.row.gpu_id for rows in logs.values() for _a, c, _t, p in rows if c != math.inf}
    if len(with_watts) < 2 * MIN_POWER_GPUS:
        return plain, None

    def loss(key: tuple[str, str], log_e: float, log_k: float, power: int = 1) -> float:
        return sum(abs(min(a + log_e, c + log_k) - t) ** power for a, c, t, _p in logs[key])

    def between(points: set[float]) -> list[float]:
        """The breakpoints and the midpoints between neighbours: where the |log error| is flat between two
        breakpoints (an even number of rows), the squared error then picks its middle, as a median does."""
        ordered = sorted(points)
        return ordered + [(x + y) / 2 for x, y in itertools.pairwise(ordered)]

    def best_e(key: tuple[str, str], log_k: float) -> float:
        rows = logs[key]
        candidates = {t - a for a, _c, t, _p in rows} | {
            c + log_k - a for a, c, _t, _p in rows if c != math.inf
        }
        return min(between(candidates), key=lambda e: (round(loss(key, e, log_k), 9), loss(key, e, log_k, 2)))

    def total(log_k: float, es: dict[tuple[str, str], float], power: int = 1) -> float:
        return sum(loss(key, es[key], log_k, power) for key in logs)

    power_side = {t - c for rows in logs.values() for _a, c, t, _p in rows if c != math.inf}
    scored = []
    for log_k in sorted(power_side):
        es = {key: best_e(key, log_k) for key in logs}
        scored.append((round(total(log_k, es), 9), total(log_k, es, 2), log_k, es))
    _loss, _square, log_k, es = min(scored, key=lambda x: (x[0], x[1]))
    for _ in range(5):
        breakpoints = power_side | {
            a + es[key] - c for key, rows in logs.items() for a, c, _t, _p in rows if c != math.inf
        }
        log_k = min(between(breakpoints), key=lambda k: (round(total(k, es), 9), total(k, es, 2)))
        new = {key: best_e(key, log_k) for key in logs}
        if new == es:
            break
        es = new
    below = {p.row.gpu_id for key, rows in logs.items() for a, c, _t, p in rows if a + es[key] < c + log_k}
    at_cap = {p.row.gpu_id for key, rows in logs.items() for a, c, _t, p in rows if a + es[key] >= c + log_k}
    plain_loss = sum(loss(key, math.log(plain[key]), math.inf) for key in logs)
    if len(below) < MIN_POWER_GPUS or len(at_cap) < MIN_POWER_GPUS or total(log_k, es) >= plain_loss:
        return plain, None
    return {key: math.exp(e) for key, e in es.items()}, math.exp(log_k)


def fit_prefill(
    prefill: dict[tuple[str, str], list[Point]],
    decode_eff: dict[tuple[str, str], float],
    *,
    power: str = "pooled",
    float_by: str = "class",
) -> dict[tuple[str, str], PrefillFit]:
    """Each class × backend's share of its prefill compute peak, its power cap, and its multipliers for
    unquantized weights (per class × backend where it has MIN_FLOAT_ROWS of them, else pooled per backend;
    ``float_by="backend"`` pools them all, as before) and for a mixture of experts (per class), fitted
    together.

    A row's rate is measured tokens/s × FLOPs per token. Its expected rate is the class × backend's dense
    rate (dense_rate: min(peak × efficiency, board power × TFLOPS per watt); ``power=False`` fits no cap)
    × the float factor (unquantized weights) × the MoE factor (mixture of experts). They are found by
    alternating: the efficiency and cap from the rows with the other factors divided out (fit_power), each
    factor the median of its rows' ratios to the dense rate, until they settle. Rows at the memory floor
    (every weight read once per micro-batch at the class's decode bandwidth efficiency) say nothing about
    compute and are left out, as are MoE rows with unquantized experts (UNQUANTISED: a format effect of its
    own).
    """
    rows: dict[tuple[str, str], list[tuple[Point, float]]] = {}
    for key, points in prefill.items():
        eff = decode_eff.get(key, 0.8)
        kept = [
            (p, gemm_rate(p))
            for p in points
            if p.peak_flops and not at_memory_floor(p, eff) and not (p.moe and p.unquantized)
        ]
        if kept:
            rows[key] = kept
    backends = {b for _c, b in rows}
    # the float factor of a class × backend: its own unquantized rows where it has MIN_FLOAT_ROWS of them,
    # else the median over its backend's (see MIN_FLOAT_ROWS)
    f_float = dict.fromkeys(rows, 1.0)
    groups_moe = {moe_group(key) for key in rows} | {
        coop_moe_group(key) for key, kept in rows.items() if any(p.coopmat for p, _r in kept)
    }
    f_moe = dict.fromkeys(groups_moe, 1.0)
    eff = {key: statistics.median(r / (p.peak_flops or 1.0) for p, r in kept) for key, kept in rows.items()}
    cap: dict[tuple[str, str], float | None] = dict.fromkeys(rows)
    exponent = 0.0
    float_n = {b: sum(1 for (_c, kb), kept in rows.items() if kb == b for p, _s in kept if p.unquantized)
               for b in backends}  # fmt: skip
    own_float_n = {key: sum(1 for p, _s in kept if p.unquantized) for key, kept in rows.items()}
    dense_n = {c: sum(1 for key, kept in rows.items() if moe_group(key) == c for p, _s in kept if not p.moe)
               for c in groups_moe}  # fmt: skip
    moe_n = dict.fromkeys(groups_moe, 0)
    # The efficiency is the dense model's: where a class × backend has dense rows enough, they alone set it,
    # and its MoE rows set the class's MoE factor; elsewhere all its rows do, with the factor divided out.
    dense_key = {key: sum(1 for p, _s in kept if not p.moe) >= MIN_MOE_ROWS for key, kept in rows.items()}

    def group_of(key: tuple[str, str], p: Point) -> str:
        return coop_moe_group(key) if p.coopmat else moe_group(key)

    def moe_share(key: tuple[str, str], p: Point) -> float:
        factor = f_moe[group_of(key, p)]
        return min(factor * (p.tokens_per_expert / speed.MOE_TOKENS_REF) ** exponent, 1.0) if p.moe else 1.0

    # the matrix-engine factor (Point.coopmat) of a class × backend with MIN_COOPMAT_ROWS rows on each side
    f_coop = dict.fromkeys(rows, 1.0)
    coop_n = {key: sum(1 for p, _s in kept if p.coopmat) for key, kept in rows.items()}
    coop_fits = {key for key, n in coop_n.items() if n >= MIN_COOPMAT_ROWS <= len(rows[key]) - n}

    def coop(key: tuple[str, str], p: Point) -> float:
        return f_coop[key] if p.coopmat else 1.0

    for _ in range(50):
        before = (dict(eff), dict(cap), dict(f_float), dict(f_moe), exponent, dict(f_coop))
        pools: dict[tuple[str, str], dict[tuple[str, str], list[tuple[Point, float]]]] = defaultdict(dict)
        for key, kept in rows.items():
            pools[power_pool(key, power)][key] = [
                (
                    p,
                    r
                    / (
                        (f_float[key] if p.unquantized else 1.0)
                        * (f_moe[group_of(key, p)] if p.moe else 1.0)
                        * coop(key, p)
                    ),
                )
                for p, r in kept
                if not (p.moe and dense_key[key]) and p.expert_loop is None
            ]
        for groups in pools.values():
            if power == "none":
                found = {
                    k: statistics.median(r / (p.peak_flops or 1.0) for p, r in g) for k, g in groups.items()
                }
                per_watt = None
            else:
                found, per_watt = fit_power(groups)
            for key, value in found.items():
                eff[key], cap[key] = value, per_watt
        pooled_float = {
            b: statistics.median(
                r / dense_rate(p, eff[key], cap[key]) / coop(key, p)
                for key, kept in rows.items()
                if key[1] == b
                for p, r in kept
                if p.unquantized
            )
            for b in backends
            if float_n[b] >= MIN_FLOAT_ROWS
        }
        for key, kept in rows.items():
            if float_by == "class" and own_float_n[key] >= MIN_FLOAT_ROWS:
                f_float[key] = statistics.median(
                    r / dense_rate(p, eff[key], cap[key]) / coop(key, p) for p, r in kept if p.unquantized
                )
            else:
                f_float[key] = pooled_float.get(key[1], 1.0)
        # MoE rows: ratio to the dense rate = f_class × (tokens per expert / 64) ** exponent; the exponent is
        # pooled over classes (least squares of log ratio on log tokens within each class)
        moe_rows = {
            c: [
                (p.tokens_per_expert, r / dense_rate(p, eff[key], cap[key]) / coop(key, p))
                for key, kept in rows.items()
                if dense_key[key]
                for p, r in kept
                if p.moe and p.expert_loop is None and group_of(key, p) == c
            ]
            for c in groups_moe
        }
        num = den = 0.0
        for found in moe_rows.values():
            if len(found) >= MIN_MOE_ROWS:
                xs = [math.log(b / speed.MOE_TOKENS_REF) for b, _r in found]
                ys = [math.log(r) for _b, r in found]
                mx, my = statistics.fmean(xs), statistics.fmean(ys)
                num += sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
                den += sum((x - mx) ** 2 for x in xs)
        exponent = min(max(num / den, 0.0), 1.0) if den else 0.0
        for c, found in moe_rows.items():
            if len(found) >= MIN_MOE_ROWS:
                f_moe[c] = statistics.median(r / (b / speed.MOE_TOKENS_REF) ** exponent for b, r in found)
                moe_n[c] = len(found)
        for c in groups_moe:
            cls = c.split("/")[0]
            if c.endswith("/coopmat") and moe_n[c] < MIN_MOE_ROWS and cls in BORROWED_COOPMAT_MOE:
                f_moe[c] = f_moe.get(BORROWED_COOPMAT_MOE[cls], 1.0)
        for key in coop_fits:
            f_coop[key] = statistics.median(
                r
                / (
                    dense_rate(p, eff[key], cap[key])
                    * (f_float[key] if p.unquantized else 1.0)
                    * moe_share(key, p)
                )
                for p, r in rows[key]
                if p.coopmat
            )
        if (dict(eff), dict(cap), dict(f_float), dict(f_moe), exponent, dict(f_coop)) == before:
            break
    exponent_n = sum(n for n in moe_n.values() if n >= MIN_MOE_ROWS)
    # SYCL's per-expert loop (speed/sycl_experts.py): its launch cost from its MoE rows, the dense rate settled
    loop_us = {
        key: sycl_expert_us(
            kept,
            lambda p, key=key: dense_rate(p, eff[key], cap[key]) * coop(key, p),  # type: ignore[misc]
            decode_eff.get(key, 0.8),
        )
        for key, kept in rows.items()
    }
    # Unquantized experts (kept out above): per backend, the median of their shares over the dense efficiency
    # of their class × backend. A separate multiplier, not the float × MoE product: their expert products
    # leave the quantised MUL_MAT_ID kernels altogether (UNQUANTISED, speed.prefill_path).
    float_moe: dict[str, tuple[float, int, list[str]]] = {}
    for b in {kb for _c, kb in prefill}:
        found = [
            (gemm_rate(p) / p.peak_flops / eff[key] / coop(key, p), p.row.format.upper())
            for key, points in prefill.items()
            if key[1] == b and key in eff
            for p in points
            if p.moe and p.unquantized and p.peak_flops and not at_memory_floor(p, decode_eff.get(key, 0.8))
        ]
        if len(found) >= MIN_FLOAT_MOE_ROWS:
            float_moe[b] = (
                statistics.median(r for r, _f in found),
                len(found),
                sorted({f for _r, f in found}),
            )
    for c, neighbour in BORROWED_MOE.items():
        if c in f_moe and f_moe[c] == 1.0 and moe_n.get(c, 0) == 0:
            f_moe[c] = f_moe.get(neighbour, 1.0)
    fits = {}
    for key, kept in rows.items():
        cls, backend = key
        group = moe_group(key)
        own = float_by == "class" and own_float_n[key] >= MIN_FLOAT_ROWS
        n_float = (own_float_n[key] if own else float_n[backend]) if f_float[key] != 1.0 else 0
        said = (
            f"median of {sum(1 for p, _s in kept if not p.moe)} dense rows"
            if dense_key[key]
            else f"median of {len(kept)} rows"
        )
        if cap[key] is not None:
            dense = [p for p, _r in kept if not (p.moe and dense_key[key])]
            capped = {
                p.row.gpu_id
                for p in dense
                if dense_rate(p, eff[key], None) > dense_rate(p, eff[key], cap[key])
            }
            pool = power_pool(key, power)
            pooled = [k for k in rows if power_pool(k, power) == pool]
            pooled_rows = [p for k in pooled for p, _r in rows[k] if not (p.moe and dense_key[k])]
            said = (
                f"efficiency fitted with the power cap on {len(dense)} {'dense ' if dense_key[key] else ''}rows "
                f"of {len({p.row.gpu_id for p in dense})} GPUs ({len(capped)} at the cap"
                + (
                    f"); TFLOPS per watt pooled over {pool[0]} {pool[1]} ({len(pooled_rows)} rows of "
                    f"{len({p.row.gpu_id for p in pooled_rows})} GPUs; least |log error|)"
                    if len(pooled) > 1
                    else "; least |log error|)"
                )
            )
        if n_float:
            said += (
                f"; float factor from its {n_float} unquantized rows"
                if own
                else f"; float factor from {n_float} unquantized {backend} rows"
            )
        if f_moe[group] != 1.0:
            said += (
                f"; MoE factor from {moe_n[group]} MoE and {dense_n[group]} dense rows of the "
                + ("class" if group == cls else f"class on {backend} (its own MUL_MAT_ID loop)")
                if moe_n.get(group, 0)
                else f"; MoE factor borrowed from {BORROWED_MOE[cls]} (no MoE row of its own)"
            )
        coop_group = coop_moe_group(key)
        coop_moe = f_moe.get(coop_group, 1.0)
        if coop_moe != 1.0:
            said += (
                f"; MoE factor on cooperative matrices from {moe_n[coop_group]} MoE rows on them"
                if moe_n[coop_group] >= MIN_MOE_ROWS
                else f"; MoE factor on cooperative matrices borrowed from {BORROWED_COOPMAT_MOE[cls]} (the same "
                "Vulkan KHR_coopmat matmul_id shaders; no MoE rows enough of its own on them)"
            )
        if f_moe[group] != 1.0:
            said += f"; exponent pooled over {exponent_n} MoE rows"
        if loop_us[key][0]:
            said += (
                f"; {loop_us[key][0]:.0f} µs per expert launch of the per-expert loop from its "
                f"{loop_us[key][1]} MoE rows (in place of the MoE factor there)"
            )
        if key in coop_fits:
            said += (
                f"; matrix-engine factor from {coop_n[key]} rows on cooperative matrices against "
                f"{len(kept) - coop_n[key]} on shader cores"
            )
        fm, fm_n, fm_formats = float_moe.get(backend, (1.0, 0, []))
        if fm_n:
            said += (
                f"; unquantized-expert factor from {fm_n} MoE {backend} row{'s' if fm_n > 1 else ''} with "
                f"{'/'.join(fm_formats)} experts"
            )
        fits[key] = PrefillFit(
            eff[key],
            f_float[key],
            f_moe[group],
            exponent if f_moe[group] != 1.0 else 0.0,
            cap[key],
            said,
            fm,
            f_coop[key],
            loop_us[key][0],
            coop_moe,
        )
    return fits


def at_memory_floor(p: Point, bandwidth_efficiency: float) -> bool:
    """The measured prefill is within 15% of the time it takes to stream the weights once per micro-batch."""
    ubatch = row_micro_batch(p.row)
    floor_s = p.weight_bytes / (p.bandwidth * bandwidth_efficiency) / ubatch
    return bool(p.weight_bytes) and 1 / p.row.value < 1.15 * floor_s


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


DEFAULT_BACKEND = {"nvidia": "cuda", "amd": "rocm", "apple": "metal", "intel": "vulkan", "cpu": "cpu"}
HEADER = """# Speed factors: how close each class of hardware, with each backend, gets to its peaks when llama.cpp
# decodes (tokens/s at batch 1) and prefills. Decode time per token on a device =
#   max(bytes read ÷ (peak bandwidth × decode_bandwidth_efficiency),
#       FLOPs ÷ (peak compute × decode_compute_efficiency))
#   + per_layer_us × the layers it runs + per_gpu_us for each further GPU.
# Prefill = 2 × the active layer parameters (fit.prefill_flops_per_token) FLOPs per token at
# prefill_compute_efficiency × the compute peak llama.cpp's prompt kernels see (speed.prefill_peak_tflops):
# the catalog's dense FP16/BF16 tensor figure (FP32 accumulate), doubled on GeForce cards (their
# FP16-accumulate rate); the FP32 peak where no tensor figure exists (Apple GPUs: FP16 = FP32 rate; M3/M4
# have no published figure and get no prefill estimate), and the FP32 peak for BF16 on Vulkan where the
# driver has no BF16 matrices (speed.bf16_on_scalar_shaders), and at most prefill_tflops_per_watt × the GPU's
# power limit (its board power): a GPU at its power limit lowers its clocks (speed.prefill_compute; the figure
# is pooled over a vendor's classes on one backend and fitted with the efficiencies, least |log error|);
# never faster than reading the device's weights
# (every routed expert touched) once per micro-batch at decode_bandwidth_efficiency. The efficiency is the
# dense model's with quantised weights; prefill_float_factor multiplies it for F16/BF16/F32 weights (another
# GEMM path; per class where it has 3 such rows, else pooled over its backend's) and, for a mixture of
# experts, prefill_moe_factor ×
# (prompt tokens per expert and micro-batch / 64) ** prefill_moe_exponent, at most 1 (speed.prefill_path;
# the factor per class against its dense rows, the exponent pooled within classes); with F16/BF16 experts,
# prefill_float_moe_factor alone (per backend). Vulkan decodes BF16 experts through that tiled GEMM
# (speed.TILED_EXPERT_DECODE), at that rate. Offloaded weights add their PCIe copy per micro-batch to the
# compute time. A hybrid's Gated DeltaNet / Mamba-2 layers add their recurrent scans, run token by token in
# FP32 (speed/recurrent_scan.py): their FLOPs at prefill_scan_efficiency × the FP32 peak, one share pooled over
# every GPU class and backend (benchmarks/scan_fit.py; the prompt rows of hybrids are fitted above on what is
# left of their time).
# The CPU class: decode relative to the host's peak bandwidth (catalog/cpu_platforms.toml or a measurement);
# prefill relative to cores × max clock × FP32 FLOPs per cycle by ISA (speed.cpu_compute), from CPU-only rows.
# The CPU × "ktransformers" row: ktransformers' own CPU kernels for the routed experts it keeps in RAM
# (fit.ktransformers_parts), the same two shares from ktransformers rows, after their GPU part.
# MLX rows (engine mlx-lm) are left out here: mlx-lm's own class × "mlx" rows are fitted by
# benchmarks/engine_factors.py into catalog/speed_engines.toml (speed.engine_gpu_factor reads both files).
#
# GENERATED by `benchmarks/fit_speed.py --maturity > catalog/speed.toml` from the fit split of
# benchmarks/data/measurements.csv (the held-out quarter is never used); `sources` lists the measurement
# rows' own sources. Classes are hardware tiers (core/estimate/speed.py hardware_class), never single chips.
"""


def printed_per_layer_us(
    key: tuple[str, str], decode_fits: Mapping[tuple[str, str], tuple[float, ...]]
) -> float:
    """The per-layer µs speed.toml gives a class × backend: its own decode fit's, else the neighbour's it
    borrows (BORROWED, BORROWED_BACKEND), else 0 (a class the fit gives no decode factors)."""
    if key in decode_fits:
        return float(decode_fits[key][1])
    for cls, backend, neighbour, _why in BORROWED:
        if (cls, backend) == key and (neighbour, backend) in decode_fits:
            return float(decode_fits[(neighbour, backend)][1])
    for cls, backend, neighbour, _why in BORROWED_BACKEND:
        if (cls, backend) == key and (neighbour, backend) in decode_fits:
            return float(decode_fits[(neighbour, backend)][1])
    return 0.0


#: classes with no measurement yet borrow a neighbour's factors, marked uncertain
BORROWED = (
    (
        "apple-pro",
        "metal",
        "apple-base",
        "No measured M-Pro row yet: the base chips' factors (the issue's premise puts Pro between base and Max/Ultra).",
    ),
    (
        "amd-datacenter",
        "rocm",
        "amd-consumer",
        "No Instinct (CDNA) llama.cpp decode row in the fit split yet: the Radeon ROCm decode factors.",
    ),
)


#: a class × backend with no rows of its own that runs the same backend's kernels as a fitted class of its
#: vendor: that row's decode factors (the share of the bandwidth the backend's weight reads reach, and its
#: per-layer launch cost), not the class's default backend's (speed.speed_factor falls back to the default
#: backend, so a Radeon on Vulkan otherwise got the ROCm ones). RDNA dGPUs and the RDNA APUs run llama.cpp's
#: one Vulkan backend (ggml/src/ggml-vulkan) through the same RADV/AMDVLK drivers. Prefill is compute-bound
#: and rides the chip's own matrix path (RDNA 4's WMMA is not RDNA 3.5's), so its shares stay the class's
#: default backend's, as before.
BORROWED_BACKEND = (
    (
        "amd-consumer",
        "vulkan",
        "amd-apu",
        "No fitted Radeon Vulkan row: decode from the Radeon APUs' Vulkan factors (the same ggml-vulkan kernels and drivers), not the Radeon ROCm ones; prefill stays the class's ROCm shares.",
    ),
)


DECODE_FIELDS = ("decode_bandwidth_efficiency", "per_layer_us", "moe_layer_us")


def print_borrowed_backend(
    printed: dict[tuple[str, str], list[str]], generic: dict[str, GenericPrefill]
) -> None:
    for cls, backend, neighbour, why in BORROWED_BACKEND:
        decode = printed.get((neighbour, backend))
        own = printed.get((cls, DEFAULT_BACKEND.get(cls.split("-")[0], "cpu")), [])
        if (cls, backend) in printed or decode is None:
            continue
        lines = [line for line in decode if line.startswith(DECODE_FIELDS)]
        lines += [line for line in own if line.startswith("prefill_")]
        if not any(line.startswith("prefill_compute_efficiency") for line in lines) and backend in generic:
            lines += generic[backend].lines()  # no prompt rows for the class: its backend's rule
        print("[[speed_factor]]")
        print(f'id = "{cls}-{backend}"')
        print(f'hw_class = "{cls}"')
        print(f'backend = "{backend}"')
        print("\n".join(lines))
        print(
            f'source = "benchmarks/data/measurements.csv (no rows of this class and backend): the {neighbour}-{backend} factors"'
        )
        print('confidence = "uncertain"')
        print(f'notes = "{why}"')
        print()


def print_borrowed(
    fitted: dict[tuple[str, str], tuple[float, float]],
    hops: dict[tuple[str, str], HopFit],
    generic: dict[str, GenericPrefill],
    *,
    prefill_fits: dict[tuple[str, str], PrefillFit] | None = None,
    prefill: dict[tuple[str, str], list[Point]] | None = None,
    scan: ScanFit | None = None,
) -> None:
    """Classes without decode rows of their own: a neighbour's decode factors, marked uncertain; their own
    prefill shares where they have prompt rows, else their backend's generic rule (prefill_fallback)."""
    print("# ---- classes without measurements of their own: a neighbour's factors, marked uncertain ----\n")
    for cls, backend, neighbour, why in BORROWED:
        # the neighbour's factors on this backend (not whichever of its backends was fitted last)
        if (neighbour, backend) not in fitted or any(c == cls for c, _b in fitted):
            continue
        eff, tau = fitted[(neighbour, backend)]
        own = (prefill_fits or {}).get((cls, backend))
        print("[[speed_factor]]")
        print(f'id = "{cls}-{backend}"')
        print(f'hw_class = "{cls}"')
        print(f'backend = "{backend}"')
        print("default = true")
        print(f"decode_bandwidth_efficiency = {eff:.2f}")
        print(f"per_layer_us = {tau:g}")
        hop = hops.get((cls, backend))
        if hop is not None and hop.us:
            print(f"per_gpu_us = {hop.us:g}")
        if own is not None:
            print("\n".join(prefill_lines(own)))
        elif backend in generic:
            # no prompt rows either: the backend's generic share, said as assumed (prefill_fallback)
            print("\n".join(generic[backend].lines()))
        if scan is not None and (own is not None or backend in generic):
            # the recurrent-scan share is one figure pooled over every GPU class and backend (scan_fit)
            print(f"prefill_scan_efficiency = {scan.efficiency:.3f}")
        if own is not None:
            print(
                f'source = "benchmarks/data/measurements.csv: decode from the {neighbour} factors (no decode '
                'rows of this class in the fit split); prefill fitted on its own rows"'
            )
        else:
            print(
                f'source = "benchmarks/data/measurements.csv (no rows of this class): the {neighbour} factors"'
            )
        measured = [f"prefill: {own.said}"] if own is not None else []
        if hop is not None and hop.us:
            measured.append(f"per further GPU: {hop.said}")
        if measured:
            print(f'measured = "{"; ".join(measured)}"')
        if own is not None:
            print("sources = [")
            for url in sorted({p.row.source_url for p in (prefill or {}).get((cls, backend), [])}):
                print(f'  "{url}",')
            print("]")
        print('confidence = "uncertain"')
        print(f'notes = "{why}"')
        print()


#: an engine × architecture gets a maturity factor when at least this many fit rows show it off by more
#: than MATURITY_THRESHOLD (median ratio of measured to estimated, with the class factors above)
MATURITY_MIN_ROWS = 3
MATURITY_THRESHOLD = 0.15
#: ... from at least this many hardware classes: an engine's code for an architecture runs slow or fast on
#: every device, while rows of one class cannot tell the architecture's effect from that class's (the 2× MI50
#: table alone once gave "qwen3" a prefill factor, which is gfx906's K-quant GEMMs, not Qwen3's)
MATURITY_MIN_CLASSES = 2
#: MoE prefill with unquantised (F16/BF16) expert weights is left out of the maturity fit: llama.cpp runs
#: quantised experts through one batched MUL_MAT_ID kernel (MMQ), but F16/BF16 experts through a GEMM per
#: expert over the few tokens routed to it, with a host synchronisation (the fallback loop in
#: ggml_cuda_mul_mat_id, ggml-org/llama.cpp ggml/src/ggml-cuda/ggml-cuda.cu@f6d77a1, built for HIP too), so
#: their slowness is the format's, not the architecture's, and would otherwise set the
#: architecture's factor for every format (Qwen3-30B-A3B BF16 on Strix Halo did, in the previous fit).
UNQUANTISED = frozenset({"BF16", "F16", "FP16", "F32"})


def estimate(row: Measurement, catalog: Catalog) -> float | None:
    """The estimate for one speed row, run through fit() as a user's machine would be."""
    from rigcheck.core.estimate.fit import fit

    spec = catalog.model(row.model_id) if row.model_id else None
    gpu = catalog.gpu(row.gpu_id) if row.gpu_id else None
    if spec is None or row.offloaded or (row.gpu_count and gpu is None):
        return None
    ram = row.ram_gb or 128
    # the host as published, with the cores and clock benchmarks/data/cpu_hosts.csv lists for it (a CPU-only
    # prefill estimate needs them), as estimate_accuracy.py builds it
    machine = Machine(cpu=host_cpu(row.host or None), memory=Memory(total_bytes=int(ram * GIB)), gpus=())
    machine = simulate(machine, [gpu] * row.gpu_count if gpu else [], ram)
    backend = row.backend if row.backend in ("cuda", "rocm", "metal", "vulkan", "sycl", "cpu") else None
    try:
        # the row's prompt length, as estimate_accuracy.py passes it: it sets the micro-batch and how many of
        # them a layer split overlaps (speed/prefill.py pipelined_ubatches)
        req = Request(
            quant=row_quant(row),
            context=row_context(row),
            backend=backend,  # type: ignore[arg-type]
            engine_build=row.engine_build,  # an older build: the estimate divided by its milestones
            ubatch=row.ubatch,  # the run's -ub (None: llama-bench's default)
        )
        result = fit(
            from_catalog(spec),
            machine,
            req,
            catalog,
            offload="none" if row.gpu_count else "auto",
            live=False,
            advise=False,
        )
    except InputError:
        return None
    s = result.speed
    return s.decode_tokens_per_s if row.metric == "decode_tokens_per_s" else s.prefill_tokens_per_s


FACTOR_NAMES = (("decode_tokens_per_s", "decode_factor"), ("prefill_tokens_per_s", "prefill_factor"))


def toml_string(text: str) -> str:
    """A TOML basic string: backslashes and double quotes escaped (build names carry quotes)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def row_class(row: Measurement, catalog: Catalog) -> str:
    """The hardware class a speed row ran on (speed.hardware_class; the CPU class for CPU-only rows)."""
    gpu = catalog.gpu(row.gpu_id) if row.gpu_id and row.gpu_count else None
    if gpu is None:
        return speed.CPU_CLASS
    return speed.hardware_class(gpu.vendor, gpu.name, gpu, gpu.unified_memory)


#: per (model_type, metric): the rows' source URLs, or their engine builds
Keyed = dict[tuple[str, str], set[str]]


def fit_maturity(
    rows: list[Measurement], catalog: Catalog, engine: str = "llama.cpp"
) -> tuple[dict[str, dict[str, tuple[float, int]]], Keyed, Keyed]:
    """Per model_type, the maturity factors the rows show ({"decode_factor": (value, rows), ...}) against
    ``catalog``'s class factors alone, and each (model_type, metric)'s source URLs and engine builds.

    ``engine`` "llama.cpp": llama.cpp's own GPU rows (Ollama's GPU rows left out, as in points_by_key) and
    CPU rows of both. "ollama": Ollama's GPU rows, against estimates that already carry llama.cpp's maturity
    (the factor is Ollama's lag behind llama.cpp on the architecture: core/estimate/speed engine_maturity
    multiplies the two), under the same MATURITY_MIN_ROWS / MATURITY_MIN_CLASSES / MATURITY_THRESHOLD."""
    if engine == "ollama":
        bare = replace(catalog, maturities=tuple(m for m in catalog.maturities if m.engine == "llama.cpp"))
    else:
        bare = replace(catalog, maturities=())
    ratios: dict[tuple[str, str], list[float]] = defaultdict(list)
    urls: dict[tuple[str, str], set[str]] = defaultdict(set)
    builds: dict[tuple[str, str], set[str]] = defaultdict(set)
    classes: dict[tuple[str, str], set[str]] = defaultdict(set)
    for row in rows:
        if row.metric == "prefill_tokens_per_s" and row.moe and row.format.upper() in UNQUANTISED:
            continue  # a weight-format effect, not the architecture's (UNQUANTISED)
        if not row.llama_cpp:
            continue
        if (engine == "ollama") != (row.ollama and bool(row.gpu_count)):
            continue  # Ollama's GPU rows are Ollama's maturity, never llama.cpp's (points_by_key)
        if (
            row.metric == "decode_tokens_per_s"
            and row.moe
            and speed.tiled_expert_decode(
                row.backend,  # type: ignore[arg-type]
                row.format.lower(),
            )
        ):
            continue  # likewise: the backend's kernel for these experts (speed.TILED_EXPERT_DECODE)
        value = estimate(row, bare)
        if not value:
            continue
        model_type = str(bare.model(row.model_id).config["model_type"])  # type: ignore[union-attr]
        ratios[(model_type, row.metric)].append(row.value / value)
        urls[(model_type, row.metric)].add(row.source_url)
        classes[(model_type, row.metric)].add(row_class(row, bare))
        builds[(model_type, row.metric)].add(row.build)
    fitted: dict[str, dict[str, tuple[float, int]]] = {}
    for model_type in sorted({m for m, _ in ratios}):
        factors = {}
        for metric, name in FACTOR_NAMES:
            found = ratios.get((model_type, metric), [])
            if (
                len(found) >= MATURITY_MIN_ROWS
                and len(classes[(model_type, metric)]) >= MATURITY_MIN_CLASSES
                and abs(statistics.median(found) - 1) > MATURITY_THRESHOLD
            ):
                factors[name] = (min(statistics.median(found), 2.0), len(found))
        if factors:
            fitted[model_type] = factors
    return fitted, urls, builds


def print_maturity(rows: list[Measurement], catalog: Catalog) -> None:
    print("# ---- engine × architecture maturity, where the measurements show one ----\n")
    # llama.cpp's first: Ollama's is fitted against estimates that carry it (fit_maturity)
    fitted, urls, builds = fit_maturity(rows, catalog)
    print_engine_maturity("llama.cpp", fitted, urls, builds)
    # against the catalog's llama.cpp maturities: once catalog/speed.toml reproduces itself (COMMON rule: run
    # twice), those are the ones just fitted
    print("# Ollama's own lag behind llama.cpp on an architecture (its GPU fit rows against estimates that")
    print("# already carry llama.cpp's maturity; core/estimate/speed engine_maturity multiplies the two)\n")
    print_engine_maturity("ollama", *fit_maturity(rows, catalog, "ollama"))


def print_engine_maturity(
    engine: str, fitted: dict[str, dict[str, tuple[float, int]]], urls: Keyed, builds: Keyed
) -> None:
    for model_type, factors in fitted.items():
        print("[[maturity]]")
        print(f'id = "{engine}-{model_type}"')
        print(f'engine = "{engine}"')
        print(f'model_type = "{model_type}"')
        for name, (value, _n) in factors.items():
            print(f"{name} = {value:.2f}")
        print('source = "benchmarks/data/measurements.csv (fit split; benchmarks/fit_speed.py)"')
        said = ", ".join(f"{name}: median of {n} rows" for name, (_v, n) in factors.items())
        against = "the class factors alone" if engine == "llama.cpp" else "llama.cpp's factors and maturity"
        print(f'measured = "measured ÷ estimated with {against}; {said}"')
        # the factor describes the engine as it was at its rows' builds: a new architecture speeds up release
        # by release, so the builds are part of what the figure means
        metrics = [m for m, name in FACTOR_NAMES if name in factors]
        used = sorted({build for m in metrics for build in builds[(model_type, m)]})
        notes = "engine builds of its rows: " + "; ".join(used)
        print(f"notes = {toml_string(notes)}")
        print("sources = [")
        for url in sorted({url for m in metrics for url in urls[(model_type, m)]}):
            print(f'  "{url}",')
        print("]")
        print()


if __name__ == "__main__":
    main()
    if "--maturity" in sys.argv:
        print_maturity([r for r in load() if r.split == "fit" and r.speed], load_catalog(use_overlay=False))
