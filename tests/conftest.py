"""Shared test set-up: Qt runs offscreen; core tests never create a QApplication.

Tests never touch the user's own folders: the catalog cache and overlay point at throw-away folders
(subprocesses inherit these variables too).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

# Before anything imports Qt: no display is needed, in CI or here.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

_scratch = tempfile.mkdtemp(prefix="rigcheck-tests-")
atexit.register(shutil.rmtree, _scratch, ignore_errors=True)
os.environ["RIGCHECK_CACHE_DIR"] = str(Path(_scratch) / "cache")
os.environ["RIGCHECK_CATALOG_OVERLAY"] = str(Path(_scratch) / "overlay")
