"""Untrusted text made safe to show: control characters escaped for the terminal, checks for loaders.

Strings from snapshots, reports, GGUF metadata, config.json files and the hub may hold ESC/OSC
sequences (which retitle or repaint a terminal), BEL, CR or LF (which forge table rows), C1 controls,
bidirectional overrides (which reorder what is shown) and lone surrogates (which no encoder writes).
:func:`terminal_safe` replaces each with a visible escape such as ``\\x1b``; the Qt side shows such
strings as plain text only (``rigcheck.gui``).
"""

from __future__ import annotations

import functools
import re
from typing import Any, TextIO

# DEL, C1 controls, line/paragraph separators, bidi embeddings/overrides/isolates, lone surrogates
_OTHER = "\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE_RE = re.compile(f"[\x00-\x1f{_OTHER}]")
#: the same but newline and tab, which a multi-line text may hold
_UNSAFE_KEEP_LINES_RE = re.compile(f"[\x00-\x08\x0b-\x1f{_OTHER}]")
UNSAFE_KEEP_LINES_RE = _UNSAFE_KEEP_LINES_RE


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    # \xNN for C0 controls; \uNNNN above, which is also a valid escape inside a JSON string, so
    # JSON output stays valid JSON (and still round-trips) when it passes through terminal_safe.
    return f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"


def one_line(text: str) -> str:
    """``text`` with every control character (CR and LF too) shown as an escape: safe in a table cell."""
    return _UNSAFE_RE.sub(_escape, text)


def terminal_safe(text: str) -> str:
    """Whole output for a terminal: every control character escaped except newline and tab."""
    return _UNSAFE_KEEP_LINES_RE.sub(_escape, text)


def text_problem(text: str, max_length: int, *, multiline: bool = False) -> str | None:
    """Why ``text`` is not acceptable in a loaded record (too long, controls, lone surrogates), or None."""
    if len(text) > max_length:
        return f"a string of {len(text)} characters, more than {max_length}"
    pattern = _UNSAFE_KEEP_LINES_RE if multiline else _UNSAFE_RE
    found = pattern.search(text)
    if found is None:
        return None
    code = ord(found.group())
    if 0xD800 <= code <= 0xDFFF:
        return "not valid Unicode text (a lone surrogate)"
    return f"contains the control character {_escape(found)} at position {found.start()}"


_RAW_UNSAFE = re.compile(f"[{_OTHER}]")


def json_strings_clean(text: str | bytes, max_length: int) -> bool:
    """Whether every string in valid JSON ``text`` (or its UTF-8 bytes) would pass :func:`text_problem`
    (no control, line or bidi character, none longer than ``max_length``), told from the text in a few
    C-speed passes. True is certain. Text with escapes other than ``\\\\``, ``\\"`` and ``\\/`` is not
    judged here: False then means "check the decoded strings", which also names the field."""
    if isinstance(text, str):
        try:
            raw = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate
            return False
    else:
        raw = text
    if b"\\" in raw:
        # Escapes of a backslash, a quote or a slash hold nothing unsafe; any other (\n, \u0000, …)
        # may: the decoded strings are checked instead.
        plain = raw.replace(b"\\\\", b"x")
        if plain.count(b"\\") != plain.count(b'\\"') + plain.count(b"\\/"):
            return False
        raw = plain.replace(b'\\"', b"x")
    # Now JSON has no raw C0 controls, so only a raw DEL, C1, line or bidi character can be unsafe,
    # and a string is exactly the text between two quotes. Those characters are DEL or non-ASCII;
    # dropping every other ASCII byte leaves them, in order, as valid UTF-8 (UTF-8 never puts an
    # ASCII byte inside a longer character).
    if not raw.isascii() or b"\x7f" in raw:
        try:
            wide = raw.translate(None, _ASCII_BELOW_DEL).decode("utf-8")
        except UnicodeDecodeError:
            return False
        if _RAW_UNSAFE.search(wide):
            return False
    return not _long_run(raw, max_length)


#: every ASCII byte but DEL
_ASCII_BELOW_DEL = bytes(range(0x7F))


def quotes_unescaped(raw: bytes) -> bytes:
    """JSON's UTF-8 bytes with each escaped backslash and escaped quote made one ``x``: quotes then only
    open and close strings, and the run between two quotes is at least as long as the string it holds
    (each escape is one character of it). Left to right, as JSON reads them: ``\\\\"`` is a backslash
    and then the string's end."""
    if b"\\" not in raw:
        return raw
    return raw.replace(b"\\\\", b"x").replace(b'\\"', b"x")


def _long_run(raw: bytes, max_length: int) -> bool:
    """Whether some quoted run of ``raw`` is longer than ``max_length`` bytes (at least as many as its
    characters, so False is certain). Such a run holds a whole aligned chunk of half that length with
    no quote in it, so only chunks are probed (``find`` stops at the first quote), and the regex runs
    only where a chunk has none."""
    chunk = (max_length + 2) // 2
    if chunk >= 64:
        for start in range(0, len(raw) - chunk + 1, chunk):
            if raw.find(b'"', start, start + chunk) < 0:
                break
        else:
            return False
    return _long_string(max_length).search(raw) is not None


@functools.lru_cache(maxsize=8)
def _long_string(max_length: int) -> re.Pattern[bytes]:
    """A quoted run longer than ``max_length``: every string that long matches (a match between two
    strings, over more than ``max_length`` characters of structure, only sends the caller the slow way)."""
    return re.compile(f'"[^"]{{{max_length + 1},}}"'.encode())


class SafeStream:
    """A text stream that passes everything written through :func:`terminal_safe` (the CLI's stdout)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(terminal_safe(text))

    def flush(self) -> None:
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
