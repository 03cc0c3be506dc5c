"""``python -m rigcheck``: the same entry point as the ``rigcheck`` command."""

from rigcheck.cli import main

raise SystemExit(main())
