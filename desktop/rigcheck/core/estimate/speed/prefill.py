"""Prompt processing on the GPUs: 2 FLOPs per multiplying active parameter per token at the class's share of
the compute peak (by the kernel path: quantized or not, dense or experts by their batch shape), never faster
than streaming the weights once per micro-batch, plus the PCIe copy of offloaded weights.
"""

from __future__ import annotations

from collections.abc import Sequence

from rigcheck.core.catalog import GpuSpec, Maturity, SpeedFactor
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.memory import MemoryEstimate
from rigcheck.core.estimate.placement.types import Placement
from rigcheck.core.estimate.speed.assumed import assumed_share
from rigcheck.core.estimate.speed.coopmat import COOPMAT_SOURCE
from rigcheck.core.estimate.speed.dp4a import lacks_dp4a
from rigcheck.core.estimate.speed.expert_batch import shader_expert_said, shader_expert_share
from rigcheck.core.estimate.speed.fixed import block_layers, prompt_fixed_seconds
from rigcheck.core.estimate.speed.intel_paths import intel_prompt_path
from rigcheck.core.estimate.speed.kernels import PromptKernel, cuda_prompt_kernel, dequantise_bytes
from rigcheck.core.estimate.speed.reads import gpu_bandwidth, pcie_gbs, prefill_flops_per_token
from rigcheck.core.estimate.speed.recurrent_scan import SOURCE as SCAN_SOURCE
from rigcheck.core.estimate.speed.recurrent_scan import recurrent_layers, scan_seconds_per_token
from rigcheck.core.estimate.speed.rocm_bf16 import ROCM_BF16_SOURCE, rocm_bf16_on_fp32
from rigcheck.core.estimate.speed.stage_copy import layer_split_hand_offs
from rigcheck.core.estimate.speed.sycl_bf16 import SYCL_BF16_SOURCE, sycl_bf16_on_fp32
from rigcheck.core.estimate.speed.sycl_experts import ExpertLoop, expert_loop_said, sycl_expert_loop
from rigcheck.core.estimate.speed.vulkan_bf16 import intel_bf16_matrices
from rigcheck.core.machine import Machine
from rigcheck.core.models.spec import ArchConfig
from rigcheck.core.said import Bytes, Joined, Num, Percent, Said, Sig, Text, say


def memory_bound_prefill(moe: bool, ubatch: int, streamed: float, touched: float, *, from_ram: bool) -> Said:
    """Why prefill is bound by memory: each micro-batch reads the weights (or the routed experts) once."""
    size = Bytes(int(streamed))
    if moe and from_ram:
        return say(
            "prefill bound by memory: each {ubatch}-token micro-batch reads {size} "
            "({share} of the routed experts) from RAM once",
            ubatch=ubatch, size=size, share=Percent(touched),
        )  # fmt: skip
    if moe:
        return say(
            "prefill bound by memory: each {ubatch}-token micro-batch reads {size} "
            "({share} of the routed experts) once",
            ubatch=ubatch, size=size, share=Percent(touched),
        )  # fmt: skip
    if from_ram:
        return say(
            "prefill bound by memory: each {ubatch}-token micro-batch reads {size} (the "
            "weights) from RAM once",
            ubatch=ubatch, size=size,
        )  # fmt: skip
    return say(
        "prefill bound by memory: each {ubatch}-token micro-batch reads {size} (the weights) once",
        ubatch=ubatch, size=size,
    )  # fmt: skip


def prompt_fixed_said(per_gpu: Sequence[tuple[float, float, float]], ubatch: int) -> Said:
    """What each layer's fixed cost once per micro-batch adds to a prompt token (speed/fixed.py
    prompt_fixed_seconds), from (layers, µs per layer, µs per token) per GPU."""
    layers = sum(n for n, _us, _t in per_gpu)
    return say(
        "prefill: each {ubatch}-token micro-batch runs every layer's kernels once: {layers} layers × {us} µs "
        "of kernel launches and synchronisation add {per_token} µs per token",
        ubatch=ubatch,
        layers=Sig(layers, 3),
        us=Num(max(us for _n, us, _t in per_gpu)),
        per_token=Num(sum(t for _n, _us, t in per_gpu), 2),
    )


def prefill_maturity(engine: str, model_type: str, mature: Maturity) -> Said:
    """The engine × architecture maturity's share of the usual prompt speed (catalog/speed.toml [[maturity]],
    fitted by benchmarks/fit_speed.py --maturity), in words."""
    return say(
        "{engine} processes {model_type} prompts at {share} of its usual speed ({source})",
        engine=engine,
        model_type=model_type,
        share=Percent(mature.prefill_factor),
        source=mature.source,
    )


#: Where the estimator cannot tell whether a GPU's Vulkan driver offers BF16 matrices
#: (speed.bf16_on_scalar_shaders is None: an Intel GPU outside Windows, an NVIDIA driver version not in the
#: snapshot), the prompt estimate assumes it does, and says so.
VULKAN_BF16_CAVEAT = (
    "BF16 on Vulkan: llama.cpp uses matrix cores for BF16 only where the driver reports BF16 support "
    "(llama-bench prints 'bf16: 1'); without it prompts run on slower scalar shaders than this estimate "
    "assumes"
)


def prompt_ubatch(est: MemoryEstimate) -> int:
    """The tokens of one prompt micro-batch: llama.cpp's n_ubatch as asked (MemoryEstimate.ubatch, its
    default LLAMA_CPP_UBATCH), fewer when the prompt is shorter."""
    return max(min(est.ubatch, est.context), 1)


def prefill_streamed_bytes(
    est: MemoryEstimate, arch: ArchConfig, head: int, layers: int, cpu_expert_layers: int
) -> tuple[float, int, float]:
    """Weight bytes a device reads for one prompt micro-batch (the first ``layers`` layers less the routed
    experts of the first ``cpu_expert_layers``, plus the head), the micro-batch, and the share of routed
    experts it touches.

    llama.cpp processes a prompt in micro-batches of n_ubatch tokens (prompt_ubatch: fewer when the prompt is
    shorter); each one multiplies every weight matrix on the device once. For a mixture of experts the batch's
    tokens pick ``experts_per_token`` of ``num_experts`` experts each, so with uniform routing a share
    1 - (1 - k/E)^tokens of the experts is read: all of them for any real batch.
    """
    ubatch = prompt_ubatch(est)
    touched = 1.0
    if arch.is_moe and arch.num_experts and arch.experts_per_token:
        touched = 1 - (1 - min(arch.experts_per_token / arch.num_experts, 1.0)) ** ubatch
    n_gpu = layers
    experts = est.layer_expert_bytes or (0,) * len(est.layer_weight_bytes)
    cpu_expert = cpu_expert_layers
    weights = sum(est.layer_weight_bytes[:n_gpu]) - sum(experts[:cpu_expert]) + head
    on_gpu_experts = sum(experts[cpu_expert:n_gpu])
    return weights - on_gpu_experts * (1 - touched), ubatch, touched


#: ggml_backend_sched copies only the routed experts a micro-batch uses when it offloads a MUL_MAT_ID whose
#: expert weights live in host memory ("sched : copy only the used experts when offloading prompt
#: processing", ggml-org/llama.cpp PR #15346, merged 2025-08-20)
COPY_USED_EXPERTS = "ggml-org/llama.cpp#15346"


def offloaded_copy_bytes(
    est: MemoryEstimate, gpu_layers: int, cpu_expert_layers: int, touched: float
) -> float:
    """Bytes llama.cpp copies to the GPU per prompt micro-batch: the layers past ``gpu_layers`` and the
    routed experts kept in RAM (``--n-cpu-moe``), of whose routed experts only the share ``touched`` the
    micro-batch's tokens are routed to (COPY_USED_EXPERTS)."""
    experts = est.layer_expert_bytes or (0,) * len(est.layer_weight_bytes)
    host_layers = sum(est.layer_weight_bytes[gpu_layers:])
    # a layer past gpu_layers whose experts --n-cpu-moe also names is counted once
    host_experts = sum(experts[: min(cpu_expert_layers, gpu_layers)]) + sum(experts[gpu_layers:])
    return host_layers - sum(experts[gpu_layers:]) + host_experts * touched


#: llama.cpp's default logical batch (``-b``/``n_batch`` 2048, common/common.h): one llama_decode call holds
#: this many prompt tokens, split into micro-batches (LLAMA_CPP_UBATCH)
LLAMA_CPP_BATCH = 2048
#: GGML_SCHED_MAX_COPIES: the scheduler's copies of the graph inputs when pipeline parallelism is on, the
#: micro-batches that can be in flight at once (ggml-org/llama.cpp ggml/src/ggml-backend.cpp, default 4)
SCHED_MAX_COPIES = 4
PIPELINE_SOURCE = "ggml-org/llama.cpp src/llama-context.cpp@4c7103b, pipeline_parallel"


def pipelined_ubatches(placement: Placement, gpus: int, prompt: int, ubatch: int, cpu_read: float) -> int:
    """Micro-batches of the prompt that go through a layer split as one pipeline (1: none overlap).

    llama_context turns pipeline parallelism on when the model spans more than one device, every layer is on
    a GPU (n_gpu_layers > n_layer), the split is by layers, the KV cache is offloaded and no tensor is
    overridden; the scheduler then lets GPU i work on micro-batch j while GPU i + 1 takes j - 1
    (PIPELINE_SOURCE). llama_context::decode returns without synchronising ("//synchronize();", same file)
    and llama-bench synchronises once after the prompt's last batch
    (tools/llama-bench/llama-bench.cpp@050fc7f, test_prompt), so the micro-batches of every n_batch batch
    of the prompt follow each other through the pipeline; GGML_SCHED_MAX_COPIES bounds how far ahead the
    host runs (pipeline_seconds). A prompt no longer than one micro-batch (llama-bench pp512) has nothing
    to overlap.
    """
    if gpus < 2 or placement.split != "layer" or cpu_read or placement.cpu_expert_layers:
        return 1
    if placement.gpu_layers < placement.total_layers:
        return 1
    return max(1, -(-max(prompt, 1) // max(ubatch, 1)))


def pipeline_seconds(stage_seconds: Sequence[float], ubatches: int, copies: int = SCHED_MAX_COPIES) -> float:
    """Seconds per token of ``ubatches`` micro-batches through GPUs that each take ``stage_seconds`` per token
    of one, as ggml_backend_sched_compute_splits issues them (ggml-org/ggml src/ggml-backend.cpp@d99724f):
    a GPU takes micro-batch j once it has finished j - 1 and the GPU before it has handed j over, and the
    host, which issues the splits in order, first waits (ggml_backend_event_synchronize) for the event the
    same split recorded ``copies`` micro-batches before, whose input copies it is about to overwrite. Up to
    ``copies`` + 1 GPUs that is one pass plus the slowest GPU's turn per further micro-batch; with more GPUs
    the host holds micro-batch j + 1 until j - ``copies`` has left the last one."""
    count = max(ubatches, 1)
    previous = [0.0] * len(stage_seconds)  # when each GPU finished the micro-batch before
    finished: list[list[float]] = []  # per micro-batch, when each GPU finished it
    host = 0.0
    for j in range(count):
        oldest = finished[j - copies] if j >= copies else None
        ready = 0.0  # when the GPU before handed this micro-batch over
        row = []
        for g, seconds in enumerate(stage_seconds):
            if oldest is not None:
                host = max(host, oldest[g])
            ready = max(host, ready, previous[g]) + seconds
            row.append(ready)
        finished.append(row)
        previous = row
    return previous[-1] / count if previous else 0.0


#: backends whose prompt GEMMs ggml_cuda_should_use_mmq chooses (the HIP build shares the CUDA sources)
CUDA_BACKENDS = frozenset({"cuda", "rocm"})


def prompt_kernel(
    est: MemoryEstimate, spec: GpuSpec | None, factor: SpeedFactor, arch: ArchConfig
) -> PromptKernel | None:
    """The CUDA/HIP kernel llama.cpp runs this model's quantised prompt GEMMs through on one GPU
    (speed/kernels.py), for llama.cpp's own kernels on a CUDA or ROCm class row; None elsewhere.

    A dense model on the dequantise + BLAS path takes the class's unquantized share and the FP16 copy's memory
    traffic. For a mixture of experts the same choice sends MUL_MAT_ID through the per-expert loop, a path no
    measured row of a current build shows for quantised experts on a GPU with matrix units, so its fitted MoE
    factor stays there (the kernel is named all the same). A GPU without __dp4a has no matrix units either:
    its experts keep the BLAS path, at the share their batch shape gives (speed/expert_batch.py).
    """
    if factor.backend not in CUDA_BACKENDS or est.engine not in ("llama.cpp", "ollama"):
        return None
    if est.quant is None or est.quant.kind == "float":
        return None
    ubatch = prompt_ubatch(est)
    found = cuda_prompt_kernel(spec, est.quant.id, ubatch=ubatch, experts=arch.num_experts or 0)
    if found is not None and found.blas and arch.is_moe and not lacks_dp4a(spec):
        return PromptKernel(found.name, False, found.ggml_type, found.why_said)
    return found


def gpu_prefill(
    est: MemoryEstimate,
    placement: Placement,
    machine: Machine,
    *,
    specs: Sequence[GpuSpec | None],
    gpu_factors: dict[int, SpeedFactor | None],
    scalar_bf16: dict[int, bool | None],
    mature: Maturity | None,
    head: int,
    cpu_read: float,
    explanation: list[Text],
) -> float | None:
    """Prompt tokens per second on the GPUs of ``placement``, or None (and why, in ``explanation``)."""
    arch = est.model.arch
    gpus = machine.gpus
    used = [i for i, b in enumerate(placement.gpu_bytes) if b > 0]
    n_gpu_layers = placement.gpu_layers
    cpu_expert = placement.cpu_expert_layers
    prefill = None
    rates: list[float] = []
    paths: list[Text] = []
    unquantized = est.quant is not None and est.quant.kind == "float"
    quant_id = est.quant.id if est.quant is not None else None
    per_expert = speed.moe_tokens_per_expert(
        prompt_ubatch(est), arch.experts_per_token or 1, arch.num_experts or 1
    )
    power_bound: dict[Text, list[int]] = {}
    dequantised: set[int] = set()
    # BF16 on an Intel GPU with cooperative matrices: the shader-core share on either BF16 path
    shader_bf16: set[int] = set()
    loops: dict[int, ExpertLoop] = {}
    experts_bytes = est.layer_expert_bytes or (0,) * len(est.layer_weight_bytes)
    unfitted: Text | None = None
    for i in used:
        factor = gpu_factors[i]
        # the power limit the driver enforces (a what-if GPU carries its catalog board power)
        build = est.engine_build if est.engine == "llama.cpp" else None
        sycl_fp32 = factor is not None and sycl_bf16_on_fp32(factor.backend, quant_id, build)
        # BF16 through hipBLAS on an AMD GPU without BF16 arithmetic (speed/rocm_bf16.py): FP32 maths
        rocm_fp32 = factor is not None and rocm_bf16_on_fp32(factor.backend, quant_id, specs[i])
        bf16_family = factor is not None and intel_bf16_matrices(factor.backend, quant_id, specs[i], build)
        compute = speed.prefill_compute(
            specs[i],
            factor,
            gpus[i].power_limit_watts,
            fp32=scalar_bf16[i] is True or sycl_fp32 or rocm_fp32,
            build=build,
            xmx=not bf16_family,
        )
        if bf16_family:
            shader_bf16.add(i)
        if compute is None or factor is None:
            rates = []
            if factor is not None and speed.prefill_peak_tflops(specs[i]) is not None:
                # the GPU's peak is known; no cited prompt measurement of its class was fitted
                unfitted = say(
                    "prefill: no prompt-processing measurements fitted for {hw_class} on {backend}; "
                    "not estimated",
                    hw_class=factor.hw_class,
                    backend=factor.backend,
                )
            break
        # the Intel path by weight type and Xe generation (speed/intel_paths.py), named before its factor
        intel_path = intel_prompt_path(factor.backend, specs[i], quant_id, build, scalar_bf16[i])
        if intel_path is not None:
            _name_once(paths, intel_path.why_said)
        if compute.coopmat:
            words = say(
                "prompt GEMMs on the XMX engines through Vulkan cooperative matrices ({source}): {factor} × "
                "the shader-core share",
                source=COOPMAT_SOURCE,
                factor=Num(factor.prefill_coopmat_factor, 2),
            )
            _name_once(paths, words)
        if sycl_fp32:
            words = say(
                "BF16 on SYCL: its prompt GEMMs convert BF16 to FP32 ({source}), so at most the FP32 peak "
                "({peak} TFLOPS) applies",
                source=SYCL_BF16_SOURCE,
                peak=Num(compute.peak_tflops, 1),
            )
            _name_once(paths, words)
        if rocm_fp32:
            words = say(
                "BF16 on ROCm on a GPU without BF16 arithmetic: hipBLAS multiplies it in FP32 ({source}), so "
                "the FP32 peak ({peak} TFLOPS) applies",
                source=ROCM_BF16_SOURCE,
                peak=Num(compute.peak_tflops, 1),
            )
            _name_once(paths, words)
        if scalar_bf16[i] is True:
            words = say(
                "BF16 on Vulkan without BF16 matrix support in the driver: the scalar shaders promote it "
                "to FP32 ({source}), so the FP32 peak ({peak} TFLOPS) applies",
                source=speed.VULKAN_BF16_SOURCE,
                peak=Num(compute.peak_tflops, 1),
            )
            _name_once(paths, words)
        kernel = prompt_kernel(est, specs[i], factor, arch)
        if kernel is not None:
            _name_once(paths, kernel.why_said)
        # the dequantise + BLAS path multiplies FP16 copies: the class's share on unquantized weights (dense
        # models; a mixture of experts keeps its fitted expert factor, see prompt_kernel)
        blas = kernel is not None and kernel.blas
        # experts through cuBLAS on shader cores (prompt_kernel): the dense BLAS share × their batch shape's
        # roofline share (speed/expert_batch.py) in place of the MoE factor fitted on matrix units
        shader_experts = blas and arch.is_moe
        # SYCL multiplies a prompt's experts one at a time (speed/sycl_experts.py): its launches and FP16
        # copies in place of the MoE factor, where the class has the launch cost fitted
        loop = sycl_expert_loop(
            factor.backend,
            arch,
            quantized=est.quant is not None and not unquantized,
            ubatch=prompt_ubatch(est),
            expert_bytes=sum(experts_bytes[cpu_expert:n_gpu_layers]),
            moe_layers=sum(1 for flag in arch.moe_layers[cpu_expert:n_gpu_layers] if flag),
            bits_per_weight=est.quant.bits_per_weight if est.quant is not None else 16.0,
        )
        if loop is not None and factor.prefill_expert_us > 0:
            loops[i] = loop
            loop_said = expert_loop_said(loop, factor.prefill_expert_us)
            _name_once(paths, loop_said)
        path = speed.prefill_path(
            factor,
            moe=arch.is_moe and not shader_experts and i not in loops,
            unquantized=unquantized or blas,
            tokens_per_expert=per_expert,
            coopmat=compute.coopmat,
        )
        if blas:
            dequantised.add(i)
        expert_share = 1.0
        bw_i = gpu_bandwidth(specs[i])
        if shader_experts and bw_i:
            expert_share = shader_expert_share(per_expert, compute.peak_tflops, bw_i)
            expert_words = shader_expert_said(per_expert, compute.peak_tflops, bw_i)
            _name_once(paths, expert_words)
        rates.append(compute.flops_per_s * path.factor * expert_share)
        _name_once(paths, path.why_said)
        if compute.power_bound:
            power_bound.setdefault(compute.why_said, []).append(i)
    if rates:
        flops = prefill_flops_per_token(arch)
        speedup = mature.prefill_factor if mature is not None else 1.0
        streamed, ubatch, touched = prefill_streamed_bytes(
            est, arch, head, placement.gpu_layers, placement.cpu_expert_layers
        )
        seconds_per_token: list[float] = []
        scan_us: list[float] = []
        fixed_us: list[tuple[float, float, float]] = []  # (layers, µs per layer, µs per token) per GPU
        memory_bound = False
        # the GPU layers as transformer layers for their fixed cost (speed/fixed.py block_layers)
        blocks = block_layers(arch.layer_mixers, 0, n_gpu_layers, arch.layer_kernels)
        for i, rate in zip(used, rates, strict=True):
            if placement.split == "tensor":
                share = 1 / len(used)
                layers_here = blocks  # each GPU runs every layer's kernels on its slice
            else:  # layers run one GPU after another: each GPU's share of the FLOPs at its own rate
                share = placement.gpu_bytes[i] / max(sum(placement.gpu_bytes), 1)
                layers_here = blocks * share
            compute_s = flops * share / (rate * speedup)
            factor = gpu_factors[i]
            # a hybrid's recurrent layers: their token-by-token scans on the vector ALUs, after the GEMMs
            spec_i = specs[i]
            scan_s = scan_seconds_per_token(
                arch,
                spec_i.fp32_tflops if spec_i is not None else None,
                factor.prefill_scan_efficiency if factor is not None else None,
            )
            if scan_s:
                compute_s += scan_s * share / speedup
                scan_us.append(scan_s * share * 1e6)
            # Each micro-batch streams the GPU's weights once (every routed expert the batch touches):
            # a floor that binds for MoE models, whose total weights far exceed the active ones.
            bw = gpu_bandwidth(specs[i])
            memory_s = 0.0
            if bw and factor is not None:
                memory_s = streamed * share / (bw * 1e9 * factor.decode_bandwidth_efficiency) / ubatch
            if i in loops and bw and factor is not None:
                # the experts' FP16 copies and launches come between the GEMMs that need them: they add up
                bytes_per_s = bw * 1e9 * factor.decode_bandwidth_efficiency
                compute_s += (
                    loops[i].seconds(bytes_per_s, factor.prefill_expert_us) * share / ubatch / speedup
                )
            if i in dequantised and bw and factor is not None and est.quant is not None:
                # the FP16 copy is written before the GEMM that reads it: the two add up
                copy = dequantise_bytes(streamed * share, est.quant.bits_per_weight)
                compute_s += copy / (bw * 1e9 * factor.decode_bandwidth_efficiency) / ubatch
            memory_bound = memory_bound or memory_s > compute_s
            # every layer's kernels launched and synchronised once per micro-batch (speed/fixed.py)
            fixed_s = prompt_fixed_seconds(layers_here, factor, ubatch) if factor is not None else 0.0
            if fixed_s:
                fixed_us.append((layers_here, factor.per_layer_us if factor else 0.0, fixed_s * 1e6))
            seconds_per_token.append(max(compute_s, memory_s) + fixed_s)
        hand_off = layer_split_hand_offs(
            placement, used, gpus, specs, gpu_factors, hidden_size=arch.hidden_size, ubatch=ubatch
        )
        for position, seconds in enumerate(hand_off.seconds):
            seconds_per_token[position] += seconds  # on the sending GPU's stream, part of its turn
        total = max(seconds_per_token) if placement.split == "tensor" else sum(seconds_per_token)
        in_flight = pipelined_ubatches(placement, len(used), est.context, ubatch, cpu_read)
        if in_flight > 1:
            total = pipeline_seconds(seconds_per_token, in_flight)
        prefill = 1 / total
        effective = say(
            "prefill: {gflops} GFLOPs per token (2 × the active layer parameters) at "
            "{tflops} TFLOPS effective",
            gflops=Num(flops / 1e9, 1),
            tflops=Num(sum(rates) / 1e12),
        )
        # the kernel paths that set the share of the peak, in brackets after it
        kernels = Joined("", (effective, " (", Joined("; ", tuple(paths)), ")"))
        explanation.append(kernels if paths else effective)
        explanation.extend(assumed_share(gpu_factors[i] for i in used))
        if scan_us:
            explanation.append(
                say(
                    "prefill: the recurrent scans of its {layers} Gated DeltaNet / Mamba-2 layers add "
                    "{us} µs per token (llama.cpp runs them token by token in FP32 on the vector ALUs, at "
                    "{share} of the FP32 peak: {source})",
                    layers=recurrent_layers(arch),
                    us=Num(sum(scan_us), 1),
                    share=Percent(
                        next(
                            f.prefill_scan_efficiency
                            for f in (gpu_factors[i] for i in used)
                            if f is not None and f.prefill_scan_efficiency
                        )
                    ),
                    source=SCAN_SOURCE,
                )
            )
        if fixed_us:
            explanation.append(prompt_fixed_said(fixed_us, ubatch))
        for why, indices in power_bound.items():
            explanation.append(
                say(
                    "prefill on GPU {indices}: {why}",
                    indices=", ".join(str(i) for i in indices),
                    why=why,
                )
            )
        if hand_off.said is not None:
            explanation.append(hand_off.said)
        if in_flight > 1:
            explanation.append(
                say(
                    "prefill: llama.cpp's pipeline parallelism keeps {ubatches} micro-batches of a "
                    "{batch}-token batch in flight across the {gpus} GPUs of the layer split, so each GPU "
                    "works on its own micro-batch while the next GPU takes the previous one",
                    ubatches=min(in_flight, SCHED_MAX_COPIES),
                    batch=min(in_flight * ubatch, LLAMA_CPP_BATCH),
                    gpus=len(used),
                )
            )
        if memory_bound:
            explanation.append(memory_bound_prefill(arch.is_moe, ubatch, streamed, touched, from_ram=False))
        if mature is not None and mature.prefill_factor != 1.0:
            explanation.append(prefill_maturity(est.engine, arch.model_type, mature))
        # the caveat is the driver's BF16 matrices; where both BF16 paths take one share it changes nothing
        if any(scalar_bf16[i] is None and i not in shader_bf16 for i in used):
            explanation.append(say(VULKAN_BF16_CAVEAT))
        if cpu_read:
            # llama.cpp copies offloaded weights to the GPU for each micro-batch of the prompt (a prompt
            # shorter than a micro-batch pays the whole copy for its few tokens), and the copy comes
            # before the computation that needs it: ggml_backend_sched_compute_splits copies a split's
            # inputs to its backend, then runs the split (ggml-org/llama.cpp
            # ggml/src/ggml-backend.cpp@5bc7a74), so the two add up rather than overlap. Of host-resident
            # routed experts it copies only those the micro-batch's tokens picked (COPY_USED_EXPERTS).
            link = min(pcie_gbs(gpus[i], specs[i]) for i in used)
            moved = offloaded_copy_bytes(est, n_gpu_layers, cpu_expert, touched)
            copy_s = moved / (link * 1e9) / ubatch
            prefill = 1 / (1 / prefill + copy_s)
            explanation.append(
                say(
                    "prefill adds PCIe ({link} GB/s) copying {size} of offloaded weights per "
                    "{ubatch}-token micro-batch",
                    link=Sig(link, 6),
                    size=Bytes(int(moved)),
                    ubatch=ubatch,
                )
            )
    else:
        explanation.append(
            unfitted or say("prefill: compute throughput of this GPU not known; not estimated")
        )
    return prefill


def _name_once(paths: list[Text], words: Text) -> None:
    """Add a kernel path's sentence to the prompt's list unless it is empty or already named."""
    if words and words not in paths:
        paths.append(words)
