"""Compatibility: root causes first, then the findings for the selected machine, grouped by GPU.

A coloured counts header (problems / OK / not applicable, as Mission Center sums a device up) opens the
page; the summary names the one change that fixes the most; the root-cause list groups the findings that
share a cause. In the tree, installed-and-broken comes first, then unknowns, then what works; software that
is not installed and would not work here (muted grey, never a red "Fails") is folded into one collapsed
line per GPU ("– 8 would not work here"), opened with a click. The recommended PyTorch wheel sits
on top with its pip command; every finding's fix (or command) is copied with one click on its Copy button.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRectF,
    QSize,
    Qt,
    QTimer,
    Slot,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QFontMetricsF,
    QGuiApplication,
    QPainter,
    QPalette,
    QResizeEvent,
    QShowEvent,
    QTextLayout,
    QTextOption,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rigcheck.core.compat import (
    BUCKETS,
    DISPLAY_RANK,
    Finding,
    Summary,
    TorchWheel,
    bucket,
    check_compat,
    gpu_groups,
    recommend_torch,
    summarize,
)
from rigcheck.core.machine import Machine
from rigcheck.core.units import index_ranges
from rigcheck.gui.i18n import tr
from rigcheck.gui.state import AppState
from rigcheck.gui.widgets import STATUS, Card, esc, heading, muted, subheading, tooltip
from rigcheck.gui.workers import Job, submit

COLUMNS = ("Status", "Framework", "What", "Reason", "Fix", "")
#: the column that shows a finding: its subject in bold, the reason beneath, then the fix (Framework, What
#: and Fix are hidden columns, kept for the details line and the tooltips): one wide column reads in two
#: to four lines where five narrow ones took eight to twelve at 900-1024 px
FINDING = 3
FIX = 4
#: root causes listed above the tree (the rest are in the tree)
SHOWN_CAUSES = 3
#: findings added to the tree per event-loop turn (each with its Copy button: ~1 ms a row), so applying
#: a big machine's list never holds the GUI thread past ~50 ms (issue 26 #5)
ROWS_PER_TURN = 12
#: the order of a GPU's rows: what needs doing first, what works next; "not-here" is folded away below them
ROW_ORDER = ("problem", "unknown", "limited", "ok")
#: the marker (column 0, UserRole) of the collapsed line that holds a GPU's "would not work here" rows
FOLDED = "not-here-group"
#: the counts header: (buckets counted, words, colour); not-applicable is muted, never red
HEADER_COUNTS = (
    (("problem",), ("1 problem", "{n} problems"), "#c8433a"),
    (("unknown",), ("1 unknown", "{n} unknown"), "#c98a12"),
    (("ok", "limited"), ("1 OK", "{n} OK"), "#2e9d57"),
    (("not-here",), ("1 not applicable", "{n} not applicable"), "#7a7f87"),
)
#: what the counts line calls each display bucket
BUCKET_WORDS = {
    "problem": "need attention",
    "unknown": "unknown",
    "not-here": "would not work here",
    "limited": "would work with limits",
    "ok": "OK",
}


def _bucket_count(bucket: str, n: int) -> str:
    """'3 unknown': Italian agrees the adjective with the count ('1 sconosciuto', '3 sconosciuti')."""
    if bucket == "unknown" and n != 1:
        return tr("{n} unknown", n=n)
    return f"{n} {tr(BUCKET_WORDS[bucket])}"


class CompatPage(QWidget):
    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        self.findings: tuple[Finding, ...] = ()
        #: the PyTorch wheel the card above the tree recommends (its reason is not repeated in a row)
        self._wheel: TorchWheel | None = None
        page = QVBoxLayout(self)
        page.setContentsMargins(16, 12, 16, 16)
        page.setSpacing(10)
        page.addWidget(heading(tr("Compatibility")))
        #: the counts header, big and coloured: "2 problems · 5 OK · 8 not applicable"
        self.counts = QLabel()
        self.counts.setTextFormat(Qt.TextFormat.RichText)
        self.counts.setWordWrap(True)
        self.counts.setAccessibleName(tr("Compatibility counts"))
        counts_font = QFont(self.counts.font())
        counts_font.setPointSizeF(counts_font.pointSizeF() * 1.35)
        counts_font.setBold(True)
        self.counts.setFont(counts_font)
        page.addWidget(self.counts)
        self.summary = muted("")
        page.addWidget(self.summary)
        causes = Card()
        self.headline = QLabel()
        self.headline.setWordWrap(True)
        self.headline.setTextFormat(Qt.TextFormat.PlainText)
        self.headline.setAccessibleName(tr("The change that fixes the most"))
        bold = QFont(self.headline.font())
        bold.setBold(True)
        self.headline.setFont(bold)
        causes.body.addWidget(self.headline)
        self.causes = QLabel()
        self.causes.setWordWrap(True)
        self.causes.setTextFormat(Qt.TextFormat.PlainText)
        self.causes.setAccessibleName(tr("Root causes"))
        causes.body.addWidget(self.causes)
        page.addWidget(causes)

        torch = Card()
        torch.body.addWidget(subheading(tr("Recommended PyTorch")))
        self.torch_reason = QLabel()
        self.torch_reason.setWordWrap(True)
        torch.body.addWidget(self.torch_reason)
        row = QHBoxLayout()
        self.torch_command = QLineEdit()
        self.torch_command.setReadOnly(True)
        self.torch_command.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.torch_command.setAccessibleName(tr("Recommended pip command"))
        self.copy_torch = QPushButton(tr("Copy"))
        self.copy_torch.setAccessibleName(tr("Copy the pip command"))
        self.copy_torch.clicked.connect(lambda: self.copy(self.torch_command.text()))
        row.addWidget(self.torch_command, 1)
        row.addWidget(self.copy_torch)
        torch.body.addLayout(row)
        page.addWidget(torch)

        self.tree = QTreeWidget()
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels([tr(c) if c else "" for c in COLUMNS])
        self.tree.headerItem().setText(FINDING, tr("Finding"))
        for hidden in (1, 2, FIX):  # drawn in the Finding cell, which gets their width (shorter rows)
            self.tree.setColumnHidden(hidden, True)
        self.tree.setAccessibleName(tr("Compatibility findings"))
        self.tree.setAlternatingRowColors(True)
        self.tree.setWordWrap(True)
        self.tree.setUniformRowHeights(False)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.tree.setItemDelegate(WrappingDelegate(self.tree))
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(5, QHeaderView.ResizeMode.Fixed)
        header.setStretchLastSection(False)
        self.tree.setIndentation(14)
        header.resizeSection(0, 140)
        header.resizeSection(2, 120)
        header.resizeSection(5, 60)
        # wrapped rows are as tall as their text at the columns' new widths
        # (once per event-loop turn, however many sections moved: a full layout asks every row its height)
        header.sectionResized.connect(lambda *_: self.tree.scheduleDelayedItemsLayout())
        page.addWidget(self.tree, 1)
        self.details = QLabel()
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setAccessibleName(tr("Selected finding"))
        page.addWidget(self.details)
        self.tree.currentItemChanged.connect(self._show_details)
        self.copied = muted("")
        page.addWidget(self.copied)
        # shown once they say something: empty, with the layout's spacing, they left ~60 px blank under the
        # findings at 1024×700
        self.details.hide()
        self.copied.hide()
        self._job: Job | None = None
        self._generation = 0
        #: the tree's rows and column widths are built a step per event-loop turn (see _show)
        self._steps: Iterator[None] | None = None
        #: a result that arrived while the page was hidden: applied when it is first shown
        self._pending: Callable[[], None] | None = None
        #: a resize re-fits the columns once the window stops changing size, not on every frame
        self._refit = QTimer(self)
        self._refit.setSingleShot(True)
        self._refit.setInterval(60)
        self._refit.timeout.connect(self._fit_columns_now)
        state.machine_changed.connect(self.show_machine)
        if state.machine is not None:
            self.show_machine(state.machine, state.machine_label, state.is_live)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        """Status and What grow with the window (within bounds); Reason and Fix share the rest."""
        super().resizeEvent(event)
        self._refit.start()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        """A result that came while another page was on screen is applied now, a step at a time."""
        super().showEvent(event)
        pending, self._pending = self._pending, None
        if pending is not None:
            pending()

    def _fit_columns_now(self) -> None:
        """The column search after a resize, a candidate width per event-loop turn (as in _show)."""
        if self._steps is not None:  # rows still being added (their own search follows) or a search
            self._refit.start()  # under way at an older width: once it is done
            return
        self._steps = self._fit_columns()
        self._step()

    def _fit_columns(self) -> Iterator[None]:
        """Status as wide as its longest words on one line ("○ Would work, not installed"), within 26% of
        the tree; the finding (subject, reason and fix, one beneath the other) takes the rest. A generator,
        as _show spreads the build over event-loop turns."""
        width, header = self.tree.width(), self.tree.header()
        metrics = self.tree.fontMetrics()
        words = [f"{glyph} {tr(word)}" for glyph, word, _colour in STATUS.values()]
        words += [f"○ {tr(w)}" for w in ("Would work, with limits", "Would work, not installed")]
        words.append(f"– {tr('Would not work here')}")
        status = max(metrics.horizontalAdvance(w) for w in words) + 2 * self.tree.indentation() + 24
        header.resizeSection(0, max(120, min(status, width * 26 // 100)))
        yield

    def retranslate(self) -> None:
        """After a language switch: the findings again, in the new language."""
        if self.state.machine is not None:
            self.show_machine(self.state.machine, self.state.machine_label, self.state.is_live)

    def busy(self) -> bool:
        """The findings are still being worked out on the pool, or their rows are still being added."""
        return self._job is not None or self._steps is not None or self._refit.isActive()

    @Slot(object, str, bool)
    def show_machine(self, machine: Machine, label: str, _is_live: bool) -> None:
        """Work the findings out on the pool (0.2–0.6 s on a big machine) and show them when ready;
        a newer machine asked for meanwhile wins."""
        catalog = self.state.catalog
        self._generation += 1
        generation = self._generation
        self._pending = None
        if self._steps is not None:  # rows of an older machine still being added: dropped
            self._steps = None
            self.tree.setUpdatesEnabled(True)

        def work() -> tuple[list[Finding], TorchWheel | None, Summary]:
            findings = check_compat(machine, catalog)
            return findings, recommend_torch(machine, catalog), summarize(machine, catalog, findings)

        def done(result: tuple[list[Finding], TorchWheel | None, Summary]) -> None:
            if generation == self._generation:
                self._job = None
                apply = lambda: self._show(machine, label, *result)  # noqa: E731
                # a page in a shown window but not on screen (another page is) waits until it is shown
                if self.window().isVisible() and not self.isVisible():
                    self._pending = apply
                else:
                    apply()

        def failed(message: str) -> None:
            if generation == self._generation:
                self._job = None
                self.headline.setText(f"✘ {message}")

        self._job = submit(self.state.pool, work, done, failed, owner=self)

    def _show(
        self,
        machine: Machine,
        label: str,
        findings: list[Finding],
        wheel: TorchWheel | None,
        summary: Summary,
    ) -> None:
        self.findings = findings
        self._wheel = wheel
        if wheel is not None:
            glyph, _words, _colour = STATUS[wheel.status]
            self.torch_reason.setText(f"{glyph} <b>{esc(wheel.label)}</b> — {esc(wheel.reason)}")
            self.torch_command.setText(wheel.command)
        else:
            self.torch_reason.setText(
                tr("No PyTorch wheel can be recommended for this machine (see the findings).")
            )
            self.torch_command.clear()
        self.copy_torch.setEnabled(bool(self.torch_command.text()))
        groups = gpu_groups(self.findings)
        shown = [f for _indices, findings in groups for f in findings]
        counts = {b: sum(1 for f in shown if bucket(f) == b) for b in BUCKETS}
        text = f"{label}: " + ", ".join(_bucket_count(b, n) for b, n in counts.items() if n)
        if any(len(indices) > 1 for indices, _findings in groups):
            text += " " + tr("(identical GPUs counted once)")
        self.summary.setText(text)
        failing = any(f.status == "fail" and bucket(f) == "problem" for f in shown)
        self.counts.setText(counts_header(counts, failing=failing))
        self._show_summary(summary)
        self.tree.clear()
        self.tree.setUpdatesEnabled(False)  # the rows laid out once, when all are in
        self._steps = self._build(machine, groups)
        self._step()

    def _build(self, machine: Machine, groups: list[tuple[tuple[int, ...], list[Finding]]]) -> Iterator[None]:
        """The tree's rows, ROWS_PER_TURN at a time, then the column search a candidate width at a time."""
        yield from self._fill(machine, groups)
        yield from self._fit_columns()

    def _step(self) -> None:
        """One step of the tree's build, the next one queued behind whatever else the event loop has."""
        steps = self._steps
        if steps is None:
            return
        try:
            next(steps)
        except StopIteration:
            self._steps = None
            self.tree.setUpdatesEnabled(True)
            return
        QTimer.singleShot(0, self, lambda: self._step() if self._steps is steps else None)

    def _show_summary(self, summary: Summary) -> None:
        self.headline.setText(summary.sentence)
        lines = []
        for group in summary.groups[:SHOWN_CAUSES]:
            names = ", ".join(dict.fromkeys(f.framework for f in group.findings))
            lines.append(f"• {group.title} ({names})")
            if group.fix:
                lines.append(f"   {tr('Fix')}: {group.fix}")
        hidden = len(summary.groups) - SHOWN_CAUSES
        if hidden > 0:
            lines.append(tr("… and {n} more causes in the list below.").format(n=hidden))
        self.causes.setText("\n".join(lines) if lines else tr("No root causes: nothing here needs fixing."))

    def _fill(self, machine: Machine, groups: list[tuple[tuple[int, ...], list[Finding]]]) -> Iterator[None]:
        bold = QFont(self.tree.font())
        bold.setBold(True)
        grey = self.palette().color(QPalette.ColorRole.PlaceholderText)
        # identical GPUs (an 8-GPU server) share one list, titled "GPUs 0–7: 8 × H100 SXM5 80GB"
        for indices, shown in groups:
            if not indices:
                title = tr("This machine")
            else:
                gpu = next((g for g in machine.gpus if g.index == indices[0]), None)
                which = f"GPU {indices[0]}" if len(indices) == 1 else f"{tr('GPUs')} {index_ranges(indices)}"
                name = (gpu.name if len(indices) == 1 else f"{len(indices)} × {gpu.name}") if gpu else ""
                title = f"{which}: {name}" if name else which
            rows, folded = ordered(shown)
            bad = sum(1 for f in rows if bucket(f) == "problem")
            group = QTreeWidgetItem([f"{title} ({bad} {tr('need attention')})" if bad else title])
            group.setFirstColumnSpanned(True)
            group.setFont(0, bold)
            self.tree.addTopLevelItem(group)
            group.setFirstColumnSpanned(True)
            for n, finding in enumerate(rows, 1):
                self._add(group, finding, grey)
                if n % ROWS_PER_TURN == 0:
                    yield
            if folded:  # one muted line, collapsed: "– 8 would not work here", the rows inside
                n = len(folded)
                words = tr("1 would not work here") if n == 1 else tr("{n} would not work here", n=n)
                fold = QTreeWidgetItem([f"– {words}"])
                fold.setData(0, Qt.ItemDataRole.UserRole, FOLDED)
                fold.setForeground(0, grey)
                hint = tr("Not installed, and would not work on this hardware: click to show.")
                fold.setToolTip(0, tooltip(hint))
                group.addChild(fold)
                fold.setFirstColumnSpanned(True)
                for n, finding in enumerate(folded, 1):
                    self._add(fold, finding, grey)
                    if n % ROWS_PER_TURN == 0:
                        yield
                fold.setExpanded(False)
            group.setExpanded(True)
            yield

    def _add(self, group: QTreeWidgetItem, finding: Finding, grey: QColor) -> None:
        where = bucket(finding)
        glyph, words, colour = STATUS[finding.status]
        if where == "not-here":
            glyph, words = "–", "Would not work here"
        elif where == "limited":
            glyph, words = "○", "Would work, with limits"
        elif where == "ok" and finding.installed is False:
            glyph, words = "○", "Would work, not installed"  # not "✔ OK" for what is not here yet
        reason = self._reason(finding)
        item = QTreeWidgetItem(
            [f"{glyph} {tr(words)}", finding.framework, finding.subject, reason, finding.fix or ""]
        )
        if where in ("not-here", "limited"):
            for column in range(len(COLUMNS) - 1):
                item.setForeground(column, grey)
        else:
            item.setForeground(0, QColor(colour))
        item.setData(0, Qt.ItemDataRole.UserRole, where)
        for column in range(len(COLUMNS) - 1):  # a finding's first lines side by side, however tall
            item.setTextAlignment(column, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        item.setData(FINDING, TITLE_ROLE, finding_title(finding.framework, finding.subject))
        if finding.fix:
            item.setData(FINDING, FIX_ROLE, f"{tr('Fix')}: {first_sentences(finding.fix)}")
            item.setToolTip(FINDING, item.toolTip(4))
        item.setToolTip(3, tooltip(finding.reason))
        source = f"{tr('Source')}: {finding.source}" if finding.source else ""
        parts = (finding.fix or "", finding.side_effect or "", source)
        item.setToolTip(4, tooltip("\n\n".join(t for t in parts if t)))
        item.setData(4, Qt.ItemDataRole.UserRole, source)
        group.addChild(item)
        text = finding.command  # a command to paste; a sentence of advice is read, not copied
        if text:
            button = QToolButton()
            button.setText(tr("Copy"))
            button.setToolTip(tooltip(tr("Copy") + ": " + text))
            button.setAccessibleName(f"{tr('Copy the fix for')} {finding.framework}")
            button.clicked.connect(lambda _checked=False, t=text: self.copy(t))
            # one text line tall and at the top of its row: a row with a button is no taller than one without
            button.setFixedHeight(line_height(self.tree))
            holder = QWidget()
            box = QVBoxLayout(holder)
            box.setContentsMargins(0, 0, 0, 0)
            box.addWidget(button, 0, Qt.AlignmentFlag.AlignTop)
            box.addStretch(1)
            self.tree.setItemWidget(item, 5, holder)

    def _reason(self, finding: Finding) -> str:
        """The finding's reason, less the recommended wheel's reason that the PyTorch card already says
        ("… torch 2.15.0 would fit: macOS wheels are CPU/MPS only …" once, not twice)."""
        wheel = self._wheel
        said = wheel.reason if wheel is not None else ""
        if not said or said not in finding.reason:
            return finding.reason
        short = finding.reason.replace(said, "").rstrip(" :;,")
        return f"{short} ({tr('why: see Recommended PyTorch above')})"

    @Slot(object, object)
    def _show_details(self, item: QTreeWidgetItem | None, _previous: object) -> None:
        if item is None or item.parent() is None:
            self.details.clear()
            self.details.hide()
            return
        source = item.data(4, Qt.ItemDataRole.UserRole) or ""
        self.details.setText(
            f"<b>{esc(item.text(1))}</b> · {esc(item.text(2))}<br>{esc(item.text(3))}"
            + (f"<br><b>{tr('Fix')}:</b> {esc(item.text(4))}" if item.text(4) else "")
            + (f"<br><small>{esc(source)}</small>" if source else "")
        )
        self.details.show()

    def copy(self, text: str) -> None:
        QGuiApplication.clipboard().setText(text)
        self.copied.setText(tr("Copied to the clipboard:") + f" {text}")
        self.copied.show()


#: the bold line over a finding's reason (its framework and subject)
TITLE_ROLE = Qt.ItemDataRole.UserRole + 1
#: the line under a finding's reason: "Fix: …"
FIX_ROLE = Qt.ItemDataRole.UserRole + 2


def ordered(findings: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """A GPU's rows in ROW_ORDER (problems, unknowns, limited, OK; the worst status first within each),
    and apart from them the "would not work here" ones, which the page folds into one collapsed line."""
    rank = lambda f: (ROW_ORDER.index(bucket(f)), DISPLAY_RANK.get(f.status, 9))  # noqa: E731
    rows = sorted((f for f in findings if bucket(f) != "not-here"), key=rank)
    return rows, [f for f in findings if bucket(f) == "not-here"]


def counts_header(counts: dict[str, int], *, failing: bool = True) -> str:
    """ "2 problems · 5 OK · 8 not applicable", each count in its colour ("0 problems" in green: the
    answer to "is anything wrong?" is always there; problems that are all warnings in the warning's
    amber, as their rows)."""
    parts = []
    for buckets, words, colour in HEADER_COUNTS:
        n = sum(counts.get(b, 0) for b in buckets)
        if n == 0 and buckets != ("problem",):
            continue
        shown = colour if n or buckets != ("problem",) else STATUS["ok"][2]
        if buckets == ("problem",) and n and not failing:
            shown = STATUS["warn"][2]
        text = tr(words[0]) if n == 1 else tr(words[1], n=n)
        parts.append(f'<span style="color:{shown}">{esc(text)}</span>')
    return " · ".join(parts)


def finding_title(framework: str, subject: str) -> str:
    """ "nvidia-driver · NVIDIA driver 570.124.04"; the subject alone when it names the framework."""

    def words(text: str) -> str:
        return text.casefold().replace("-", " ").replace("_", " ")

    first = words(subject).split()[0] if subject.split() else ""
    if not framework or words(framework) in words(subject) or (first and first in words(framework)):
        return subject
    return f"{subject} · {framework}"


#: a fix longer than this shows its first sentences in the row, whole in the tooltip and the details line
FIX_SHOWN = 180


def first_sentences(text: str, limit: int = FIX_SHOWN) -> str:
    """``text``'s first sentences up to ``limit`` characters, "…" where more follows (a fix of five
    sentences made its row twelve lines tall); one long sentence is cut at a word."""
    if len(text) <= limit:
        return text
    shown, rest = "", text
    while rest:
        cut = rest.find(". ")
        sentence, rest = (rest, "") if cut < 0 else (rest[: cut + 1], rest[cut + 2 :])
        if shown and len(shown) + len(sentence) + 1 > limit:
            break
        shown = f"{shown} {sentence}".strip()
    if len(shown) > limit + 40:  # one long sentence: cut at a word
        shown, rest = shown[: shown.rfind(" ", 0, limit) if " " in shown[:limit] else limit], "…"
    return shown + (" …" if rest else "")


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
