"""The Overview answers first (issue 18 #1): verdict cards on top, compact fact cards, the PSU as a badge,
and words that fit the machine (CPU-only, unified memory, several GPUs)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QProgressBar, QScrollArea
from pytestqt.qtbot import QtBot

from fakes.windows import snapshot_window
from rigcheck.core.estimate.power import power_budget
from rigcheck.gui.app import settle
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.overview import OverviewPage

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


def open_overview(qtbot: QtBot, tmp_path: Path, snapshot: str | Path, size: tuple[int, int]) -> MainWindow:
    window = snapshot_window(qtbot, tmp_path, snapshot)
    window.setMinimumSize(0, 0)
    window.resize(*size)
    window.show()
    window.show_page("overview")
    settle(window, timeout_s=20)
    return window


def shown_text(page: OverviewPage) -> str:
    labels = [w.text() for w in page.findChildren(QLabel) if w.isVisibleTo(page)]
    bars = [b.text() for b in page.findChildren(QProgressBar) if b.isVisibleTo(page)]
    return "\n".join(labels + bars)


def test_verdict_cards_come_first_and_fill_the_width_at_1024x700(qtbot: QtBot, tmp_path: Path) -> None:
    window = open_overview(qtbot, tmp_path, "rtx4090-64gb.json", (1024, 700))
    page = window.pages["overview"]
    assert isinstance(page, OverviewPage)
    viewport = page.findChild(QScrollArea).viewport()
    first_row = [c for c in page.cards if c.y() == page.cards[0].y()]
    assert len(first_row) >= 3, "as many cards as fit the width sit side by side"
    for card in first_row:  # the first row is on screen without scrolling
        bottom = card.mapTo(viewport, card.rect().bottomLeft()).y()
        assert 0 < bottom <= viewport.height()
    top_fact = min(c.mapTo(page, c.rect().topLeft()).y() for c in page.fact_cards)
    assert all(c.mapTo(page, c.rect().topLeft()).y() < top_fact for c in page.cards)
    # the fact cards of one row are equally tall, and each has a heading
    rows: dict[int, set[int]] = {}
    for card in page.fact_cards:
        rows.setdefault(card.y(), set()).add(card.height())
    assert all(len(heights) == 1 for heights in rows.values())
    assert [c.findChildren(QLabel)[0].text() for c in page.fact_cards] == [
        "GPU 0: GeForce RTX 4090", "CPU and memory", "Power supply",
    ]  # fmt: skip
    # one precision for parameter counts
    sizes = [c.size_label.text() for c in page.cards]
    assert all(re.fullmatch(r"\d+\.\dB( \(\d+\.\dB active\))?", s) for s in sizes), sizes
    assert "12.2B" in sizes


def test_psu_is_a_one_line_badge_with_the_working_on_demand(qtbot: QtBot, tmp_path: Path) -> None:
    window = open_overview(qtbot, tmp_path, "rtx4090-64gb.json", (1280, 800))
    page = window.pages["overview"]
    assert isinstance(page, OverviewPage)
    assert "PSU not entered · peak" in page.power_badge.text()
    page.psu.setValue(1000)
    budget = power_budget(window.state.machine, window.state.catalog, psu_watts=1000.0)
    assert budget.headroom_watts is not None and budget.headroom_watts >= 0
    badge = page.power_badge.text()
    expected = f"1000 W · peak {budget.peak_watts:.0f} W · {budget.headroom_watts:.0f} W spare"
    assert expected in badge and "<br>" not in badge and "✔ Enough power" in badge
    assert 1000 - round(budget.peak_watts) == round(budget.headroom_watts)
    # the working (parts, reasons, advice) is hidden until asked for
    assert not page.power_text.isVisible()
    qtbot.mouseClick(page.power_more, Qt.MouseButton.LeftButton)
    assert page.power_text.isVisible() and "•" in page.power_text.text()
    lines = page.power_text.text().split("<br>")
    assert len(lines) == len(set(lines)), "no sentence twice"
    page.psu.setValue(400)
    assert re.search(r"400 W · peak \d+ W · \d+ W short", page.power_badge.text())


def test_cpu_only_machine_is_described_as_one(qtbot: QtBot, tmp_path: Path) -> None:
    window = open_overview(qtbot, tmp_path, "cpu-only-32gb.json", (1024, 700))
    page = window.pages["overview"]
    assert isinstance(page, OverviewPage)
    text = shown_text(page)
    assert "No GPU found" in text
    assert "Models run on the CPU, from system RAM" in page.no_gpu_text.text()
    for wrong in ("entirely in GPU memory", "see the notes below", "Runs on the GPU", "GPU memory"):
        assert wrong not in text, wrong
    assert not window.state.machine.notes  # so nothing may point to notes
    assert "notes below" not in page.no_gpu_text.text()
    assert {c.view.where for c in page.cards} <= {"cpu", None}


def test_unified_memory_and_several_gpus(qtbot: QtBot, tmp_path: Path) -> None:
    window = open_overview(qtbot, tmp_path, "m2-ultra-192gb.json", (1024, 700))
    page = window.pages["overview"]
    assert isinstance(page, OverviewPage)
    gpu_bar = page.fact_cards[0].findChild(QProgressBar)
    assert gpu_bar.text() == "144.0 GiB of 192.0 GiB for the GPU"
    assert "unified, shared with the CPU" in shown_text(page)
    window.close()

    window = open_overview(qtbot, tmp_path, "hgx-h100x8-2tb.json", (1920, 1080))
    page = window.pages["overview"]
    assert isinstance(page, OverviewPage)
    titles = [c.findChildren(QLabel)[0].text() for c in page.fact_cards]
    assert titles[0] == "GPUs 0–7: 8 × H100 SXM5 80GB" and len(titles) == 3
    assert page.fact_cards[0].findChild(QProgressBar).text() == "640.0 GiB (80.0 GiB each)"
    assert "Runs on the GPUs" in shown_text(page)


def test_unified_gpu_without_a_size_shows_its_platform_share(qtbot: QtBot, tmp_path: Path) -> None:
    """A Strix Halo snapshot with null GPU memory (what sysfs gives without amdgpu sizes): the card shows
    what the GPU may use by the GTT rule, the same figure the estimates use, not "memory size unknown"."""
    snapshot = json.loads((FIXTURES / "rtx4090-64gb.json").read_text(encoding="utf-8"))
    snapshot["gpus"] = [
        {"vendor": "amd", "name": "AMD Radeon 8060S Graphics", "memory_total_bytes": None, "index": 0,
         "unified_memory": True, "gfx_target": "gfx1151"}
    ]  # fmt: skip
    snapshot["memory"] = {"total_bytes": 128 * 1024**3, "available_bytes": None, "swap_total_bytes": 0}
    (tmp_path / "strix.json").write_text(json.dumps(snapshot), encoding="utf-8")
    window = open_overview(qtbot, tmp_path, tmp_path / "strix.json", (1280, 800))
    page = window.pages["overview"]
    assert isinstance(page, OverviewPage)
    bar = page.fact_cards[0].findChild(QProgressBar)
    assert bar.text() == "64.0 GiB of 128.0 GiB for the GPU"
    assert "GTT" in bar.toolTip() and "amdgpu_ttm.c" in bar.toolTip()
    assert "memory size unknown" not in shown_text(page)
    window.close()


def test_what_you_can_run_shows_models_of_the_newest_year(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The cards are what people run now: every card is a catalog model, and some came out in the
    catalog's newest year (issue 24: the Overview never showed a model of 2026)."""
    from rigcheck.core.catalog import load_catalog
    from rigcheck.gui.pages.overview import POPULAR

    catalog = load_catalog(use_overlay=False)
    specs = [catalog.model(i) for i in POPULAR]
    assert all(s is not None for s in specs)
    years = {int((s.released or "")[:4] or s.release_year or 0) for s in catalog.models}  # type: ignore[union-attr]
    newest = max(years)
    shown = [
        s for s in specs if s is not None and int((s.released or "")[:4] or s.release_year or 0) == newest
    ]
    assert len(shown) >= 4
