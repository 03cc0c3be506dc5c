"""The composition root: builds the application and wires the window to the core.

Collaborators (the probe function, settings, thread pool) are passed through constructors, so
tests build the same window with a fake probe and throw-away settings.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.resources import as_file, files

from PySide6.QtCore import QSettings
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from rigcheck import __version__
from rigcheck.core.probe import probe_machine
from rigcheck.gui.main_window import MainWindow

APP_ID = "io.github.rigcheck.RigCheck"


def _app_icon() -> QIcon:
    icon = files("rigcheck.resources").joinpath("icons/rigcheck.svg")
    with as_file(icon) as path:
        return QIcon(str(path))


def create_window(settings: QSettings | None = None) -> MainWindow:
    settings = settings or QSettings("RigCheck", "RigCheck")
    window = MainWindow(probe=probe_machine, settings=settings)
    window.start_probe()
    return window


def main(argv: Sequence[str] | None = None) -> int:
    app = QApplication.instance() or QApplication([sys.argv[0], *(argv or [])])
    assert isinstance(app, QApplication)
    app.setApplicationName("RigCheck")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("RigCheck")
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(_app_icon())
    window = create_window()
    window.show()
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(main())
