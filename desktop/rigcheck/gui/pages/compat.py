"""Compatibility: root causes first, then the findings for the selected machine, grouped by GPU.

A coloured counts header (problems / OK / not applicable, as Mission Center sums a device up) opens the
page; the summary names the one change that fixes the most; the root-cause list groups the findings that
share a cause. In the tree, installed-and-broken comes first, then unknowns, then what works; software that
is not installed and would not work here (muted grey, never a red "Fails") is folded into one collapsed
line per GPU ("– 8 would not work here"), opened with a click. The recommended PyTorch wheel sits
on top with its pip command; every finding's fix (or command) is copied with one click on its Copy button.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QGuiApplication,
    QPalette,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rigcheck.core.compat import (
    BUCKETS,
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
from rigcheck.gui.pages.compat_cells import (
    FINDING,
    FIX_ROLE,
    FOLDED,
    TITLE_ROLE,
    WrappingDelegate,
    line_height,
)
from rigcheck.gui.pages.compat_words import (
    FIX_SHOWN,
    _bucket_count,
    counts_header,
    finding_title,
    first_sentences,
    ordered,
)
from rigcheck.gui.state import AppState
from rigcheck.gui.widgets import STATUS, Card, esc, heading, muted, subheading, tooltip
from rigcheck.gui.workers import Job, submit

COLUMNS = ("Status", "Framework", "What", "Reason", "Fix", "")
FIX = 4
#: root causes listed above the tree (the rest are in the tree)
SHOWN_CAUSES = 3
#: findings added to the tree per event-loop turn (each with its Copy button: ~1 ms a row), so applying
#: a big machine's list never holds the GUI thread past ~50 ms (issue 26 #5)
ROWS_PER_TURN = 12
# read from here by the tests
__all__ = [
    "FINDING",
    "FIX_ROLE",
    "FIX_SHOWN",
    "FOLDED",
    "TITLE_ROLE",
    "CompatPage",
    "_bucket_count",
    "counts_header",
    "first_sentences",
]


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
