"""The core's one translation mechanism: whole templates, locale numbers, English by default."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rigcheck.core import i18n
from rigcheck.core.catalog import load_catalog
from rigcheck.core.compat import check_compat
from rigcheck.core.estimate.power import power_budget
from rigcheck.core.machine import load_machine
from rigcheck.core.units import approx_speed, fmt_bytes

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


@pytest.fixture
def italian() -> Iterator[None]:
    i18n.set_language("it")
    try:
        yield
    finally:
        i18n.set_language("en")


def test_english_is_the_default_and_fills_templates_verbatim() -> None:
    assert i18n.language() == "en"
    assert i18n.tr(
        "needs {need}; GPUs offer {gpus} and RAM {ram}", need="9 GiB", gpus="8 GiB", ram="4 GiB"
    ) == ("needs 9 GiB; GPUs offer 8 GiB and RAM 4 GiB")
    assert i18n.num(8192) == "8,192"
    assert i18n.num(1.25, 1) == "1.2"  # as Python's own formatting: the CLI output is unchanged
    assert i18n.percent(0.9) == "90%"
    assert i18n.month_year(2028, 6) == "June 2028"
    assert fmt_bytes(1.5 * 1024**3) == "1.5 GiB"
    assert approx_speed(1234) == "1,200"


def test_italian_translates_the_whole_template_and_moves_placeholders(italian: None) -> None:
    text = i18n.tr("{count} × {gpu} would hold it entirely in GPU memory", count=2, gpu="RTX 4090")
    assert text == "con 2 × RTX 4090 starebbe tutto nella memoria GPU"
    assert i18n.num(8192) == "8.192"
    assert i18n.num(1.5, 1) == "1,5"
    assert i18n.num(1500.0, group=False) == "1500"
    assert i18n.percent(0.9) == "90%"
    assert i18n.month_year(2028, 6) == "giugno 2028"
    assert fmt_bytes(1.5 * 1024**3) == "1,5 GiB"
    assert fmt_bytes(None) == "sconosciuto"
    assert approx_speed(3.27) == "3,3"


def test_a_missing_entry_falls_back_to_english(italian: None) -> None:
    assert i18n.tr("no such sentence {x}", x=1) == "no such sentence 1"


def test_core_sentences_come_out_in_italian(italian: None) -> None:
    catalog = load_catalog()
    machine = load_machine(FIXTURES / "rtx4090-64gb.json")
    budget = power_budget(machine, catalog)
    assert budget.reasons[0].startswith("Assorbimento stimato: ")
    assert "W continui" in budget.reasons[0]
    reasons = " ".join(f.reason for f in check_compat(machine, catalog))
    assert "se installato funzionerebbe" in reasons
    assert "would work if installed" not in reasons


def test_the_cli_stays_english_whatever_the_system_locale() -> None:
    env = {"LANG": "it_IT.UTF-8", "LC_ALL": "it_IT.UTF-8", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from rigcheck.cli import main; sys.exit(main())",
            "compat",
            "--machine",
            str(FIXTURES / "rtx4090-64gb.json"),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert out.returncode in (0, 1), out.stderr
    assert "se installato" not in out.stdout
    assert "would" in out.stdout or "OK" in out.stdout
