"""The composition root: builds the application and wires the window to the core.

Collaborators (the probe function, settings, catalog, thread pool) are passed through constructors,
so tests build the same window with a fake probe, throw-away settings and a snapshot.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from PySide6.QtCore import QEventLoop, QSettings, QSize, QTimer
from PySide6.QtWidgets import QApplication

import rigcheck
from rigcheck.core.machine import load_machine
from rigcheck.gui import i18n, paint_yield
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.state import AppState
from rigcheck.gui.workers import report_exception, submit

if TYPE_CHECKING:
    from PySide6.QtGui import QIcon

    from rigcheck.core.catalog import Catalog
    from rigcheck.core.machine import Machine

APP_ID = "io.github.rigcheck.RigCheck"
SCREENSHOT_SIZE = QSize(1280, 800)
SETTLE_TIMEOUT_S = 30.0
#: how long a pool thread may hold the interpreter while the GUI thread waits for it (see create_window)
GUI_SWITCH_INTERVAL_S = 0.00005
#: after the first page is up, the modules the Monitor page needs (numpy, psutil, the sampler) are
#: imported on a pool thread, so that page opens without a pause (they cost ~250 ms cold), and every
#: language's strings are read (gui.i18n.preload), so that a language switch does not parse them
PRELOAD_DELAY_MS = 400
PRELOAD = ("numpy", "psutil", "rigcheck.core.monitor", "rigcheck.core.replay")


def _preload() -> str:
    """On a pool thread, once the first page has its data: the modules above, every language's strings,
    the patterns that recognise RigCheck's own stored sentences (a snapshot's probe notes), and the
    version (importlib.metadata and the package's metadata, ~50 ms: kept off the first frame)."""
    from importlib import import_module

    from rigcheck.core import known_text

    version = str(rigcheck.__version__)
    for name in PRELOAD:
        import_module(name)
    i18n.preload()
    known_text.preload()
    return version


def _preloaded(version: object) -> None:
    app = QApplication.instance()
    if app is not None and isinstance(version, str):
        app.setApplicationVersion(version)


def _app_icon() -> QIcon:
    from importlib.resources import as_file, files

    from PySide6.QtGui import QIcon

    icon = files("rigcheck.resources").joinpath("icons/rigcheck.svg")
    with as_file(icon) as path:
        return QIcon(str(path))


def application(argv: Sequence[str] = ()) -> QApplication:
    app = QApplication.instance() or QApplication([sys.argv[0], *argv])
    assert isinstance(app, QApplication)
    app.setApplicationName("RigCheck")
    app.setOrganizationName("RigCheck")
    app.setDesktopFileName(APP_ID)
    return app


def _set_app_icon() -> None:
    """The app's icon, once the first frame is painted: an SVG icon loads Qt's SVG plugin (~5-10 ms)."""
    app = QApplication.instance()
    if isinstance(app, QApplication) and app.windowIcon().isNull():
        app.setWindowIcon(_app_icon())


def _load_catalog() -> Catalog:
    from rigcheck.core.catalog import load_catalog  # on the worker that loads it (MainWindow)

    return load_catalog()


def _probe() -> Machine:
    from rigcheck.core.probe import probe_machine  # psutil and friends load only when probing

    return probe_machine()


def create_window(
    settings: QSettings | None = None,
    probe: Callable[[], Machine] = _probe,
    snapshot: Machine | None = None,
    snapshot_name: str = "",
    debug: bool = False,
    *,
    catalog: Callable[[], Catalog] = _load_catalog,
) -> MainWindow:
    """The window, shown by the caller at once: the catalog (``catalog()``) loads on the pool meanwhile,
    each page showing its title and "Loading the catalog…" until it is in and the page is built."""
    settings = settings or QSettings("RigCheck", "RigCheck")
    # A pool thread parsing a fleet or a recording holds the interpreter for up to the switch interval
    # (5 ms by default) each time the GUI thread wants it back, and one repaint calls into Python dozens
    # of times (paint events, layouts, size hints): 5 ms each made a 240 ms handler. 0.5 ms each keeps
    # the handlers short at a small cost to the worker (PySide gives the interpreter up on every call
    # into Qt, so a 5 ms handler could wait 50-80 ms while a comparison ran). 0.5 ms still left a repaint
    # blocked 20-40 ms behind Upgrade's comparison or the Overview's cards (benchmarks/gui_handlers.py,
    # which enters Python once more per event; the GUI thread's schedstat); 0.05 ms, 1-10 ms. Two
    # pure-Python threads sharing the interpreter run no slower at 0.05 ms than at 5 ms (a switch
    # happens only when a thread waits).
    sys.setswitchinterval(GUI_SWITCH_INTERVAL_S)
    chosen = str(settings.value("ui/language", "system"))
    i18n.set_language(i18n.system_language() if chosen == "system" else chosen)
    state = AppState(catalog, settings)
    window = MainWindow(state, probe, debug=debug)
    paint_yield.install(window)  # pool work waits at its next step while the window paints
    window.after_first_frame(_set_app_icon)
    if snapshot is not None:
        state.set_machine(snapshot, f"{i18n.tr('Snapshot')} {snapshot_name}", False)
    else:
        window.start_probe()
    window.when_settled(PRELOAD_DELAY_MS, lambda: submit(state.pool, _preload, _preloaded, _ignore))
    return window


def freeze_startup_objects() -> None:
    """Keep the objects alive at start-up (modules, the catalog, the window: ~60,000) out of every later
    garbage collection: a full collection walks them all, ~40-90 ms on the GUI thread at a random moment
    (a slider move, a repaint). Garbage first, so nothing dead is kept. Called by :func:`main` once the
    window is up; not by create_window, whose many windows in one test run would be kept forever."""
    gc.collect()
    gc.freeze()


def _ignore(_result: object) -> None:
    """A preload's outcome: an import that fails here fails again, with its message, where it is used."""


class ScreenshotError(RuntimeError):
    """A page failed to build or never finished its work: ``gui --screenshot`` exits non-zero."""


#: PNG text key naming the page a screenshot shows (the widget actually on screen when grabbed)
PAGE_KEY = "rigcheck-page"


def settle(window: MainWindow, timeout_s: float = SETTLE_TIMEOUT_S) -> bool:
    """Run the event loop until the probe, pool jobs and every page's deferred work are done.

    Debounce timers only fire when time passes, so this waits in short slices rather than spinning
    ``processEvents``. Returns False when work is still pending after ``timeout_s``.
    """
    app = QApplication.instance()
    assert app is not None
    window.load_catalog()  # at once: a window never shown (or not painted yet) has nothing to wait for
    deadline = time.monotonic() + timeout_s
    quiet = 0
    while time.monotonic() < deadline:
        window.state.pool.waitForDone(50)
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        probing = window.state.machine is None and not window.probe_failed
        if probing or window.busy() or window.state.pool.activeThreadCount():
            quiet = 0
            time.sleep(0.01)
            continue
        quiet += 1
        if quiet >= 3:  # three quiet passes in a row: layouts and queued signals have settled too
            return True
    return False


def screenshots(
    window: MainWindow, folder: Path, page: str | None = None, size: tuple[int, int] | None = None
) -> list[Path]:
    """Render each page (or one) at ``size`` (1280×800) to ``folder/<page>.png`` once its work has finished.

    Each PNG carries the key of the page actually on screen (text chunk ``rigcheck-page``), so a test
    can tell a wrong page from the right one. A page that fails to build or never settles raises
    :class:`ScreenshotError` after the others are written.
    """
    folder.mkdir(parents=True, exist_ok=True)
    window.setMinimumSize(0, 0)  # a requested size below the everyday minimum is still honoured
    window.resize(QSize(*size) if size else SCREENSHOT_SIZE)
    window.show()
    settle(window)
    written, problems = [], []
    for key in window.pages if page is None else [page]:
        window.show_page(key)
        if not settle(window):
            problems.append(f"{key}: still busy after {SETTLE_TIMEOUT_S:.0f} s")
        if key in window.page_errors:
            problems.append(f"{key}: {window.page_errors[key]}")
        shown = window.stack.currentWidget().objectName()
        image = window.grab().toImage()
        image.setText(PAGE_KEY, shown.removeprefix("page-"))
        path = folder / f"{key}.png"
        if not image.save(str(path), "PNG"):
            raise ScreenshotError(f"{path}: cannot write the PNG")
        written.append(path)
    if problems:
        raise ScreenshotError("; ".join(problems))
    return written


def _install_excepthook(debug: bool) -> None:
    """Exceptions escaping a slot: one line on stderr (the traceback only with --debug), not a crash."""

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, exc, tb)
            return
        report_exception(exc.with_traceback(tb), "internal error in the app", debug=debug)

    sys.excepthook = hook


def main(argv: Sequence[str] | None = None, *, machine: Path | None = None, page: str | None = None,
         screenshot: Path | None = None, size: tuple[int, int] | None = None,
         debug: bool = False, open_file: Path | None = None) -> int:  # fmt: skip
    if QApplication.instance() is None:
        # Qt aborts the process when no platform plugin loads: decide first, and say what is missing
        from rigcheck.gui.display import NoDisplayError, choose_platform

        try:
            forced = choose_platform(screenshot=screenshot is not None)
        except NoDisplayError as exc:
            sys.stderr.write(f"rigcheck: error: {exc}\n")
            return 2
        if forced is not None:
            os.environ["QT_QPA_PLATFORM"] = forced
    # Fractional scale factors as they are (Qt 6's default; the variable is how Qt reads it): said through
    # the environment, since Qt.HighDpiScaleFactorRoundingPolicy would create every Qt enum before the
    # first frame (~15-25 ms, see gui.startup); a user's own setting of the variable is kept
    os.environ.setdefault("QT_SCALE_FACTOR_ROUNDING_POLICY", "PassThrough")
    app = application(argv or ())
    _install_excepthook(debug)
    snapshot = load_machine(machine) if machine else None
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rigcheck-screenshot-") as scratch:
        settings = None
        if screenshot is not None:
            # Screenshots must not depend on (or change) the user's saved window state, nor leave
            # anything but the PNGs in the output folder.
            settings = QSettings(str(Path(scratch) / "settings.ini"), QSettings.Format.IniFormat)
        name = machine.name if machine else ""
        window = create_window(settings, snapshot=snapshot, snapshot_name=name, debug=debug)
        if page is not None and page not in window.pages:
            window.close()
            raise ValueError(f"unknown page {page!r} (pages: {', '.join(window.pages)})")
        if open_file is not None:
            window.load_path(open_file)  # as a drop: a recording replays on the Monitor, which it shows
        if screenshot is not None:
            try:
                for path in screenshots(window, screenshot, page, size):
                    print(path)
            except ScreenshotError as exc:
                sys.stderr.write(f"rigcheck: error: screenshot: {exc}\n")
                return 1
            finally:
                window.close()
            return 0
    if page is not None:
        window.show_page(page)
    window.show()
    app.aboutToQuit.connect(window.shutdown)  # a quit that skips closeEvent still joins every thread
    QTimer.singleShot(PRELOAD_DELAY_MS * 2, window, freeze_startup_objects)  # after the preload's imports
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(main())
