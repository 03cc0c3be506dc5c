"""A mixture of experts' prompt on llama.cpp's SYCL backend: the experts one at a time, each through an FP16
copy of its weights.

``ggml_sycl_mul_mat_id`` (SYCL_MOE_SOURCE) takes its fused mat-vec path only for one token
(``ne12 == 1``). For a prompt micro-batch it copies the router's choices to the host and waits for the queue
(``stream->wait()``), counting-sorts the routed rows by expert, gathers each expert's rows into a contiguous
buffer, and then loops over the experts on the host: every expert with at least one row gets its own
``ggml_sycl_mul_mat`` over its rows. That call picks the kernel as a dense one does: up to
``MMVQ_MAX_BATCH_SIZE`` (8) rows the quantised mat-vec kernel (MMVQ, which reads the quantised weights in
place); above it ``ggml_sycl_op_mul_mat_sycl`` (MMQ is off: ``ggml_sycl_supports_mmq`` returns false),
which dequantises the whole expert matrix to FP16 (``to_fp16_sycl``), converts the expert's rows to FP16
and runs a oneDNN FP16 GEMM (XMX) over them.

So per micro-batch each routed expert the batch touches costs, beyond its share of the FLOPs:

- memory: its quantised weights read, an FP16 copy written and read back by the GEMM (2 + 2 bytes per
  weight, kernels.dequantise_bytes), at the class's bandwidth share. At 16-32 tokens per expert the GEMM
  does 16-32 FLOPs per FP16 weight byte, far under the XMX engines' ridge, so the copy, not the FLOPs, sets
  its time;
- launches: 2-3 matrices per expert (gate and up, or one fused gate_up, and down), each three kernel
  submissions and a oneDNN primitive set up on the host: ``SpeedFactor.prefill_expert_us`` per expert and
  MoE layer, fitted on SYCL MoE prompt rows (benchmarks/sycl_expert_fit.py).

The class's MoE factor (speed.prefill_path, a batch-shape share fitted on other backends' MUL_MAT_ID tiles)
does not apply on this path. Routing is taken as uniform: ubatch × k / E tokens per expert, every expert
touched once the batch is large (1 - (1 - k/E) ** ubatch of them).
"""

from __future__ import annotations

from dataclasses import dataclass

from rigcheck.core.estimate.speed.intel_paths import GGML_SOURCE
from rigcheck.core.estimate.speed.kernels import dequantise_bytes
from rigcheck.core.models.spec import ArchConfig
from rigcheck.core.said import Num, Text, say

SYCL_MOE_SOURCE = (
    f"{GGML_SOURCE} src/ggml-sycl/ggml-sycl.cpp, ggml_sycl_mul_mat_id (per-expert loop for ne12 > 1) and "
    "ggml_sycl_op_mul_mat_sycl"
)
#: MMVQ_MAX_BATCH_SIZE (src/ggml-sycl/common.hpp at GGML_SOURCE): up to this many rows an expert's product
#: runs the quantised mat-vec kernel, reading its weights in place
MMVQ_MAX_BATCH = 8


@dataclass(frozen=True)
class ExpertLoop:
    """What one prompt micro-batch's routed experts cost on SYCL's per-expert loop, on one device."""

    #: routed experts per MoE layer the micro-batch touches
    experts: float
    #: MoE layers whose experts are on the device
    layers: int
    tokens_per_expert: float
    #: the FP16 copy path (dequantise + oneDNN GEMM), not MMVQ
    dequantised: bool
    #: bytes moved for the touched experts: quantised read, and the FP16 copy written and read back
    moved_bytes: float

    @property
    def calls(self) -> float:
        """Expert products the host launches per micro-batch (experts × MoE layers)."""
        return self.experts * self.layers

    def seconds(self, bytes_per_s: float, expert_us: float) -> float:
        """Seconds per micro-batch: the memory it moves at ``bytes_per_s`` plus ``expert_us`` per launch."""
        memory = self.moved_bytes / bytes_per_s if bytes_per_s > 0 else 0.0
        return memory + self.calls * expert_us * 1e-6


def sycl_expert_loop(
    backend: str | None,
    arch: ArchConfig,
    *,
    quantized: bool,
    ubatch: int,
    expert_bytes: float,
    moe_layers: int,
    bits_per_weight: float,
) -> ExpertLoop | None:
    """The per-expert loop llama.cpp's SYCL backend runs a prompt micro-batch of ``ubatch`` tokens through
    (module docstring), for ``expert_bytes`` of quantised routed-expert weights over ``moe_layers`` MoE
    layers on the device; None for another backend, a dense model, unquantized experts (their own path:
    speed.prefill_path's float MoE factor), one token, or no experts on the device."""
    if backend != "sycl" or not arch.is_moe or not quantized or ubatch <= 1:
        return None
    experts, k = arch.num_experts or 0, arch.experts_per_token or 0
    if experts <= 0 or k <= 0 or expert_bytes <= 0 or moe_layers <= 0:
        return None
    share = min(k / experts, 1.0)
    touched = 1 - (1 - share) ** ubatch
    tokens = ubatch * k / experts
    dequantised = tokens > MMVQ_MAX_BATCH
    read = expert_bytes * touched
    moved = dequantise_bytes(read, bits_per_weight) if dequantised else read
    return ExpertLoop(experts * touched, moe_layers, tokens, dequantised, moved)


def expert_loop_said(loop: ExpertLoop, expert_us: float) -> Text:
    """Why a SYCL MoE prompt costs what the loop adds, in words."""
    if loop.dequantised:
        return say(
            "experts one at a time on SYCL ({source}): {calls} expert products per micro-batch over {tokens} "
            "tokens each, each expert dequantised to an FP16 copy for a oneDNN GEMM, at {us} µs of launches "
            "per expert",
            source=SYCL_MOE_SOURCE,
            calls=Num(loop.calls),
            tokens=Num(loop.tokens_per_expert),
            us=Num(expert_us, 1),
        )
    return say(
        "experts one at a time on SYCL ({source}): {calls} expert products per micro-batch over {tokens} "
        "tokens each, on the quantised mat-vec kernel, at {us} µs of launches per expert",
        source=SYCL_MOE_SOURCE,
        calls=Num(loop.calls),
        tokens=Num(loop.tokens_per_expert),
        us=Num(expert_us, 1),
    )
