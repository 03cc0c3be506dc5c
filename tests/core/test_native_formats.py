"""Released formats as the default, and weight bytes in each engine's own layout, against published sizes."""

from __future__ import annotations

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.fit import fit
from rigcheck.core.estimate.memory import Request, estimate_memory
from rigcheck.core.machine import CPU, Machine, Memory
from rigcheck.core.models.resolve import from_catalog, released_format
from rigcheck.core.whatif import simulate

GIB = 1024**3


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def box(catalog: Catalog, gpu: str, ram_gib: int = 64) -> Machine:
    bare = Machine(cpu=CPU(logical_cores=16), memory=Memory(total_bytes=ram_gib * GIB), gpus=())
    spec = catalog.gpu(gpu)
    assert spec is not None
    return simulate(bare, [spec], ram_gib)


def test_every_catalog_model_has_a_released_format_we_can_size(catalog: Catalog) -> None:
    for spec in catalog.models:
        info = from_catalog(spec)
        dtype = "torch_dtype" in spec.config or "dtype" in spec.config  # transformers 5 writes "dtype"
        said = spec.native_format or dtype or "quantization_config" in spec.config
        assert (info.native_quant is not None) == bool(said), spec.id
        if info.native_quant is not None:
            assert catalog.quant(info.native_quant) is not None, (spec.id, info.native_quant)
        else:  # the catalog's copy of the config does not say: bf16, and the estimate says so
            est = estimate_memory(info, Request(), catalog)
            assert est.quant_name == "BF16" and any("unknown" in n for n in est.notes)
    assert from_catalog(catalog.model("gpt-oss-120b")).native_quant == "mxfp4"  # type: ignore[arg-type]
    assert from_catalog(catalog.model("deepseek-v3")).native_quant == "fp8-e4m3"  # type: ignore[arg-type]
    assert from_catalog(catalog.model("deepseek-r1")).native_quant == "fp8-e4m3"  # type: ignore[arg-type]
    assert from_catalog(catalog.model("llama-3.1-8b")).native_quant == "bf16"  # type: ignore[arg-type]


def test_released_format_reads_the_config() -> None:
    assert released_format({"quantization_config": {"quant_method": "mxfp4"}}) == "mxfp4"
    assert (
        released_format({"quantization_config": {"quant_method": "fp8"}, "torch_dtype": "bfloat16"})
        == "fp8-e4m3"
    )
    assert released_format(
        {"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128}}
    ) == ("gptq-4bit-g128")
    assert (
        released_format({"quantization_config": {"quant_method": "hqq"}, "torch_dtype": "bfloat16"}) is None
    )
    assert released_format({"torch_dtype": "float16"}) == "fp16"
    assert released_format({}) is None


def test_gpt_oss_120b_fits_an_h100_in_its_released_mxfp4(catalog: Catalog) -> None:
    model = from_catalog(catalog.model("gpt-oss-120b"))  # type: ignore[arg-type]
    result = fit(model, box(catalog, "nvidia-h100-sxm5"), Request(), catalog, live=False)
    assert result.estimate.quant_name == "MXFP4"
    assert result.verdict == "fits"
    assert any("released" in n for n in result.estimate.notes)


@pytest.mark.parametrize("gpu", ["nvidia-geforce-rtx-3060", "nvidia-geforce-rtx-4070"])
def test_gpt_oss_20b_fits_a_12_gb_card_with_llama_cpp(catalog: Catalog, gpu: str) -> None:
    """Measured running entirely on 12 GB cards: llama.cpp's GGUF layout and its input embedding in RAM."""
    model = from_catalog(catalog.model("gpt-oss-20b"))  # type: ignore[arg-type]
    result = fit(model, box(catalog, gpu), Request(), catalog, live=False)
    assert result.verdict == "fits"
    est = result.estimate
    assert est.host_weight_bytes > 0.5 * GIB  # 201,088 × 2,880 at Q8_0
    assert sum(result.placement.gpu_bytes) == est.total_bytes - est.host_weight_bytes
    assert "stays in RAM" in result.reasons[0]


def test_other_engines_keep_the_embedding_with_the_weights(catalog: Catalog) -> None:
    model = from_catalog(catalog.model("gpt-oss-20b"))  # type: ignore[arg-type]
    vllm = estimate_memory(model, Request(engine="vllm"), catalog)
    assert vllm.host_weight_bytes == 0
    # safetensors layout: experts MXFP4, everything else BF16 = the 12.82 GiB checkpoint (memory-formulas §6.2)
    assert vllm.total("weights") / GIB == pytest.approx(12.82, rel=0.01)


def test_deepseek_v3_defaults_to_fp8(catalog: Catalog) -> None:
    model = from_catalog(catalog.model("deepseek-v3"))  # type: ignore[arg-type]
    est = estimate_memory(model, Request(), catalog)
    assert est.quant_name == "FP8 (E4M3)"
    assert est.total("weights") == pytest.approx(model.arch.params_total, rel=0.01)  # ~1 byte per weight


KYUZ0 = "https://github.com/kyuz0/amd-strix-halo-toolboxes/blob/783998589e13af33f3b06e7079e698e6c58ea452/benchmark/results/"
SPARK = (
    "https://github.com/ggml-org/llama.cpp/blob/4c7e9893c4ca8eec35d032726d14b74fae76cff8/benches/dgx-spark/"
)
XIONG = "https://github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference/blob/aa72e0ec86c356c41f8281c9733e9a13c3675800/README.md"

#: llama-bench's size column (GiB of tensors) for GGUFs of catalog models; none of these was used to
#: derive the per-mix bits per weight (that is Llama-3.1-8B's table in tools/quantize/README.md)
PUBLISHED_GGUF = [
    ("gpt-oss-20b", "mxfp4", 11.27, SPARK),
    ("gpt-oss-120b", "mxfp4", 59.02, SPARK),
    ("qwen3-30b-a3b", "q4_k_m", 17.35, KYUZ0 + "Qwen3-Coder-30B-A3B-Instruct-Q4_K_M__vulkan_radv__fa1.log"),
    ("qwen3-30b-a3b", "q8_0", 30.25, SPARK),
    ("qwen3-30b-a3b", "bf16", 56.89, KYUZ0 + "Qwen3-30B-A3B-BF16-00001-of-00002__vulkan_radv__fa1.log"),
    ("gemma-3-27b", "bf16", 50.31, KYUZ0 + "gemma-3-27b-it-BF16-00001-of-00002__vulkan_radv__fa1.log"),
    ("gemma-3-4b", "q3_k_s", 1.80, KYUZ0 + "gemma-3-4b-it-Q3_K_S__vulkan_radv__fa1.log"),
    ("qwen2.5-coder-7b", "q8_0", 7.54, SPARK),
    ("llama-3.1-70b", "q2_k", 24.56, XIONG),
    ("llama-3.1-70b", "q3_k_m", 31.91, XIONG),
    ("llama-3.1-70b", "q4_k_m", 39.60, XIONG),
    ("llama-3.1-70b", "q5_k_m", 46.52, XIONG),
    ("llama-3.1-70b", "q6_k", 53.91, XIONG),
    ("llama-3.1-70b", "q8_0", 69.83, XIONG),
    ("llama-3.1-70b", "iq4_xs", 35.30, XIONG),
    ("llama-3.1-70b", "f16", 131.43, XIONG),
]
# Left out on purpose: ggml-org's gemma-3-4b "Q4_0" (2.35 GiB) is Google's QAT release, whose tied
# embedding is not quantized the way llama.cpp's own Q4_0 mix would (we size 2.20 GiB).


@pytest.mark.parametrize(("model_id", "quant", "gib", "source"), PUBLISHED_GGUF)
def test_gguf_weight_bytes_within_3_percent_of_published_sizes(
    catalog: Catalog, model_id: str, quant: str, gib: float, source: str
) -> None:
    assert source.startswith("https://")
    model = from_catalog(catalog.model(model_id))  # type: ignore[arg-type]
    est = estimate_memory(model, Request(quant=quant), catalog)
    assert est.total("weights") / GIB == pytest.approx(gib, rel=0.03)
