"""Models of training rows that the catalog lacks, counted from their own config.json.

``benchmarks/data/configs/index.csv`` maps a row's ``model`` to a stored copy of its config (with the
URL and the corroborating source); :func:`model_for` reads it through the open-world reader
(``rigcheck.core.models.config.parse_config``), the path ``rigcheck estimate --model config.json``
takes. A model RigCheck cannot count comes back as the reason the index gives.
"""

from __future__ import annotations

import csv
import json
from functools import cache
from pathlib import Path

from rigcheck.core.models.config import parse_config
from rigcheck.core.models.spec import ModelInfo

CONFIGS = Path(__file__).resolve().parent / "data" / "configs"


@cache
def _index() -> dict[str, dict[str, str]]:
    with (CONFIGS / "index.csv").open(newline="", encoding="utf-8") as fh:
        return {row["model"]: row for row in csv.DictReader(fh)}


def model_for(name: str) -> ModelInfo | str:
    """The model a row names, counted from its stored config, or why it cannot be."""
    entry = _index().get(name)
    if entry is None:
        return f"model '{name}' not in the catalog and no config stored for it"
    if not entry["config"]:
        return f"model '{name}': {entry['not_counted']}"
    path = CONFIGS / entry["config"]
    arch = parse_config(json.loads(path.read_text(encoding="utf-8")), str(path))
    return ModelInfo(
        id=entry["config"].removesuffix(".json"),
        name=name,
        arch=arch,
        source_kind="config",
        source=entry["source_url"],
    )
