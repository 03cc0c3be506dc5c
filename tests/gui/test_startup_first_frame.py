"""The window's first frame pays for no more than it shows (issue 26 Build 5: first show ≤ 1.5× a bare window).

A fresh interpreter starts the app as ``benchmarks/gui_startup.py --pages`` does and reports, at the first
painted frame, what had been imported and whether Qt's enum namespace (``PySide6.QtCore.Qt``, ~100 enums
made on its first use) existed; then, once settled, that the page itself is complete. The timing lives in
the benchmark; this checks the causes, which do not depend on the machine's load.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "tests" / "fixtures" / "machines" / "rtx4090-64gb.json"

#: modules the first frame does not need: the page's own, its chart library, the numbers' formatting,
#: the hub client, translation tables, the package metadata, the shared widgets (and with them Qt's enums)
NOT_BEFORE_FIRST_FRAME = (
    "pyqtgraph", "numpy", "babel", "huggingface_hub", "tomllib", "importlib.metadata",
    "rigcheck.gui.widgets", "rigcheck.core.catalog", "rigcheck.core.estimate",
)  # fmt: skip

SCRIPT = """
import json, sys
from PySide6.QtCore import QSettings
import PySide6.QtCore as core
from rigcheck.gui.app import application, create_window, settle
from rigcheck.core.machine import load_machine
app = application()
settings = QSettings(sys.argv[2], QSettings.Format.IniFormat)
w = create_window(settings, snapshot=load_machine(sys.argv[3]), snapshot_name="first-frame")
w.resize(1280, 800); w.show_page(sys.argv[1]); w.show(); app.processEvents(); w.grab()
first = {"modules": sorted(m for m in json.loads(sys.argv[4]) if m in sys.modules),
         "qt_namespace": core.__dict__.get("Qt") is not None,
         "shown": w.stack.currentWidget().objectName()}
settled = settle(w); w.grab()
first["settled"] = settled
first["then_shown"] = w.stack.currentWidget().objectName()
first["errors"] = dict(w.page_errors)
w.close()
print(json.dumps(first))
"""


@pytest.mark.parametrize("page", ["overview", "fit", "upgrade", "monitor"])
def test_the_first_frame_imports_only_what_it_shows_and_the_page_then_completes(
    page: str, tmp_path: Path
) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", RIGCHECK_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, page, str(tmp_path / "settings.ini"), str(SNAPSHOT),
         json.dumps(NOT_BEFORE_FIRST_FRAME)],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["shown"] == f"page-{page}-loading"  # the first frame is the page's placeholder
    assert seen["modules"] == [], f"imported before the first frame: {seen['modules']}"
    assert not seen["qt_namespace"], "Qt's enums were made before the first frame"
    assert seen["settled"] and seen["errors"] == {}
    assert seen["then_shown"] == f"page-{page}"  # and the page itself replaced it, built
