"""DeepSeek-V4's mixed checkpoint format, `fp8-fp4-experts`: routed experts in MXFP4 (4.25 bits), every other
layer weight and the Engram lookup rows in block-scaled FP8 (8 + 8/1,024 bits at V4.1's [32, 32] UE8M0
blocks), the token embedding, head and norms BF16 (infervisor/plow docs/amd/deepseek-v41-flash-mi300x.md
@00a8d3199590e9df4acf82701c48c67f5b41eee2: "block-FP8 e4m3 [32,32] ue8m0 scales; routed experts MXFP4",
Engram tables of "fp8 rows"). Expected bytes are worked by hand from the layer shapes, never read back."""

from __future__ import annotations

from pathlib import Path

import pytest

from rigcheck.core.catalog import load_catalog
from rigcheck.core.estimate.memory import Request, estimate_memory, resolve_quant
from rigcheck.core.models.files import load_model_path
from rigcheck.core.models.resolve import from_catalog, released_format

CATALOG = load_catalog(use_overlay=False)
V41 = Path(__file__).parents[1] / "fixtures" / "configs-2026" / "deepseek-ai--DeepSeek-V4.1-Flash_config.json"
GIB = 2**30
FP8 = 8 + 8 / 1024  # one UE8M0 scale byte per 32 x 32 block
FP4 = 4.25  # MXFP4: one E8M0 scale byte per 32 E2M1 values

#: the released DeepSeek-V4.1-Flash checkpoint: "model.safetensors.index.json  96 085 tensors, 48 shards,
#: 475.3 GiB" (plow, same document). It holds the trunk, the three DSpark draft blocks and the vision tower.
V41_PUBLISHED_GIB = 475.3
#: DeepSeek-V4-Flash-0731: "72 317 tensors, 166 878 536 440 B", main tower 284.33B and DSpark 19.85B
#: (infervisor/plow docs/amd/deepseek-v4-mi300x.md@3e7c8c1e13c968566e10583b04fc6abcc12b49ed, section 0)
V4_FLASH_PUBLISHED = 166_878_536_440
V4_FLASH_DSPARK = 19.85e9


def _v41_shapes() -> tuple[int, int, int]:
    """Per trunk layer of V4.1-Flash: attention + norms, the non-expert MoE part (shared expert, router,
    correction bias) and the routed experts (the deepseek_v4 layout, hidden 5,120, 384 experts of 2,304)."""
    d, heads, hd, q_lora, o_lora, groups = 5120, 64, 512, 1280, 1024, 8
    attn = d * q_lora + q_lora + q_lora * heads * hd + d * hd + hd + heads
    attn += heads * hd * o_lora + groups * o_lora * d + 2 * d
    return attn, 3 * d * 2304 + 384 * d + 384, 384 * 3 * d * 2304


def _weights(model, quant: str | None = None) -> int:
    est = estimate_memory(model, Request(quant=quant, context=4096, engine="vllm"), CATALOG)
    return next(t.bytes for t in est.terms if t.category == "weights")


def test_the_released_format_is_read_from_quantization_config() -> None:
    assert load_model_path(V41).native_quant == "fp8-fp4-experts"
    flash = next(m for m in CATALOG.models if m.id == "deepseek-v4-flash")
    assert flash.native_format == "fp8-fp4-experts"  # its catalog config keeps architecture keys only
    assert released_format({"quantization_config": {"quant_method": "fp8", "expert_dtype": "fp4"}}) == (
        "fp8-fp4-experts"
    )


@pytest.mark.parametrize("name", ["fp8-fp4-experts", "FP8-FP4-EXPERTS"])
def test_quant_accepts_it(name: str) -> None:
    quant = resolve_quant(CATALOG, name)
    assert quant.id == "fp8-fp4-experts" and quant.bits_per_weight == FP4 and quant.dense_bpw == FP8


def test_v41_bytes_by_tensor_group_by_hand() -> None:
    """40 trunk layers (experts at FP4, the rest at FP8), the two Engram tables at FP8, the 129,280 x 5,120
    embedding and head and the final norm in BF16; sized by default, as its config says."""
    attn, rest, experts = _v41_shapes()
    engram = (384_006_168 + 384_016_682) * 256
    d, v = 5120, 129_280
    by_hand = 40 * experts * FP4 / 8 + 40 * (attn + rest) * FP8 / 8 + engram * FP8 / 8 + (2 * v * d + d) * 2
    ours = _weights(load_model_path(V41))
    assert abs(ours - by_hand) < 64  # integer rounding per layer
    assert ours == _weights(load_model_path(V41), "fp8-fp4-experts")


def test_v41_lands_within_3_percent_of_the_published_checkpoint() -> None:
    """The counted trunk is 460.8 GiB, -3.05% of the file: the file also holds the three DSpark draft
    blocks (plow: "3 x 128 experts", attention taken as the trunk's) and a 32-layer, 1,024-wide vision
    tower (an assumed shape, BF16), which the count leaves out. Added by hand at the same rule: -1.4%.
    The MXFP4 reading it replaces (non-expert weights and Engram rows 16-bit) was +36.7%."""
    attn, _, _ = _v41_shapes()
    d = 5120
    draft = 3 * (attn * FP8 / 8 + 128 * 3 * d * 2304 * FP4 / 8 + (3 * d * 2304 + 128 * d + 128) * FP8 / 8)
    vision = 32 * (4 * 1024 * 1024 + 2 * 1024 * 2816) * 2
    model = load_model_path(V41)
    trunk = _weights(model)
    assert -0.031 < trunk / GIB / V41_PUBLISHED_GIB - 1 < -0.030
    assert abs((trunk + draft + vision) / GIB / V41_PUBLISHED_GIB - 1) < 0.03
    assert _weights(model, "mxfp4") / GIB / V41_PUBLISHED_GIB - 1 > 0.3


def test_v4_flash_checkpoint_is_bracketed_by_its_draft_blocks() -> None:
    """V4-Flash (catalog config, [128, 128] blocks: the FP8 rate here is 0.1% high on its dense weights):
    the counted main tower plus DSpark's 19.85B parameters at FP4 at least and FP8 at most bracket the
    -0731 checkpoint's bytes; the tower alone is below them."""
    flash = from_catalog(next(m for m in CATALOG.models if m.id == "deepseek-v4-flash"))
    tower = _weights(flash)
    assert tower < V4_FLASH_PUBLISHED
    assert tower + V4_FLASH_DSPARK * FP4 / 8 <= V4_FLASH_PUBLISHED <= tower + V4_FLASH_DSPARK * FP8 / 8
    assert abs((tower + V4_FLASH_DSPARK * FP4 / 8) / V4_FLASH_PUBLISHED - 1) < 0.01


def test_llama_cpp_keeps_its_own_layout() -> None:
    """Under llama.cpp the kind is MXFP4's: experts at 4.25 bits, the rest at Q8_0, as its GGUF lays it
    out; the FP8 rate is the safetensors checkpoint's, not a GGUF's."""
    model = load_model_path(V41)
    est = estimate_memory(model, Request(quant="fp8-fp4-experts", context=4096, engine="llama.cpp"), CATALOG)
    mx = estimate_memory(model, Request(quant="mxfp4", context=4096, engine="llama.cpp"), CATALOG)
    weights = [next(t.bytes for t in e.terms if t.category == "weights") for e in (est, mx)]
    assert weights[0] == weights[1]
