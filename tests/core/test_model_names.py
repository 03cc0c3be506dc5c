"""The names users type for a model resolve to the catalog offline; a near miss gets a did-you-mean."""

from __future__ import annotations

import pytest

from fakes.cli import run_cli
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.models import hub
from rigcheck.core.models.names import find_model, suggest_models
from rigcheck.core.models.resolve import resolve_model


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any hub look-up fails, as it does on a machine without a network."""

    def unreachable(text: str, **_: object) -> object:
        raise InputError(text, "cannot reach the Hugging Face hub")

    monkeypatch.setattr(hub, "load_hub_model", unreachable)


@pytest.mark.parametrize(
    ("typed", "model_id"),
    [
        # Ollama's library names, with and without a format tag
        ("qwen3:30b", "qwen3-30b-a3b"),
        ("gpt-oss:120b", "gpt-oss-120b"),
        ("llama3.3:70b", "llama-3.3-70b"),
        ("llama3.3:70b-instruct-q4_K_M", "llama-3.3-70b"),
        ("qwen3:8b-q8_0", "qwen3-8b"),
        ("gemma3:27b", "gemma-3-27b"),
        ("deepseek-r1:70b", "deepseek-r1-distill-llama-70b"),
        ("llama4:scout", "llama-4-scout-17b-16e"),
        # Hugging Face ids, as LM Studio and vLLM show them (any case)
        ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b"),
        ("openai/gpt-oss-20b", "gpt-oss-20b"),
        ("qwen/qwen3-30b-a3b", "qwen3-30b-a3b"),
        # spellings in between
        ("Llama 3.3 70B", "llama-3.3-70b"),
        ("llama3.3-70b", "llama-3.3-70b"),
        ("Qwen3-30B-A3B", "qwen3-30b-a3b"),
        ("qwen3:30b-a3b", "qwen3-30b-a3b"),
        ("GPT-OSS 120B", "gpt-oss-120b"),
        ("gemma-3-27b-it", "gemma-3-27b"),
        ("  QWEN3-8B  ", "qwen3-8b"),
    ],
)
def test_names_people_type_resolve_offline(
    catalog: Catalog, offline: None, typed: str, model_id: str
) -> None:
    spec = find_model(typed, catalog)
    assert spec is not None and spec.id == model_id
    info = resolve_model(typed, catalog)
    assert info.source_kind == "catalog" and info.id == model_id


def test_every_ollama_name_and_hf_id_in_the_catalog_finds_its_own_entry(catalog: Catalog) -> None:
    for spec in catalog.models:
        for name in (*spec.ollama, spec.hf_id):
            found = find_model(name, catalog)
            assert found is not None and found.id == spec.id, (name, spec.id)


@pytest.mark.parametrize(
    "typed",
    [
        "qwen3",  # which size?
        "llama",
        "unsloth/Llama-3.3-70B-Instruct-GGUF",  # a GGUF repository: the hub reads its files
        "meta-llama/Llama-3.3-70B-Instruct-abliterated",  # another repository is another model
        "mistral",
    ],
)
def test_an_ambiguous_or_different_name_is_not_guessed(catalog: Catalog, typed: str) -> None:
    assert find_model(typed, catalog) is None


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("qwen3:31b", "qwen3-32b"),
        ("llama3.3:7b", "llama-3.3-70b"),
        ("gpt-oss-12b", "gpt-oss-120b"),
        ("mixtrl-8x7b", "mixtral-8x7b"),
    ],
)
def test_a_near_miss_gets_a_did_you_mean(
    catalog: Catalog, offline: None, typed: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert expected in suggest_models(typed, catalog)
    with pytest.raises(InputError) as err:
        resolve_model(typed, catalog)
    assert "did you mean" in err.value.problem and expected in err.value.problem


def test_ollama_hf_co_prefix_is_a_hub_id(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def fake(text: str, **_: object) -> object:
        seen.append(text)
        raise InputError(text, "cannot reach the Hugging Face hub")

    monkeypatch.setattr(hub, "load_hub_model", fake)
    with pytest.raises(InputError):
        resolve_model("hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M", catalog)
    assert seen == ["unsloth/Qwen3-8B-GGUF:Q4_K_M"]


def test_fit_takes_an_ollama_name_on_the_command_line(offline: None) -> None:
    code, out = run_cli("fit", "gpt-oss:120b", "--gpu", "nvidia-h100-sxm5")
    assert code == 0, out
    assert "gpt-oss 120B" in out or "gpt-oss-120b" in out


@pytest.mark.parametrize(
    ("typed", "model_id"),
    [("unsloth/Qwen3-8B-GGUF:Q4_K_M", "qwen3-8b"), ("mlx-community/Qwen3-30B-A3B-4bit", "qwen3-30b-a3b")],
)
def test_an_unreachable_hub_points_at_the_catalog_entry_a_repository_holds(
    catalog: Catalog, offline: None, typed: str, model_id: str
) -> None:
    with pytest.raises(InputError) as err:
        resolve_model(typed, catalog)
    message = str(err.value)
    assert "cannot reach the Hugging Face hub" in message and f"offline as {model_id!r}" in message
    assert "\n" not in message
