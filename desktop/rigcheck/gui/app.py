"""The composition root: builds the application and wires the window to the core.

Collaborators (the probe function, settings, catalog, thread pool) are passed through constructors,
so tests build the same window with a fake probe, throw-away settings and a snapshot.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from importlib.resources import as_file, files
from pathlib import Path

from PySide6.QtCore import QSettings, QSize, Qt
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

import rigcheck
from rigcheck.core.catalog import load_catalog
from rigcheck.core.machine import Machine, load_machine
from rigcheck.gui import i18n
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.state import AppState

APP_ID = "io.github.rigcheck.RigCheck"
SCREENSHOT_SIZE = QSize(1280, 800)


def _app_icon() -> QIcon:
    icon = files("rigcheck.resources").joinpath("icons/rigcheck.svg")
    with as_file(icon) as path:
        return QIcon(str(path))


def application(argv: Sequence[str] = ()) -> QApplication:
    app = QApplication.instance() or QApplication([sys.argv[0], *argv])
    assert isinstance(app, QApplication)
    app.setApplicationName("RigCheck")
    app.setApplicationVersion(rigcheck.__version__)
    app.setOrganizationName("RigCheck")
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(_app_icon())
    return app


def _probe() -> Machine:
    from rigcheck.core.probe import probe_machine  # psutil and friends load only when probing

    return probe_machine()


def create_window(
    settings: QSettings | None = None,
    probe: Callable[[], Machine] = _probe,
    snapshot: Machine | None = None,
    snapshot_name: str = "",
) -> MainWindow:
    settings = settings or QSettings("RigCheck", "RigCheck")
    chosen = str(settings.value("ui/language", "system"))
    i18n.set_language(i18n.system_language() if chosen == "system" else chosen)
    state = AppState(load_catalog(), settings)
    window = MainWindow(state, probe)
    if snapshot is not None:
        state.set_machine(snapshot, f"{i18n.tr('Snapshot')} {snapshot_name}", False)
    else:
        window.start_probe()
    return window


def screenshots(window: MainWindow, folder: Path, page: str | None = None) -> list[Path]:
    """Render each page (or one) at 1280×800 to ``folder/<page>.png``, after pending work finished."""
    app = QApplication.instance()
    assert app is not None
    folder.mkdir(parents=True, exist_ok=True)
    window.resize(SCREENSHOT_SIZE)
    window.show()
    window.state.pool.waitForDone(30_000)
    app.processEvents()
    written = []
    for key in window.pages if page is None else [page]:
        window.show_page(key)
        for _ in range(3):  # let layouts and deferred recomputations settle
            window.state.pool.waitForDone(30_000)
            app.processEvents()
        path = folder / f"{key}.png"
        window.grab().save(str(path))
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None, *, machine: Path | None = None, page: str | None = None,
         screenshot: Path | None = None) -> int:  # fmt: skip
    QApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    app = application(argv or ())
    snapshot = load_machine(machine) if machine else None
    settings = None
    if screenshot is not None:
        # Screenshots must not depend on (or change) the user's saved window state.
        settings = QSettings(str(screenshot / ".rigcheck-screenshot.ini"), QSettings.Format.IniFormat)
        settings.clear()
    window = create_window(settings, snapshot=snapshot, snapshot_name=machine.name if machine else "")
    if page is not None and page not in window.pages:
        raise ValueError(f"unknown page {page!r} (pages: {', '.join(window.pages)})")
    if screenshot is not None:
        for path in screenshots(window, screenshot, page):
            print(path)
        (screenshot / ".rigcheck-screenshot.ini").unlink(missing_ok=True)
        window.close()
        return 0
    if page is not None:
        window.show_page(page)
    window.show()
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(main())
