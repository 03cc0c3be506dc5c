"""Every training row whose model the catalog lacks has a stored, cited config.json (or the reason it
cannot be counted), so the accuracy script estimates it instead of dropping it."""

from __future__ import annotations

import csv
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from rigcheck.core.models.spec import ModelInfo

ROOT = Path(__file__).resolve().parent.parent


def _module() -> ModuleType:
    path = ROOT / "benchmarks" / "training_configs.py"
    spec = importlib.util.spec_from_file_location("training_configs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("training_configs", module)
    spec.loader.exec_module(module)
    return module


def test_every_uncatalogued_training_model_is_counted_from_its_config_or_says_why() -> None:
    configs = _module()
    with (ROOT / "benchmarks" / "data" / "training.csv").open(newline="", encoding="utf-8") as fh:
        names = {row["model"] for row in csv.DictReader(fh) if not row["model_id"]}
    assert names
    counted = {}
    for name in sorted(names):
        found = configs.model_for(name)
        if isinstance(found, ModelInfo):
            counted[name] = found
        else:
            assert "encoder-decoder" in found, found
    assert {"phi-1.5 1.3B", "StableLM Alpha 3B", "Falcon 40B", "bigscience/bloomz-7b1"} <= set(counted)
    assert all(m.source_kind == "config" and m.source.startswith("https://") for m in counted.values())


def test_every_stored_config_is_cited() -> None:
    with (ROOT / "benchmarks" / "data" / "configs" / "index.csv").open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        assert row["source_url"].startswith("https://huggingface.co/")
        if row["config"]:
            assert (ROOT / "benchmarks" / "data" / "configs" / row["config"]).is_file()
            assert row["corroborated_by"], row["model"]
        else:
            assert row["not_counted"], row["model"]
