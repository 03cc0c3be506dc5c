"""One reader for untrusted bytes: caps on decoded size, nesting, digits and float range.

Every input RigCheck reads from outside (a hub reply, config.json, a safetensors header, llama-bench
JSON) goes through the same checks at its entry, so no reader can forget one:

* :class:`ByteBudget` counts *decoded* bytes against a cap per reply and a cap per look-up (all the
  replies of one ``org/name`` together), thread-safe, so a 318-byte gzip bomb or sixty 20 MB shard
  headers stop at the cap instead of at the machine's memory;
* :class:`BoundedDecoder` inflates gzip or deflate a bounded piece at a time (``zlib``'s
  ``max_length``): memory stays at the cap however small the compressed reply was;
* :func:`parse_json` refuses NaN and Infinity (not JSON, though Python's parser takes them),
  numbers of more than :data:`MAX_DIGITS` digits, floats out of range (``1e400``), nesting deeper
  than :data:`rigcheck.core.fileio.MAX_DEPTH`, and a text over its byte cap, each as one
  :class:`InputError` naming the source. Work is linear in the input.
"""

from __future__ import annotations

import json
import math
import threading
import zlib
from typing import Any

from rigcheck.core.errors import InputError
from rigcheck.core.fileio import MAX_DEPTH, check_depth

#: digits in one JSON number: a parameter count has 13, a byte offset 15; 5000 digits is an attack
MAX_DIGITS = 40
#: content encodings :class:`BoundedDecoder` inflates (anything else is refused, never guessed)
ENCODINGS = ("gzip", "x-gzip", "deflate")
#: inflated at most this much per step, so one compressed chunk never becomes a gigabyte at once
_STEP = 256 * 1024


class CapExceededError(Exception):
    """More decoded bytes than a :class:`ByteBudget` allows; ``cap`` and ``scope`` say which cap."""

    def __init__(self, cap: int, scope: str) -> None:
        super().__init__(f"more than the {cap:,} bytes RigCheck reads {scope}")
        self.cap = cap
        self.scope = scope


class ByteBudget:
    """Decoded bytes allowed across every reply of one look-up; shared by its worker threads."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.used = 0
        self._lock = threading.Lock()

    def take(self, count: int) -> None:
        """Count ``count`` more bytes; :class:`CapExceededError` once the total is passed."""
        with self._lock:
            self.used += count
            if self.used > self.total:
                raise CapExceededError(self.total, "in one look-up")


class BoundedDecoder:
    """Inflate a gzip or deflate stream chunk by chunk, never producing more than ``cap`` bytes."""

    def __init__(self, encoding: str, cap: int) -> None:
        encoding = encoding.strip().lower()
        if encoding not in ENCODINGS:
            raise ValueError(encoding)
        self._deflate = encoding == "deflate"
        # gzip: a gzip header; deflate: the zlib wrapper, or raw deflate from servers that skip it
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS if not self._deflate else zlib.MAX_WBITS)
        self._first = True
        self.cap = cap
        self.produced = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        """The decoded pieces of ``chunk``: CapExceededError past the cap, zlib.error if corrupt."""
        if self._deflate and self._first and chunk:
            self._first = False
            try:
                return self._drain(chunk)
            except zlib.error:  # no zlib header: raw deflate
                self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
        return self._drain(chunk)

    def _drain(self, data: bytes) -> list[bytes]:
        pieces: list[bytes] = []
        while data:
            piece = self._inflate.decompress(data, _STEP)
            self._count(piece)
            if piece:
                pieces.append(piece)
            data = self._inflate.unconsumed_tail
            if self._inflate.eof:
                break
        return pieces

    def _count(self, piece: bytes) -> None:
        self.produced += len(piece)
        if self.produced > self.cap:
            raise CapExceededError(self.cap, "in one reply")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"a number of {len(text.lstrip('-')):,} digits")
    return int(text)


def _parse_float(text: str) -> float:
    if len(text) > MAX_DIGITS + 8:
        raise ValueError(f"a number written with {len(text):,} characters")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range")
    return value


#: the hooks :func:`parse_json` gives ``json.loads``, for parsers that keep their own messages
JSON_CHECKS: dict[str, Any] = {
    "parse_constant": _no_constant,
    "parse_int": _parse_int,
    "parse_float": _parse_float,
}


def parse_json(
    data: str | bytes, source: str, *, limit: int, what: str = "JSON", depth: int = MAX_DEPTH
) -> Any:
    """Decode untrusted JSON within the caps; every problem is one :class:`InputError` naming ``source``.

    ``limit`` is the byte cap of the text, ``what`` the kind of file for messages ("config.json").
    """
    size = len(data)
    if size > limit:
        raise InputError(source, f"{what} of {size:,} bytes, more than the {limit:,} RigCheck reads")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise InputError(source, f"{what} is not UTF-8 text (byte {error.start})") from None
    try:
        value = json.loads(data, **JSON_CHECKS)
    except json.JSONDecodeError as error:
        raise InputError(
            source, f"{what} is not valid JSON ({error.msg}, line {error.lineno}, column {error.colno})"
        ) from None
    except RecursionError:
        raise InputError(source, f"{what} is nested more than {depth} levels deep") from None
    except ValueError as error:
        raise InputError(source, f"{what} is not valid JSON ({error})") from None
    check_depth(value, source, depth)
    return value


def finite_quantity(value: object) -> float | None:
    """``value`` as a float when it is a finite, non-negative number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) and number >= 0 else None
