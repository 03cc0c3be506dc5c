"""Qwen (1)'s remote-code config is counted as its modeling file builds it, and DeepSpeed ZeRO's step
holds one sub-group's gradient in fp32 beside the states once the backward has freed its activations."""

from __future__ import annotations

import json
from pathlib import Path

from fakes.archs import LLAMA_31_8B
from rigcheck.core.estimate.training_memory import Setup, training_memory
from rigcheck.core.estimate.training_profiles import OPTIMIZERS, PROFILES
from rigcheck.core.estimate.training_zero import SUB_GROUP_SIZE
from rigcheck.core.models.config import parse_config

QWEN_1_8B = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "configs" / "Qwen--Qwen-1_8B.json"


def test_qwen1_mlp_is_half_of_its_intermediate_size_and_every_head_has_its_own_kv() -> None:
    config = json.loads(QWEN_1_8B.read_text(encoding="utf-8"))
    arch = parse_config(config, "qwen")
    h, v, n = config["hidden_size"], config["vocab_size"], config["num_hidden_layers"]
    ff = config["intermediate_size"] // 2  # QWenMLP: w1, w2 and c_proj are intermediate_size // 2 wide
    layer = (h * 3 * h + 3 * h) + h * h + 3 * h * ff + 2 * h  # c_attn with bias, c_proj, MLP, ln_1/ln_2
    assert arch.intermediate_size == ff
    assert arch.num_kv_heads == arch.num_heads == config["num_attention_heads"]
    assert arch.layer_params == (layer,) * n
    assert arch.params_total == 2 * v * h + n * layer + h  # untied lm_head, ln_f
    assert 1.8e9 < arch.params_total < 1.9e9  # "Qwen-1.8B"


def _setup(framework: str, *, offload: bool = False) -> Setup:
    prof = PROFILES[framework]
    return Setup(
        method="full", profile=prof, optimizer=OPTIMIZERS[prof.optimizer_full], offload_states=offload
    )


def _zero(context: int, **kw: bool) -> tuple[int, int]:
    parts = training_memory(LLAMA_31_8B, _setup("deepspeed", **kw), context, 1).parts
    step = sum(p.bytes for p in parts if p.name.startswith("ZeRO step"))
    freed = sum(p.bytes for p in parts if p.category == "activations" and p.where == "gpu")
    return step, freed


def test_zero_step_is_a_sub_group_flattened_and_cast_beyond_the_freed_activations() -> None:
    step, freed = _zero(512)
    assert LLAMA_31_8B.params_total > SUB_GROUP_SIZE
    assert step == SUB_GROUP_SIZE * (2 + 4) - freed  # bf16 flat copy + its fp32 cast
    assert 0 < _zero(1024)[0] < step  # longer contexts free more at the step
    assert _zero(8192)[0] == 0  # activations larger than the temporary: the backward is the peak


def test_only_deepspeed_steps_that_way_and_not_when_its_states_are_offloaded() -> None:
    parts = training_memory(LLAMA_31_8B, _setup("transformers"), 512, 1).parts
    assert not any(p.name.startswith("ZeRO step") for p in parts)
    assert _zero(512, offload=True)[0] == 0
