"""The app by keyboard alone: tables are one Tab stop with arrows inside, cards show focus, the context
slider moves with the arrows, Enter in the Models search opens the only match, no mnemonic twice."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QTableView, QWidget
from pytestqt.qtbot import QtBot
from test_fleet_page import write_fleet

from fakes.windows import answered, snapshot_window
from rigcheck.gui import i18n
from rigcheck.gui.main_window import MainWindow

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path) -> MainWindow:
    i18n.set_language("en")
    win = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    win.resize(1280, 800)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.close()
    i18n.set_language("en")


def _tab_leaves(qtbot: QtBot, table: QTableView) -> None:
    model = table.model()  # a QTableWidget or a view over a model (the Fleet page's)
    assert model.rowCount() > 1 and model.columnCount() > 1
    table.setFocus()
    table.setCurrentIndex(model.index(0, 0))
    qtbot.keyClick(table, Qt.Key.Key_Down)
    assert table.currentIndex().row() == 1, "the arrows move inside the table"
    qtbot.keyClick(table, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is not table, "Tab goes to the next control, not the next cell"


def test_tables_are_one_tab_stop(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    window.show_page("fit")
    answered(qtbot, window)
    _tab_leaves(qtbot, window.pages["fit"].ladder)  # type: ignore[attr-defined]
    window.show_page("upgrade")
    qtbot.waitUntil(lambda: not window.pages["upgrade"].busy(), timeout=20000)  # type: ignore[attr-defined]
    _tab_leaves(qtbot, window.pages["upgrade"].catalog_list)  # type: ignore[attr-defined]
    window.show_page("fleet")
    fleet = window.pages["fleet"]
    folder = tmp_path / "audits"
    folder.mkdir()
    write_fleet(folder)
    fleet.open_folder(folder)  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: fleet.fleet is not None, timeout=10000)  # type: ignore[attr-defined]
    _tab_leaves(qtbot, fleet.table)  # type: ignore[attr-defined]


def test_a_focused_overview_card_looks_focused(qtbot: QtBot, window: MainWindow) -> None:
    window.show_page("overview")
    answered(qtbot, window)
    card = window.pages["overview"].cards[0]  # type: ignore[attr-defined]
    before = card.grab().toImage()
    card.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(card.hasFocus, timeout=2000)
    after = card.grab().toImage()
    assert before != after, "focus changes how the card looks"
    highlight = card.palette().color(card.palette().ColorRole.Highlight)
    assert after.pixelColor(1, after.height() // 2) == highlight


def test_context_slider_moves_with_the_arrow_keys(qtbot: QtBot, window: MainWindow) -> None:
    window.show_page("fit")
    fit = window.pages["fit"]
    fit.context_value.setValue(8192)  # type: ignore[attr-defined]
    fit.context.setFocus()  # type: ignore[attr-defined]
    qtbot.keyClick(fit.context, Qt.Key.Key_Right)  # type: ignore[attr-defined]
    right = fit.context_value.value()  # type: ignore[attr-defined]
    assert 8192 < right <= 8192 * 1.3
    qtbot.waitUntil(lambda: not fit.busy(), timeout=2000)  # type: ignore[attr-defined]
    assert fit.result.estimate.context == right  # type: ignore[attr-defined]
    qtbot.keyClick(fit.context, Qt.Key.Key_PageUp)  # type: ignore[attr-defined]
    assert fit.context_value.value() >= right * 1.8  # type: ignore[attr-defined]
    qtbot.keyClick(fit.context, Qt.Key.Key_Left)  # type: ignore[attr-defined]
    assert fit.context_value.value() < right * 2.2  # type: ignore[attr-defined]


def test_enter_in_the_models_search_opens_the_only_match(qtbot: QtBot, window: MainWindow) -> None:
    window.show_page("models")
    models = window.pages["models"]
    models.search.setText("gpt-oss-120b")  # type: ignore[attr-defined]
    assert models.proxy.rowCount() == 1  # type: ignore[attr-defined]
    qtbot.keyClick(models.search, Qt.Key.Key_Return)  # type: ignore[attr-defined]
    assert window.stack.currentWidget().objectName() == "page-fit"
    assert window.pages["fit"].model.name == models.proxy.spec(0).name  # type: ignore[attr-defined]
    window.show_page("models")
    models.search.setText("qwen")  # type: ignore[attr-defined]
    qtbot.keyClick(models.search, Qt.Key.Key_Return)  # type: ignore[attr-defined]
    assert models.table.hasFocus() and models.table.selectionModel().selectedRows()  # type: ignore[attr-defined]


def _mnemonics(widgets: list[QWidget]) -> list[str]:
    found = []
    for widget in widgets:
        if not widget.isVisibleTo(widget.window()):
            continue
        text = widget.text() if isinstance(widget, QAbstractButton | QLabel) else ""
        if isinstance(widget, QLabel) and widget.buddy() is None:
            continue
        found += [m.lower() for m in re.findall(r"(?<!&)&([^&\s])", text)]
    return found


@pytest.mark.parametrize("language", ["en", "it"])
def test_no_mnemonic_is_bound_twice(qtbot: QtBot, window: MainWindow, language: str) -> None:
    window.set_language(language)
    menus = [m.lower() for a in window.menuBar().actions() for m in re.findall(r"&(\w)", a.text())]
    for key in window.pages:
        window.show_page(key)
        page = window.pages[key]
        keys = menus + _mnemonics(page.findChildren(QWidget))
        twice = sorted({k for k in keys if keys.count(k) > 1})
        assert not twice, f"{key} ({language}): Alt+{', Alt+'.join(twice)} bound twice"
