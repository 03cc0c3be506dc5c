"""Without a display the app says in one line what is missing (exit 2) instead of Qt's abort, and
``gui --screenshot`` renders offscreen (issue 26)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rigcheck.gui.display import XCB_LIBRARIES, NoDisplayError, choose_platform, debian_package

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


def _run(*args: str, tmp_path: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env.update(extra, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"))
    return subprocess.run(
        [sys.executable, "-m", "rigcheck", *args],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 and Wayland are Linux's")
@pytest.mark.parametrize("args", [(), ("gui",)])
def test_no_display_is_one_line_and_exit_2(tmp_path: Path, args: tuple[str, ...]) -> None:
    done = _run(*args, tmp_path=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rigcheck: error: no display"), done.stderr
    assert "--screenshot" in lines[0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 and Wayland are Linux's")
def test_screenshot_without_a_display_renders_offscreen(tmp_path: Path) -> None:
    shots = tmp_path / "shots"
    machine = str(FIXTURES / "rtx4090-64gb.json")
    done = _run("gui", "--screenshot", str(shots), "--page", "fit", "--machine", machine, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (shots / "fit.png").stat().st_size > 20_000


def test_x11_without_xcb_libraries_names_what_to_install() -> None:
    lacking = {"libxcb-icccm.so.4", "libxcb-keysyms.so.1"}
    with pytest.raises(NoDisplayError) as raised:
        choose_platform(
            screenshot=False, environ={"DISPLAY": ":0"}, platform="linux", loadable=lambda s: s not in lacking
        )
    message = str(raised.value)
    assert "\n" not in message
    assert "sudo apt install libxcb-icccm4 libxcb-keysyms1" in message
    assert "libxcb-cursor" not in message  # only what is missing


def test_which_platform_is_chosen() -> None:
    missing = {"environ": {"DISPLAY": ":0"}, "platform": "linux", "loadable": lambda _s: False}
    assert choose_platform(screenshot=True, **missing) == "offscreen"  # type: ignore[arg-type]
    everything = {"platform": "linux", "loadable": lambda _s: True}
    assert choose_platform(screenshot=False, environ={"DISPLAY": ":0"}, **everything) is None  # type: ignore[arg-type]
    assert choose_platform(screenshot=True, environ={}, **everything) == "offscreen"  # type: ignore[arg-type]
    wayland = {"WAYLAND_DISPLAY": "wayland-0"}
    assert (
        choose_platform(screenshot=False, environ=wayland, platform="linux", loadable=lambda _s: False)
        is None
    )
    chosen = {"QT_QPA_PLATFORM": "vnc"}  # the user's own choice wins
    assert choose_platform(screenshot=False, environ=chosen, platform="linux") is None
    assert choose_platform(screenshot=False, environ={}, platform="darwin") is None


def test_debian_package_names() -> None:
    assert [debian_package(s) for s in XCB_LIBRARIES[:3]] == [
        "libxcb-cursor0",
        "libxcb-icccm4",
        "libxcb-keysyms1",
    ]
    assert debian_package("libxkbcommon-x11.so.0") == "libxkbcommon-x11-0"


QUIT_SCRIPT = """
import sys
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication
sys.path.insert(0, {tests!r})
from fakes.machines import small_machine
from rigcheck.gui.app import application, create_window
app = application()
settings = QSettings({ini!r}, QSettings.Format.IniFormat)
window = create_window(settings, probe=small_machine)
app.aboutToQuit.connect(window.shutdown)
window.show()
window.show_page("monitor")
QTimer.singleShot(600, lambda: window.set_language("it"))
QTimer.singleShot(1200, lambda: window.set_language("en"))
QTimer.singleShot(1800, app.quit)
sys.exit(app.exec())
"""


def test_quit_with_the_live_monitor_after_a_language_switch_is_clean(tmp_path: Path) -> None:
    """The sampling thread is the same one after a switch, and quitting joins it (no SIGABRT, 134)."""
    tests = str(Path(__file__).resolve().parent.parent)
    script = QUIT_SCRIPT.format(tests=tests, ini=str(tmp_path / "s.ini"))
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "QThread: Destroyed while thread" not in done.stderr
