"""Can Qt open a window here? Decided before QApplication exists, because Qt itself aborts (SIGABRT,
exit 134) when no platform plugin loads: without a display, or on X11 without the xcb libraries its
plugin links to ("xcb-cursor0 or libxcb-cursor0 is needed").

Qt-free on purpose: packaging/rigcheck.spec imports ``XCB_LIBRARIES`` to put them in the bundle.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

#: the shared libraries Qt 6's xcb platform plugin links to that distributions ship as separate packages
#: (``ldd Qt/plugins/platforms/libqxcb.so``, PySide6 6.8 wheels); the first three are the ones a minimal
#: install most often lacks, and the ones the bundle carries
XCB_LIBRARIES = (
    "libxcb-cursor.so.0",
    "libxcb-icccm.so.4",
    "libxcb-keysyms.so.1",
    "libxcb-image.so.0",
    "libxcb-randr.so.0",
    "libxcb-render-util.so.0",
    "libxcb-shape.so.0",
    "libxcb-sync.so.1",
    "libxcb-xfixes.so.0",
    "libxcb-xkb.so.1",
    "libxkbcommon-x11.so.0",
)
#: what the bundle adds to the Qt wheels' own libraries
BUNDLED_XCB = XCB_LIBRARIES[:3]


class NoDisplayError(Exception):
    """The desktop app cannot open a window here; the message says why and what to do, on one line."""


def debian_package(soname: str) -> str:
    """The Debian/Ubuntu package of a library, by Debian's naming rule: libxcb-icccm.so.4 ->
    libxcb-icccm4, libxkbcommon-x11.so.0 -> libxkbcommon-x11-0 (a hyphen when the name ends in a digit)."""
    name, _, version = soname.partition(".so.")
    return f"{name}-{version}" if name[-1].isdigit() else f"{name}{version}"


def _loadable(soname: str) -> bool:
    """Whether the dynamic loader finds ``soname`` (in a frozen bundle, its own copy counts)."""
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle and (Path(bundle) / soname).exists():
        return True
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def missing_xcb(loadable: Callable[[str], bool] = _loadable) -> list[str]:
    return [soname for soname in XCB_LIBRARIES if not loadable(soname)]


def choose_platform(
    *,
    screenshot: bool,
    environ: Mapping[str, str] | None = None,
    platform: str = sys.platform,
    loadable: Callable[[str], bool] = _loadable,
) -> str | None:
    """The Qt platform to force ("offscreen" for a screenshot with no usable display), or None to let Qt
    choose. Raises :class:`NoDisplayError` where a window cannot open. A QT_QPA_PLATFORM the user set wins."""
    env = os.environ if environ is None else environ
    if env.get("QT_QPA_PLATFORM") or platform in ("win32", "darwin"):
        return None
    if env.get("WAYLAND_DISPLAY"):
        return None  # Qt's wayland plugin needs none of the xcb libraries
    missing = missing_xcb(loadable) if env.get("DISPLAY") else []
    if env.get("DISPLAY") and not missing:
        return None
    if screenshot:
        return "offscreen"  # the pages render the same without a display
    if not env.get("DISPLAY"):
        raise NoDisplayError(
            "no display to open the desktop app on (DISPLAY and WAYLAND_DISPLAY are unset); "
            "'rigcheck gui --screenshot DIR' renders the pages without one, and the other commands "
            "('rigcheck audit', 'rigcheck fit MODEL') need none"
        )
    packages = " ".join(debian_package(s) for s in missing)
    raise NoDisplayError(
        f"Qt cannot open a window on this X display without {', '.join(missing)}: install them "
        f"(Debian/Ubuntu: sudo apt install {packages}; other systems: the packages providing them)"
    )
