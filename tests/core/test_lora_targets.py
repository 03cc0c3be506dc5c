"""LoRA wraps modules by name, layer kind by layer kind: hybrids, MLA and experts (issue 27)."""

from __future__ import annotations

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.lora_targets import lora_plan
from rigcheck.core.estimate.training_memory import Setup, lora_param_count, training_memory
from rigcheck.core.estimate.training_profiles import OPTIMIZERS, PROFILES, parse_targets
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ArchConfig


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def _arch(catalog: Catalog, model_id: str) -> ArchConfig:
    return from_catalog(catalog.model(model_id)).arch  # type: ignore[arg-type]


def test_qkvo_on_qwen35_27b_wraps_only_the_16_full_attention_layers(catalog: Catalog) -> None:
    a = _arch(catalog, "qwen3.5-27b")
    assert (a.layer_kinds.count("full"), a.layer_kinds.count("linear")) == (16, 48)
    plan = lora_plan(a, ("q", "k", "v", "o"))
    assert {w.module: w.layers for w in plan.wrapped} == {
        "q_proj": 16,
        "k_proj": 16,
        "v_proj": 16,
        "o_proj": 16,
    }
    h, heads, kv, hd = 5120, 24, 4, 256  # the config's hidden_size, heads, kv heads, head_dim
    # q_proj carries the output gate: hidden → 2·heads·head_dim (Qwen3_5Attention)
    per_layer = (h + 2 * heads * hd) + 2 * (h + kv * hd) + (heads * hd + h)
    assert plan.params(16) == 16 * per_layer * 16
    assert any("48 Gated DeltaNet layers" in note for note in plan.left)
    # the old rule put q/k/v/o (q without its gate) in all 64 layers: 3.4 times this
    old = 16 * 64 * ((h + heads * hd) + 2 * (h + kv * hd) + (heads * hd + h))
    assert old / plan.params(16) == pytest.approx(3.4, abs=0.05)


def test_all_linear_on_qwen35_27b_wraps_the_gated_deltanet_projections(catalog: Catalog) -> None:
    a = _arch(catalog, "qwen3.5-27b")
    plan = lora_plan(a, parse_targets("all"))
    got = {w.module: (w.fan_in, w.fan_out, w.layers) for w in plan.wrapped}
    h, kd, vd, hv = 5120, 16 * 128, 48 * 128, 48  # linear_* keys: 16 key heads, 48 value heads of 128
    assert got["in_proj_qkv"] == (h, 2 * kd + vd, 48)
    assert got["in_proj_z"] == (h, vd, 48)
    assert got["in_proj_b"] == got["in_proj_a"] == (h, hv, 48)
    assert got["out_proj"] == (vd, h, 48)
    assert got["gate_proj"] == (h, 17408, 64) and got["q_proj"][2] == 16
    gdn = (h + 2 * kd + vd) + (h + vd) + 2 * (h + hv) + (vd + h)
    mlp = 3 * (h + 17408)
    attn = (h + 2 * 24 * 256) + 2 * (h + 1024) + (6144 + h)
    assert plan.params(16) == 16 * (48 * gdn + 64 * mlp + 16 * attn)


def test_qwen3_next_keeps_its_fused_projections_and_leaves_routed_experts(catalog: Catalog) -> None:
    a = _arch(catalog, "qwen3-next-80b-a3b")
    plan = lora_plan(a, ("all-linear",))
    got = {w.module: (w.fan_in, w.fan_out, w.layers) for w in plan.wrapped}
    assert got["in_proj_qkvz"] == (2048, 2 * 2048 + 2 * 4096, 36)
    assert got["in_proj_ba"] == (2048, 64, 36)
    assert got["shared_expert.gate_proj"] == (2048, 512, 48)
    assert got["shared_expert_gate"] == (2048, 1, 48)
    assert not any("experts." in name for name in got)  # fused 3-D parameters: target_parameters only
    assert any("512 routed experts" in note for note in plan.left)
    # axolotl's Qwen3-Next QLoRA example names these modules; beside them only its router (mlp.gate, an
    # nn.Linear in the transformers commit it pins, a parameter in transformers 5's layout) differs
    named = parse_targets("in_proj_ba,in_proj_qkvz,out_proj,q_proj,v_proj,k_proj,o_proj")
    named += parse_targets("up_proj,down_proj,gate_proj,shared_expert_gate")
    assert lora_param_count(a, 16, named) == plan.params(16)


def test_mla_names_only_o_proj_for_qkvo(catalog: Catalog) -> None:
    a = _arch(catalog, "deepseek-v3")
    plan = lora_plan(a, ("q", "k", "v", "o"))
    assert [(w.module, w.layers) for w in plan.wrapped] == [("o_proj", 61)]
    assert any("k_proj" in note for note in plan.left)
    every = {w.module: (w.fan_in, w.fan_out) for w in lora_plan(a, ("all-linear",)).wrapped}
    assert every["q_a_proj"] == (7168, 1536) and every["q_b_proj"] == (1536, 128 * 192)
    assert every["kv_a_proj_with_mqa"] == (7168, 512 + 64)
    assert every["kv_b_proj"] == (512, 128 * (128 + 128))
    assert every["shared_experts.down_proj"] == (2048, 7168)  # n_shared_experts 1 × moe_intermediate 2048
    with pytest.raises(ValueError, match="match no module"):
        lora_plan(a, ("k", "v"))


def test_lora_memory_explains_which_modules_were_wrapped(catalog: Catalog) -> None:
    a = _arch(catalog, "qwen3.5-27b")
    unsloth = Setup("lora", PROFILES["unsloth"], OPTIMIZERS["adamw-8bit"])
    trl = Setup("lora", PROFILES["transformers"], OPTIMIZERS["adamw"])
    names = training_memory(a, unsloth, 2048, 1)
    every = training_memory(a, trl, 2048, 1)
    assert names.trainable_params == lora_plan(a, PROFILES["unsloth"].lora_targets).params(16)
    assert every.trainable_params == lora_plan(a, ("all-linear",)).params(16) > names.trainable_params
    adapters = next(p for p in every.parts if p.formula.startswith("rank 16"))
    assert "in_proj_qkv (5,120→10,240) × 48" in adapters.formula and "peft" in adapters.source
    left = next(p for p in names.parts if p.formula.startswith("rank 16"))
    assert "not wrapped: 48 Gated DeltaNet layers" in left.formula


def test_axolotl_qwen35_27b_qlora_targets_count_layer_by_layer(catalog: Catalog) -> None:
    # axolotl-ai-cloud/axolotl examples/qwen3.5/27b-qlora.yaml@b77eada: lora_r 16 on these nine names
    targets = parse_targets(
        "q_proj,k_proj,v_proj,o_proj,down_proj,up_proj,"
        "linear_attn.in_proj_qkv,linear_attn.in_proj_z,linear_attn.out_proj"
    )
    assert targets == ("q", "k", "v", "o", "down", "up", "in_proj_qkv", "in_proj_z", "out_proj")
    a = _arch(catalog, "qwen3.5-27b")
    layers = {w.module: w.layers for w in lora_plan(a, targets).wrapped}
    assert layers == {
        "in_proj_qkv": 48, "in_proj_z": 48, "out_proj": 48, "up_proj": 64, "down_proj": 64,
        "q_proj": 16, "k_proj": 16, "v_proj": 16, "o_proj": 16,
    }  # fmt: skip
    h, kd, vd = 5120, 2048, 6144
    gdn = (h + 2 * kd + vd) + (h + vd) + (vd + h)
    attn = (h + 2 * 24 * 256) + 2 * (h + 1024) + (6144 + h)
    assert lora_param_count(a, 16, targets) == 16 * (48 * gdn + 64 * 2 * (h + 17408) + 16 * attn)
    with pytest.raises(ValueError, match=r"unknown LoRA target 'mlp\.gate'"):
        lora_plan(a, parse_targets("q_proj,mlp.gate"))


def test_json_lists_the_wrapped_modules(catalog: Catalog) -> None:
    from rigcheck.core.estimate.memory import Request, estimate_memory
    from rigcheck.core.report.estimate import training_json

    model = from_catalog(catalog.model("qwen3.5-27b"))
    req = Request(workload="lora", framework="unsloth", context=2048)
    out = training_json(estimate_memory(model, req, catalog))
    assert sum(m["params"] for m in out["lora_modules"]) == out["trainable_params"]
    assert {m["module"] for m in out["lora_modules"]} >= {"q_proj", "gate_proj"}
    assert not {m["module"] for m in out["lora_modules"]} & {"in_proj_qkv", "out_proj"}
    assert any("Gated DeltaNet" in note for note in out["lora_not_wrapped"])


def test_a_gguf_named_qwen3next_keeps_the_fused_projections(catalog: Catalog) -> None:
    from dataclasses import replace

    # llama.cpp names the architecture qwen3next (no underscore); its layers are Qwen3-Next's all the same
    a = replace(_arch(catalog, "qwen3-next-80b-a3b"), model_type="qwen3next")
    names = {w.module for w in lora_plan(a, ("all-linear",)).wrapped}
    assert {"in_proj_qkvz", "in_proj_ba"} <= names and "in_proj_qkv" not in names
