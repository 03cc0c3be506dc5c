"""Where the main window's machine comes from, and what a dropped file opens: this computer probed on the
pool, a snapshot opened (from the dialog, the recent list or a drop) or saved as an audit, the machine's
label on top; a dropped monitor CSV replayed, a dropped model file read on the pool."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Slot

from rigcheck.core.errors import InputError
from rigcheck.core.known_text import in_language
from rigcheck.core.machine import Machine, load_machine, save_machine
from rigcheck.gui.i18n import tr
from rigcheck.gui.markup import esc
from rigcheck.gui.startup import looks_like_snapshot as _looks_like_snapshot
from rigcheck.gui.workers import Job, submit

if TYPE_CHECKING:
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

    from rigcheck.gui.startup import LazyPages
    from rigcheck.gui.state import AppState


class MachineSources:
    """MainWindow's ``machine_label``, the probe (``probe_failed``) and the files it opens and saves."""

    state: AppState
    machine_label: QLabel
    probe_failed: bool
    pages: LazyPages
    save_action: QAction
    _probe: Callable[[], Machine]
    _jobs: set[Job]

    if TYPE_CHECKING:  # QMainWindow's, MainWindow's and Menus'

        def statusBar(self) -> QStatusBar: ...  # noqa: N802 - Qt's name

        def setWindowTitle(self, title: str) -> None: ...  # noqa: N802 - Qt's name

        def show_page(self, key: str) -> None: ...

        def _remember(self, path: Path) -> None: ...

    @Slot()
    def start_probe(self) -> None:
        self.machine_label.setText(tr("Probing this computer…"))
        self.probe_failed = False
        job = submit(self.state.pool, self._probe, self._probe_done, self._probe_failed)
        self._jobs.add(job)

    @Slot(object)
    def _probe_done(self, machine: Machine) -> None:
        self._jobs.clear()
        psu = self.state.psu_watts()
        if psu:
            machine = machine.with_psu(psu)
        self.state.set_machine(machine, tr("This computer"), True)

    @Slot(str)
    def _probe_failed(self, message: str) -> None:
        self._jobs.clear()
        self.probe_failed = True
        self.machine_label.setText(esc(tr("Probing failed:") + " " + message))

    def _machine_changed(self, machine: Machine, label: str, is_live: bool) -> None:
        gpus = len(machine.gpus)
        what = tr("GPU") if gpus == 1 else tr("GPUs")
        # a snapshot's file name may be 255 bytes: cut, whole in the tooltip, so it never widens the window
        whole, label = label, label if len(label) <= 48 else label[:47] + "…"
        self.machine_label.setToolTip(
            "" if whole == label else f"<p style='white-space:pre-wrap'>{esc(whole)}</p>"
        )
        if is_live:
            self.machine_label.setText(f"<b>{esc(label)}</b> · {gpus} {what}")
            self.machine_label.setStyleSheet("")
        else:
            self.machine_label.setText(f"⚠ <b>{esc(label)}</b> · {gpus} {what} · {tr('not this computer')}")
            self.machine_label.setStyleSheet("QLabel#machineLabel { color: palette(highlight); }")
        if hasattr(self, "save_action"):
            self.save_action.setEnabled(True)
        self.setWindowTitle(f"RigCheck — {whole}")

    def open_snapshot(self, path: Path) -> bool:
        """Show a saved snapshot (or the one inside a report); a bad file gets a message, never a crash."""
        try:
            machine = load_machine(path)
        except InputError as exc:
            _warn(self, tr("Cannot open snapshot"), in_language(str(exc)))
            return False
        self._remember(path)
        self.state.set_machine(machine, f"{tr('Snapshot')} {path.name}", False)
        return True

    @Slot()
    def _open_snapshot_dialog(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        name, _ = QFileDialog.getOpenFileName(
            self, tr("Open snapshot"), "", tr("RigCheck snapshots and reports (*.json)")
        )
        if name:
            self.open_snapshot(Path(name))

    @Slot()
    def _save_audit_dialog(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        if self.state.machine is None:
            return
        name, _ = QFileDialog.getSaveFileName(self, tr("Save audit"), "rigcheck-audit.json", "JSON (*.json)")
        if name:
            try:
                save_machine(self.state.machine, Path(name))
            except (OSError, InputError) as exc:  # InputError: a folder (the shared writer refuses it)
                why = exc.problem if isinstance(exc, InputError) else exc.strerror or exc
                _warn(self, tr("Cannot save audit"), f"{name}: {why}")

    def load_path(self, path: Path) -> None:
        """A dropped file: a snapshot opens as the machine, a monitor CSV in the Monitor's replay;
        anything else is read as a model."""
        if path.exists() and not (path.is_file() or path.is_dir()):  # a pipe or device: a read may never end
            _warn(
                self,
                tr("Cannot open this file"),
                tr(
                    "{name} is not a file or folder RigCheck can open (a pipe, a socket or a device)",
                    name=path.name,
                ),
            )
            return
        if path.suffix.lower() == ".csv":
            self.show_page("monitor")
            self.pages["monitor"].open_recording(path)  # type: ignore[attr-defined]
            return
        if _looks_like_snapshot(path):
            self.open_snapshot(path)
            return
        from rigcheck.core.models.files import load_model_path

        self.statusBar().showMessage(tr("Reading") + f" {path.name}…")
        job = submit(
            self.state.pool,
            lambda: load_model_path(path, catalog=self.state.catalog),
            self._model_loaded,
            self._model_failed,
        )
        self._jobs.add(job)

    @Slot(object)
    def _model_loaded(self, model: object) -> None:
        self._jobs.clear()
        self.statusBar().clearMessage()
        self.state.choose_model(model)  # type: ignore[arg-type]

    @Slot(str)
    def _model_failed(self, message: str) -> None:
        self._jobs.clear()
        self.statusBar().clearMessage()
        _warn(self, tr("Cannot read this model"), message.split(": ", 1)[-1])


def _warn(parent: QWidget, title: str, text: str) -> None:
    from rigcheck.gui.widgets import warn  # the widgets module (and Qt's enums) after the first frame

    warn(parent, title, text)
