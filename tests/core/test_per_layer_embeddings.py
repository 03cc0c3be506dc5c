"""Gemma 4's E-series per-layer embeddings (a vocabulary × layers × 256 table beside the token embedding):
llama.cpp keeps that table with the input embedding in host memory and looks rows up, so the GPU's copy of the
tied output head is the token table alone and a token reads neither table whole."""

from __future__ import annotations

import pytest

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.estimate.memory import Request, estimate_memory
from rigcheck.core.estimate.speed.reads import active_bytes
from rigcheck.core.models.resolve import from_catalog


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(use_overlay=False)


def estimate(catalog: Catalog, model_id: str):  # type: ignore[no-untyped-def]
    spec = catalog.model(model_id)
    assert spec is not None
    return estimate_memory(from_catalog(spec), Request(quant="q4_k_m", context=4096), catalog)


@pytest.mark.parametrize("model_id", ["gemma-4-e2b", "gemma-4-e4b"])
def test_the_tied_head_copy_is_the_token_table_alone(catalog: Catalog, model_id: str) -> None:
    est = estimate(catalog, model_id)
    arch = est.model.arch
    table = arch.vocab_size * arch.hidden_size
    assert arch.tie_word_embeddings and arch.embed_params > 3 * table  # the per-layer table dominates
    # host: both tables (the input side); GPU: one copy of the token table as the output head, and the
    # final norm (the head's own few kilobytes)
    copy = est.host_weight_bytes * table // arch.embed_params
    assert copy <= est.other_weight_bytes < copy + 64 * 1024
    _per_layer, _experts, head = active_bytes(est)
    assert head == est.other_weight_bytes < est.host_weight_bytes / 3
    # a token reads its layers and the head: less than the whole file, the per-layer table left out
    assert sum(_per_layer) + head < est.total("weights") - est.host_weight_bytes / 2


def test_a_plain_tied_model_copies_its_whole_embedding(catalog: Catalog) -> None:
    est = estimate(catalog, "llama-3.2-1b")
    assert est.model.arch.tie_word_embeddings
    assert est.host_weight_bytes > 0
    assert est.host_weight_bytes <= est.other_weight_bytes < est.host_weight_bytes + 64 * 1024
