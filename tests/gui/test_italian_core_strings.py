"""Italian complete (issue 26): the core's sentences on the Compatibility and Upgrade pages of every
platform fixture (ROCm, Jetson, Windows, WSL2, Intel, Apple, DGX Spark, …) come out in Italian, and every
translation keeps its English template's placeholders."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot
from test_italian_everywhere import is_english, visible_texts

from fakes.windows import snapshot_window
from rigcheck.gui import i18n

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parent.parent.parent
PLATFORMS = sorted((ROOT / "tests" / "fixtures" / "machines" / "platforms").glob("*.json"))
PLACEHOLDER = re.compile(r"\{(\w*)[^}]*\}")


def test_every_translation_keeps_its_placeholders() -> None:
    table = tomllib.loads((ROOT / "resources" / "translations" / "it.toml").read_text(encoding="utf-8"))
    wrong = [k for k, v in table.items() if sorted(PLACEHOLDER.findall(k)) != sorted(PLACEHOLDER.findall(v))]
    assert not wrong, wrong


def test_compatibility_and_upgrade_in_italian_on_every_platform(qtbot: QtBot, tmp_path: Path) -> None:
    assert len(PLATFORMS) >= 10
    found: dict[str, set[str]] = {}
    try:
        for path in PLATFORMS:
            window = snapshot_window(qtbot, tmp_path, path, language="it")
            for key in ("compat", "upgrade"):
                window.show_page(key)
                page = window.pages[key]
                if key == "upgrade":
                    page.what_would_it_take("qwen3-235b-a22b", "inference", None)  # type: ignore[attr-defined]
                qtbot.waitUntil(lambda p=page: not p.busy(), timeout=20000)  # type: ignore[attr-defined]
                window.state.pool.waitForDone()
                qtbot.wait(20)
                for text in visible_texts(page):
                    if is_english(text):
                        found.setdefault(f"{key}: {text.strip()[:200]}", set()).add(path.name)
            window.close()
    finally:
        i18n.set_language("en")
    assert not found, "English shown in the Italian UI:\n" + "\n".join(
        f"{k}  [{', '.join(sorted(v))}]" for k, v in sorted(found.items())
    )
