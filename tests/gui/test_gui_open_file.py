"""``rigcheck gui FILE`` opens a file as a drop on the window does: a monitor recording replays on the Monitor
(with --screenshot, the picture is taken once it has been read); a missing file is one line and exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from rigcheck.cli import main as cli_main
from rigcheck.gui.app import main as gui_main

pytestmark = pytest.mark.gui

FIXTURES = Path(__file__).parent.parent / "fixtures" / "machines"


def test_a_recording_named_on_the_command_line_is_replayed_before_the_screenshot(
    qapp: object, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rigcheck.gui import app

    shown: list[int] = []
    original = app.screenshots

    def watched(window, folder, page=None, size=None):  # type: ignore[no-untyped-def]
        written = original(window, folder, page, size)
        recording = window.pages["monitor"].recording  # what the picture was taken of
        shown.append(len(recording) if recording is not None else 0)
        return written

    monkeypatch.setattr(app, "screenshots", watched)
    recording = tmp_path / "run.csv"
    rows = "".join(f"{n},{n},{5 + n % 50}\n" for n in range(2000))
    recording.write_text("time,wall,cpu_percent\n" + rows, encoding="utf-8")
    shots = tmp_path / "shots"
    code = gui_main(
        [],
        machine=FIXTURES / "rtx4090-64gb.json",
        page="monitor",
        screenshot=shots,
        size=(1024, 700),
        open_file=recording,
    )
    assert code == 0
    assert shown == [2000]  # read, and every row kept, before the Monitor was grabbed
    image = QImage(str(shots / "monitor.png"))
    assert image.text("rigcheck-page") == "monitor" and image.width() == 1024
    assert str(shots / "monitor.png") in capsys.readouterr().out


def test_a_missing_file_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["gui", str(tmp_path / "nowhere.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nowhere.csv: no such file or folder" in err
