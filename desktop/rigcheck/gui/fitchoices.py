"""Which of Fit's choices apply to the question asked: only those are offered (issue 26, item 3).

Qt-free: the page asks these and fills its combo boxes with the answer.
"""

from __future__ import annotations

from collections.abc import Iterable

#: offload modes per workload (core.estimate.fit.place): inference places layers or routed experts in
#: RAM; training offloads the optimizer (ZeRO-Offload) or everything (MegaTrain)
INFERENCE_OFFLOADS = ("auto", "none", "layers", "experts")
TRAINING_OFFLOADS = ("auto", "none", "optimizer", "full")
#: the llama.cpp GPU backends each vendor's GPUs run (llama.cpp docs/build.md: CUDA for NVIDIA, HIP for
#: AMD, Metal for Apple, SYCL for Intel, Vulkan for NVIDIA, AMD and Intel)
VENDOR_BACKENDS = {
    "nvidia": ("cuda", "vulkan"),
    "amd": ("rocm", "vulkan"),
    "intel": ("sycl", "vulkan"),
    "apple": ("metal",),
}
#: the inference engines offered on every machine (core.estimate.memory Engine); each one's own refusals apply
ENGINES = ("llama.cpp", "vllm", "transformers", "ktransformers", "ollama", "sglang")
#: engines that run on one vendor's GPUs only, offered where every GPU is that vendor's (core/estimate/mlx.py
#: check_mlx: Apple silicon's Metal; core/estimate/exllamav3.py check_exllamav3: NVIDIA's CUDA)
VENDOR_ENGINES = (("mlx", "apple"), ("exllamav3", "nvidia"))
#: the formats an engine with formats of its own runs, best quality first (core/estimate/mlx.py MLX_FORMATS:
#: mlx_lm.convert's group-64 quantizations; core/estimate/exllamav3.py EXL3_FORMATS)
ENGINE_FORMATS = {
    "mlx": ("bf16", "mlx-8bit", "mlx-6bit", "mlx-4bit"),
    "exllamav3": ("exl3-6.0bpw", "exl3-5.0bpw", "exl3-4.0bpw", "exl3-3.0bpw"),
}
#: the weights a training workload trains on whatever format is picked (core.estimate.memory: QLoRA
#: quantizes the base to NF4 with double quantization, LoRA and full fine-tuning keep BF16)
TRAINING_FORMATS = {"qlora": "nf4", "lora": "bf16", "full": "bf16"}


def offload_choices(workload: str, is_moe: bool) -> tuple[str, ...]:
    if workload != "inference":
        return TRAINING_OFFLOADS
    return INFERENCE_OFFLOADS if is_moe else tuple(k for k in INFERENCE_OFFLOADS if k != "experts")


def backend_choices(vendors: Iterable[str | None]) -> tuple[str, ...]:
    """ "" (each vendor's usual one) first, then the backends the machine's GPUs run, in a fixed order."""
    wanted = {b for v in vendors for b in VENDOR_BACKENDS.get(v or "", ())}
    order = ("cuda", "rocm", "metal", "vulkan", "sycl")
    return ("", *(b for b in order if b in wanted))


def training_format(workload: str) -> str | None:
    """The format ``workload`` trains on, or None for inference (the user's choice counts)."""
    return TRAINING_FORMATS.get(workload)


def engine_choices(vendors: Iterable[str | None]) -> tuple[str, ...]:
    """The engines that can run on GPUs of these vendors: every machine's, then MLX on Apple silicon and
    ExLlamaV3 on NVIDIA where all the GPUs are that vendor's (none on a machine without GPUs)."""
    found = list(vendors)
    bound = tuple(e for e, vendor in VENDOR_ENGINES if found and all(v == vendor for v in found))
    return (*ENGINES, *bound)


def format_choices(engine: str | None, usual: tuple[str, ...]) -> tuple[str, ...]:
    """The weight formats to offer with ``engine``: its own where it has them (MLX, ExLlamaV3), else
    ``usual``."""
    return ENGINE_FORMATS.get(engine or "", usual)
