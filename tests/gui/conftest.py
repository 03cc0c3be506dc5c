"""GUI tests: every test must leave no worker threads running and no top-level window open."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QApplication


@pytest.fixture(autouse=True)
def no_leaks(qapp: QApplication) -> Iterator[None]:
    before = {id(w) for w in qapp.topLevelWidgets()}
    yield
    pool = QThreadPool.globalInstance()
    assert pool.waitForDone(10_000), "a worker thread was still running after the test"
    assert pool.activeThreadCount() == 0
    qapp.processEvents()
    leaked = [w for w in qapp.topLevelWidgets() if w.isVisible() and id(w) not in before]
    assert not leaked, f"windows left open: {[type(w).__name__ for w in leaked]}"
