"""Progress and cancel for long core work (a fleet of thousands of reports, a gigabyte recording).

The caller passes a :class:`Steps`; the work calls it with how far it is. It forwards the fraction done
to ``progress`` at most every :attr:`Steps.every_s` seconds (so a GUI gets a few updates a second, not
one per row) and raises :class:`Cancelled` as soon as ``cancel()`` says so. Qt-free: the GUI's workers
wrap it (:mod:`rigcheck.gui.workers`), the CLI passes none.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class Cancelled(Exception):  # noqa: N818 -- not an error: the user asked to stop
    """``cancel()`` returned True while the work was under way."""


class Steps:
    """``steps(done, total)``: report the fraction ``done / total``; raise :class:`Cancelled` if asked to."""

    def __init__(
        self,
        progress: Callable[[float], None] | None = None,
        cancel: Callable[[], bool] | None = None,
        *,
        every_s: float = 0.05,
    ) -> None:
        self._progress = progress
        self._cancel = cancel
        self.every_s = every_s
        self._last = -float("inf")

    def __call__(self, done: float, total: float) -> None:
        if self._cancel is not None and self._cancel():
            raise Cancelled
        if self._progress is None:
            return
        now = time.monotonic()
        if now - self._last >= self.every_s or done >= total:
            self._last = now
            self._progress(min(1.0, done / total) if total > 0 else 1.0)


def no_steps(_done: float, _total: float) -> None:
    """For callers that want neither progress nor cancel."""


__all__ = ["Cancelled", "Steps", "no_steps"]
