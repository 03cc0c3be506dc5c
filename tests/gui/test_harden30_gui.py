"""Issue 30 (30-harden): ``rigcheck gui FILE`` and a drop on the window, as a hostile user tries them — a
FIFO, a device or an unreadable file is one line and exit 2 before any window, a message in the window,
never a GUI thread blocked on a read that never ends."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.cli import main as cli_main
from rigcheck.core.catalog import load_catalog
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def _no_window(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    opened: list[object] = []
    from rigcheck.gui import app

    monkeypatch.setattr(app, "main", lambda *a, **k: opened.append(k.get("open_file")) or 0)
    return opened


@needs_fifo
@pytest.mark.parametrize("name", ["pipe.json", "pipe.csv", "pipe.gguf"])
def test_a_fifo_on_the_command_line_is_one_line_and_exit_2(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = _no_window(monkeypatch)
    fifo = tmp_path / name
    os.mkfifo(fifo)
    assert cli_main(["gui", str(fifo)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and name in err and "not a file or folder" in err
    assert opened == []  # no window that would wait on the pipe


def test_a_device_on_the_command_line_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if not Path(os.devnull).exists() or Path(os.devnull).is_file():
        pytest.skip("no device file here")
    opened = _no_window(monkeypatch)
    assert cli_main(["gui", os.devnull]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a file or folder" in err and opened == []


def test_an_unreadable_file_on_the_command_line_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = _no_window(monkeypatch)
    locked = tmp_path / "run.csv"
    locked.write_text("time,cpu_percent\n1,2\n", encoding="utf-8")
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode, **k: False if Path(p) == locked else real_access(p, mode)
    )
    assert cli_main(["gui", str(locked)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "run.csv" in err and "cannot read" in err and opened == []


def test_a_name_with_newlines_and_escapes_stays_one_escaped_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_window(monkeypatch)
    assert cli_main(["gui", str(tmp_path / "a\nb\x1b[31m.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err


@needs_fifo
def test_a_dropped_fifo_named_json_does_not_block_the_window(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QMessageBox

    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "exec", lambda box: shown.append(box.text()) or 0)
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(AppState(load_catalog(use_overlay=False), settings), small_machine)
    qtbot.addWidget(window)
    fifo = tmp_path / "snapshot.json"
    os.mkfifo(fifo)

    def unblock() -> None:  # should the window open the pipe to read it, a writer ends the wait after 3 s
        time.sleep(3)
        with fifo.open("wb"):
            pass

    writer = threading.Thread(target=unblock, daemon=True)
    started = time.monotonic()
    writer.start()
    window.load_path(fifo)
    elapsed = time.monotonic() - started
    assert elapsed < 2, f"the GUI thread waited {elapsed:.1f} s on a FIFO"
    assert shown and "snapshot.json" in shown[0]
    writer.join(timeout=10)


def test_lora_targets_a_model_lacks_are_a_message_on_the_page(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Qwen3-30B-A3B's MLPs are all routed experts (fused parameters PEFT's target_modules never wrap): "MLP
    # (gate, up, down)" matches no module; the CLI says so in one line, the page must not raise
    from gui.test_fit_backend import open_page
    from rigcheck.core.models.resolve import from_catalog

    raised: list[BaseException] = []
    monkeypatch.setattr("sys.excepthook", lambda _t, exc, _tb: raised.append(exc))
    page = open_page(qtbot, tmp_path)
    spec = page.state.catalog.model("qwen3-30b-a3b")
    assert spec is not None
    page.state.choose_model(from_catalog(spec))
    page.workload.setCurrentIndex(page.workload.findData("lora"))
    page.extras.targets.setCurrentIndex(page.extras.targets.findData("mlp"))
    qtbot.wait(200)
    assert raised == []
    assert page.result is None
    assert "match no module of this model" in page.verdict.text()


def test_a_bad_snapshot_on_the_command_line_is_one_line_and_exit_2_before_any_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # as --machine: with --screenshot the window's modal "Cannot open snapshot" box waited for a click
    # that never came (the run hung); without it the message is the same one line, before any window
    opened = _no_window(monkeypatch)
    bad = tmp_path / "snapshot.json"
    bad.write_text('{"schema": "rigcheck.machine/1", "memory": "<b>lots</b>"}', encoding="utf-8")
    for extra in ([], ["--screenshot", str(tmp_path / "shots")]):
        assert cli_main(["gui", str(bad), *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "snapshot.json" in err
    assert opened == []


@pytest.mark.parametrize("name", ["", "  "])
def test_an_empty_file_name_is_exit_2_not_the_current_folder(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Path("") is ".": `rigcheck gui ""` read the folder it ran in as a model
    opened = _no_window(monkeypatch)
    assert cli_main(["gui", name]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "empty file name" in err and opened == []
