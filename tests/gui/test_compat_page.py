"""The Compatibility page: root causes first, the change that fixes the most, muted "would not work here"."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QPalette
from pytestqt.qtbot import QtBot

from fakes.machines import AUDIT_MACHINES
from rigcheck.core.catalog import load_catalog
from rigcheck.gui.pages.compat import CompatPage
from rigcheck.gui.state import AppState


@pytest.fixture
def page(qtbot: QtBot, tmp_path: Path) -> CompatPage:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    compat = CompatPage(AppState(load_catalog(use_overlay=False), settings))
    qtbot.addWidget(compat)
    compat.show_machine(AUDIT_MACHINES["old-470"](), "old-470", False)
    qtbot.waitUntil(lambda: not compat.busy(), timeout=10000)  # worked out on the pool
    return compat


def test_summary_and_root_causes_come_first(page: CompatPage) -> None:
    assert page.headline.text().startswith("The one change that fixes the most: update the NVIDIA driver")
    assert "R580" in page.headline.text()
    assert page.causes.text().startswith("• An old NVIDIA driver (470.256.02) blocks")


def test_not_installed_software_is_muted_not_failed(page: CompatPage) -> None:
    from rigcheck.gui.pages.compat import FOLDED

    gpu = page.tree.topLevelItem(1)
    rows = [gpu.child(i) for i in range(gpu.childCount())]
    # the "would not work here" rows are folded into one collapsed line after the rest
    fold = rows[-1]
    assert fold.data(0, Qt.ItemDataRole.UserRole) == FOLDED and not fold.isExpanded()
    muted = [fold.child(i) for i in range(fold.childCount())]
    assert fold.text(0) == f"– {len(muted)} would not work here"
    assert muted and all(r.text(0) == "– Would not work here" for r in muted)
    grey = page.palette().color(QPalette.ColorRole.PlaceholderText)
    assert all(r.foreground(1).color() == grey for r in muted)
    buckets = [r.data(0, Qt.ItemDataRole.UserRole) for r in rows]
    assert buckets.index("problem") < buckets.index("ok") < buckets.index(FOLDED)  # broken first


def test_details_are_plain_text(page: CompatPage) -> None:
    gpu = page.tree.topLevelItem(1)
    page.tree.setCurrentItem(gpu.child(0))
    assert "<script" not in page.details.text()
    assert "ollama" in page.details.text()


def test_reason_and_fix_are_read_whole_at_1024x700(qtbot: QtBot, tmp_path: Path) -> None:
    """Every finding's Reason and Fix wrap within their column (no "…"), and a Copy button does not make
    its row taller than its text."""
    from PySide6.QtCore import QRect
    from PySide6.QtGui import QFont, QFontMetrics
    from PySide6.QtWidgets import QToolButton

    from rigcheck.core.machine import load_machine
    from rigcheck.gui.app import create_window, settle
    from rigcheck.gui.pages.compat import FIX_ROLE, TITLE_ROLE

    fixtures = Path(__file__).resolve().parent.parent / "fixtures" / "machines"
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window = create_window(
        settings, snapshot=load_machine(fixtures / "two-gpus-128gb.json"), snapshot_name="two-gpus"
    )
    qtbot.addWidget(window)
    window.setMinimumSize(0, 0)
    window.resize(1024, 700)
    window.show()
    window.show_page("compat")
    settle(window, timeout_s=20)
    page = window.pages["compat"]
    assert isinstance(page, CompatPage)
    tree = page.tree
    metrics = QFontMetrics(tree.font())
    with_button, without = 0, 0
    for g in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(g)
        for r in range(group.childCount()):
            item = group.child(r)
            height = tree.visualItemRect(item).height()
            # one Finding cell: the subject in bold, the reason, then "Fix: …", all wrapped to its width
            width = tree.header().sectionSize(3) - 8
            bold = QFont(tree.font())
            bold.setBold(True)
            need = sum(
                QFontMetrics(font)
                .boundingRect(QRect(0, 0, width, 100000), Qt.TextFlag.TextWordWrap, text)
                .height()
                for font, text in (
                    (bold, item.data(3, TITLE_ROLE)),
                    (tree.font(), item.text(3)),
                    (tree.font(), item.data(3, FIX_ROLE) or ""),
                )
                if text
            )
            assert height >= need, f"{item.text(1)} is cut"
            assert item.text(4)[:40] in (item.data(3, FIX_ROLE) or "")  # the fix is shown, not only kept
            holder = tree.itemWidget(item, 5)
            if holder is None:
                without += 1
                continue
            with_button += 1
            button = holder.findChild(QToolButton)
            assert button.height() <= metrics.height() + 6  # one line tall, at the top of its row
    assert with_button and without
    # rows whose text takes the same number of lines are one height, Copy button or not: give a row with
    # a button and one without the same short texts and compare (a button used to add height)
    rows = [group.child(r) for g in range(tree.topLevelItemCount()) for group in [tree.topLevelItem(g)]
            for r in range(group.childCount())]  # fmt: skip
    plain_row = next(i for i in rows if tree.itemWidget(i, 5) is None)
    button_row = next(i for i in rows if tree.itemWidget(i, 5) is not None)
    for item in (plain_row, button_row):
        for column in range(5):
            item.setText(column, "short")
        item.setData(3, TITLE_ROLE, None)
        item.setData(3, FIX_ROLE, None)
    tree.doItemsLayout()
    one_line = tree.visualItemRect(plain_row).height()
    assert one_line < 2 * metrics.lineSpacing()
    assert tree.visualItemRect(button_row).height() == one_line
    qtbot.mouseClick(tree.itemWidget(button_row, 5).findChild(QToolButton), Qt.MouseButton.LeftButton)
    assert page.copied.text().startswith("Copied")
    window.close()


def test_identical_gpus_share_one_list(qtbot: QtBot, tmp_path: Path) -> None:
    """An 8-GPU server lists its findings once, under "GPUs 0–7: 8 × …", and counts them once; two different
    GPUs keep a list each."""
    from rigcheck.core.machine import load_machine

    machines = Path(__file__).resolve().parent.parent / "fixtures" / "machines"
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    compat = CompatPage(AppState(load_catalog(use_overlay=False), settings))
    qtbot.addWidget(compat)
    compat.show_machine(load_machine(machines / "hgx-h100x8-2tb.json"), "hgx", False)
    qtbot.waitUntil(lambda: not compat.busy(), timeout=10000)
    titles = [compat.tree.topLevelItem(i).text(0) for i in range(compat.tree.topLevelItemCount())]
    assert len(titles) == 2 and titles[0].startswith("This machine")
    assert titles[1].startswith("GPUs 0–7: 8 × H100 SXM5 80GB")
    assert compat.summary.text().endswith("(identical GPUs counted once)")
    shown = sum(
        max(1, compat.tree.topLevelItem(g).child(r).childCount())  # a folded line: its rows
        for g in (0, 1)
        for r in range(compat.tree.topLevelItem(g).childCount())
    )
    counted = sum(int(part.split()[0]) for part in compat.summary.text().split(": ", 1)[1].split(", "))
    assert counted == shown  # the counts are the rows on screen, not eight times as many
    compat.show_machine(load_machine(machines / "two-gpus-128gb.json"), "two", False)
    qtbot.waitUntil(lambda: not compat.busy(), timeout=10000)
    titles = [compat.tree.topLevelItem(i).text(0) for i in range(compat.tree.topLevelItemCount())]
    assert [t.split(":")[0] for t in titles[1:]] == ["GPU 0", "GPU 1"]
    assert "counted once" not in compat.summary.text()


def test_findings_are_worked_out_off_the_gui_thread(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checking a machine takes 0.2–0.6 s: on the pool, so the window never freezes (issue 26 #5)."""
    import threading

    import rigcheck.gui.pages.compat as compat_module

    threads: list[threading.Thread] = []
    real = compat_module.check_compat

    def recording(*args: object, **kwargs: object) -> object:
        threads.append(threading.current_thread())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(compat_module, "check_compat", recording)
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    compat = CompatPage(AppState(load_catalog(use_overlay=False), settings))
    qtbot.addWidget(compat)
    compat.show_machine(AUDIT_MACHINES["old-470"](), "old-470", False)
    qtbot.waitUntil(lambda: not compat.busy(), timeout=10000)
    assert threads and all(t is not threading.main_thread() for t in threads)
    assert compat.headline.text().startswith("The one change that fixes the most")


def test_counts_agree_with_their_number_in_italian() -> None:
    from rigcheck.core import i18n
    from rigcheck.gui.pages.compat import _bucket_count

    try:
        i18n.set_language("it")
        assert _bucket_count("unknown", 1) == "1 sconosciuto"
        assert _bucket_count("unknown", 3) == "3 sconosciuti"  # was "3 sconosciuto"
    finally:
        i18n.set_language("en")
    assert _bucket_count("unknown", 3) == "3 unknown"
