"""Running the CLI in-process as the tests do, and reading its one-line errors."""

from __future__ import annotations

import io

import pytest

from rigcheck import cli


def run_cli(*argv: str) -> tuple[int, str]:
    """Exit status and stdout of ``rigcheck ARGV``."""
    out = io.StringIO()
    return cli.main(list(argv), out=out), out.getvalue()


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """stderr must be exactly one ``rigcheck: error: …`` line, never a traceback."""
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("rigcheck: error: ")
    assert "Traceback" not in err
    return lines[0]
