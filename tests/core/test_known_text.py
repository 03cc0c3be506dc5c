"""Stored English sentences (probe notes in snapshots, error lines) shown in Italian where RigCheck wrote them
from a known template, and labelled where it did not (issue 26)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from rigcheck.core import i18n
from rigcheck.core.known_text import ERROR_TEMPLATES, NOTE_TEMPLATES, in_language, translated


@pytest.fixture
def italian() -> Iterator[None]:
    i18n.set_language("it")
    try:
        yield
    finally:
        i18n.set_language("en")


def test_every_template_has_an_italian_entry() -> None:
    table = i18n.translations("it")
    missing = [t for t in (*NOTE_TEMPLATES, *ERROR_TEMPLATES) if t not in table]
    assert not missing
    for template in (*NOTE_TEMPLATES, *ERROR_TEMPLATES):  # the same values, in both languages
        assert set(re.findall(r"\\{(\\w+)\\}", template)) == set(re.findall(r"\\{(\\w+)\\}", table[template]))


def test_a_probe_note_from_a_snapshot_reads_in_italian(italian: None) -> None:
    note = "GPU 0: power limit could not be read"
    assert in_language(note, probe_note=True) == "GPU 0: impossibile leggere il limite di potenza"
    note = "memory copy test: 41.2 GB/s"
    assert in_language(note) == "test di copia in memoria: 41.2 GB/s"


def test_an_error_keeps_its_source_and_translates_its_problem(italian: None) -> None:
    assert in_language("/tmp/x.json: not valid JSON (line 1 column 2)") == (
        "/tmp/x.json: JSON non valido (line 1 column 2)"
    )
    assert in_language("hf:org/model: repository not found on the hub (a private one needs HF_TOKEN)") == (
        "hf:org/model: repository non trovato sull'hub (uno privato richiede HF_TOKEN)"
    )


def test_free_text_is_left_as_written_and_labelled(italian: None) -> None:
    other = "nvidia-smi printed: Unable to determine the device handle"
    shown = in_language(other, probe_note=True)
    assert shown.startswith(other) and shown != other and "inglese" in shown
    # a core error raised through tr() is already Italian: no label
    already = i18n.tr("MLX runs only on Apple silicon (Metal); this machine has {gpus}", gpus="RTX 4090")
    assert in_language(f"--engine: {already}") == f"--engine: {already}"


def test_english_is_unchanged() -> None:
    for text in ("GPU 0: power limit could not be read", "some other tool's words", "a.json: empty file"):
        assert in_language(text) == text and in_language(text, probe_note=True) == text
    assert translated("some other tool's words") is None
