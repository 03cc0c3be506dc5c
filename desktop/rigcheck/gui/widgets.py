"""Small widgets the pages share: cards, headings, verdict badges, a flow of cards."""

from __future__ import annotations

import html
from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHeaderView,
    QLabel,
    QLayout,
    QLayoutItem,
    QMessageBox,
    QScrollArea,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rigcheck.gui.i18n import tr

# re-exported (the explicit form mypy --strict reads): the pages take them from here
from rigcheck.gui.markup import breakable as breakable  # noqa: PLC0414
from rigcheck.gui.markup import esc as esc  # noqa: PLC0414

#: verdict -> (glyph, words, colour); the glyph and words carry the meaning, the colour only helps
VERDICTS = {
    "fits": ("✔", "Runs on the GPU", "#2e9d57"),
    "fits_with_offload": ("◐", "Runs with offload to RAM", "#c98a12"),
    "does_not_fit": ("✘", "Does not fit", "#c8433a"),
}
#: PSU budget verdict -> (glyph, words, colour), as for VERDICTS
POWER_VERDICTS = {
    "ok": ("✔", "Enough power", "#2e9d57"),
    "tight": ("▲", "Tight", "#c98a12"),
    "insufficient": ("✘", "Not enough power", "#c8433a"),
    "unknown": ("?", "Power budget unknown", "#7a7f87"),
}
STATUS = {
    "ok": ("✔", "OK", "#2e9d57"),
    "warn": ("▲", "Warning", "#c98a12"),
    "fail": ("✘", "Fails", "#c8433a"),
    "unknown": ("?", "Unknown", "#7a7f87"),
}


def scroll_page(page: QWidget) -> QWidget:
    """Give ``page`` a frameless vertical scroll area; returns the widget to lay the content on."""
    scroll = QScrollArea(page)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QScrollArea.Shape.NoFrame)
    outer = QVBoxLayout(page)
    outer.setContentsMargins(0, 0, 0, 0)
    outer.addWidget(scroll)
    content = QWidget()
    scroll.setWidget(content)
    return content


def off_screen(page: QWidget) -> bool:
    """Whether ``page`` is in a shown window but not on screen (another page is): work for what it shows
    (a new machine's answers) can wait until it is shown, instead of lengthening the handlers of the page
    the user is looking at."""
    return page.window().isVisible() and not page.isVisible()


def tooltip(text: str) -> str:
    """A tooltip showing ``text`` exactly (Qt renders a tooltip as rich text if it looks like HTML)."""
    return f"<p style='white-space:pre-wrap'>{html.escape(text, quote=True)}</p>" if text else ""


def warn(parent: QWidget, title: str, text: str) -> None:
    """A warning dialog that shows ``text`` as the characters it is (QMessageBox.warning renders text
    that looks like HTML as HTML: a snapshot's schema string or a GGUF key could style or link it)."""
    box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.exec()
    box.deleteLater()


def plain(text: str = "") -> QLabel:
    """A label that shows ``text`` as the characters it is, never as rich text."""
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(breakable(text))
    return label


def heading(text: str, scale: float = 1.45) -> QLabel:
    label = plain(text)
    font = QFont(label.font())
    font.setPointSizeF(font.pointSizeF() * scale)
    font.setBold(True)
    label.setFont(font)
    label.setAccessibleName(text)
    return label


def subheading(text: str) -> QLabel:
    return heading(text, 1.12)


def muted(text: str, *, rich: bool = False) -> QLabel:
    """Secondary text; plain unless ``rich`` (then every foreign value in it must go through esc)."""
    label = QLabel(text) if rich else plain(text)
    label.setWordWrap(True)
    palette = label.palette()
    palette.setColor(QPalette.ColorRole.WindowText, palette.color(QPalette.ColorRole.PlaceholderText))
    label.setPalette(palette)
    return label


def verdict_label(verdict: str) -> QLabel:
    glyph, words, colour = VERDICTS[verdict]
    label = QLabel(f"{glyph} {tr(words)}")
    label.setStyleSheet(
        f"QLabel {{ color: white; background: {colour}; border-radius: 4px; padding: 2px 8px; "
        "font-weight: bold; }"
    )
    label.setAccessibleName(tr(words))
    return label


class Card(QFrame):
    """A raised panel that follows the palette (light or dark)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        palette = self.palette()
        palette.setColor(QPalette.ColorRole.Window, palette.color(QPalette.ColorRole.Base))
        self.setPalette(palette)
        self.body = QVBoxLayout(self)
        self.body.setContentsMargins(14, 12, 14, 12)
        self.body.setSpacing(6)


def blend(colour: str, alpha: int) -> QColor:
    c = QColor(colour)
    c.setAlpha(alpha)
    return c


@contextmanager
def one_layout_pass(widget: QWidget) -> Iterator[None]:
    """Show and hide several of ``widget``'s children for the price of one layout of ``widget``.

    In a shown window, every child made visible activates its parent's layout on the spot (Qt's
    ``QWidget::setVisible``): switching the Monitor between replay and live showed eight widgets, so the
    page was laid out eight times in one handler (~4 ms each once every page is built). The layout is
    off while the block runs and laid out once when it ends."""
    layout = widget.layout()
    if layout is None or not layout.isEnabled():
        yield
        return
    layout.setEnabled(False)
    try:
        yield
    finally:
        layout.setEnabled(True)
        layout.activate()


@contextmanager
def sized_once(header: QHeaderView) -> Iterator[None]:
    """Fill a table whose ``header`` sizes sections to their contents for the price of one sizing.

    A ResizeToContents header measures every cell of a section again each time one cell changes: the Fit
    page's 48 format cells cost ~10 ms on the GUI thread, one at a time, against ~1 ms measured once.
    The sections are Fixed while the block runs and sized to their contents when it ends."""
    modes = [header.sectionResizeMode(i) for i in range(header.count())]
    sized = QHeaderView.ResizeMode.ResizeToContents
    if sized not in modes:
        yield
        return
    header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    try:
        yield
    finally:
        if len(set(modes)) == 1:
            header.setSectionResizeMode(sized)  # the header's own mode, for sections added later
        else:
            for section, mode in enumerate(modes):
                header.setSectionResizeMode(section, mode)


class _ItemsLayout(QLayout):
    """A layout that keeps its children in a list: what every custom QLayout must implement."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        #: width -> height, until the layout is invalidated: a page's layout asks the same width again and
        #: again while it settles (309 measures of the Overview's tiles in one machine switch)
        self._heights: dict[int, int] = {}

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 - Qt's name
        self._items.append(item)
        self._heights.clear()

    def invalidate(self) -> None:
        """A child was added, shown, hidden or changed its size hint (Qt calls this): measure again."""
        self._heights.clear()
        super().invalidate()

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt's name
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt's name
        self._heights.clear()
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt's name
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        height = self._heights.get(width)
        if height is None:
            height = self._heights[width] = self._arrange(QRect(0, 0, width, 0), move=False)
        return height

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802 - Qt's name
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    def _arrange(self, rect: QRect, *, move: bool) -> int:
        """Place the children in ``rect`` (only measure unless ``move``); the height they take."""
        raise NotImplementedError


class SortItem(QTableWidgetItem):
    """A table cell that sorts by its key (numbers as numbers, unknown last), not by its text."""

    def __init__(self, text: str, key: tuple[object, ...]) -> None:
        super().__init__(text)
        self.key = key

    def __lt__(self, other: QTableWidgetItem) -> bool:
        if isinstance(other, SortItem):
            return self.key < other.key  # type: ignore[operator]
        return super().__lt__(other)


class FlowLayout(_ItemsLayout):
    """Lays children out left to right, wrapping to new rows (Qt's flow layout example, in Python)."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 12) -> None:
        super().__init__(parent)
        self._spacing = spacing

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802 - Qt's name
        return Qt.Orientation(0)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self.minimumSize()

    def minimumSize(self) -> QSize:  # noqa: N802 - Qt's name
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        return size

    def _arrange(self, rect: QRect, *, move: bool) -> int:
        x, y, row_height = rect.x(), rect.y(), 0
        for item in self._items:
            hint = item.sizeHint()
            if x + hint.width() > rect.right() and row_height > 0:
                x, y, row_height = rect.x(), y + row_height + self._spacing, 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + self._spacing
            row_height = max(row_height, hint.height())
        return y + row_height - rect.y()


class TileLayout(_ItemsLayout):
    """Equal-width tiles in as many columns as fit (each at least ``min_width``), rows of equal height.

    The Overview's cards: at 1024 px three or four sit side by side, at 1920 px twice as many; every
    tile in a row is as tall as the tallest, so cards line up instead of leaving ragged dead space.
    """

    def __init__(self, parent: QWidget | None = None, min_width: int = 200, spacing: int = 12) -> None:
        super().__init__(parent)
        self._min_width = min_width
        self._spacing = spacing
        self.setContentsMargins(0, 0, 0, 0)

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802 - Qt's name
        return Qt.Orientation.Horizontal

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(self._min_width, self.heightForWidth(self._min_width))

    def minimumSize(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(self._min_width, 0)

    def columns(self, width: int) -> int:
        """How many tiles fit side by side in ``width`` pixels."""
        return max(1, (width + self._spacing) // (self._min_width + self._spacing))

    def _arrange(self, rect: QRect, *, move: bool) -> int:
        items = [i for i in self._items if not i.isEmpty()]
        columns = min(self.columns(rect.width()), max(len(items), 1))
        # as few columns as give the same number of rows: 16 cards where 5 fit are 4 full rows of 4
        # (wider tiles), not 3 rows of 5 and one card alone
        rows = -(-len(items) // columns)
        columns = max(1, -(-len(items) // max(rows, 1)))
        tile = max(1, (rect.width() - self._spacing * (columns - 1)) // columns)
        y = rect.y()
        for start in range(0, len(items), columns):
            row = items[start : start + columns]
            height = max(
                i.heightForWidth(tile) if i.hasHeightForWidth() else i.sizeHint().height() for i in row
            )
            height = max(height, *(i.minimumSize().height() for i in row))
            if move:
                for n, item in enumerate(row):
                    item.setGeometry(QRect(rect.x() + n * (tile + self._spacing), y, tile, height))
            y += height + self._spacing
        return max(0, y - self._spacing - rect.y())
