"""The speed model's inputs: which class of hardware a device is, which backend it runs, its fitted
factors (``catalog/speed.toml``), and the host's memory bandwidth.

Decode time per token, per device = max(bytes read ÷ (bandwidth × efficiency), FLOPs ÷ (compute ×
efficiency)) + a fixed cost per layer (kernel launches and synchronisation: what dominates small models
on fast GPUs) and per GPU. The efficiencies and fixed costs are per hardware class and backend, fitted
on the cited measurement set (``benchmarks/fit_speed.py``), never per chip and model.

This package's own namespace holds those inputs (``factors``: the class, backend, factors and maturities;
``host``: the host's bandwidth; ``prefill_rate``: a GPU's prompt FLOP rate and kernel-path multipliers;
``cpu_flops``: a CPU's FP32 peak); the model itself is one module per mechanism:

- ``reads``: the bytes a token reads per layer and what each device offers (bandwidth, peak, PCIe).
- ``decode``: the GPU decode roofline; ``fixed``: the fixed cost per layer and per GPU.
- ``cpu``: decode from RAM and prompt processing on the CPU.
- ``prefill``: prompt processing on the GPUs.
- ``experts``: routed experts: llama.cpp's tiled expert kernel, ktransformers' CPU experts.
- ``training``: fine-tuning throughput.
- ``estimate``: :func:`~rigcheck.core.estimate.speed.estimate.estimate_speed`, which puts them together.
"""

from __future__ import annotations

from rigcheck.core.catalog import Backend
from rigcheck.core.estimate.speed.cpu_flops import AMX_QUANTS as AMX_QUANTS
from rigcheck.core.estimate.speed.cpu_flops import AMX_SOURCE as AMX_SOURCE
from rigcheck.core.estimate.speed.cpu_flops import CpuCompute as CpuCompute
from rigcheck.core.estimate.speed.cpu_flops import cpu_compute as cpu_compute
from rigcheck.core.estimate.speed.factors import CPU_CLASS as CPU_CLASS
from rigcheck.core.estimate.speed.factors import DEFAULT_BACKENDS as DEFAULT_BACKENDS
from rigcheck.core.estimate.speed.factors import ENGINE_GPU_BACKENDS as ENGINE_GPU_BACKENDS
from rigcheck.core.estimate.speed.factors import KTRANSFORMERS as KTRANSFORMERS
from rigcheck.core.estimate.speed.factors import MLX as MLX
from rigcheck.core.estimate.speed.factors import default_backend as default_backend
from rigcheck.core.estimate.speed.factors import engine_cpu_factor as engine_cpu_factor
from rigcheck.core.estimate.speed.factors import engine_gpu_factor as engine_gpu_factor
from rigcheck.core.estimate.speed.factors import engine_maturity as engine_maturity
from rigcheck.core.estimate.speed.factors import gpu_factor as gpu_factor
from rigcheck.core.estimate.speed.factors import hardware_class as hardware_class
from rigcheck.core.estimate.speed.factors import maturity as maturity
from rigcheck.core.estimate.speed.factors import speed_factor as speed_factor
from rigcheck.core.estimate.speed.host import DEFAULT_HOST_BANDWIDTH as DEFAULT_HOST_BANDWIDTH
from rigcheck.core.estimate.speed.host import DEFAULT_HOST_SOURCE as DEFAULT_HOST_SOURCE
from rigcheck.core.estimate.speed.host import MEASURED_READ_SHARE as MEASURED_READ_SHARE
from rigcheck.core.estimate.speed.host import MEASURED_READ_SOURCE as MEASURED_READ_SOURCE
from rigcheck.core.estimate.speed.host import HostBandwidth as HostBandwidth
from rigcheck.core.estimate.speed.host import HostSource as HostSource
from rigcheck.core.estimate.speed.host import cpu_platform as cpu_platform
from rigcheck.core.estimate.speed.host import cpu_read_efficiency as cpu_read_efficiency
from rigcheck.core.estimate.speed.host import host_bandwidth as host_bandwidth
from rigcheck.core.estimate.speed.host import with_host_bandwidth as with_host_bandwidth
from rigcheck.core.estimate.speed.prefill_rate import MOE_TOKENS_REF as MOE_TOKENS_REF
from rigcheck.core.estimate.speed.prefill_rate import (
    RDNA4_MATRIX_PER_PACKED_FP16 as RDNA4_MATRIX_PER_PACKED_FP16,
)
from rigcheck.core.estimate.speed.prefill_rate import PrefillCompute as PrefillCompute
from rigcheck.core.estimate.speed.prefill_rate import PrefillPath as PrefillPath
from rigcheck.core.estimate.speed.prefill_rate import moe_tokens_per_expert as moe_tokens_per_expert
from rigcheck.core.estimate.speed.prefill_rate import prefill_compute as prefill_compute
from rigcheck.core.estimate.speed.prefill_rate import prefill_path as prefill_path
from rigcheck.core.estimate.speed.prefill_rate import prefill_peak_tflops as prefill_peak_tflops
from rigcheck.core.estimate.speed.vulkan_bf16 import VULKAN_BF16_NVIDIA_DRIVER as VULKAN_BF16_NVIDIA_DRIVER
from rigcheck.core.estimate.speed.vulkan_bf16 import VULKAN_BF16_SOURCE as VULKAN_BF16_SOURCE
from rigcheck.core.estimate.speed.vulkan_bf16 import bf16_on_scalar_shaders as bf16_on_scalar_shaders
from rigcheck.core.estimate.speed.vulkan_bf16 import intel_bf16_matrices as intel_bf16_matrices

#: Where llama.cpp multiplies one token's routed experts with a tiled matrix-matrix kernel instead of its
#: matrix-vector one, by backend and expert weight type. Vulkan: ``ggml_vk_use_mul_mat_vec_id`` sends
#: MUL_MAT_ID at batch 1 to the matrix-vector shaders only for F32, F16 and quantised weights, so BF16 experts
#: run ``ggml_vk_mul_mat_id_q_f16``, the tiled matmul_id GEMM a prompt micro-batch runs (dense BF16 MUL_MAT
#: does take the matrix-vector path: ``ggml_vk_mul_mat`` lists BF16) (ggml-org/llama.cpp
#: ggml/src/ggml-vulkan/ggml-vulkan.cpp@000651caaa5b97364a481345863770c2b898d2e7; the same test, with
#: ``ne[1] == 1``, in earlier versions). CUDA/HIP is not listed: ``ggml_cuda_mul_mat_id`` runs one token's
#: unquantized experts through ``ggml_cuda_mul_mat_vec_f`` with the expert ids (``ne2 == 1``;
#: ggml/src/ggml-cuda/ggml-cuda.cu@f6d77a1ba0ac794e950bd3abb630b904bdcd8fb8, built for HIP too), and only a
#: prompt's go through its per-expert fallback loop (prefill_float_moe_factor).
TILED_EXPERT_DECODE: dict[Backend, frozenset[str]] = {"vulkan": frozenset({"bf16"})}
TILED_EXPERT_DECODE_SOURCE = (
    "ggml-org/llama.cpp ggml/src/ggml-vulkan/ggml-vulkan.cpp@000651c, ggml_vk_use_mul_mat_vec_id"
)


def tiled_expert_decode(backend: Backend | None, quant_id: str | None) -> bool:
    """Whether llama.cpp decodes this backend's routed experts of this weight type through a tiled GEMM."""
    return backend is not None and quant_id is not None and quant_id in TILED_EXPERT_DECODE.get(backend, ())
