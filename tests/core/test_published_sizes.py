"""Formats against the sizes of files people published: each new --quant format lands within ±3% of
at least one published file, named with where its size was read.

Sizes are llama-bench's size column (tensor bytes, in GiB to two decimals) from the logs named, or the
publisher's own table. Where a format's rate was derived from one file, the test says so: such a check
holds the derivation, and only a second file makes it a prediction. Formats with no published size
found (INT4 W4A16, MLX, EXL3 checkpoints) are listed in docs/architectures.md, not tested here.
"""

from __future__ import annotations

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.memory import Request, estimate_memory, resolve_quant
from rigcheck.core.models.resolve import from_catalog

CATALOG = load_catalog(use_overlay=False)
BY_ID = {m.id: m for m in CATALOG.models}
GIB = 2**30

KYUZ0_MI50 = "kyuz0/mi50-gfx906-toolboxes README.md@8a29e30"
KYUZ0_STRIX = "kyuz0/amd-strix-halo-toolboxes benchmark/results@d1a34be"
DGX_SPARK = "ggml-org/llama.cpp benches/dgx-spark.md@4c7e989"
UNSLOTH_R1 = "https://unsloth.ai/blog/deepseekr1-dynamic (GB read as GiB)"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return CATALOG


def weights_gib(model_id: str, quant: str, catalog: Catalog) -> float:
    model = from_catalog(BY_ID[model_id])
    est = estimate_memory(model, Request(quant=quant, context=4096, engine="llama.cpp"), catalog)
    return next(t.bytes for t in est.terms if t.category == "weights") / GIB


#: (format as a user types it, catalog model, published GiB, where, predicted: not the file it came from)
PUBLISHED = [
    # UD-Q4_K_XL and UD-Q8_K_XL are sized per tensor role, nothing fitted (tests/core/test_ud_mix.py)
    ("UD-Q4_K_XL", "qwen3.6-35b-a3b", 20.81, f"{KYUZ0_MI50} Qwen3.6-35B-A3B-UD-Q4_K_XL", True),
    ("UD-Q4_K_XL", "qwen3.6-27b", 16.39, f"{KYUZ0_MI50} Qwen3.6-27B-UD-Q4_K_XL", True),
    ("UD-Q8_K_XL", "qwen3.6-35b-a3b", 35.80, f"{KYUZ0_STRIX} Qwen3.6-35B-A3B-UD-Q8_K_XL", True),
    ("UD-Q8_K_XL", "gemma-4-26b-a4b", 25.94, f"{KYUZ0_STRIX} gemma-4-26B-A4B-it-UD-Q8_K_XL", True),
    ("UD-Q5_K_XL", "qwen3.5-122b-a10b", 85.60, f"{KYUZ0_STRIX} Qwen3.5-122B-A10B-UD-Q5_K_XL", False),
    (
        "UD-Q3_K_XL",
        "qwen3-235b-a22b",
        96.99,
        "kyuz0/amd-strix-halo-toolboxes@7839985 Qwen3-235B-A22B-2507",
        False,
    ),
    ("UD-Q2_K_XL", "deepseek-r1", 212, f"{UNSLOTH_R1} DeepSeek-R1-UD-Q2_K_XL", False),
    ("UD-IQ1_S", "deepseek-r1", 131, f"{UNSLOTH_R1} DeepSeek-R1-UD-IQ1_S", False),
    ("UD-IQ1_M", "deepseek-r1", 158, f"{UNSLOTH_R1} DeepSeek-R1-UD-IQ1_M", False),
    ("UD-IQ2_XXS", "deepseek-r1", 183, f"{UNSLOTH_R1} DeepSeek-R1-UD-IQ2_XXS", False),
    # QAT: the layers at Q4_0's own 4.5 bits (nothing fitted); the embedding's Q8_0 read from this file
    ("qat-q4_0", "gemma-3-4b", 2.35, f"{DGX_SPARK} ggml-org/gemma-3-4b-it-qat-GGUF", False),
    # llama.cpp's own MXFP4 GGUFs: MXFP4 experts, Q8_0 elsewhere (a rule read from the format, not fitted)
    ("mxfp4", "gpt-oss-20b", 11.27, f"{DGX_SPARK} ggml-org/gpt-oss-20b-GGUF", True),
    ("mxfp4", "gpt-oss-120b", 59.02, f"{DGX_SPARK} ggml-org/gpt-oss-120b-GGUF", True),
]


@pytest.mark.parametrize(("quant", "model_id", "gib", "where", "predicted"), PUBLISHED)
def test_format_lands_within_3_percent_of_a_published_file(
    quant: str, model_id: str, gib: float, where: str, predicted: bool, catalog: Catalog
) -> None:
    ours = weights_gib(model_id, quant, catalog)
    assert abs(ours - gib) <= 0.03 * gib, f"{quant} {model_id}: {ours:.2f} GiB against {gib} ({where})"


def test_each_ud_format_with_two_files_predicts_the_second() -> None:
    """A rate derived from one file and held only to that file proves nothing: the mixes with two
    published files have one of them predicted."""
    predicted = {quant for quant, _, _, _, is_prediction in PUBLISHED if is_prediction}
    assert {"UD-Q4_K_XL", "UD-Q8_K_XL", "mxfp4"} <= predicted


def test_qat_q4_0_is_not_plain_q4_0(catalog: Catalog) -> None:
    """llama.cpp's plain Q4_0 (output and tied embedding at Q6_K) is 6.5% under the QAT file: the
    format, not a tolerance, makes the difference."""
    plain = weights_gib("gemma-3-4b", "Q4_0", catalog)
    assert abs(plain - 2.35) > 0.03 * 2.35
    assert resolve_quant(catalog, "Q4_0_QAT").id == resolve_quant(catalog, "qat-q4_0").id == "q4_0-qat"


@pytest.mark.parametrize(
    "name", ["UD-Q4_K_XL", "ud-q2_k_xl", "UD-IQ1_S", "UD-IQ1_M", "UD-IQ2_XXS", "UD-Q8_K_XL"]
)
def test_ud_names_are_accepted_by_quant(name: str, catalog: Catalog) -> None:
    quant = resolve_quant(catalog, name)
    assert quant.id == name.lower() and quant.kind == "gguf" and quant.layer_bpw is not None


# -- Hugging Face checkpoints (safetensors), sized as vLLM loads them ------------------------------

#: (format, catalog model, the checkpoint's weight-shard bytes, where they were read)
CHECKPOINTS = [
    # ModelOpt NVFP4: the two model-*.safetensors shards of nvidia/Qwen3-8B-NVFP4@ccd10a89, their
    # safetensors headers (~134 KB) included; lm_head and the embedding stay BF16 in it
    (
        "nvfp4",
        "qwen3-8b",
        6_397_066_384,
        "meyowu/nvfp4-doctor experiments/E004-qwen3-layer-capture/full-model-acquisition.json@96cfaed "
        "(weight_bytes of nvidia/Qwen3-8B-NVFP4@ccd10a893cbca613259517c3efe08e151ddf2b8e)",
    ),
]


@pytest.mark.parametrize(("quant", "model_id", "published", "where"), CHECKPOINTS)
def test_checkpoint_format_lands_within_3_percent_of_a_published_checkpoint(
    quant: str, model_id: str, published: int, where: str, catalog: Catalog
) -> None:
    model = from_catalog(BY_ID[model_id])
    est = estimate_memory(model, Request(quant=quant, context=4096, engine="vllm"), catalog)
    ours = next(t.bytes for t in est.terms if t.category == "weights")
    assert abs(ours - published) <= 0.03 * published, (
        f"{quant} {model_id}: {ours:,} B against {published:,} ({where})"
    )
