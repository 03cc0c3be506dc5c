"""Italian complete (issue 26): the monitor's alerts and Upgrade's notes come out in Italian, with Italian
decimals, while English (the CLI's language) stays byte for byte what it was."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from test_monitor import run

from rigcheck.core import i18n
from rigcheck.core.catalog import load_catalog
from rigcheck.core.estimate.soldered import choice_label, machine_choices, why_built_in
from rigcheck.core.estimate.upgrade import cheapest_gpus_for
from rigcheck.core.monitor import History, alerts


@pytest.fixture
def italian() -> Iterator[None]:
    i18n.set_language("it")
    try:
        yield
    finally:
        i18n.set_language("en")


def test_alerts_in_italian_with_italian_numbers(italian: None) -> None:
    history = History(600, 1)
    run(history, 200, power_watts=440.0, power_limit_watts=450.0)
    (alert,) = alerts(history)
    assert alert.message == "GPU 0 (NVIDIA GeForce RTX 4090) assorbe ≥ 95% del suo limite di 450 W da 3 min"


def test_alerts_stay_english_in_english() -> None:
    history = History(600, 1)
    run(history, 40, power_watts=440.0, power_limit_watts=450.0)
    (alert,) = alerts(history)
    assert alert.message == "GPU 0 (NVIDIA GeForce RTX 4090) has drawn ≥ 95% of its 450 W limit for 39 s"


def test_upgrade_notes_in_italian(italian: None) -> None:
    catalog = load_catalog(use_overlay=False)
    options = cheapest_gpus_for("llama-3.3-70b", catalog)
    notes = [n for o in options for n in o.notes]
    assert any("nessun prezzo attuale nel catalogo" in n for n in notes), notes
    assert not any("no current price" in n for n in notes)
    spec = catalog.gpu("apple-m2-ultra")
    assert spec is not None
    from rigcheck.core.machine import CPU, Machine, Memory
    from rigcheck.core.whatif import simulate

    mac = simulate(
        Machine(cpu=CPU(logical_cores=24), memory=Memory(total_bytes=64 * 1024**3), gpus=()), [spec]
    )
    assert "non si può aggiungere" in why_built_in(mac, catalog)
    labels = [choice_label(c) for c in machine_choices(mac, catalog)]
    assert labels and all(" con " in label and "GiB" in label for label in labels)
