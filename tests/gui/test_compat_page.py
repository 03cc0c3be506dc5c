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
    return compat


def test_summary_and_root_causes_come_first(page: CompatPage) -> None:
    assert page.headline.text().startswith("The one change that fixes the most: update the NVIDIA driver")
    assert "R580" in page.headline.text()
    assert page.causes.text().startswith("• An old NVIDIA driver (470.256.02) blocks")


def test_not_installed_software_is_muted_not_failed(page: CompatPage) -> None:
    gpu = page.tree.topLevelItem(1)
    rows = [gpu.child(i) for i in range(gpu.childCount())]
    muted = [r for r in rows if r.data(0, Qt.ItemDataRole.UserRole) == "not-here"]
    assert muted and all(r.text(0) == "– Would not work here" for r in muted)
    grey = page.palette().color(QPalette.ColorRole.PlaceholderText)
    assert all(r.foreground(1).color() == grey for r in muted)
    buckets = [r.data(0, Qt.ItemDataRole.UserRole) for r in rows]
    assert buckets.index("problem") < buckets.index("not-here") < buckets.index("ok")  # broken first


def test_details_are_plain_text(page: CompatPage) -> None:
    gpu = page.tree.topLevelItem(1)
    page.tree.setCurrentItem(gpu.child(0))
    assert "<script" not in page.details.text()
    assert "ollama" in page.details.text()
