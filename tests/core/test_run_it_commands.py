"""Every catalog model's "Run it" names a real repository: no placeholder file a user would have to find."""

from __future__ import annotations

import re

import pytest

from fakes.cli import run_cli
from rigcheck.core.catalog import load_catalog

CATALOG = load_catalog(use_overlay=False)
#: a what-if box every catalog model fits at Q4_K_M (DeepSeek-V3, Kimi K2 and Llama 3.1 405B included)
BIG_BOX = ("--gpu", "nvidia-h200") * 8 + ("--ram-gb", "2048")
PLACEHOLDER = re.compile(r"(-m|FROM %s\\n[^']*' ?)\s*'?\./[^ ]*\.gguf|\s\./[\w.-]+\.gguf")


@pytest.mark.parametrize("model_id", [m.id for m in CATALOG.models])
def test_run_it_downloads_from_a_named_repository(model_id: str) -> None:
    code, out = run_cli("fit", model_id, "--quant", "q4_k_m", *BIG_BOX)
    assert code == 0, out
    lines = {m.group(1): m.group(2) for m in re.finditer(r"^  (llama\.cpp|ollama|vllm): (.*)$", out, re.M)}
    assert "llama.cpp" in lines, out
    assert not PLACEHOLDER.search(lines["llama.cpp"]), lines["llama.cpp"]
    repo = CATALOG.model(model_id).gguf_repos[0]  # type: ignore[union-attr]
    assert f"-hf {repo}:Q4_K_M" in lines["llama.cpp"]
    if "ollama" in lines:
        assert f"hf.co/{repo}:Q4_K_M" in lines["ollama"] and " ./" not in lines["ollama"]


def test_the_placeholder_pattern_catches_a_placeholder() -> None:
    # the check above cannot pass vacuously: the line the catalog used to print is caught
    assert PLACEHOLDER.search("llama-server -m ./qwen3-8b-BF16.gguf -ngl 999 -c 8192 -fa on")
    assert not PLACEHOLDER.search("llama-server -hf unsloth/Qwen3-8B-GGUF:BF16 -ngl 999")
