"""What the main window needs for its first frame, kept light: the page table with lazy factories, the
placeholders shown while the catalog loads, and the worker jobs that load it.

Nothing here touches the ``Qt`` namespace (``from PySide6.QtCore import Qt``): its first use creates
every one of its ~100 enums (~15-25 ms of CPU), which the page's own module pays once the first frame is
on screen. Item roles are therefore plain ints here (Qt's roles are fixed ints: ``UserRole`` is 0x100).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from rigcheck.gui.i18n import tr

if TYPE_CHECKING:
    from rigcheck.gui.main_window import MainWindow
    from rigcheck.gui.state import AppState

#: Qt.ItemDataRole.UserRole: the sidebar item's role holding its page key
KEY_ROLE = 0x0100


class Lazy:
    """A page factory that imports its module only when the page is first shown."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, state: AppState) -> QWidget:
        from importlib import import_module

        page: QWidget = getattr(import_module(self.module), self.name)(state)
        return page


def load_for_first_page(state: AppState, module: str | None) -> None:
    """On a worker, while the window shows its placeholders: the catalog, and the first page's module
    with what it imports (the estimate package, ~0.1-0.3 s together), so that building the page on the
    GUI thread is only making its widgets. Modules only: no Qt object is made here."""
    from importlib import import_module

    state.catalog  # noqa: B018 - loads it (AppState.catalog loads once, on the first thread to ask)
    if module is not None:
        import_module(module)


def warm_imports() -> None:
    """On a worker once the window is up: the snapshot decoders (written out on a second snapshot's
    opening otherwise, ~9 ms on the GUI thread), the Upgrade page's core modules, and every page's module
    with what it imports: a page first shown paid for its imports in that click's handler (Compatibility
    ~90 ms with its rules and ``packaging``, Fleet ~70, Fit and Monitor ~40, Upgrade ~30). Modules only,
    as for the first page (load_for_first_page): no Qt object is made here."""
    from importlib import import_module

    from rigcheck.core.machine import Machine
    from rigcheck.core.records import prepare

    prepare(Machine)
    for module in ("rigcheck.core.estimate.upgrade", "rigcheck.core.estimate.soldered"):
        import_module(module)
    for _key, _title, factory in page_table():
        if isinstance(factory, Lazy):
            import_module(factory.module)


def page_table() -> list[tuple[str, str, Callable[[AppState], QWidget]]]:
    return [
        ("overview", "Overview", Lazy("rigcheck.gui.pages.overview", "OverviewPage")),
        ("models", "Models", Lazy("rigcheck.gui.pages.models", "ModelsPage")),
        ("fit", "Fit", Lazy("rigcheck.gui.pages.fit", "FitPage")),
        ("compat", "Compatibility", Lazy("rigcheck.gui.pages.compat", "CompatPage")),
        ("monitor", "Monitor", Lazy("rigcheck.gui.pages.monitor", "MonitorPage")),
        ("upgrade", "Upgrade", Lazy("rigcheck.gui.pages.upgrade", "UpgradePage")),
        ("fleet", "Fleet", Lazy("rigcheck.gui.pages.fleet", "FleetPage")),
    ]


class LazyPages(Mapping[str, QWidget]):
    """The window's pages by key; looking one up builds it."""

    def __init__(self, window: MainWindow) -> None:
        self._window = window

    def __getitem__(self, key: str) -> QWidget:
        if key not in self._window._factories:
            raise KeyError(key)
        return self._window.page(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._window._factories)

    def __len__(self) -> int:
        return len(self._window._factories)

    def __contains__(self, key: object) -> bool:
        return key in self._window._factories  # without building the page, as Mapping's would


def fill_placeholder(placeholder: QWidget, title: str) -> None:
    """What a page's place shows until the page is built: its title, and that it is loading (as
    widgets.heading and widgets.muted draw them; our own fixed words, so no rich-text question)."""
    column = QVBoxLayout(placeholder)
    column.setContentsMargins(16, 12, 16, 16)
    heading = QLabel(tr(title))
    font = QFont(heading.font())
    font.setPointSizeF(font.pointSizeF() * 1.45)
    font.setBold(True)
    heading.setFont(font)
    heading.setAccessibleName(tr(title))
    column.addWidget(heading)
    loading = QLabel(tr("Loading the catalog…"))
    loading.setWordWrap(True)
    palette = loading.palette()
    palette.setColor(QPalette.ColorRole.WindowText, palette.color(QPalette.ColorRole.PlaceholderText))
    loading.setPalette(palette)
    column.addWidget(loading)
    column.addStretch(1)


def looks_like_snapshot(path: Path) -> bool:
    """Whether ``path`` opens as a machine rather than a model: a ``.json`` other than ``config.json``
    whose first bytes name a snapshot or report schema (a drop on the window, ``rigcheck gui FILE``)."""
    if path.suffix.lower() != ".json" or path.name == "config.json":
        return False
    if not path.is_file():  # opening a FIFO waits for a writer: never on the GUI thread
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return b'"rigcheck.machine/' in head or b'"rigcheck.report/' in head
