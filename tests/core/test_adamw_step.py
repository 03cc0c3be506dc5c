"""torch.optim.AdamW's foreach step materialises sqrt(v) for every parameter beside the gradients and
states, after the backward freed its activations: a full fine-tune's peak is the larger of the two."""

from __future__ import annotations

from fakes.archs import LLAMA_31_8B
from rigcheck.core.estimate.training_memory import Setup, training_memory
from rigcheck.core.estimate.training_profiles import OPTIMIZERS, PROFILES


def setup(framework: str, method: str) -> Setup:
    prof = PROFILES[framework]
    name = prof.optimizer_full if method == "full" else prof.optimizer_lora
    return Setup(method=method, profile=prof, optimizer=OPTIMIZERS[name])  # type: ignore[arg-type]


def _step(framework: str, context: int, method: str = "full") -> int:
    parts = training_memory(LLAMA_31_8B, setup(framework, method), context, 1).parts
    return sum(p.bytes for p in parts if p.name.startswith("AdamW step"))


def _activations(framework: str, context: int) -> int:
    parts = training_memory(LLAMA_31_8B, setup(framework, "full"), context, 1).parts
    return sum(p.bytes for p in parts if p.category == "activations")


def test_the_step_adds_what_sqrt_v_exceeds_the_freed_activations_by() -> None:
    params = LLAMA_31_8B.params_total
    short = _step("transformers", 512)
    assert short == 2 * params - _activations("transformers", 512)  # v in bf16: 2 B per parameter
    assert _step("transformers", 4096) < short  # longer contexts free more at the step
    assert _step("transformers", 262144) == 0  # activations larger than sqrt(v): the backward is the peak


def test_fused_cpu_and_in_backward_steps_add_nothing() -> None:
    assert _step("torchtune", 512) == 0  # PagedAdamW8bit stepped inside backward
    assert _step("deepspeed", 512) == 0  # DeepSpeed's FusedAdam
    assert _step("megatrain", 512) == 0  # DeepSpeedCPUAdam in host RAM
    assert _step("transformers", 512, "lora") == 0  # adapters' sqrt(v) is far below the activations
