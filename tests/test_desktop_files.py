"""Linux desktop integration: the .desktop entry, AppStream metainfo and hicolor icons agree and validate.

The validators come from distribution packages (``desktop-file-utils``, ``appstream``); without them
those two tests skip and say so, and the consistency checks below still run.
"""

from __future__ import annotations

import configparser
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APP_ID = "io.github.rigcheck.RigCheck"
RESOURCES = ROOT / "resources"
DESKTOP = RESOURCES / f"{APP_ID}.desktop"
METAINFO = RESOURCES / f"{APP_ID}.metainfo.xml"
HICOLOR = RESOURCES / "icons" / "hicolor"
SIZES = (16, 32, 48, 64, 128, 256)


def _tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (apt-get install {package})")
    return path


def test_the_app_uses_the_same_id() -> None:
    # Read, not imported: this file's tests need no Qt.
    app = (ROOT / "desktop" / "rigcheck" / "gui" / "app.py").read_text(encoding="utf-8")
    assert f'APP_ID = "{APP_ID}"' in app


def test_desktop_entry_validates() -> None:
    tool = _tool("desktop-file-validate", "desktop-file-utils")
    done = subprocess.run([tool, str(DESKTOP)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not done.stdout.strip(), done.stdout  # not even a hint


def test_metainfo_validates() -> None:
    tool = _tool("appstreamcli", "appstream")
    done = subprocess.run(
        [tool, "validate", "--no-net", str(METAINFO)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_desktop_entry_names_the_app_and_its_icon() -> None:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    entry.read(DESKTOP, encoding="utf-8")
    group = entry["Desktop Entry"]
    assert group["Icon"] == APP_ID
    assert group["Exec"].split()[0] == "rigcheck"


def test_metainfo_matches_the_app() -> None:
    root = ET.parse(METAINFO).getroot()  # noqa: S314 - our own file
    assert root.findtext("id") == APP_ID
    assert root.find("launchable").text == DESKTOP.name  # type: ignore[union-attr]
    assert len(root.findall("screenshots/screenshot")) >= 1
    for image in root.iterfind("screenshots/screenshot/image"):
        name = (image.text or "").rsplit("/", 1)[-1]
        assert (ROOT / "docs" / "screenshots" / name).is_file(), f"screenshot {name} is not in docs/"
    releases = root.findall("releases/release")
    assert releases and releases[0].find("description") is not None
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert releases[0].get("version") == version, "the newest release in metainfo is not pyproject's version"


@pytest.mark.parametrize("size", SIZES)
def test_hicolor_png_icons(size: int) -> None:
    png = HICOLOR / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (size, size)
    assert len(data) < 32_000, "icons are resources: keep them small"


def test_hicolor_scalable_icon_is_the_app_svg() -> None:
    scalable = HICOLOR / "scalable" / "apps" / f"{APP_ID}.svg"
    assert scalable.read_bytes() == (RESOURCES / "icons" / "rigcheck.svg").read_bytes()
