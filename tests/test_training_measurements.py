"""The cited training measurement set is whole: every row valid and cited, its number in the quoted text,
the settings the estimator needs, and a deterministic held-out quarter.

No test here runs the estimator against the rows: accuracy lives in ``benchmarks/training_accuracy.py``.
"""

from __future__ import annotations

import csv
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from rigcheck.core.catalog import load_catalog

ROOT = Path(__file__).resolve().parent.parent
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _load_module() -> ModuleType:
    path = ROOT / "benchmarks" / "training_measurements.py"
    spec = importlib.util.spec_from_file_location("training_measurements", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("training_measurements", module)
    spec.loader.exec_module(module)
    return module


T = _load_module()
ROWS = T.load()


def _numbers(text: str) -> set[float]:
    return {float(n.replace(",", "")) for n in NUMBER.findall(text)}


def test_at_least_60_rows_with_every_method() -> None:
    assert len(ROWS) >= 60
    assert {r.method for r in ROWS} == {"full", "lora", "qlora", "offload"}
    assert {"torchtune", "litgpt", "unsloth", "transformers", "megatrain"} <= {r.framework for r in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_row_is_cited_and_its_number_is_in_the_quoted_text(row: object) -> None:
    assert row.source_url.startswith("https://github.com/")
    thread = re.fullmatch(r"https://github\.com/[^/]+/[^/]+/(pull|issues)/\d+", row.source_url)
    if thread:  # a logged figure in an issue or pull-request thread: the locator names the post and its date
        assert re.search(r"\(\S+, \d{4}-\d{2}-\d{2}\)", row.locator), (
            f"{row.id}: name the post: {row.locator}"
        )
    else:
        assert "/blob/" in row.source_url, f"{row.id}: cite a file at a commit or a thread"
        commit = row.source_url.split("/blob/")[1].split("/")[0]
        assert re.fullmatch(r"[0-9a-f]{40}", commit), f"{row.id}: cite a full commit, not {commit}"
    assert row.locator and row.verbatim
    if row.outcome == "oom":
        assert "OOM" in row.verbatim
    else:
        assert row.value in _numbers(row.verbatim), f"{row.id}: {row.value:g} is not in: {row.verbatim}"


def test_catalog_ids_exist() -> None:
    catalog = load_catalog()
    for row in ROWS:
        assert not row.model_id or catalog.model(row.model_id) is not None, row.id
        assert not row.gpu_id or catalog.gpu(row.gpu_id) is not None, row.id


def test_lora_rows_say_their_rank_and_targets_where_the_source_does() -> None:
    for row in ROWS:
        if row.lora_rank is not None:
            assert set(row.targets) <= {"q", "k", "v", "o", "gate", "up", "down"}, row.id
    assert sum(1 for r in ROWS if r.method in ("lora", "qlora") and r.lora_rank) >= 40


def test_the_held_out_quarter_is_deterministic_and_about_a_quarter() -> None:
    held = [r.id for r in ROWS if r.split == "holdout"]
    assert 0.15 <= len(held) / len(ROWS) <= 0.35
    assert held == [r.id for r in T.load() if r.split == "holdout"]
    assert any(
        r.method == m and r.split == "holdout" for m in ("lora", "qlora", "offload", "full") for r in ROWS
    )


def _write(tmp_path: Path, change: dict[str, str]) -> Path:
    text = T.DATA.read_text(encoding="utf-8").splitlines()
    reader = csv.DictReader(text[:2])
    row = next(reader)
    row.update(change)
    path = tmp_path / "training.csv"
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=list(reader.fieldnames or []))
        writer.writeheader()
        writer.writerow(row)
    return path


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"metric": "speed"}, "unknown metric"),
        ({"value": "-3"}, "not a positive number"),
        ({"unit": "MB"}, "unit 'MB'"),
        ({"source_url": "../shared/x"}, "not an https address"),
        ({"outcome": "oom"}, "no value"),
        ({"lora_rank": "8", "lora_targets": ""}, "names its targets"),
        ({"framework": "llama.cpp"}, "unknown framework"),
    ],
)
def test_a_bad_row_is_named_with_its_line(tmp_path: Path, change: dict[str, str], problem: str) -> None:
    path = _write(tmp_path, change)
    with pytest.raises(T.TrainingMeasurementError, match=rf"training.csv:2: row '[^']+': .*{problem}"):
        T.load(path)
