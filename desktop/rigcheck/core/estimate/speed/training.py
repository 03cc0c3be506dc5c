"""Fine-tuning throughput: 6N (full) or 4N (adapters) FLOPs per token at a utilisation of the tensor peak,
plus QLoRA's dequantisation, and with offload the CPU optimizer and the PCIe streams.
"""

from __future__ import annotations

from collections.abc import Sequence

from rigcheck.core.catalog import Catalog, GpuSpec
from rigcheck.core.estimate import speed
from rigcheck.core.estimate.memory import MemoryEstimate
from rigcheck.core.estimate.placement.types import Placement
from rigcheck.core.estimate.speed.reads import gpu_bandwidth, pcie_gbs
from rigcheck.core.estimate.speed.result import Bound, Speed
from rigcheck.core.i18n import num, percent, sig, tr
from rigcheck.core.machine import Machine

#: effective CPU memory bandwidth for the CPU optimizer of offloaded training: a desktop DDR5 system
#: ran a 7B Q4 model at 12.6–18.3 tokens/s on the CPU (llama.cpp issue #34), i.e. ~50 GB/s
CPU_BANDWIDTH_GBS = 50.0
#: utilisation of peak dense tensor FLOPs in training (Llama 3 405B on H100 reached 38–43% of dense
#: BF16, glennklockwood.com SC'24 table); MegaTrain measured 26–28% on one H100
TRAIN_MFU = 0.4
MEGATRAIN_MFU = 0.27


#: CPU Adam touches ~28 bytes per parameter per step (memory-formulas §1.6, derived)
CPU_ADAM_BYTES_PER_PARAM = 28


#: QLoRA dequantises the 4-bit base weights to bf16 for every matmul, in the forward pass, in the backward
#: pass (for the input gradients) and again when recomputing (QLoRA arXiv 2305.14314 §3: "we dequantize
#: the storage data type to the computation data type to perform the forward and backward pass"): each
#: pass reads 0.5 B and writes 2 B per weight, and the matmul reads the 2 B copy back, which LoRA reads anyway
QLORA_DEQUANT_BYTES_PER_PARAM = 0.5 + 2


def _tflops(spec: GpuSpec | None) -> float | None:
    if spec is None:
        return None
    return spec.bf16_tflops or spec.fp16_tflops


def training_speed(
    est: MemoryEstimate,
    placement: Placement,
    machine: Machine,
    catalog: Catalog,
    *,
    specs: Sequence[GpuSpec | None],
    explanation: list[str],
) -> Speed:
    arch = est.model.arch
    gpus = machine.gpus
    used = [i for i, b in enumerate(placement.gpu_bytes) if b > 0]
    if not used:
        return Speed(explanation=(tr("training needs a GPU"),))
    i = used[0]
    peak = _tflops(specs[i])
    if peak is None:
        return Speed(
            explanation=(
                tr(
                    "GPU {index} ({name}): tensor throughput not published; speed not estimated",
                    index=i,
                    name=gpus[i].name,
                ),
            )
        )
    # FLOPs follow the parameters a token touches: a mixture of experts trains its active experts only.
    active = arch.params_active
    recompute = 2 if est.checkpointing in ("full", "offloaded") else 0
    per_param = (6 if est.workload == "full" else 4) + recompute
    flops_per_token = per_param * active
    mfu = MEGATRAIN_MFU if placement.offload == "full" else TRAIN_MFU
    tokens_per_step = est.context * est.batch
    t_compute = flops_per_token * tokens_per_step / (mfu * peak * 1e12)
    moe = (
        ", " + tr("{active} of {total} parameters active", active=num(active), total=num(arch.params_total))
        if arch.is_moe
        else ""
    )
    base = "6N" if est.workload == "full" else tr("4N (frozen base: no weight gradients)")
    explanation.append(
        tr(
            "{per_param}·N FLOPs per token ({base}{recompute}{moe}) at {mfu} of {peak} TFLOPS",
            per_param=per_param,
            base=base,
            recompute=", " + tr("+2N recompute") if recompute else "",
            moe=moe,
            mfu=percent(mfu),
            peak=sig(peak, 6),
        )
    )
    bound: Bound = "compute"
    step = t_compute
    if est.workload == "qlora":
        bw = gpu_bandwidth(specs[i])
        factor = speed.gpu_factor(catalog, gpus[i], specs[i], est.backend)
        if bw is not None and factor is not None:
            passes = 2 + (1 if recompute else 0)
            quantized = arch.params_total - arch.embed_params - arch.head_params
            t_dequant = (
                passes
                * quantized
                * QLORA_DEQUANT_BYTES_PER_PARAM
                / (bw * 1e9 * factor.decode_bandwidth_efficiency)
            )
            step += t_dequant
            explanation.append(
                tr(
                    "QLoRA dequantises the NF4 base {passes}× per step ({bytes} B per weight each): "
                    "+{ms} ms per step at {bw} GB/s (QLoRA §3)",
                    passes=passes,
                    bytes=sig(QLORA_DEQUANT_BYTES_PER_PARAM, 6),
                    ms=num(t_dequant * 1e3),
                    bw=sig(bw, 6),
                )
            )
    if placement.offload in ("optimizer", "params", "full"):
        host = speed.host_bandwidth(machine, catalog)
        trainable = arch.params_total if est.workload == "full" else est.trainable_params
        t_opt = trainable * CPU_ADAM_BYTES_PER_PARAM / host.bytes_per_s
        explanation.append(
            tr(
                "CPU AdamW: {bytes} B per trainable parameter per step at {how}",
                bytes=CPU_ADAM_BYTES_PER_PARAM,
                how=host.why,
            )
        )
        link = pcie_gbs(gpus[i], specs[i])
        if placement.offload in ("params", "full"):
            # bf16 weights stream in for the forward pass and again for the backward (and recompute);
            # bf16 gradients stream out (memory-formulas §1.6, §7.3)
            t_h2d = (2 * arch.params_total * 2 + arch.params_total * 2) / (link * 1e9)
            explanation.append(
                tr(
                    "streaming bf16 weights in twice and gradients out once per step over {link} GB/s",
                    link=sig(link, 6),
                )
            )
            if t_h2d > step:
                step, bound = t_h2d, "pcie"
        if placement.offload == "full":
            # MegaTrain pipelines prefetch, compute, gradient offload and the CPU update (arXiv 2604.05091)
            if t_opt > step:
                step, bound = t_opt, "cpu_optimizer"
            explanation.append(tr("MegaTrain overlaps the CPU optimizer with the GPU's work"))
        else:
            if t_opt > step:
                bound = "cpu_optimizer"
            step += t_opt
    ranks = len(used) if placement.offload in ("optimizer", "params") else 1
    if ranks > 1:  # DeepSpeed data parallel: one rank per GPU, the host's CPU optimizer shared
        explanation.append(tr("× {ranks} GPUs (one DeepSpeed data-parallel rank each)", ranks=ranks))
    return Speed(None, None, ranks * tokens_per_step / step, bound, tuple(explanation))
