"""The 2026 models issue 23 names, read from the configs this repository holds: every one with a
config here is read; each count against its published total is checked where the model is tested
(tests/core/test_model_config.py for catalog entries, tests/core/test_open_world_2026.py for Kimi K3
and LFM2.5, tests/core/test_reader5_glm53.py for GLM-5.3, tests/core/test_issue23_glm47_v41.py for
GLM-4.7, DeepSeek-V4.1-Flash and Gemma 4 12B, tests/core/test_issue23_olmo31.py for OLMo 3.1). A
name whose own config.json was not found but whose model card states another model's architecture is read through that config, and listed in
TWINS with the card. The rest have no config in the repository (docs/architectures.md says what was
searched), listed so the count is honest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.test_open_world_2026 import LFM2_5_8B
from rigcheck.core.catalog import load_catalog
from rigcheck.core.models.config import parse_config
from rigcheck.core.models.spec import ArchConfig

CATALOG = load_catalog(use_overlay=False)
BY_ID = {m.id: m for m in CATALOG.models}
FIXTURES = Path(__file__).parents[1] / "fixtures" / "configs-2026"


def _fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}_config.json").read_text(encoding="utf-8"))


#: the issue's names -> a config in this repository (catalog id, fixture or test config), or None
NAMED: dict[str, str | None] = {
    "Qwen3.5 dense": "qwen3.5-27b",
    "Qwen3.5 MoE": "qwen3.5-35b-a3b",
    "Qwen3.6 dense": "qwen3.6-27b",
    "Qwen3.6 MoE": "qwen3.6-35b-a3b",
    "Qwen3.8 dense": "qwen3.8-27b",
    "Qwen3.8 MoE": "qwen3.8-2.4t-a95b",
    "Gemma 4 E4B": "gemma-4-e4b",
    "Gemma 4 12B": "fixture:google--gemma-4-12B",
    "Gemma 4 26B-A4B": "gemma-4-26b-a4b",
    "Gemma 4 31B": "gemma-4-31b",
    "DeepSeek-V4 Flash": "deepseek-v4-flash",
    "DeepSeek-V4 Pro": "deepseek-v4-pro",
    "DeepSeek-V4.1": "fixture:deepseek-ai--DeepSeek-V4.1-Flash",
    "GLM-4.7": "fixture:zai-org--GLM-4.7",
    "GLM-4.7-Flash": "glm-4.7-flash",
    "GLM-5.3": "fixture:zai-org--GLM-5.3",
    "GLM-5.3-Flash": "fixture:zai-org--GLM-5.3-Flash",
    "Kimi K2.6": "kimi-k2.6",
    "Kimi K3": "fixture:moonshotai--Kimi-K3",
    "Nemotron 3 Nano": "nemotron-3-nano-30b-a3b",
    "Nemotron 3 Super": "nemotron-3-super-120b-a12b",
    "MiniMax M3": "minimax-m3",
    "Mistral Small 4": "mistral-small-4-119b",
    "Leanstral": "twin:mistral-small-4-119b",
    "Granite 4.2": None,
    "LFM2.5-8B-A1B": "test:LFM2_5_8B",
    "OLMo 3.1": "fixture:allenai--Olmo-3.1-32B-Think",
    "gpt-oss-20b": "gpt-oss-20b",
    "gpt-oss-120b": "gpt-oss-120b",
}


#: names read through another model's config, because their own config.json is not in a public
#: repository here but their model card states the architecture is that model's
TWINS: dict[str, str] = {
    # the card: "Built as part of the Mistral Small 4 family", 128 experts / 4 active, 119B with 6.5B
    # active, 256k context, the same numbers as Mistral Small 4 (read from the copy of the card at
    # https://fast.hugflare.com/abrahamn/Leanstral-2603/blob/main/README.md?code=true)
    "Leanstral": "https://huggingface.co/mistralai/Leanstral-2603",
}


def config_of(where: str) -> dict[str, Any]:
    where = where.removeprefix("twin:")
    if where.startswith("fixture:"):
        return _fixture(where.removeprefix("fixture:"))
    if where == "test:LFM2_5_8B":
        return LFM2_5_8B
    return dict(BY_ID[where].config)


def arch_of(where: str) -> ArchConfig:
    return parse_config(config_of(where), where)


def test_every_named_model_with_a_config_here_is_read() -> None:
    held = [name for name, where in NAMED.items() if where is not None]
    read = [name for name in held if arch_of(NAMED[name] or "").params_total > 0]
    assert read == held and len(held) == 28
    twins = [name for name in held if (NAMED[name] or "").startswith("twin:")]
    assert twins == list(TWINS)  # every twin names the card that says so
    # the issue asks for 28 of 30: these need their configs vendored first
    assert [name for name, where in NAMED.items() if where is None] == ["Granite 4.2"]
