"""A table line that sets a framework beside transformers is one training script with the framework swapped:
``training_accuracy.shared_recipe`` reads an unstated optimizer as the transformers column's, and the
max-context solver answers that optimizer's states (Unsloth's context-length tables, issue 27)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from rigcheck.core.catalog import load_catalog  # noqa: E402
from rigcheck.core.estimate.memory import training_max_context  # noqa: E402
from rigcheck.core.estimate.training_memory import lora_param_count  # noqa: E402
from rigcheck.core.estimate.training_profiles import PROFILES  # noqa: E402
from training_accuracy import _capacity, _model, request, shared_recipe  # noqa: E402
from training_measurements import load  # noqa: E402

GIB = 1024**3


def _rows() -> dict[str, object]:
    return {r.id: r for r in load()}


def test_an_unstated_optimizer_beside_a_transformers_column_is_that_columns() -> None:
    rows = _rows()
    uns = rows["us-llama31-8b-qlora-unsloth-12gb-maxctx"]
    hf = rows["us-llama31-8b-qlora-transformers-12gb-maxctx"]
    assert uns.optimizer == hf.optimizer == "not stated"
    read = {r.id: r for r in shared_recipe([uns, hf])}
    assert read[uns.id].optimizer == PROFILES["transformers"].optimizer_lora
    assert read[uns.id].optimizer != PROFILES["unsloth"].optimizer_lora  # not the notebook's adamw_8bit
    assert read[hf.id].optimizer == PROFILES["transformers"].optimizer_lora
    # alone (no transformers column on its line) the row keeps its framework's default
    assert shared_recipe([uns])[0].optimizer == "not stated"
    # another table line does not pair
    other = replace(hf, verbatim="| 99 GB | 1 | 2 |")
    assert shared_recipe([uns, other])[0].optimizer == "not stated"
    # a stated baseline optimizer is the one carried over; a stated optimizer of its own is kept
    stated = replace(hf, optimizer="paged-adamw-8bit")
    assert shared_recipe([uns, stated])[0].optimizer == "paged-adamw-8bit"
    own = replace(uns, optimizer="adamw-8bit")
    assert shared_recipe([own, hf])[0].optimizer == "adamw-8bit"


def test_fp32_adamw_costs_the_unsloth_8gb_row_its_extra_states_in_tokens() -> None:
    """The same recipe's fp32 AdamW holds 6 bytes per adapter parameter more than adamw_8bit: at 8 GiB
    that is thousands of tokens of Unsloth's ~0.21 MB/token, the whole gap of the 8 GB row."""
    catalog = load_catalog()
    row = _rows()["us-llama31-8b-qlora-unsloth-8gb-maxctx"]
    model, capacity = _model(row, catalog), _capacity(row, catalog)
    assert capacity == 8 * GIB
    eight = training_max_context(model, replace(request(row, 1), optimizer="adamw-8bit"), catalog, capacity)
    fp32 = training_max_context(model, replace(request(row, 1), optimizer="adamw"), catalog, capacity)
    wider = training_max_context(model, replace(request(row, 1), optimizer="adamw-8bit"), catalog, 12 * GIB)
    per_token = 4 * GIB / (wider - eight)  # bytes per token of the marginal step
    adapters = lora_param_count(model.arch, row.lora_rank, row.targets)
    lost = eight - fp32
    assert 0.9 < lost * per_token / (6 * adapters) < 1.1
    paired = shared_recipe([row, _rows()["us-llama31-8b-qlora-transformers-8gb-maxctx"]])[0]
    assert training_max_context(model, request(paired, 1), catalog, capacity) == fp32
