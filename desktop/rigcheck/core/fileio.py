"""Reading user files and writing ours safely; shared by snapshots, reports and the CLI."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from rigcheck.core.errors import InputError


def read_text_file(path: str | Path, what: str) -> str:
    """A UTF-8 text file's contents; every problem is an ``InputError`` naming the file.

    ``what`` names the kind of file in messages ("snapshot", "report").
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(str(path), "no such file") from None
    except IsADirectoryError:
        raise InputError(str(path), f"is a folder, not a {what} file") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(str(path), "not a text file (invalid UTF-8)") from None
    if not text.strip():
        raise InputError(str(path), "empty file")
    return text


def write_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder and a rename.

    On any exception (an ``OSError`` for an unwritable folder, a full disk, …) the old file is left
    intact, the temporary file is removed and the exception propagates.
    """
    path = Path(path)
    data = text.encode("utf-8")
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    # O_EXCL: never follow or reuse someone else's file; 0o666 lets the umask decide, as open() would.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)  # noqa: PTH105 - os.replace is what the tests interrupt
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
