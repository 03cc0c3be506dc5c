"""Shared test set-up: Qt runs offscreen; core tests never create a QApplication."""

from __future__ import annotations

import os

# Before anything imports Qt: no display is needed, in CI or here.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
