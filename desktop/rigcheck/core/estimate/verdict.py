"""The verdict of a fit: the result a caller gets, and the sentences that say where it went, or why not."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rigcheck.core.estimate.memory import MemoryEstimate
from rigcheck.core.estimate.placement.training import (
    MEGATRAIN_HOST_BYTES,
    largest_layer_params,
    zero2_offload_bytes,
    zero3_offload_bytes,
)
from rigcheck.core.estimate.placement.types import Budget, Offload, Placement
from rigcheck.core.estimate.speed.result import Speed
from rigcheck.core.said import Bytes, Joined, Said, Text, render_all, say

Verdict = Literal["fits", "fits_with_offload", "does_not_fit"]


@dataclass(frozen=True)
class FitResult:
    verdict: Verdict
    placement: Placement
    speed: Speed
    estimate: MemoryEstimate
    budget: Budget
    #: where it went (or why not), then the budget's reasons, as said: :attr:`reasons` in words
    reasons_said: tuple[Text, ...]
    #: what would help, as said: :attr:`advice` in words
    advice_said: tuple[Text, ...] = ()

    @property
    def reasons(self) -> tuple[str, ...]:
        return render_all(self.reasons_said)

    @property
    def advice(self) -> tuple[str, ...]:
        return render_all(self.advice_said)


def why_not(est: MemoryEstimate, budget: Budget, offload: Offload) -> Said:
    """Why nothing was placed, in one sentence that never claims it fits."""
    need, gpu, ram = est.total_bytes, max(budget.gpu_bytes, default=0), budget.cpu_bytes
    offers = {"gpus": Bytes(sum(budget.gpu_bytes)), "ram": Bytes(ram)}
    if est.workload in ("lora", "qlora") and offload == "full":
        return say(
            "MegaTrain-style offload (--offload full) streams full fine-tuning; for LoRA/QLoRA use "
            "--offload optimizer or params, or none"
        )
    if (
        est.workload in ("lora", "qlora", "inference")
        and offload == "experts"
        and not any(est.layer_expert_bytes)
    ):
        return say("expert offload needs a mixture-of-experts model; this one is dense")
    if not any(budget.gpu_bytes) and est.workload != "inference":
        return say("training needs a GPU; GPUs offer {gpus} and RAM {ram}", **offers)
    room = sum(1 for b in budget.gpu_bytes if b >= need)
    if est.workload != "inference" and est.training_gpus > room and offload in ("none", "auto"):
        if est.training_gpus == 1:
            return say(
                "on one GPU it needs {need}; none of this machine's GPUs has that room (--gpus N shards "
                "the model states, --offload moves them to RAM)",
                need=Bytes(need),
            )
        return say(
            "sharded over {asked} GPUs (--gpus) it needs {need} on each; {room} of this machine's GPUs "
            "have that room",
            asked=est.training_gpus,
            need=Bytes(need),
            room=room,
        )
    if est.workload == "full" and offload in ("optimizer", "params", "full"):
        params = est.model.arch.params_total
        host = {
            "optimizer": zero2_offload_bytes(params, gpus=max(sum(1 for b in budget.gpu_bytes if b > 0), 1))[
                0
            ],
            "params": zero3_offload_bytes(params, largest_layer_params(est.model.arch))[0],
            "full": MEGATRAIN_HOST_BYTES * params,
        }[offload]
        if host > ram:
            return say(
                "--offload {offload} keeps {host} in RAM; {ram} is available",
                offload=offload,
                host=Bytes(host),
                ram=Bytes(ram),
            )
    if est.workload != "inference" and offload in ("optimizer", "params", "full") and need <= gpu:
        return say(
            "with --offload {offload} the parts kept in RAM need more than the {ram} available "
            "(it would fit the GPU without offload: {need} of {gpu})",
            offload=offload,
            ram=Bytes(ram),
            need=Bytes(need),
            gpu=Bytes(gpu),
        )
    return say("needs {need}; GPUs offer {gpus} and RAM {ram}", need=Bytes(need), **offers)


def placement_sentence(est: MemoryEstimate, p: Placement) -> Said | Joined:
    """Where the model went, in one sentence (with the input embedding llama.cpp keeps in RAM after "; ")."""
    gpu_total = sum(p.gpu_bytes)
    if p.offload == "experts" and est.engine == "ktransformers":
        return say(
            "attention, shared experts and KV cache of all {layers} layers on the GPU ({gpu}); the routed "
            "experts of {cpu_layers} layers in RAM ({ram}), computed on the CPU by ktransformers",
            layers=p.total_layers,
            gpu=Bytes(gpu_total),
            cpu_layers=sum(1 for e in est.layer_expert_bytes[: p.cpu_expert_layers] if e),
            ram=Bytes(p.cpu_bytes),
        )
    if p.offload == "experts":
        return say(
            "attention, shared weights and KV cache of all {layers} layers on the GPU ({gpu}); "
            "the routed experts of {cpu_layers} layers in RAM ({ram}), as llama.cpp --n-cpu-moe {cpu_layers}",
            layers=p.total_layers,
            gpu=Bytes(gpu_total),
            cpu_layers=p.cpu_expert_layers,
            ram=Bytes(p.cpu_bytes),
        )
    if p.offload == "full":
        from rigcheck.core.estimate.placement import megatrain

        arch, params = est.model.arch, est.model.arch.params_total
        workers = sum(1 for b in p.gpu_bytes if b)
        if workers > 1:  # MegaTrain's data parallel: one shared host copy, a worker per GPU
            return say(
                "MegaTrain-style on {workers} GPUs: {ram} in RAM (one shared copy of the bf16 weights, "
                "layer flats and gradients and the fp32 Adam m and v, and each worker's pinned slabs "
                "{pinned}), {each} on each GPU (layer buffers, embedding and head {fixed}, {batch} × "
                "{sample} per sample, CUDA context)",
                workers=workers,
                ram=Bytes(p.cpu_bytes),
                pinned=Bytes(megatrain.worker_staging_bytes(arch)),
                each=Bytes(max(p.gpu_bytes)),
                fixed=Bytes(megatrain.fixed_bytes(arch)),
                batch=est.batch,
                sample=Bytes(megatrain.sample_bytes(arch, est.context, est.linear_kernels)),
            )
        return say(
            "MegaTrain-style: {ram} in RAM at the step (bf16 weights {weights}, fp32 Adam m and v {mv}, "
            "bf16 gradients {grads}, pinned buffers {pinned}), {gpu} on the GPU (layer buffers, embedding "
            "and head {fixed}, {batch} × {sample} per sample, CUDA context)",
            ram=Bytes(p.cpu_bytes),
            weights=Bytes(2 * params),
            mv=Bytes(8 * params),
            grads=Bytes(2 * params),
            pinned=Bytes(megatrain.staging_bytes(arch)),
            gpu=Bytes(gpu_total),
            fixed=Bytes(megatrain.fixed_bytes(arch)),
            batch=est.batch,
            sample=Bytes(megatrain.sample_bytes(arch, est.context, est.linear_kernels)),
        )
    if p.offload == "params":
        return say(
            "ZeRO-3 offload: parameters, gradients and optimizer states in RAM ({ram}), "
            "{gpu} on the GPU (4 × the largest layer + activations)",
            ram=Bytes(p.cpu_bytes),
            gpu=Bytes(gpu_total),
        )
    if p.offload == "optimizer":
        return say(
            "ZeRO-Offload: optimizer states in RAM ({ram}), {gpu} on the GPU",
            ram=Bytes(p.cpu_bytes),
            gpu=Bytes(gpu_total),
        )
    if p.cpu_bytes and gpu_total:
        return _with_host(
            est,
            say(
                "{gpu_layers} of {layers} layers on the GPU ({gpu}), the rest in RAM ({ram})",
                gpu_layers=p.gpu_layers,
                layers=p.total_layers,
                gpu=Bytes(gpu_total),
                ram=Bytes(p.cpu_bytes),
            ),
        )
    if p.cpu_bytes:
        # all of it is in RAM, the embedding llama.cpp keeps there too: the figure the RAM bar shows
        return say("runs on the CPU from RAM ({ram})", ram=Bytes(p.cpu_bytes + est.host_weight_bytes))
    used = sum(1 for b in p.gpu_bytes if b)
    if used > 1:
        return _with_host(
            est,
            say(
                "everything on {count} GPUs: {gpu} in all (each GPU keeps its own buffers)",
                count=used,
                gpu=Bytes(gpu_total),
            ),
        )
    return _with_host(
        est,
        say(
            "everything on the GPU: {gpu} of {need} needed", gpu=Bytes(gpu_total), need=Bytes(est.total_bytes)
        ),
    )


def _with_host(est: MemoryEstimate, sentence: Said) -> Said | Joined:
    """``sentence``, and after "; " the input embedding llama.cpp keeps in RAM when there is one."""
    if not est.host_weight_bytes:
        return sentence
    host = say(
        "the input embedding ({size}) stays in RAM, as llama.cpp keeps it", size=Bytes(est.host_weight_bytes)
    )
    return Joined("; ", (sentence, host))
