"""The main window: page navigation on the left, the selected page on the right.

Pages slot into the stack through :meth:`MainWindow.add_page`; for now there is an Overview that shows
the machine (this computer, probed off the GUI thread, or a snapshot opened from a file).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings, QThreadPool, Slot
from PySide6.QtGui import QAction, QFont, QFontDatabase, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from rigcheck import __version__
from rigcheck.core.errors import InputError
from rigcheck.core.machine import Machine, load_machine, save_machine
from rigcheck.core.report.summary import summarise
from rigcheck.gui.workers import Job, submit


class OverviewPage(QWidget):
    """The machine at a glance (the full page with VRAM bars and model cards comes later)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.heading = QLabel("This computer")
        font = self.heading.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        font.setBold(True)
        self.heading.setFont(font)
        self.status = QLabel("Probing this machine…")
        self.status.setObjectName("status")
        self.text = QPlainTextEdit(readOnly=True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.status)
        layout.addWidget(self.text, 1)

    def show_machine(self, machine: Machine, label: str) -> None:
        self.heading.setText(label)
        gpus = len(machine.gpus)
        taken = machine.taken_at or "at an unknown time"
        self.status.setText(f"{gpus} GPU{'s' if gpus != 1 else ''} · snapshot taken {taken}")
        self.text.setPlainText(summarise(machine))

    def show_error(self, message: str) -> None:
        self.status.setText(message)


class MainWindow(QMainWindow):
    def __init__(
        self,
        probe: Callable[[], Machine],
        settings: QSettings,
        pool: QThreadPool | None = None,
    ) -> None:
        super().__init__()
        self._probe = probe
        self._settings = settings
        self._pool = pool or QThreadPool.globalInstance()
        self._jobs: set[Job] = set()
        self.machine: Machine | None = None
        self.machine_label = "This computer"

        self.setWindowTitle("RigCheck")
        self.setWindowIcon(QIcon.fromTheme("rigcheck"))
        self.nav = QListWidget()
        self.nav.setFixedWidth(170)
        self.nav.setFrameShape(QListWidget.Shape.NoFrame)
        self.stack = QStackedWidget()
        self.nav.currentRowChanged.connect(self.stack.setCurrentIndex)

        central = QWidget()
        row = QHBoxLayout(central)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.nav)
        row.addWidget(self.stack, 1)
        self.setCentralWidget(central)

        self.overview = OverviewPage()
        self.add_page("Overview", self.overview)
        self._build_menus()
        self.statusBar().showMessage(f"RigCheck {__version__}")
        self._restore()

    # -- pages -----------------------------------------------------------------------------------

    def add_page(self, title: str, page: QWidget) -> None:
        item = QListWidgetItem(title)
        font = QFont(item.font())
        font.setPointSizeF(font.pointSizeF() * 1.1)
        item.setFont(font)
        self.nav.addItem(item)
        self.stack.addWidget(page)
        if self.nav.currentRow() < 0:
            self.nav.setCurrentRow(0)

    # -- menus -----------------------------------------------------------------------------------

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.open_action = QAction("&Open snapshot…", self, shortcut=QKeySequence.StandardKey.Open)
        self.open_action.triggered.connect(self._open_snapshot_dialog)
        self.save_action = QAction("&Save audit…", self, shortcut=QKeySequence.StandardKey.Save)
        self.save_action.triggered.connect(self._save_audit_dialog)
        self.save_action.setEnabled(False)
        self.refresh_action = QAction(
            "&Probe this computer again", self, shortcut=QKeySequence.StandardKey.Refresh
        )
        self.refresh_action.triggered.connect(self.start_probe)
        quit_action = QAction("&Quit", self, shortcut=QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        for action in (self.open_action, self.save_action, self.refresh_action):
            file_menu.addAction(action)
        file_menu.addSeparator()
        file_menu.addAction(quit_action)

        help_menu = self.menuBar().addMenu("&Help")
        about = QAction("&About RigCheck", self)
        about.triggered.connect(self._about)
        help_menu.addAction(about)

    # -- machine ---------------------------------------------------------------------------------

    @Slot()
    def start_probe(self) -> None:
        self.overview.status.setText("Probing this machine…")
        self.refresh_action.setEnabled(False)
        job = submit(self._pool, self._probe, self._probe_done, self._probe_failed)
        self._jobs.add(job)

    @Slot(object)
    def _probe_done(self, machine: Machine) -> None:
        self._jobs.clear()
        self.refresh_action.setEnabled(True)
        self.set_machine(machine, "This computer")

    @Slot(str)
    def _probe_failed(self, message: str) -> None:
        self._jobs.clear()
        self.refresh_action.setEnabled(True)
        self.overview.show_error(f"Probing failed: {message}")

    def set_machine(self, machine: Machine, label: str) -> None:
        self.machine = machine
        self.machine_label = label
        self.save_action.setEnabled(True)
        self.overview.show_machine(machine, label)
        self.setWindowTitle(f"RigCheck — {label}")

    def open_snapshot(self, path: Path) -> bool:
        """Show a saved snapshot; a bad file gets a message, never a crash."""
        try:
            machine = load_machine(path)
        except InputError as exc:
            QMessageBox.warning(self, "Cannot open snapshot", str(exc))
            return False
        self.set_machine(machine, f"Snapshot: {path.name} (not this computer)")
        return True

    @Slot()
    def _open_snapshot_dialog(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Open snapshot", "", "RigCheck snapshots (*.json)")
        if name:
            self.open_snapshot(Path(name))

    @Slot()
    def _save_audit_dialog(self) -> None:
        if self.machine is None:
            return
        name, _ = QFileDialog.getSaveFileName(self, "Save audit", "rigcheck-audit.json", "JSON (*.json)")
        if name:
            try:
                save_machine(self.machine, Path(name))
            except OSError as exc:
                QMessageBox.warning(self, "Cannot save audit", f"{name}: {exc.strerror or exc}")

    @Slot()
    def _about(self) -> None:
        QMessageBox.about(
            self,
            "About RigCheck",
            f"<b>RigCheck {__version__}</b><p>Will this model run on this machine, how fast, "
            "and if not, what would it take?</p>",
        )

    # -- settings --------------------------------------------------------------------------------

    def _restore(self) -> None:
        geometry = self._settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(980, 680)
        page = self._settings.value("window/page", 0, type=int)
        if isinstance(page, int) and 0 <= page < self.nav.count():
            self.nav.setCurrentRow(page)

    def closeEvent(self, event: object) -> None:  # noqa: N802 - Qt's name
        self._settings.setValue("window/geometry", self.saveGeometry())
        self._settings.setValue("window/page", self.nav.currentRow())
        super().closeEvent(event)  # type: ignore[arg-type]
