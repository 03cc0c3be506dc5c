"""Compatibility (issue 26): problems first, then OK, the "would not work here" rows folded into one
collapsed line, and a coloured counts header a reader sees before the tree."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from rigcheck.core.catalog import load_catalog
from rigcheck.core.compat import bucket
from rigcheck.core.machine import load_machine
from rigcheck.gui.pages.compat import FOLDED, CompatPage
from rigcheck.gui.state import AppState

MACHINES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


@pytest.fixture(params=sorted(p.name for p in MACHINES.glob("*.json")))
def page(request: pytest.FixtureRequest, qtbot: QtBot, tmp_path: Path) -> CompatPage:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    compat = CompatPage(AppState(load_catalog(use_overlay=False), settings))
    qtbot.addWidget(compat)
    compat.resize(1024, 700)
    compat.show()
    compat.show_machine(load_machine(MACHINES / request.param), request.param, False)
    qtbot.waitUntil(lambda: not compat.busy(), timeout=20000)
    return compat


def _rows(page: CompatPage) -> list[list[str]]:
    """Per group, each child's bucket in order (the folded line as FOLDED)."""
    tree = page.tree
    return [
        [str(group.child(r).data(0, Qt.ItemDataRole.UserRole)) for r in range(group.childCount())]
        for group in (tree.topLevelItem(g) for g in range(tree.topLevelItemCount()))
    ]


def test_problems_then_ok_then_the_folded_line(page: CompatPage) -> None:
    order = ["problem", "unknown", "limited", "ok", FOLDED]
    for buckets in _rows(page):
        ranks = [order.index(b) for b in buckets]
        assert ranks == sorted(ranks), buckets
        assert buckets.count(FOLDED) <= 1


def test_not_here_rows_live_only_in_the_collapsed_line(page: CompatPage) -> None:
    tree = page.tree
    folded_total = 0
    for g in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(g)
        for r in range(group.childCount()):
            row = group.child(r)
            if row.data(0, Qt.ItemDataRole.UserRole) == FOLDED:
                assert not row.isExpanded()
                inner = {row.child(i).data(0, Qt.ItemDataRole.UserRole) for i in range(row.childCount())}
                assert inner == {"not-here"}
                assert row.text(0) == f"– {row.childCount()} would not work here"
                folded_total += row.childCount()
            else:
                assert row.data(0, Qt.ItemDataRole.UserRole) != "not-here"
    assert folded_total == sum(1 for group in _shown_groups(page) for f in group if bucket(f) == "not-here")


def _shown_groups(page: CompatPage) -> list[list]:
    from rigcheck.core.compat import gpu_groups

    return [findings for _indices, findings in gpu_groups(list(page.findings))]


def test_counts_header_names_problems_and_sits_above_the_tree(page: CompatPage) -> None:
    text = page.counts.text()
    assert "problem" in text  # "0 problems" is said too: the first question's answer
    assert "#c8433a" in text or "#2e9d57" in text
    shown = [f for group in _shown_groups(page) for f in group]
    problems = sum(1 for f in shown if bucket(f) == "problem")
    assert (f"{problems} problems" if problems != 1 else "1 problem") in text
    not_here = sum(1 for f in shown if bucket(f) == "not-here")
    if not_here:
        assert f"{not_here} not applicable" in text or (not_here == 1 and "1 not applicable" in text)
    assert page.counts.font().pointSizeF() > page.summary.font().pointSizeF()
    assert page.counts.geometry().bottom() < page.tree.geometry().top()
    # the header is read whole at 1024 px: its wrapped height fits the label
    assert page.counts.height() >= page.counts.heightForWidth(page.counts.width())


def test_the_pytorch_row_does_not_repeat_the_cards_reason(qtbot: QtBot, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    compat = CompatPage(AppState(load_catalog(use_overlay=False), settings))
    qtbot.addWidget(compat)
    compat.show_machine(load_machine(MACHINES / "m2-ultra-192gb.json"), "m2", False)
    qtbot.waitUntil(lambda: not compat.busy(), timeout=20000)
    said = "macOS wheels are CPU/MPS only"
    assert said in compat.torch_reason.text()
    machine = compat.tree.topLevelItem(0)
    rows = [machine.child(r) for r in range(machine.childCount())]
    torch = [r for r in rows if r.text(1) == "pytorch"]
    assert torch and said not in torch[0].text(3)
    assert torch[0].text(3).endswith("(why: see Recommended PyTorch above)")
    assert said in torch[0].toolTip(3)  # whole where it is asked for


def test_counts_header_colours_warnings_amber_and_failures_red() -> None:
    from rigcheck.gui.pages.compat import counts_header

    warn = counts_header({"problem": 1, "ok": 3}, failing=False)
    fail = counts_header({"problem": 2, "ok": 3}, failing=True)
    assert '<span style="color:#c98a12">1 problem</span>' in warn
    assert '<span style="color:#c8433a">2 problems</span>' in fail
    assert '<span style="color:#2e9d57">0 problems</span>' in counts_header({"ok": 1})
    assert "not applicable" not in warn  # a zero count other than problems is left out
