"""What a token reads and what each device offers: bytes per layer (active weights, routed experts, KV), the
head, the FLOPs a prompt token costs, each GPU's bandwidth and compute peak, and the PCIe link.
"""

from __future__ import annotations

from rigcheck.core.catalog import GpuSpec
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.memory import MemoryEstimate, expert_params_per_layer
from rigcheck.core.estimate.placement.inference import layer_kv
from rigcheck.core.estimate.speed.coopmat import vulkan_matrix_engines
from rigcheck.core.machine import GPU, Machine
from rigcheck.core.models.spec import ArchConfig

#: PCIe bandwidth per direction actually achieved, GB/s: Gen4 x16 DMA measured ~26 (MegaTrain
#: summary thread); Gen5 taken as twice that; Gen3 half (memory-formulas §1.6, §2.9)
PCIE_GBS = {3: 13.0, 4: 26.0, 5: 52.0, 6: 104.0}


#: lanes the PCIE_GBS figures are for; a card wired for fewer lanes moves that share of it (an RTX 5060 Ti
#: is PCIe 5.0 x8: https://www.techpowerup.com/review/nvidia-geforce-rtx-5060-ti-pci-express-x8-scaling/31.html,
#: "Conclusion": "NVIDIA has upgraded the PCIe bus to Gen 5 x8")
PCIE_FULL_LANES = 16


def pcie_gbs(gpu: GPU, spec: GpuSpec | None) -> float:
    """GB/s one direction of the GPU's host link moves: the generation's x16 figure (PCIE_GBS) × the lanes
    it runs on out of 16 (the probed maximum link width, else the catalog card's lanes, else 16)."""
    gen = gpu.pcie_max_gen or (spec.pcie_gen if spec else None) or 4
    lanes = gpu.pcie_max_width or (spec.pcie_lanes if spec else None) or PCIE_FULL_LANES
    return PCIE_GBS.get(gen, 26.0) * min(lanes, PCIE_FULL_LANES) / PCIE_FULL_LANES


#: per-architecture read ratios, keyed by id() with the arch kept to guard against id reuse: the matrix
#: (grid) asks for the same architecture once per format, and hashing a frozen ArchConfig costs more
_RATIOS: dict[int, tuple[ArchConfig, tuple[float, ...], tuple[float, ...]]] = {}


def read_ratios(arch: ArchConfig) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Per layer: the share of its weights a token reads (dense), and of its routed experts (MoE; -1
    for a layer without routed experts)."""
    cached = _RATIOS.get(id(arch))
    if cached is not None and cached[0] is arch:
        return cached[1], cached[2]
    n = arch.num_layers
    active_params = arch.layer_active_params or (0,) * n
    params = arch.layer_params or (0,) * n
    expert_params = expert_params_per_layer(arch) if arch.is_moe else (0,) * n
    dense = tuple(la / lp if lp else 1.0 for la, lp in zip(active_params, params, strict=True))
    routed = tuple(
        min(max(la - (lp - ep), 0) / ep, 1.0) if ep else -1.0
        for la, lp, ep in zip(active_params, params, expert_params, strict=True)
    )
    if len(_RATIOS) > 256:
        _RATIOS.clear()
    _RATIOS[id(arch)] = (arch, dense, routed)
    return dense, routed


#: times a recurrent layer's state crosses memory per decode token: llama.cpp reads it from the cache and
#: writes the new one back (build_rs's get_rows of the state, the GATED_DELTA_NET / SSM_SCAN op's output
#: holding the new state, and a ggml_cpy of it into the cache: ggml-org/llama.cpp
#: src/llama-graph.cpp@00395eb285c7c6821ff372e3ca41dae9da33c2c7 build_rs,
#: src/models/delta-net-base.cpp@156ce1c1a856e182db62028fc09c368183a1a1c9 build_recurrent_attn). The
#: intermediate copies are a layer's state (2 MiB in Qwen3.5) handed from one kernel to the next, which a
#: GPU's L2 or last-level cache holds; the read of the old state and the write of the new one are not
STATE_TRAFFIC = 2


def active_bytes(est: MemoryEstimate) -> tuple[list[int], list[int], int]:
    """Bytes a token moves in each layer (active weights, KV read, a recurrent state read and written
    back), the routed-expert part of it, and the head."""
    arch = est.model.arch
    dense, routed_share = read_ratios(arch)
    kv = [
        k * STATE_TRAFFIC if kind == "linear" else k
        for k, kind in zip(layer_kv(est), arch.layer_kinds, strict=True)
    ]
    if est.layer_expert_bytes:
        expert_read = [
            int(e * r) if r > 0 else 0 for e, r in zip(est.layer_expert_bytes, routed_share, strict=True)
        ]
        per_layer = [
            (w - e + x + k) if e and r >= 0 else int(w * d) + k
            for w, k, e, x, r, d in zip(
                est.layer_weight_bytes,
                kv,
                est.layer_expert_bytes,
                expert_read,
                routed_share,
                dense,
                strict=True,
            )
        ]
    else:
        expert_read = [0] * len(est.layer_weight_bytes)
        per_layer = [int(w * d) + k for w, k, d in zip(est.layer_weight_bytes, kv, dense, strict=True)]
    other = est.other_weight_bytes - est.outside_weight_bytes  # towers and MTP layers are not read
    if est.host_weight_bytes:  # the input embedding is already out: what is left is the head
        head = other
    else:  # the input embedding is a row lookup; only the head is read whole
        # a tied head is the token table itself (vocabulary × hidden), multiplied by every token's state
        # (mlx-lm: ``self.model.embed_tokens.as_linear(out)``, ml-explore/mlx-lm
        # mlx_lm/models/qwen3.py@144d58ced2d7392fe5acc7fb4daeb39a3fcf5a1f Model.__call__)
        tied = arch.vocab_size * arch.hidden_size if arch.tie_word_embeddings else 0
        head_params = arch.head_params + tied
        head = int(other * min(head_params / max(arch.embed_params + arch.head_params, 1), 1.0))
    return per_layer, expert_read, head


def peak_tflops(spec: GpuSpec | None) -> float | None:
    """Tensor (bf16/fp16) throughput, else fp32: the compute peak the factors are fitted against."""
    if spec is None:
        return None
    return spec.bf16_tflops or spec.fp16_tflops or spec.fp32_tflops


def prefill_flops_per_token(arch: ArchConfig) -> float:
    """2 FLOPs per active parameter that multiplies a prompt token. Neither end of the model counts: the
    input embedding is a row lookup, and llama.cpp computes the output head only for the tokens whose logits
    are asked for (the last one of a prompt: the graph keeps only the ``inp_out_ids`` rows before the final
    norm and head, llama.cpp src/llama-graph.cpp build_inp_out_ids), a vanishing share of a prompt's work."""
    return 2.0 * max(arch.params_active - arch.embed_params - arch.head_params, 1)


def gpu_bandwidth(spec: GpuSpec | None) -> float | None:
    return spec.bandwidth_gbs if spec else None


def bf16_scalar_path(est: MemoryEstimate, gpu: GPU, spec: GpuSpec | None, machine: Machine) -> bool | None:
    """speed.bf16_on_scalar_shaders for this GPU, with the backend the estimate runs on it and whether that
    backend runs cooperative matrices on it (an Intel GPU's, by generation and llama.cpp build)."""
    backend = est.backend or speed.default_backend(gpu.vendor)
    quant_id = est.quant.id if est.quant is not None else None
    build = est.engine_build if est.engine == "llama.cpp" else None
    engines = vulkan_matrix_engines(backend, spec, build) if gpu.vendor == "intel" else None
    return speed.bf16_on_scalar_shaders(
        backend, quant_id, gpu.vendor, machine.drivers.nvidia, machine.host.os, matrix_engines=engines
    )
