"""``python -m rigcheck``: the same entry point as the ``rigcheck`` command (and the frozen app's)."""

import sys

if getattr(sys, "frozen", False):
    # the frozen app reads a large recording in a spawn-started copy of itself
    # (gui/pages/monitor_process.py): that copy runs the reader, not the app
    import multiprocessing

    multiprocessing.freeze_support()

from rigcheck.cli import main  # after the frozen child has been diverted

raise SystemExit(main())
