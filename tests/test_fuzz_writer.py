"""The standing fuzz suite, file writing (issue 30 #11, Build 6): ``-o``, the GUI's Save audit and
``monitor --csv`` over drawn target states, each held to the outcome core/fileio.py documents.

A target is missing, a regular file (0644, 0600, 0444), a symlink to one (or dangling), a file with a
second hard link, a folder, a name in a folder that does not exist, or empty; the writer is the CLI's
``-o`` (in process), :func:`save_machine` (what Save audit calls), or Save audit itself through the
window's slot. Outcomes: written where the path points, the link kept a link, the mode and the hard
links kept; refused (exit 2 with one line naming the file, or one warning dialog) for a read-only
file, a folder, a missing folder and an empty name, with nothing changed and nothing left beside it.
A crash drawn at any step of a write never leaves a mix of old and new text. ``monitor --csv``
(:class:`LineFile`) never overwrites data without ``force`` and refuses a second writer.

Derandomised under CI as test_fuzz.py is; about 5 s.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fakes import fuzz
from test_fuzz import BOX, FUZZ

WRITER = settings(
    FUZZ, suppress_health_check=[*FUZZ.suppress_health_check, HealthCheck.function_scoped_fixture]
)
STATES = ("missing", "0644", "0600", "0444", "symlink", "symlink-0444", "dangling", "hardlink", "hardlink-0600",
          "folder", "symlink-folder", "no-such-folder", "empty")  # fmt: skip
REFUSED = {"0444", "symlink-0444", "folder", "symlink-folder", "no-such-folder", "empty"}
OLD = "OLD TEXT\n" * 200
_RUN = itertools.count()


@pytest.fixture(scope="module", autouse=True)
def report() -> Iterator[None]:
    yield
    if os.environ.get("RIGCHECK_FUZZ_REPORT"):
        fuzz.write_report(os.environ["RIGCHECK_FUZZ_REPORT"])


def _target(folder: Path, state: str) -> tuple[str, Path | None]:
    """The name given to the writer, and the file it must end up writing (None when refused)."""
    real = folder / "real.out"
    if state == "empty":
        return "", None
    if state == "no-such-folder":
        return str(folder / "gone" / "x.out"), None
    if state in ("folder", "symlink-folder"):
        (folder / "dir").mkdir()
        if state == "folder":
            return str(folder / "dir"), None
        (folder / "via").symlink_to(folder / "dir")
        return str(folder / "via"), None
    if state == "dangling":
        (folder / "via").symlink_to(real)
        return str(folder / "via"), real
    if state == "missing":
        return str(real), real
    real.write_text(OLD)
    real.chmod(
        {"0600": 0o600, "0444": 0o444, "symlink-0444": 0o444, "hardlink-0600": 0o600}.get(state, 0o644)
    )
    if state.startswith("hardlink"):
        os.link(real, folder / "other.out")
    if state.startswith("symlink"):
        (folder / "via").symlink_to(real)
        return str(folder / "via"), real
    return str(real), real


def _snapshot(folder: Path) -> dict[str, tuple[int, int, str | None]]:
    """Every name in ``folder`` (recursively) with its mode, inode and text (None for a folder)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        text = path.read_text() if stat.S_ISREG(info.st_mode) else None
        found[str(path.relative_to(folder))] = (info.st_mode, info.st_ino, text)
    return found


def _write(writer: str, name: str, window: object, dialogs: list[str]) -> str | None:
    """Write with ``writer``; the refusal's text (one line or one dialog), None when it wrote."""
    import io

    from rigcheck import cli
    from rigcheck.core.errors import InputError
    from rigcheck.core.machine import load_machine, save_machine

    if writer == "-o":
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = cli.main(["audit", "--machine", str(BOX), "--format", "markdown", "--models", "qwen3-4b", "-o", name],
                            out=io.StringIO())  # fmt: skip
        lines = err.getvalue().splitlines()
        if code == 0:
            assert not lines, lines
            return None
        assert code == 2 and len(lines) == 1 and lines[0].startswith("rigcheck: error: "), (code, lines)
        return lines[0]
    if writer == "save_machine":
        try:
            save_machine(load_machine(BOX), name)
        except (OSError, InputError) as exc:
            return str(exc)
        return None
    from PySide6.QtWidgets import QFileDialog

    before = len(dialogs)
    saved = QFileDialog.getSaveFileName
    QFileDialog.getSaveFileName = staticmethod(lambda *_a, **_k: (name, ""))  # type: ignore[method-assign]
    try:
        window._save_audit_dialog()  # type: ignore[attr-defined]
    finally:
        QFileDialog.getSaveFileName = saved  # type: ignore[method-assign]
    assert len(dialogs) - before <= 1
    return dialogs[-1] if len(dialogs) > before else None


@pytest.fixture(scope="module")
def save_window(qapp: object) -> Iterator[tuple[object, list[str]]]:
    """A window showing the fixture machine, whose warning dialogs are recorded, not shown."""
    import tempfile

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from fakes.machines import small_machine
    from rigcheck.core.catalog import load_catalog
    from rigcheck.core.machine import load_machine
    from rigcheck.gui.main_window import MainWindow
    from rigcheck.gui.state import AppState

    dialogs: list[str] = []
    with tempfile.TemporaryDirectory() as home:
        state = AppState(
            load_catalog(use_overlay=False), QSettings(f"{home}/s.ini", QSettings.Format.IniFormat)
        )
        window = MainWindow(state, small_machine)
        state.set_machine(load_machine(BOX), "Snapshot box.json", False)
        saved = QMessageBox.exec
        QMessageBox.exec = lambda box: dialogs.append(box.text()) or 0  # type: ignore[method-assign]
        try:
            yield window, dialogs
        finally:
            QMessageBox.exec = saved  # type: ignore[method-assign]
            window.close()
            state.pool.waitForDone()


@pytest.mark.gui
@settings(WRITER, max_examples=fuzz.examples(40))
@given(state=st.sampled_from(STATES), writer=st.sampled_from(["-o", "save_machine", "Save audit"]))
@example(state="0444", writer="Save audit")
@example(state="symlink", writer="Save audit")
@example(state="hardlink-0600", writer="Save audit")
@example(state="folder", writer="Save audit")
def test_every_writer_keeps_the_documented_outcome(
    tmp_path: Path, save_window: tuple[object, list[str]], state: str, writer: str
) -> None:
    folder = tmp_path / f"w{next(_RUN)}"
    folder.mkdir()
    name, written = _target(folder, state)
    before = _snapshot(folder)
    refusal = _write(writer, name, *save_window)
    after = _snapshot(folder)
    fuzz.TALLY[f"writer: {writer}"]["refused" if refusal else "written"] += 1
    if state == "empty" and writer == "Save audit":  # the file dialog's empty answer is Cancel
        assert refusal is None and after == before
        return
    if state in REFUSED:
        assert refusal is not None, f"{writer} wrote onto {state}"
        assert after == before, "a refused write changed or left something"
        if state != "empty":
            assert name in refusal or Path(name).name in refusal, refusal
        return
    assert refusal is None, refusal
    assert written is not None and written.read_text() != OLD and written.read_text().strip()
    new = written.read_text()
    assert set(after) == set(before) | {"real.out"}, f"left beside it: {set(after) - set(before)}"
    if state.startswith("symlink") or state == "dangling":
        assert (folder / "via").is_symlink(), "the symlink was replaced by a file"
    if "real.out" in before:
        assert stat.S_IMODE(after["real.out"][0]) == stat.S_IMODE(before["real.out"][0]), "the mode changed"
    if state.startswith("hardlink"):
        assert after["other.out"][1] == after["real.out"][1] and (folder / "other.out").read_text() == new


class Killed(BaseException):
    """A crash: nothing after it runs (a BaseException, so no cleanup code catches it)."""


@settings(WRITER, max_examples=fuzz.examples(30))
@given(
    state=st.sampled_from(["missing", "0644", "0600", "symlink", "hardlink", "hardlink-0600"]),
    step=st.sampled_from(["fsync", "replace"]),  # the spare's, the emptied file's and the new text's syncs
    at=st.integers(1, 4),
)
def test_a_crash_at_any_step_never_leaves_a_mix(tmp_path: Path, state: str, step: str, at: int) -> None:
    from rigcheck.core import fileio

    folder = tmp_path / f"k{next(_RUN)}"
    folder.mkdir()
    name, written = _target(folder, state)
    assert written is not None
    new = "NEW TEXT\n" * 300
    calls = {"n": 0}
    originals = {"fsync": os.fsync, "replace": os.replace}

    def crash(*args: object) -> object:
        calls["n"] += 1
        if calls["n"] == at:
            raise Killed
        return originals[step](*args)  # type: ignore[operator]

    mp = pytest.MonkeyPatch()
    mp.setattr(fileio.os, step, crash)
    try:
        with contextlib.suppress(Killed):
            fileio.write_output(name, new)
    finally:
        mp.undo()
    left = written.read_text() if written.exists() else None
    fuzz.TALLY["writer: crash"][
        f"{step} #{at}: " + ("old" if left == OLD else "new" if left == new else "other")
    ] += 1
    assert left in (None, OLD, new) or (new.startswith(left) and state.startswith("hardlink")), (
        f"a mix after a crash at {step} #{at}: {left[:40]!r}…"  # type: ignore[index]
    )
    if left is not None and left not in (OLD, new):  # the in-place rewrite's prefix: the spare is whole
        spares = [p for p in folder.iterdir() if p.name.endswith(".new")]
        assert [p.read_text() for p in spares] == [new]


@settings(WRITER, max_examples=fuzz.examples(20))
@given(state=st.sampled_from(["missing", "0644", "0600", "symlink", "hardlink", "folder", "no-such-folder",
                              "empty-file"]), force=st.booleans(), second=st.booleans())  # fmt: skip
def test_monitor_csv_never_overwrites_without_force_and_has_one_writer(
    tmp_path: Path, state: str, force: bool, second: bool
) -> None:
    from rigcheck.core.errors import InputError
    from rigcheck.core.fileio import LineFile

    folder = tmp_path / f"m{next(_RUN)}"
    folder.mkdir()
    if state == "empty-file":
        (folder / "real.out").write_text("")
        name, written = str(folder / "real.out"), folder / "real.out"
    else:
        name, written = _target(folder, state)
    before = _snapshot(folder)
    try:
        recording = LineFile(name, force=force)
    except InputError as exc:
        assert exc.source == name and "\n" not in str(exc)
        assert _snapshot(folder) == before, "a refused recording changed something"
        assert state in ("folder", "no-such-folder") or (
            not force and written is not None and written.read_text()
        )
        fuzz.TALLY["writer: monitor --csv"]["refused"] += 1
        return
    try:
        assert state not in ("folder", "no-such-folder")
        assert force or state in ("missing", "empty-file", "dangling"), f"{state} overwritten without --force"
        recording.write("time,cpu_percent\r\n")
        if second and os.name != "nt":
            with pytest.raises(InputError, match="another rigcheck monitor"):
                LineFile(name, force=True)
        assert written is not None and written.read_bytes() == b"time,cpu_percent\r\n"
    finally:
        recording.close()
    fuzz.TALLY["writer: monitor --csv"]["recorded"] += 1
