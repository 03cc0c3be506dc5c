"""A catalog model with no published GGUF but an Ollama library tag gets `ollama run TAG` as its Ollama line:
a command that downloads and runs Ollama's own build, said to be Ollama's format, not the recommended one."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from fakes.cli import run_cli
from rigcheck.core.catalog import load_catalog
from rigcheck.core.estimate.commands import ollama_library_tag

CATALOG = load_catalog(use_overlay=False)


def spec_with(*tags: str):  # type: ignore[no-untyped-def]
    spec = CATALOG.model("qwen3.6-27b")
    assert spec is not None
    return replace(spec, ollama=tags)


@pytest.mark.parametrize(
    ("tags", "picked"),
    [
        (("qwen3.6:27b-mlx", "qwen3.6:27b"), "qwen3.6:27b"),  # the MLX engine's variant is skipped
        (("gemma4:26b-a4b-q8", "gemma4:26b-nvfp4"), None),  # format variants only
        (("glm-4.7-flash", "glm-4.7-flash:q8_0"), "glm-4.7-flash"),
        (("nemotron3:33b",), "nemotron3:33b"),
        (("qwen3:0.6b",), "qwen3:0.6b"),
        (("x:latest",), "x:latest"),
        (("bad tag; rm -rf ~",), None),  # never a shell fragment
        ((), None),
    ],
)
def test_only_a_plain_library_tag_is_picked(tags: tuple[str, ...], picked: str | None) -> None:
    assert ollama_library_tag(spec_with(*tags)) == picked
    assert ollama_library_tag(None) is None


def test_a_model_without_a_gguf_runs_from_the_ollama_library() -> None:
    spec = CATALOG.model("qwen3.6-27b")
    assert spec is not None and not spec.gguf_repos and "qwen3.6:27b" in spec.ollama
    code, out = run_cli("fit", "qwen3.6-27b", "--gpu", "nvidia-h200", "--ram-gb", "256")
    assert code == 0, out
    line = re.search(r"^  ollama: (.*)$", out, re.M)
    assert line is not None, out
    assert line.group(1).startswith("ollama run qwen3.6:27b") and "Ollama's library build" in line.group(1)
    assert (
        "no published GGUF of this model is known" in out
    )  # llama.cpp still says where a GGUF would come from


def test_a_model_with_a_gguf_keeps_the_exact_format_modelfile() -> None:
    code, out = run_cli("fit", "gpt-oss-20b", "--gpu", "nvidia-h200", "--ram-gb", "256")
    assert code == 0, out
    line = re.search(r"^  ollama: (.*)$", out, re.M)
    assert line is not None and "hf.co/ggml-org/gpt-oss-20b-GGUF" in line.group(1), out
