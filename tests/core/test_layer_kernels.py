"""ArchConfig.layer_kernels per family: the kernels a layer of llama.cpp's graph launches beyond a plain
Llama layer's 23 (models/config/kernels.py), which scale the fixed per-layer cost."""

from __future__ import annotations

import pytest

from rigcheck.core.catalog import load_catalog
from rigcheck.core.models.resolve import from_catalog
from rigcheck.core.models.spec import ArchConfig


def arch(model_id: str) -> ArchConfig:
    spec = load_catalog(use_overlay=False).model(model_id)
    assert spec is not None
    return from_catalog(spec).arch


@pytest.mark.parametrize(
    ("model_id", "extra"),
    [
        ("llama-3.1-8b", 0),  # the plain layer the 23 are counted from
        ("qwen3-8b", 4),  # q and k norms (kernels.QK_NORM)
        ("qwen3-30b-a3b", 4),  # the same outside the experts
        ("qwen2.5-7b", 3),  # q/k/v bias adds
        ("gpt-oss-20b", 4),  # q/k/v and o bias adds
        ("gemma-3-4b", 9),  # q/k norms, q's scale, two post-norms
        ("gemma-2-2b", 8),  # q's scale, softcapping, two post-norms
    ],
)
def test_a_family_counts_the_ops_its_graph_adds_to_a_plain_layer(model_id: str, extra: int) -> None:
    assert arch(model_id).layer_kernels == round((23 + extra) / 23, 3)


def full_layers(a: ArchConfig) -> int:
    return sum(1 for kind in a.layer_kinds if kind == "full")


def test_gemma4_dense_layers_add_norms_and_the_layer_scalar_and_k_eq_v_drops_v() -> None:
    a = arch("gemma-4-31b")
    n = a.num_layers
    # q/k norms 4, v's rms_norm 1, two post-norms 4, layer_scalar 1; full layers have no v projection
    assert a.layer_kernels == round((n * 33 - full_layers(a)) / n / 23, 3)


def test_gemma4_moe_layers_count_the_dense_mlp_and_norms_beside_the_experts() -> None:
    a = arch("gemma-4-26b-a4b")
    n = a.num_layers
    assert all(a.moe_layers)
    assert a.layer_kernels == round((n * (33 + 14) - full_layers(a)) / n / 23, 3)


def test_gemma4_e_series_count_per_layer_inputs_and_kv_sharing() -> None:
    a = arch("gemma-4-e4b")
    n = a.num_layers
    shared = sum(1 for e in a.layer_kv_elements if e == 0)
    assert shared == 18
    assert a.layer_kernels == round((n * (33 + 7) - shared * 8) / n / 23, 3)
