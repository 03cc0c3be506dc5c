"""The Monitor page's recording: every sample written to a CSV that ``rigcheck monitor`` and Replay read,
asking before a file that holds data is replaced."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QFileDialog, QLabel, QMessageBox, QPushButton

from rigcheck.core.errors import InputError
from rigcheck.core.fileio import LineFile
from rigcheck.core.monitor import History, columns
from rigcheck.gui.i18n import tr
from rigcheck.gui.widgets import esc


class CsvRecording:
    """MonitorPage's "Record to CSV…" (``record_button``) and the file it writes (``_csv``)."""

    history: History
    record_button: QPushButton
    alert_label: QLabel
    _csv: tuple[LineFile, list[str]] | None

    @Slot(bool)
    def _record_toggled(self, on: bool) -> None:
        if not on:
            self._stop_recording()
            return
        name, _ = QFileDialog.getSaveFileName(
            self,
            tr("Record to CSV"),
            "rigcheck-monitor.csv",
            "CSV (*.csv)",
            options=QFileDialog.Option.DontConfirmOverwrite,  # asked below, in our words
        )
        if not name:
            self.record_button.setChecked(False)
            return
        path = Path(name)
        force = _holds_data(path) and self.confirm_replace(path)
        self.record_to(path, force=force)

    def confirm_replace(self, path: Path) -> bool:
        """Ask before a recording already in ``path`` is replaced (``monitor --csv`` wants --force)."""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            tr("Record to CSV"),
            f"{path.name}: " + tr("this file already holds data. Replace it?"),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self,
        )
        box.setTextFormat(Qt.TextFormat.PlainText)  # the file name is anyone's text
        box.setDefaultButton(QMessageBox.StandardButton.No)
        answer = box.exec()
        box.deleteLater()
        return answer == QMessageBox.StandardButton.Yes

    def record_to(self, path: Path, *, force: bool = False) -> bool:
        """Record every sample to ``path`` as ``monitor --csv`` does, through the same writer
        (:class:`rigcheck.core.fileio.LineFile`): a file already holding data is kept unless ``force``,
        the file is locked while written (a second monitor is refused), and rows are written whole."""
        latest = self.history.latest()
        try:
            target = LineFile(path, force=force)
        except InputError as exc:
            self.alert_label.setText(esc(f"✘ {exc}"))
            self.record_button.blockSignals(True)
            self.record_button.setChecked(False)
            self.record_button.blockSignals(False)
            return False
        names = columns(latest) if latest is not None else ["time", "wall", "cpu_percent", "ram_used_bytes"]
        try:
            target.write(_csv_line(names))
        except InputError as exc:
            target.close()
            self.alert_label.setText(esc(f"✘ {exc}"))
            return False
        self._csv = (target, names)
        self.record_button.setText(tr("Stop recording"))
        self.record_button.blockSignals(True)  # already recording: do not ask for a file again
        self.record_button.setChecked(True)
        self.record_button.blockSignals(False)
        return True

    def _stop_recording(self) -> None:
        if self._csv is not None:
            self._csv[0].close()
            self._csv = None
        self.record_button.setText(tr("Record to CSV…"))
        self.record_button.blockSignals(True)
        self.record_button.setChecked(False)
        self.record_button.blockSignals(False)


def _csv_line(values: list[Any]) -> str:
    """One CSV row as text, written whole (the CLI formats its rows the same way)."""
    text = io.StringIO()
    csv.writer(text).writerow(values)
    return text.getvalue()


def _holds_data(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False
