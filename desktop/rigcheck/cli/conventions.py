"""What every subcommand shares: exit statuses, the usage error, one-line warnings, and writing
output (stdout or an --output file, JSON without NaN)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rigcheck.core.errors import InputError

if TYPE_CHECKING:
    from rigcheck.core.catalog import Catalog


EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_NETWORK = 0, 1, 2, 3
#: ``fit --check``: the model does not run here (the same status as an internal failure: "not ok")
EXIT_DOES_NOT_RUN = 1
#: The desktop app's pages, in order (rigcheck.gui.main_window's table; listed here so that --help does
#: not import Qt; tests/gui/test_smoke.py checks the two agree).
GUI_PAGES = ("overview", "models", "fit", "compat", "monitor", "upgrade", "fleet")


class UsageError(Exception):
    """Bad usage, or a command that cannot run here: reported as one line with exit status 2."""


def _load_catalog() -> Catalog:
    from rigcheck.core.catalog import load_catalog

    catalog = load_catalog()
    for problem in catalog.problems:
        sys.stderr.write(f"rigcheck: warning: {_one_line(problem)}\n")
    return catalog


def _emit(text: str, output: Path | None, out: TextIO) -> None:
    if output is None:
        out.write(text)
        return
    from rigcheck.core.fileio import write_output
    from rigcheck.core.text import terminal_safe

    try:
        write_output(output, terminal_safe(text))
    except OSError as exc:
        raise InputError(str(output), f"cannot write ({exc.strerror or exc})") from None


def _emit_json(data: object, out: TextIO) -> None:
    # allow_nan=False: NaN/Infinity are not JSON; a non-finite number (none should reach here) is null
    out.write(json.dumps(_finite(data), indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def _finite(data: object) -> object:
    """``data`` with every NaN or infinite float replaced by None (JSON null)."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {key: _finite(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [_finite(value) for value in data]
    return data


def _one_line(text: str) -> str:
    from rigcheck.core.text import one_line

    return one_line(text)
