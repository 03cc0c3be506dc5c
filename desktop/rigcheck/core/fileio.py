"""Reading user files and writing ours safely; shared by snapshots, reports, the catalog and the CLI.

Reading is bounded: a file is read up to a size cap (``/dev/zero`` or a 150 MB "snapshot" is refused,
not read until memory runs out), JSON and TOML nested deeper than :data:`MAX_DEPTH` are refused before
any recursive code walks them, and every problem is an :class:`InputError` naming the file.

Writing (:func:`write_output`) honours what the path names: a regular file is replaced atomically and
keeps its permission bits (and its hard links); a FIFO, a device or a symlink to one is written
through; a folder or an empty name is refused.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from rigcheck.core.errors import InputError

#: snapshots and reports are a few kB to a few hundred kB; a fleet node with 64 GPUs stays far below this
MAX_JSON_BYTES = 8 * 1024 * 1024
#: deeper nesting than any file of ours has (a report is ~6 levels; a catalog entry ~4)
MAX_DEPTH = 32


def _token() -> str:
    """Eight random hex digits for a scratch file's name."""
    import secrets  # here: hmac and hashlib (~5 ms) are not on every start-up's import path

    return secrets.token_hex(4)


def read_bytes_limited(path: str | Path, what: str, limit: int = MAX_JSON_BYTES) -> bytes:
    """At most ``limit`` bytes of ``path``; a longer file (or an endless device) is an ``InputError``."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            info = os.fstat(handle.fileno())
            if stat.S_ISREG(info.st_mode) and info.st_size <= limit:
                # read(limit + 1) would first allocate the whole cap (8 MiB for a 30 kB report: most of
                # the reading time of a 10,000-report fleet); a file grown since fstat reads on
                raw = handle.read(info.st_size + 1)
                if len(raw) > info.st_size:
                    raw += handle.read(limit + 1 - len(raw))
            else:
                raw = handle.read(limit + 1)
    except FileNotFoundError:
        raise InputError(str(path), "no such file") from None
    except IsADirectoryError:
        raise InputError(str(path), f"is a folder, not a {what} file") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read ({exc.strerror or exc})") from None
    if len(raw) > limit:
        raise InputError(str(path), f"larger than {limit // (1024 * 1024)} MiB: not a {what} file")
    return raw


def read_text_file(path: str | Path, what: str, limit: int = MAX_JSON_BYTES) -> str:
    """A UTF-8 text file's contents; every problem is an ``InputError`` naming the file.

    ``what`` names the kind of file in messages ("snapshot", "report").
    """
    return decode_text(read_bytes_limited(path, what, limit), path)


def decode_text(raw: bytes, path: str | Path) -> str:
    """The text of a UTF-8 file's bytes (a leading BOM dropped); invalid or empty is an ``InputError``."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(str(path), "not a text file (invalid UTF-8)") from None
    if not text or text.isspace():  # not text.strip(), which copies a whole file that ends in a newline
        raise InputError(str(path), "empty file")
    return text


def load_json(text: str | bytes, source: str, *, utf8: bytes | None = None) -> Any:
    """Parse JSON that came from outside; malformed, too deep or absurd numbers are an ``InputError``.

    ``utf8``: the UTF-8 bytes ``text`` was decoded from, when the caller has them (the depth check
    reads them instead of encoding the text again)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            source, f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise InputError(source, f"not valid JSON (nested more than {MAX_DEPTH} levels deep)") from None
    except ValueError as exc:  # an integer of thousands of digits (sys.get_int_max_str_digits)
        raise InputError(source, f"not valid JSON ({exc})") from None
    if not (isinstance(text, str) and shallow_json(text if utf8 is None else utf8)):
        check_depth(data, source)  # walks the data, and names the problem
    return data


#: every byte but JSON's brackets and quote
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')
_INNERMOST = re.compile(rb"\[\]|\{\}")


def shallow_json(text: str | bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether valid JSON ``text`` (or its UTF-8 bytes) nests at most ``limit`` levels, told from its
    brackets alone: a few passes in C instead of a Python walk over every value (a fleet of 10,000
    reports spent a seventh of its time walking them). False means "walk the data":
    :func:`check_depth` then finds the problem and names it.

    Escaped quotes and backslashes are set aside first (:func:`~rigcheck.core.text.quotes_unescaped`),
    then the brackets and quotes are picked out in one ``bytes.translate`` (UTF-8 never puts an ASCII
    byte inside a longer character); quotes now alternate opening and closing, so the brackets between
    an opening quote and the next one are a string's and are dropped; the innermost pairs are then
    removed ``limit`` times."""
    if isinstance(text, str):
        try:
            raw = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no file decodes to it; walk the data
            return False
    else:
        raw = text
    from rigcheck.core.text import quotes_unescaped

    marks = quotes_unescaped(raw).translate(None, _NOT_STRUCTURE)
    # Dropping two adjacent quotes keeps the rest alternating (an empty string's pair, or one string's
    # end and the next one's start with no bracket between them), and leaves far fewer to split.
    brackets = marks.replace(b'""', b"")
    if b'"' in brackets:
        brackets = b"".join(brackets.split(b'"')[0::2])  # even pieces lie outside strings
    for _ in range(limit):
        if not brackets:
            return True
        brackets, removed = _INNERMOST.subn(b"", brackets)  # one level a pass, whichever the kind
        if not removed:
            return False
    return not brackets


def check_depth(data: object, source: str, limit: int = MAX_DEPTH) -> None:
    """Refuse lists and objects nested deeper than ``limit`` (walked without recursion)."""
    stack: list[tuple[object, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list | tuple):
            children = value
        else:
            continue
        if depth >= limit:
            raise InputError(source, f"nested more than {limit} levels deep")
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list | tuple))


def write_atomic(path: str | Path, text: str, mode: int | None = None) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder and a rename.

    ``mode`` sets the new file's permission bits (else the umask decides, as ``open()`` would). On any
    exception (an ``OSError`` for an unwritable folder, a full disk, …) the old file is left intact,
    the temporary file is removed and the exception propagates.
    """
    path = Path(path)
    data = text.encode("utf-8")
    tmp = path.with_name(f".{path.name}.{_token()}.tmp")
    # O_EXCL: never follow or reuse someone else's file; 0o666 lets the umask decide, as open() would.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as file:
            if mode is not None:
                if hasattr(os, "fchmod"):
                    os.fchmod(file.fileno(), mode)
                else:  # Windows: only the read-only bit exists
                    tmp.chmod(mode)
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)  # noqa: PTH105 - os.replace is what the tests interrupt
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_output(path: str | Path, text: str) -> None:
    """Write ``text`` where ``path`` points, as a user giving ``-o PATH`` means it.

    - a symlink is followed: its target is what gets written (``-o /dev/stdout``, a link into a share);
    - a FIFO, a character device or a socket is opened and written through, never replaced;
    - an existing regular file is replaced atomically and keeps its permission bits; one with other
      hard links is rewritten in place once the new text is safely on disk beside it, so every link
      sees it (a crash leaves it empty or a prefix of the new text, never a mix of old and new);
    - a read-only file (no owner write bit) is refused, as a shell's ``>`` refuses it;
    - a new file is created atomically; a folder or an empty name is refused.

    Raises ``InputError`` for a folder or empty name and ``OSError`` for what the system refuses (and
    ``PermissionError`` for a read-only file).
    """
    name = os.fspath(path)
    if not name.strip():
        raise InputError(repr(name), "an empty file name")
    try:
        info: os.stat_result | None = Path(name).stat()  # through any symlinks
    except FileNotFoundError:
        info = None
    if name.endswith(("/", os.sep)) or (info is not None and stat.S_ISDIR(info.st_mode)):
        raise InputError(name, "cannot write (a folder; give a file name)")
    if info is not None and not stat.S_ISREG(info.st_mode):
        # A FIFO, a device, /dev/stdout: write through the name itself (the real path of
        # /dev/stdout on a pipe is /proc/<pid>/fd/pipe:[n], which cannot be opened).
        with Path(name).open("w", encoding="utf-8") as stream:
            stream.write(text)
        return
    target = Path(os.path.realpath(name))  # a symlink's target is replaced, the link stays
    mode = stat.S_IMODE(info.st_mode) if info is not None else None
    if mode is not None and not mode & stat.S_IWUSR:
        # What a shell's ">" refuses (root included, here): replacing it would drop the user's guard.
        # An OSError, as the system's own refusal would be: the CLI and the GUI's Save show its text.
        raise PermissionError(errno.EACCES, "a read-only file, not replaced (make it writable first)", name)
    if info is None or info.st_nlink <= 1:
        write_atomic(target, text, mode)
        return
    _rewrite_in_place(target, text.encode("utf-8"), mode)


def _rewrite_in_place(target: Path, data: bytes, mode: int | None) -> None:
    """Rewrite a file with other hard links where it is, so every link sees the new text.

    A rename would detach this name from the others, so the text is first made safe on disk beside it
    (``.NAME.xxxx.new``, kept until the end); the file is then emptied and written, each step synced.
    A crash never leaves a mix of old and new: the file is empty or a prefix of the new text, and the
    whole new text is in the spare beside it.
    """
    spare = target.with_name(f".{target.name}.{_token()}.new")
    write_atomic(spare, data.decode("utf-8"), mode)
    with target.open("r+b") as stream:
        stream.truncate(0)
        stream.flush()
        os.fsync(stream.fileno())
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())
    with contextlib.suppress(OSError):
        spare.unlink()


def _lock(fd: int) -> None:
    """An exclusive lock on an open file, held until it is closed; OSError if someone else holds it."""
    try:
        import fcntl
    except ImportError:  # Windows: lock the first byte (a region lock, enough between monitors)
        import msvcrt

        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        return
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


class LineFile:
    """A file written whole lines at a time (``monitor --csv``), flushed after each.

    An existing recording is not overwritten unless ``force`` (``--force``), and the file is locked
    while it is written, so two monitors never interleave their rows in one file.

    A write the system refuses part-way (a full disk, EIO from a file under ``/proc``) is cut back to
    the last whole line where the file allows it, and raised as an ``InputError`` naming the file, so
    a full disk never leaves half a row behind.
    """

    def __init__(self, path: str | Path, *, force: bool = False) -> None:
        self.path = str(path)
        try:
            info: os.stat_result | None = Path(path).stat()
        except OSError:
            info = None
        regular = info is not None and stat.S_ISREG(info.st_mode)
        if regular and info is not None and info.st_size > 0 and not force:
            raise InputError(self.path, "already exists: not overwritten (give --force to replace it)")
        try:
            # "ab": nothing is truncated before the lock is held (another monitor may be writing it)
            self._file = Path(path).open("ab", buffering=0)  # noqa: SIM115 - closed by close()
        except OSError as exc:
            raise InputError(self.path, f"cannot write ({exc.strerror or exc})") from None
        if stat.S_ISREG(os.fstat(self._file.fileno()).st_mode):  # a new file too
            try:
                _lock(self._file.fileno())
            except OSError:
                self._file.close()
                raise InputError(self.path, "another rigcheck monitor is writing this file") from None
            try:
                os.ftruncate(self._file.fileno(), 0)
            except OSError as exc:
                self._file.close()
                raise InputError(self.path, f"cannot write ({exc.strerror or exc})") from None
        self._good = 0

    def write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        try:
            while data:
                written = self._file.write(data)
                if not written:
                    raise OSError(0, "no progress writing")
                data = data[written:]
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self._file.fileno(), self._good)
            raise InputError(self.path, f"cannot write ({exc.strerror or exc})") from None
        self._good += len(text.encode("utf-8"))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._file.close()
