"""Every shipped catalog entry, checked: the data is the product's quality."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.machine import GPU


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    loaded = load_catalog(use_overlay=False)
    assert loaded.problems == ()
    return loaded


# GPU names exactly as drivers reported them in real captures: nvidia-smi XML (influxdata/telegraf
# plugins/inputs/nvidia_smi/testdata, netdata/netdata collector testdata), nvidia_gpu_exporter captures
# (utkuozdemir/nvidia_gpu_exporter internal/captures) and amdgpu_top JSON (Umio-Yasuno/amdgpu_top docs).
DRIVER_NAMES = {
    "nvidia": [
        "GeForce GTX 1070 Ti",  # driver 4xx spelling, without "NVIDIA "
        "NVIDIA A100-SXM4-40GB",
        "NVIDIA A100-SXM4-80GB",
        "NVIDIA A10G",
        "NVIDIA GeForce RTX 2080",
        "NVIDIA GeForce RTX 2080 SUPER",
        "NVIDIA GeForce RTX 3060",
        "NVIDIA GeForce RTX 3060 Laptop GPU",
        "NVIDIA GeForce RTX 3080",
        "NVIDIA GeForce RTX 3090",
        "NVIDIA GeForce RTX 4080 SUPER",
        "NVIDIA GeForce RTX 4090",
        "NVIDIA H100 80GB HBM3",
        "NVIDIA H200",
        "NVIDIA L40S",
        "NVIDIA RTX 4000 SFF Ada Generation",
        "Quadro P2000",
        "Quadro P400",
        "Tesla P100-PCIE-16GB",
        "Tesla T4",
    ],
    "amd": ["AMD Radeon RX 9060 XT"],
}


def test_sizes(catalog: Catalog) -> None:
    assert len(catalog.gpus) >= 70
    assert len(catalog.models) >= 50
    assert {g.vendor for g in catalog.gpus} == {"nvidia", "amd", "intel", "apple"}


def test_every_gpu_has_memory_and_an_architecture_target(catalog: Catalog) -> None:
    for gpu in catalog.gpus:
        assert gpu.memory_gb, f"{gpu.id}: no memory size"
        if gpu.vendor == "nvidia":
            assert gpu.compute_capability, f"{gpu.id}: no compute capability"
        elif gpu.vendor == "amd":
            assert gpu.gfx_target, f"{gpu.id}: no gfx target"


def test_geforce_rtx_50_is_compute_capability_12_0(catalog: Catalog) -> None:
    """Two popular tools map RTX 50 to 10.0; NVIDIA's list says 12.0."""
    rtx50 = [g for g in catalog.gpus if re.search(r"GeForce RTX 50\d0", g.name)]
    assert len(rtx50) >= 5
    assert {g.id: g.compute_capability for g in rtx50} == {g.id: "12.0" for g in rtx50}


@pytest.mark.parametrize(("vendor", "name"), [(v, n) for v, names in DRIVER_NAMES.items() for n in names])
def test_driver_reported_names_find_their_entry(catalog: Catalog, vendor: str, name: str) -> None:
    found = catalog.match_gpu(GPU(vendor=vendor, name=name, memory_total_bytes=None))  # type: ignore[arg-type]
    assert found is not None, f"{name!r} matches no catalog entry"


def test_ids_are_unique_across_kinds_that_share_a_namespace(catalog: Catalog) -> None:
    for records in (catalog.gpus, catalog.models, catalog.quants, catalog.frameworks):
        ids = [r.id for r in records]
        assert len(ids) == len(set(ids))


def test_tensor_figures_are_plausibly_dense(catalog: Catalog) -> None:
    """Dense FP16 tensor throughput never exceeds FP8, and BF16 equals FP16 where both are given."""
    for gpu in catalog.gpus:
        if gpu.fp16_tflops and gpu.fp8_tflops:
            assert gpu.fp8_tflops >= gpu.fp16_tflops, gpu.id
        if gpu.fp16_tflops and gpu.bf16_tflops:
            assert gpu.bf16_tflops == pytest.approx(gpu.fp16_tflops, rel=0.05), gpu.id


def test_cloud_prices_say_when_and_where(catalog: Catalog) -> None:
    for gpu in catalog.gpus:
        if gpu.cloud_price_usd_hour is not None:
            assert gpu.cloud_price_date and gpu.cloud_price_source, gpu.id


def test_unified_memory_only_on_socs_and_integrated(catalog: Catalog) -> None:
    for gpu in catalog.gpus:
        if gpu.unified_memory:
            assert gpu.segment in ("soc", "integrated"), gpu.id


def test_models_have_what_the_estimator_needs(catalog: Catalog) -> None:
    for model in catalog.models:
        config = model.config
        assert model.max_context, f"{model.id}: no max_position_embeddings"
        assert model.params_b and model.params_source, f"{model.id}: no published parameter count"
        if model.is_moe:
            assert model.active_params_b, f"{model.id}: MoE without active parameters"
            # Gemma 4 names it top_k_experts (models/config/ tries each of these)
            per_token = ("num_experts_per_tok", "experts_per_token", "top_k_experts", "moe_top_k")
            assert any(isinstance(config.get(key), int) for key in per_token), model.id
        assert "/" in model.hf_id, model.id


def test_model_families_cover_the_brief(catalog: Catalog) -> None:
    types = {m.model_type for m in catalog.models}
    for wanted in (
        "llama",
        "mistral",
        "mixtral",
        "qwen2",
        "qwen3",
        "qwen3_moe",
        "gemma2",
        "gemma3_text",
        "phi3",
        "deepseek_v3",
        "gpt_oss",
    ):
        assert wanted in types, f"no {wanted} model in the catalog"


def test_quantization_formats(catalog: Catalog) -> None:
    ids = {q.id for q in catalog.quants}
    for wanted in ("fp32", "fp16", "bf16", "int8", "nf4", "mxfp4", "q8_0", "q4_k_m", "q2_k", "iq4_xs"):
        assert wanted in ids, wanted
    for quant in catalog.quants:
        assert 1.0 <= quant.bits_per_weight <= 32.0, quant.id
        if quant.file_bpw is not None:
            assert quant.file_bpw >= quant.bits_per_weight * 0.9, quant.id
    q4km = catalog.quant("q4_k_m")
    assert q4km is not None and q4km.file_bpw is not None and 4.5 < q4km.file_bpw < 5.2
    kv = {k.id: k.bytes_per_element for k in catalog.kv_caches}
    assert kv["f16"] == 2 and kv["q8_0"] == pytest.approx(34 / 32) and kv["q4_0"] == pytest.approx(18 / 32)


def test_compat_matrices_are_present(catalog: Catalog) -> None:
    assert {m.major for m in catalog.cuda_majors} >= {11, 12, 13}
    assert len(catalog.cuda_releases) >= 20
    assert catalog.torch_releases and catalog.torch_variants and catalog.rocm_releases and catalog.archs
    frameworks = {f.framework for f in catalog.frameworks}
    for wanted in ("flash-attn-2", "flash-attn-3", "bitsandbytes", "vllm", "llama.cpp", "ollama"):
        assert wanted in frameworks, wanted


def test_every_gpu_says_how_it_is_built_in(catalog: Catalog) -> None:
    for gpu in catalog.gpus:
        assert gpu.form_factor in ("pcie", "sxm", "oam", "soc", "laptop"), gpu.id
        name = gpu.name.lower()
        if "sxm" in name:
            assert gpu.form_factor == "sxm", gpu.id
        if "pcie" in name or gpu.segment in ("desktop", "workstation"):
            assert gpu.form_factor == "pcie", gpu.id
        if gpu.segment == "laptop":
            assert gpu.form_factor == "laptop", gpu.id
        if gpu.form_factor in ("sxm", "oam"):
            assert gpu.segment == "datacenter", gpu.id  # modules go on server baseboards
        if gpu.form_factor_source is not None:
            assert SOURCE.match(gpu.form_factor_source), gpu.id
    ids = {g.id: g.form_factor for g in catalog.gpus}
    assert ids["nvidia-h100-sxm5"] == "sxm" and ids["nvidia-h100-pcie"] == "pcie"
    assert ids["amd-instinct-mi300x"] == "oam" and ids["apple-m2-ultra"] == "soc"


#: a source a user can follow: a URL, a repo path (owner/repo/path[@commit]), a path in this project or the
#: shared reference, or a value marked uncertain
SOURCE = re.compile(r"^(https?://|[\w.-]+/[\w.-]+[/ ]|shared/|catalog/|docs/|uncertain)")
#: how an internal search-index id was written into the catalog before (never a source a user can follow)
INTERNAL_ID = re.compile(r"search-index|\bfile\s+id\b|\bindex\s+id\b", re.IGNORECASE)


def _catalog_tomls() -> Iterator[tuple[str, str]]:
    """(file name, text) of every TOML file of the installed catalog package, sub-folders included."""
    from importlib.resources import files

    stack = [files("rigcheck.catalog")]
    while stack:
        folder = stack.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                stack.append(entry)
            elif entry.name.endswith(".toml"):
                yield entry.name, entry.read_text(encoding="utf-8")


def test_no_internal_index_ids_anywhere_in_the_catalog() -> None:
    found = [
        f"{name}:{number}: {line.strip()[:80]}"
        for name, text in _catalog_tomls()
        for number, line in enumerate(text.splitlines(), 1)
        if INTERNAL_ID.search(line)
    ]
    assert not found, found


def test_every_source_is_a_url_or_a_repo_path() -> None:
    import tomllib

    bad: list[str] = []

    def walk(value: object, where: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "sources" or key.endswith("source"):
                    for text in item if isinstance(item, list) else [item]:
                        if isinstance(text, str) and not SOURCE.match(text):
                            bad.append(f"{where}: {key} = {text[:60]}")
                walk(item, where)
        elif isinstance(value, list):
            for item in value:
                walk(item, where)

    for name, text in _catalog_tomls():
        walk(tomllib.loads(text), name)
    assert not bad, bad
