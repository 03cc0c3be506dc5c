"""The window shows before the catalog is loaded (issue 26, first show): each page's place says it is
loading until the catalog is in, then the page fills in; a language switch meanwhile and a screenshot
both still end on the complete page. The catalog loader is held on an event, so what is on screen while
it loads is checked without timing anything."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.machine import load_machine
from rigcheck.gui import i18n
from rigcheck.gui.app import PAGE_KEY, create_window, screenshots, settle
from rigcheck.gui.main_window import MainWindow

pytestmark = pytest.mark.gui
SNAPSHOT = Path(__file__).resolve().parent.parent / "fixtures" / "machines" / "rtx4090-64gb.json"


@pytest.fixture(autouse=True)
def english() -> Iterator[None]:
    i18n.set_language("en")
    yield
    i18n.set_language("en")


class HeldCatalog:
    """A catalog loader that waits until :meth:`release` (a worker blocked on it never outlives the test)."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.calls = 0

    def __call__(self) -> Catalog:
        self.calls += 1
        assert self.released.wait(30), "the test never released the catalog"
        return load_catalog(use_overlay=False)

    def release(self) -> None:
        self.released.set()


@pytest.fixture
def held() -> Iterator[HeldCatalog]:
    loader = HeldCatalog()
    yield loader
    loader.release()


def window_with(qtbot: QtBot, tmp_path: Path, catalog: Callable[[], Catalog]) -> MainWindow:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window = create_window(
        settings, snapshot=load_machine(SNAPSHOT), snapshot_name="rtx4090.json", catalog=catalog
    )
    qtbot.addWidget(window)
    window.resize(1280, 800)
    return window


def texts(widget: object) -> list[str]:
    return [label.text() for label in widget.findChildren(QLabel)]  # type: ignore[attr-defined]


def test_the_window_shows_its_pages_loading_and_each_fills_in_when_the_catalog_is_in(
    qtbot: QtBot, tmp_path: Path, held: HeldCatalog
) -> None:
    window = window_with(qtbot, tmp_path, held)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: held.calls == 1)  # loading on the pool, started once the window was painted
    shown = window.stack.currentWidget()
    assert shown.objectName() == "page-overview-loading"
    assert texts(shown) == ["Overview", "Loading the catalog…"]
    assert window.nav.count() == 7 and "rtx4090.json" in window.machine_label.text()
    window.show_page("upgrade")  # another page asked for while it loads: its own placeholder
    assert window.stack.currentWidget().objectName() == "page-upgrade-loading"
    assert window.busy()

    held.release()
    assert settle(window)
    upgrade = window.stack.currentWidget()
    assert upgrade.objectName() == "page-upgrade"
    assert any("RTX 4090" in text for text in texts(upgrade))  # filled in for the snapshot's machine
    window.show_page("overview")
    assert settle(window)
    overview = window.stack.currentWidget()
    assert overview.objectName() == "page-overview"
    assert len(overview.cards) >= 8  # type: ignore[attr-defined] - what this machine can run
    assert held.calls == 1  # loaded once, for every page


def test_a_language_switch_while_loading_shows_the_pages_in_the_new_language(
    qtbot: QtBot, tmp_path: Path, held: HeldCatalog
) -> None:
    window = window_with(qtbot, tmp_path, held)
    window.show()
    qtbot.waitUntil(lambda: held.calls == 1)
    window.set_language("it")
    assert texts(window.stack.currentWidget()) == ["Panoramica", i18n.tr("Loading the catalog…")]
    assert i18n.tr("Loading the catalog…") != "Loading the catalog…"
    assert window.nav.item(0).text() == "Panoramica"

    held.release()
    assert settle(window)
    overview = window.stack.currentWidget()
    assert overview.objectName() == "page-overview"
    shown = texts(overview)
    assert "Panoramica" in shown and "Overview" not in shown
    assert overview.cards  # type: ignore[attr-defined]


def test_a_page_asked_for_before_the_catalog_is_in_is_built_complete(qtbot: QtBot, tmp_path: Path) -> None:
    window = window_with(qtbot, tmp_path, lambda: load_catalog(use_overlay=False))
    window.show()
    window.show_page("fit")
    assert window.stack.currentWidget().objectName() == "page-fit-loading"
    fit = window.pages["fit"]  # waits for the catalog instead of handing out a placeholder
    assert fit.objectName() == "page-fit"
    assert window.stack.currentWidget() is fit and fit.isVisible()  # in its placeholder's place
    assert fit.quant.count() > 0  # type: ignore[attr-defined]
    assert "fit" in window.pages and "nowhere" not in window.pages


def test_a_screenshot_waits_for_the_catalog_and_renders_the_complete_page(
    qtbot: QtBot, tmp_path: Path
) -> None:
    held = HeldCatalog()
    window = window_with(qtbot, tmp_path, held)
    threading.Timer(0.3, held.release).start()  # the catalog comes in while the screenshot waits for it
    try:
        (path,) = screenshots(window, tmp_path / "shots", "models")
    finally:
        held.release()
        window.close()
    image = QImage(str(path))
    assert image.text(PAGE_KEY) == "models"  # the page itself, not "models-loading"
    assert window.pages["models"].objectName() == "page-models"


def test_a_catalog_that_cannot_load_is_said_on_the_page(qtbot: QtBot, tmp_path: Path) -> None:
    def broken() -> Catalog:
        raise InputError("catalog/gpus.toml", "line 3: not valid TOML")

    window = window_with(qtbot, tmp_path, broken)
    window.show()
    assert settle(window)
    shown = window.stack.currentWidget()
    assert shown.objectName() == "page-overview-failed"
    assert "not valid TOML" in window.page_errors["overview"]
    assert any("could not be opened" in text and "gpus.toml" in text for text in texts(shown))


def test_languages_read_ahead_on_a_worker_switch_the_window(qtbot: QtBot, tmp_path: Path) -> None:
    worker = threading.Thread(target=i18n.preload)  # as the app's start-up preload does, off the GUI thread
    worker.start()
    worker.join(30)
    window = window_with(qtbot, tmp_path, lambda: load_catalog(use_overlay=False))
    window.show()
    assert settle(window)
    window.set_language("it")
    assert window.nav.item(0).text() == "Panoramica"
    assert i18n.num(1234.5, 1) == "1.234,5"  # Italian decimals from Babel's data read ahead
