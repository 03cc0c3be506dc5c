"""MLX as an engine (mlx-lm, and LM Studio's MLX runtime, which runs it): Apple silicon only.

What is MLX's own (``MLX_LM_SOURCE``, ml-explore/mlx-lm ``mlx_lm/generate.py``):

- formats: ``mlx.core.quantize`` groups of 64 weights, each with a 16-bit scale and bias (catalog/quant.toml
  mlx-4bit/6bit/8bit: 4.5, 6.5 and 8.5 bits per weight over every weight, the embedding and head included);
- the KV cache: unquantized (the model's 16-bit dtype) unless ``--kv-bits`` is set;
- the prompt runs in steps of ``prefill_step_size`` = 2,048 tokens, so one step's activations are the peak
  beside the weights and the cache;
- memory: ``wired_limit`` wires up to Metal's ``max_recommended_working_set_size`` (the GPU share the budget
  already uses, core/unified.py) and warns past 90% of it; MLX has no CPU offload of layers, so a model that
  does not fit in that share does not run (it pages, "this can be slow").

Speed: MLX's own decode factors per Apple class (backend "mlx" in catalog/speed_engines.toml, fitted by
``benchmarks/engine_factors.py`` on the fit split of the cited mlx-lm / LM Studio MLX rows); a class with no
MLX rows gets llama.cpp's Metal factors, and the explanation says which.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rigcheck.core.errors import InputError
from rigcheck.core.machine import Machine
from rigcheck.core.models.spec import ArchConfig
from rigcheck.core.said import Num, Said, say

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rigcheck.core.catalog import SpeedFactor
    from rigcheck.core.estimate.memory import MemoryEstimate

MLX_LM_SOURCE = "ml-explore/mlx-lm mlx_lm/generate.py@0024613 (wired_limit, generate_step)"
#: mlx_lm generate_step's default prompt step
PREFILL_STEP = 2048
#: the formats mlx-lm runs, best quality first (mlx_lm.convert -q --q-bits 8/6/4)
MLX_FORMATS = ("bf16", "mlx-8bit", "mlx-6bit", "mlx-4bit")


def check_mlx(machine: Machine) -> None:
    """MLX runs on Apple silicon's GPU (Metal): anything else is refused in one line naming why."""
    if machine.gpus and all(g.vendor == "apple" for g in machine.gpus):
        return
    found = ", ".join(g.name for g in machine.gpus) or say("no GPU")
    raise InputError(
        "--engine mlx",
        say("MLX runs only on Apple silicon (Metal); this machine has {gpus}", gpus=found),
    )


def check_mlx_weights(est: MemoryEstimate) -> None:
    """mlx-lm loads safetensors (16-bit or MLX-quantized), not GGUF: a GGUF format or file is refused in one
    line naming the formats it does run."""
    files = est.model.weights.files if est.model.weights is not None else ()
    gguf = (est.quant is not None and est.quant.kind == "gguf") or any(
        f.lower().endswith(".gguf") for f in files
    )
    if gguf:
        raise InputError(
            "--engine mlx",
            say("MLX runs safetensors, not GGUF: use --quant mlx-4bit, mlx-6bit, mlx-8bit or bf16"),
        )


def prefill_activation_bytes(arch: ArchConfig) -> tuple[int, Said]:
    """One prompt step's largest live activations: the MLP's gate, up and their product for 2,048 tokens
    in 16 bits, and the formula in words."""
    width = arch.intermediate_size or 4 * arch.hidden_size
    bytes_ = PREFILL_STEP * width * 3 * 2
    formula = say(
        "prefill step {step} tokens × {width} MLP width × 3 tensors (gate, up, product) × 2 B",
        step=Num(PREFILL_STEP),
        width=Num(width),
    )
    return bytes_, formula


def mlx_repo(repos: tuple[str, ...], quant_id: str | None) -> str | None:
    """The catalog's MLX repository for this format (``…-4bit`` for mlx-4bit), else None."""
    bits = quant_id.removeprefix("mlx-") if quant_id and quant_id.startswith("mlx-") else None
    if bits is None:
        return next((r for r in repos if r.lower().endswith(("-bf16", "-fp16"))), None)
    return next((r for r in repos if bits in r.lower().rsplit("/", 1)[-1]), None)


def mlx_factor_line(factors: Iterable[SpeedFactor | None]) -> Said:
    """Whose decode factors an MLX estimate used: MLX's own for the chip's class, or llama.cpp's Metal."""
    own = next((f for f in factors if f is not None and f.backend == "mlx"), None)
    if own is None:
        return say("MLX: no mlx-lm measurements for this chip class, so llama.cpp's Metal factors stand in")
    return say(
        "MLX: mlx-lm's own factors for {hw_class} ({measured})", hw_class=own.hw_class, measured=own.measured
    )
