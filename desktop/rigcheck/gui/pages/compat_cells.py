"""The Compatibility tree's cells: rows as tall as their wrapped text at the column's width, painted
wrapping at words or, for a longer token, anywhere; a finding's subject in bold over its reason, and its
fix beneath in the link colour."""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPalette, QTextLayout, QTextOption
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QTreeWidget

#: the column that shows a finding: its subject in bold, the reason beneath, then the fix (Framework, What
#: and Fix are hidden columns, kept for the details line and the tooltips): one wide column reads in two
#: to four lines where five narrow ones took eight to twelve at 900-1024 px
FINDING = 3
#: the marker (column 0, UserRole) of the collapsed line that holds a GPU's "would not work here" rows
FOLDED = "not-here-group"
#: the bold line over a finding's reason (its framework and subject)
TITLE_ROLE = Qt.ItemDataRole.UserRole + 1
#: the line under a finding's reason: "Fix: …"
FIX_ROLE = Qt.ItemDataRole.UserRole + 2


def accent(palette: QPalette) -> QColor:
    """The link colour, lightened on a dark palette (Qt's default link blue is unreadable on dark grey)."""
    link = palette.color(QPalette.ColorRole.Link)
    if palette.color(QPalette.ColorRole.Base).lightness() < 128 and link.lightness() < 150:
        return QColor("#6ea8fe")
    return link


#: pixels between a finding's reason and its fix
FIX_GAP = 2


def line_height(tree: QTreeWidget) -> int:
    """A one-line row's height in ``tree`` (what a row with a Copy button is, too)."""
    return tree.fontMetrics().height() + 6


def wrap_option(
    alignment: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
) -> QTextOption:
    option = QTextOption(alignment)
    option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    return option


#: text_height's answers by (text, font, width): the column search and every row's size hint ask the same
#: questions again on each resize and language switch (a layout per cell per candidate width, ~0.1 s)
_heights: dict[tuple[str, str, int], int] = {}
HEIGHTS_KEPT = 50_000


def text_height(text: str, font: QFont, width: int) -> int:
    """How tall ``text`` is wrapped to ``width`` pixels as the cells paint it (words, else anywhere)."""
    key = (text, font.key(), width)
    known = _heights.get(key)
    if known is not None:
        return known
    if len(_heights) >= HEIGHTS_KEPT:
        _heights.clear()
    _heights[key] = height = _one_line_height(text, font, width) or _layout_height(text, font, width)
    return height


#: per font: its metrics and the height QTextLayout gives one line of plain Latin text in it
_one_line: dict[str, tuple[QFontMetricsF, int]] = {}


def _one_line_height(text: str, font: QFont, width: int) -> int | None:
    """The height of ``text`` when it plainly fits on one line of ``width`` (most Status, Framework and
    What cells): no layout needed. None when it may wrap or holds a glyph from a fallback font (✔, –)
    whose line could be taller: those are laid out."""
    if "\n" in text or (not text.isascii() and any(ord(c) > 0x24F for c in text)):
        return None
    known = _one_line.get(font.key())
    if known is None:
        known = _one_line[font.key()] = (QFontMetricsF(font), _layout_height("Mg", font, 1000))
    metrics, height = known
    # 2 px of slack: the layout's own advance may round differently from the metrics'
    return height if metrics.horizontalAdvance(text) + 2 < max(width, 16) else None


def _layout_height(text: str, font: QFont, width: int) -> int:
    layout = QTextLayout(text, font)
    layout.setTextOption(wrap_option())
    layout.beginLayout()
    height = 0.0
    while True:
        line = layout.createLine()
        if not line.isValid():
            break
        line.setLineWidth(max(width, 16))
        height += line.height()
    layout.endLayout()
    return math.ceil(height)


def _folded(index: QModelIndex | QPersistentModelIndex) -> bool:
    return index.siblingAtColumn(0).data(Qt.ItemDataRole.UserRole) == FOLDED


class WrappingDelegate(QStyledItemDelegate):
    """Rows as tall as their wrapped text at the column's current width, so Reason and Fix are read
    whole at 1024 px instead of ending in "…"; a finding's first line lines up across the columns."""

    def __init__(self, tree: QTreeWidget) -> None:
        super().__init__(tree)
        self.tree = tree
        self._kept: tuple[QFont, int, int] | None = None
        tree.installEventFilter(self)

    def sizeHint(  # noqa: N802 - Qt's name
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        tree_font, floor, margin = self._measures()
        text = index.data(Qt.ItemDataRole.DisplayRole)
        column = index.column()
        if not text or not index.parent().isValid() or _folded(index):  # a group's title: one line
            hint = super().sizeHint(option, index)
            return QSize(hint.width(), max(hint.height(), floor))
        font = index.data(Qt.ItemDataRole.FontRole)
        font = font if isinstance(font, QFont) else tree_font
        height = text_height(str(text), font, self._wrap_width(column, margin))
        if column == FINDING:
            room = self._wrap_width(column, margin)
            title, fix = index.data(TITLE_ROLE), index.data(FIX_ROLE)
            height += text_height(str(title), self._bold(font), room) if title else 0
            height += text_height(str(fix), font, room) + FIX_GAP if fix else 0
        # Reason and Fix wrap to their column, so their text has no width of its own to ask Qt for (it
        # costs a style pass per cell); the short columns keep Qt's width (Framework fits its content)
        width = (
            self.tree.header().sectionSize(column)
            if column in (3, 4)
            else super().sizeHint(option, index).width()
        )
        return QSize(width, max(floor, height + 6))

    @staticmethod
    def _bold(font: QFont) -> QFont:
        bold = QFont(font)
        bold.setBold(True)
        return bold

    def _measures(self) -> tuple[QFont, int, int]:
        """The tree's font, one text line's row height and the cell's text margins, kept until the font
        or style changes (asked for each cell on every layout: ~0.03 ms each, hundreds a layout)."""
        if self._kept is None:
            margin = 2 * (self.tree.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 1) + 2
            self._kept = (self.tree.font(), line_height(self.tree), margin)
        return self._kept

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._kept = None
        return False

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        """As Qt paints a cell, but the text wraps at word boundaries or, for a token longer than the
        column (a pip command, "attn_implementation='sdpa'"), anywhere: never past the cell's edge."""
        if not index.parent().isValid() or not index.data(Qt.ItemDataRole.DisplayRole) or _folded(index):
            super().paint(painter, option, index)
            return
        cell = QStyleOptionViewItem(option)
        self.initStyleOption(cell, index)
        text, cell.text = cell.text, ""
        style = self.tree.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, cell, painter, self.tree)
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 1
        rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, cell, self.tree)
        selected = bool(cell.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        painter.save()
        painter.setPen(cell.palette.color(role))
        box = QRectF(rect.adjusted(margin, 0, -margin, 0))
        option = wrap_option(cell.displayAlignment)
        room = max(int(box.width()), 16)
        finding = index.column() == FINDING
        title = index.data(TITLE_ROLE) if finding else None
        if title:  # the finding's subject in bold, its reason beneath in the row's colour
            bold = self._bold(cell.font)
            painter.setFont(bold)
            painter.drawText(box, str(title), option)
            box.setTop(box.top() + text_height(str(title), bold, room))
        painter.setFont(cell.font)
        painter.drawText(box, text, option)
        fix = index.data(FIX_ROLE) if finding else None
        if fix:  # then what to do, in the link colour: the action stands apart from the explanation
            box.setTop(box.top() + text_height(text, cell.font, room) + FIX_GAP)
            muted_row = index.siblingAtColumn(0).data(Qt.ItemDataRole.UserRole) in ("not-here", "limited")
            if not selected and not muted_row:  # a muted row stays muted, its fix too
                painter.setPen(accent(self.tree.palette()))
            painter.drawText(box, str(fix), option)
        painter.restore()

    def text_width(self, column: int) -> int:
        """The width text wraps to in ``column``: the section less the cell's margins and indentation."""
        return self._wrap_width(column, self._measures()[2])

    def _wrap_width(self, column: int, margin: int) -> int:
        width = self.tree.header().sectionSize(column) - margin
        if column == 0:
            width -= self.tree.indentation()
        return max(width, 16)
