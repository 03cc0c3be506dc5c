"""Recurrent ops an old llama.cpp build's GPU backend does not run: ggml's scheduler runs them on the CPU.

A hybrid's recurrent layers (Mamba-2: Nemotron-H / Nemotron 3, Granite 4 H; Gated DeltaNet: Qwen3-Next,
Qwen3.5/3.6) run ops of their own: SSM_CONV and SSM_SCAN for Mamba-2, SSM_CONV and GATED_DELTA_NET (or,
before it, a chunked graph of CUMSUM, TRI, SOLVE_TRI and FILL) for Gated DeltaNet. Where a backend's
``supports_op`` says no, ``ggml_backend_sched`` assigns the node to the CPU backend and cuts the graph
there: the op's inputs are copied to host memory, the CPU runs it, and its output is copied back before
the next split (ggml-org/ggml src/ggml-backend.cpp@d99724f, ggml_backend_sched_split_graph and
ggml_backend_sched_compute_splits). For SSM_SCAN the inputs hold the layer's recurrent state and the output
the new one (src/ggml.c ggml_ssm_scan: the result is y followed by the updated states), so each such layer
moves its whole state over the host link twice per decoded token, and once each way per prompt
micro-batch.

Per layer and call the fallback costs, one after the other (the GPU waits for the host and the host for
the GPU):

- the state copied out and back: 2 × its FP32 bytes at the GPU's host-link rate (reads.pcie_gbs);
- the CPU's pass: the scan reads the state and writes the new one, at the host's memory bandwidth, or its
  5 FLOPs per state element per token (recurrent_scan.MAMBA2_FLOPS_PER_STATE) at the CPU's FP32 peak,
  whichever is longer;
- two split boundaries (GPU → CPU and back), each a synchronised hand-off: the class's fitted
  ``per_gpu_us``, the cost of one boundary of ggml's scheduler between two devices (speed/fixed.py).

The state is ``ArchConfig.linear_state_elements`` (the SSM state and the short conv's window, which is 3%
of it in Nemotron 3 Nano); a prompt's per-token x, B, C, dt in and y out are left out, so the prompt's
figure is the least the fallback adds.

Which backend lacked which op, and up to which release (the first llama.cpp release bNNNN with the
backend's kernel), is read from the ggml history (ggml-org/ggml, the llama.cpp sync commits named by their
PRs) and from the release that first lists the PR (``HOST_OPS``). A build that is not named is a current
one, whose backends run every op here on the GPU (ggml-org/ggml@d99724f supports_op of ggml-cuda.cu,
ggml-vulkan.cpp, ggml-sycl.cpp and ggml-metal-device.m). Windows whose first release was not read are
left out (BENCHMARKS.md, 28-hybrid-ops): Vulkan's SSM ops (llama/16463, 2025-10-17), the Gated DeltaNet
op on Vulkan, SYCL and Metal (llama/20334, llama/20455, llama/20340 in 2026-03), whose graph a probe may
swap for the unfused one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rigcheck.core.catalog import Catalog, GpuSpec, SpeedFactor
from rigcheck.core.estimate.memory import MemoryEstimate
from rigcheck.core.estimate.speed.cpu_flops import cpu_compute
from rigcheck.core.estimate.speed.host import host_bandwidth
from rigcheck.core.estimate.speed.prefill import prompt_ubatch
from rigcheck.core.estimate.speed.reads import pcie_gbs
from rigcheck.core.estimate.speed.recurrent_scan import MAMBA2_FLOPS_PER_STATE, recurrent_layers
from rigcheck.core.machine import GPU, Machine
from rigcheck.core.models.spec import ArchConfig
from rigcheck.core.said import Bytes, Joined, Num, Text, say

SCHED_SOURCE = "ggml-org/ggml src/ggml-backend.cpp@d99724f ggml_backend_sched_split_graph"
FP32 = 4
#: model types whose recurrent layers are Mamba-2 (llama.cpp build_mamba2_layer: SSM_CONV, SSM_SCAN)
MAMBA2_TYPES = frozenset({"nemotron_h", "granitemoehybrid", "falcon_h1", "bamba", "mamba2"})
#: an op's copies: how many times a call moves the layer's state over the link (in, and out)
STATE_COPIES = 2


@dataclass(frozen=True)
class HostOp:
    """An op ``backend`` runs on the host in every llama.cpp build before ``first_build``."""

    backend: str
    op: str
    #: the first release whose backend runs the op on the GPU
    first_build: int
    pr: int
    source: str


HOST_OPS: tuple[HostOp, ...] = (
    HostOp(
        "sycl",
        "SSM_SCAN",
        9060,
        22149,
        "ggml-org/ggml@e1f6344a 'sycl: add FILL, CUMSUM, DIAG, SOLVE_TRI, SSM_SCAN, GATED_DELTA_NET "
        "(llama/22149)', 2026-05-07, the first SSM_SCAN case in ggml-sycl.cpp's supports_op; release b9060 "
        "lists it (https://newreleases.io/project/github/ggml-org/llama.cpp/release/b9060)",
    ),
)


def graph_ops(arch: ArchConfig) -> tuple[str, ...]:
    """The ops llama.cpp's graph runs in ``arch``'s recurrent layers (empty: none, or a mixer not known)."""
    if not recurrent_layers(arch):
        return ()
    if arch.linear_mixer is not None:
        return ("SSM_CONV", "GATED_DELTA_NET")
    if arch.model_type in MAMBA2_TYPES:
        return ("SSM_CONV", "SSM_SCAN")
    return ()


def host_ops(arch: ArchConfig, backend: str | None, build: int | None) -> tuple[HostOp, ...]:
    """The ops of ``arch``'s graph that llama.cpp ``build`` runs on the host on ``backend`` (None: a current
    build, which runs them all on the GPU)."""
    if build is None or backend is None:
        return ()
    ops = graph_ops(arch)
    return tuple(h for h in HOST_OPS if h.backend == backend and h.op in ops and build < h.first_build)


@dataclass(frozen=True)
class HostCost:
    ops: tuple[HostOp, ...]
    layers: int
    #: seconds the fallback adds per decoded token, and per prompt token
    decode_s: float
    prefill_s: float
    explanation_said: tuple[Text, ...]


def host_cost(
    arch: ArchConfig,
    ops: Sequence[HostOp],
    *,
    link_gbs: float,
    host_bytes_per_s: float,
    cpu_flops: float | None,
    handoff_us: float,
    ubatch: int,
) -> HostCost | None:
    """What running ``ops`` on the host adds per token (module docstring); None when there is none to run."""
    scans = [h for h in ops if h.op == "SSM_SCAN"]
    state = arch.linear_state_elements or 0
    layers = recurrent_layers(arch)
    if not scans or not state or not layers or link_gbs <= 0 or host_bytes_per_s <= 0:
        return None
    state_bytes = FP32 * state
    copy = STATE_COPIES * state_bytes / (link_gbs * 1e9)
    memory = STATE_COPIES * state_bytes / host_bytes_per_s
    flops = MAMBA2_FLOPS_PER_STATE * state / cpu_flops if cpu_flops else 0.0
    handoffs = 2 * handoff_us * 1e-6
    decode = layers * (copy + max(memory, flops) + handoffs)
    prefill = layers * ((copy + memory + handoffs) / max(ubatch, 1) + flops)
    names = Joined(
        ", ",
        tuple(
            say("{op} (PR #{pr}, b{first}: {source})", op=h.op, pr=h.pr, first=h.first_build, source=h.source)
            for h in scans
        ),
    )
    line = say(
        "this llama.cpp build runs {ops} on the CPU ({sched}): each of the {layers} recurrent layers "
        "copies its {state} state to the host and back at {link} GB/s, the CPU scans it, and two split "
        "hand-offs of {us} µs each synchronise the GPU: +{decode} ms per decoded token, +{prefill} µs per "
        "prompt token",
        ops=names,
        sched=SCHED_SOURCE,
        layers=layers,
        state=Bytes(state_bytes),
        link=Num(link_gbs, 1),
        us=Num(handoff_us, 0),
        decode=Num(decode * 1e3, 2),
        prefill=Num(prefill * 1e6, 1),
    )
    return HostCost(tuple(scans), layers, decode, prefill, (line,))


def host_fallback(
    est: MemoryEstimate,
    machine: Machine,
    *,
    catalog: Catalog,
    gpu: GPU,
    spec: GpuSpec | None,
    factor: SpeedFactor | None,
    backend: str | None,
) -> HostCost | None:
    """The host fallback of the build the estimate is for, on the first GPU used: its link, the host's
    bandwidth and FP32 peak, the class's hand-off (None when the build runs every op of the model on the
    GPU)."""
    arch = est.model.arch
    ops = host_ops(arch, backend, est.engine_build)
    if not ops:
        return None
    compute = cpu_compute(machine.cpu)
    return host_cost(
        arch,
        ops,
        link_gbs=pcie_gbs(gpu, spec),
        host_bytes_per_s=host_bandwidth(machine, catalog).bytes_per_s,
        cpu_flops=compute.flops_per_s if compute else None,
        handoff_us=factor.per_gpu_us if factor else 0.0,
        ubatch=prompt_ubatch(est),
    )
