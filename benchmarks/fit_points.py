"""The fit's points: one measurement row placed as the estimator places it (bytes a token reads, layers,
FLOPs, peaks, the hand-offs of a layer split), for benchmarks/fit_speed.py.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace

from bf16_fit import slow_bf16_row
from cpu_fit import _threads
from cpu_hosts import host_cpu, host_memory
from dp4a_fit import nodp4a_row
from intel_vulkan_path import old_intel_vulkan_path
from measurements import Measurement, row_build, row_context, row_micro_batch, row_quant
from rigcheck.core.catalog import Catalog, GpuSpec
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
from rigcheck.core.machine import CPU, GPU, Machine
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ArchConfig
from sycl_matvec_fit import unreordered_row

GIB = 1024**3


#: MoE prefill with unquantised (F16/BF16) expert weights is left out of the maturity fit: llama.cpp runs
#: quantised experts through one batched MUL_MAT_ID kernel (MMQ), but F16/BF16 experts through a GEMM per
#: expert over the few tokens routed to it, with a host synchronisation (the fallback loop in
#: ggml_cuda_mul_mat_id, ggml-org/llama.cpp ggml/src/ggml-cuda/ggml-cuda.cu@f6d77a1, built for HIP too), so
#: their slowness is the format's, not the architecture's, and would otherwise set the
#: architecture's factor for every format (Qwen3-30B-A3B BF16 on Strix Halo did, in the previous fit).
UNQUANTISED = frozenset({"BF16", "F16", "FP16", "F32"})


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
