"""Recordings made by ``rigcheck monitor --csv`` (or the Monitor page's "Record to CSV"), read back.

:func:`read_recording` turns such a CSV into a :class:`Recording`: one float64 column per series,
seconds from the first row, with the same series names as :class:`rigcheck.core.monitor.History`,
so the Monitor page can draw and scrub either. Bad files are an :class:`InputError` naming the file
and the problem (line numbers where one applies); memory stays bounded whatever the file holds:

- a line longer than :data:`MAX_LINE_CHARS` or a header with more than :data:`MAX_COLUMNS` columns
  is refused before it is split;
- at most ``max_cells`` values are kept: a longer recording keeps every 2nd row, then every 4th, …
  (:attr:`Recording.stride` says which), so a week-long capture still opens, at a coarser step.
"""

from __future__ import annotations

import csv
import math
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np

from rigcheck.core.errors import InputError
from rigcheck.core.monitor import GPU_COLUMNS, FloatArray
from rigcheck.core.steps import no_steps

#: a longer line is not a monitor recording (a 64-GPU row is under 20 000 characters)
MAX_LINE_CHARS = 100_000
#: "time", "wall", CPU and RAM, and the per-GPU columns of 64 GPUs
MAX_COLUMNS = 4 + 64 * len(GPU_COLUMNS)
#: the largest time a row may have: Unix time in 2286 (the monitor writes seconds since its start)
MAX_TIME_S = 1e10
#: values kept in memory (8 bytes each): 64 MB
MAX_CELLS = 8_000_000

#: rows moved at a time when thinning (a 1 MB block: no second copy of the whole table)
_MOVE_ROWS = 4096

_GPU_COLUMN = re.compile(r"^gpu(\d+)_(\w+)$")
_KNOWN_SUFFIXES = frozenset(suffix for suffix, _field in GPU_COLUMNS)
_HOST_COLUMNS = ("time", "wall", "cpu_percent", "ram_used_bytes")


@dataclass(frozen=True)
class Recording:
    """A monitor recording: ``t`` seconds from the first row, and each column's values (NaN: none)."""

    source: str
    t: FloatArray
    #: series name (as in the CSV header, "time" excepted) -> values, one per entry of ``t``
    values: dict[str, FloatArray] = field(repr=False)
    #: the GPU indices the recording has columns for
    gpus: tuple[int, ...]
    #: 1 when every row was kept; n when only every n-th row was (the file was longer than the budget)
    stride: int = 1
    #: data rows in the file
    rows_read: int = 0

    def __len__(self) -> int:
        return len(self.t)

    @property
    def duration_s(self) -> float:
        return float(self.t[-1] - self.t[0]) if len(self.t) else 0.0

    def keys(self) -> list[str]:
        return list(self.values)

    def series(self, key: str) -> tuple[FloatArray, FloatArray]:
        """(t, values) for a series; an unknown one is empty, as :meth:`History.series` answers."""
        if key == "time":
            return self.t, self.t
        values = self.values.get(key)
        if values is None:
            return np.empty(0), np.empty(0)
        return self.t, values

    def index_at(self, t: float) -> int:
        """The row at or just before ``t`` seconds (clamped to the recording)."""
        if not len(self.t):
            return 0
        found = int(np.searchsorted(self.t, t, side="right")) - 1
        return min(max(found, 0), len(self.t) - 1)


def read_recording(
    path: str | Path,
    *,
    max_cells: int = MAX_CELLS,
    steps: Callable[[float, float], None] = no_steps,
) -> Recording:
    """Read a monitor CSV; every problem is an :class:`InputError` naming the file.

    One pass, memory bounded by ``max_cells`` whatever the file's size (rows thinned as it grows).
    ``steps(characters read, file size)`` is called every few thousand lines: progress, and
    :class:`rigcheck.core.steps.Cancelled` to stop.
    """
    path = Path(path)
    source = str(path)
    try:
        size = path.stat().st_size
        handle = path.open(encoding="utf-8-sig", newline="")
    except FileNotFoundError:
        raise InputError(source, "no such file") from None
    except IsADirectoryError:
        raise InputError(source, "is a folder, not a monitor recording") from None
    except OSError as exc:
        raise InputError(source, f"cannot read ({exc.strerror or exc})") from None
    try:
        with handle:
            return _read(handle, source, max_cells, lambda done: steps(done, size))
    except UnicodeDecodeError:
        raise InputError(source, "not a text file (invalid UTF-8)") from None
    except csv.Error as exc:
        raise InputError(source, f"not a valid CSV file ({exc})") from None
    except OSError as exc:
        raise InputError(source, f"cannot read ({exc.strerror or exc})") from None


def _lines(handle: TextIO, source: str, steps: Callable[[int], None]) -> Iterator[tuple[int, str]]:
    """The file's lines with their numbers, refusing one too long to be a recording before it is held in
    memory. Every few thousand lines: ``steps`` (progress, cancel) and a moment without the GIL, so that
    the GUI thread (which needs it for every call into Qt) never waits on a reader for long."""
    number = done = 0
    while True:
        line = handle.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        number += 1
        done += len(line)
        if not number % 4096:
            steps(done)
            time.sleep(0)
        if len(line) > MAX_LINE_CHARS:
            raise InputError(source, f"line {number} is longer than {MAX_LINE_CHARS} characters: "
                             "not a monitor recording")  # fmt: skip
        if '"' in line and line.count('"') % 2:
            # a quoted value with a line break in it: the reader would join lines into one value, so
            # the line cap would not bound it (100 MB of them took 1.4 GB); recordings never have one
            raise InputError(source, f"line {number}: a quoted value runs over several lines: "
                             "not a monitor recording")  # fmt: skip
        yield number, line


def _cells(line: str) -> list[str]:
    """A line's values: a plain split where nothing is quoted (every line ``monitor --csv`` writes), the
    csv module's rules where something is (a quoted line never spans lines: :func:`_lines` refuses it)."""
    if '"' in line:
        return next(csv.reader([line]), [])
    return line.rstrip("\r\n").split(",")


def _read(handle: TextIO, source: str, max_cells: int, steps: Callable[[int], None]) -> Recording:
    lines = _lines(handle, source, steps)
    header = next((_cells(line) for _n, line in lines), None)
    if header is None or not any(cell.strip() for cell in header):
        raise InputError(source, "empty file")
    header = [cell.strip() for cell in header]
    if len(header) > MAX_COLUMNS:
        raise InputError(source, f"{len(header)} columns, more than a monitor recording has ({MAX_COLUMNS})")
    if "time" not in header:
        raise InputError(source, "not a RigCheck monitor recording (no 'time' column)")
    if len(set(header)) != len(header):
        raise InputError(source, "a column name appears twice in the header")
    kept = [i for i, name in enumerate(header) if _known(name)]
    names = [header[i] for i in kept]
    time_col = names.index("time")
    time_at = kept[time_col]
    columns = len(header)
    width = len(names)
    capacity = max(16, max_cells // max(width, 1)) // 2 * 2  # even: halving keeps the stride exact
    data = np.empty((capacity, width))
    count = rows = 0
    stride = 1
    last_t = -math.inf
    for line, text in lines:
        # A row that thinning drops is only checked (its width, its time): splitting it whole and
        # converting every value cost most of a gigabyte read, with the GUI thread waiting on the GIL.
        skipped = bool(rows % stride) and '"' not in text
        if skipped:
            width_seen = text.count(",") + 1
            if width_seen == 1 and not text.strip():
                continue  # a blank line (a recording cut short ends with one)
            row = text.split(",", time_at + 1)
        else:
            row = _cells(text)
            width_seen = len(row)
            if not row or (width_seen == 1 and not row[0].strip()):
                continue
        if width_seen != columns:
            raise InputError(source, f"line {line}: {width_seen} values under {columns} columns")
        t = _number(row[time_at], source, line, "time")
        if not math.isfinite(t):
            raise InputError(source, f"line {line}: no time")
        if abs(t) > MAX_TIME_S:  # -1e308 .. 1e308 overflowed the Monitor page's arithmetic
            raise InputError(source, f"line {line}: time {t:g} is out of range (at most {MAX_TIME_S:g} s)")
        if t < last_t:
            raise InputError(source, f"line {line}: time goes backwards ({t:g} after {last_t:g})")
        last_t = t
        rows += 1
        if (rows - 1) % stride:
            continue
        if count == capacity:
            # Over budget: keep every other row. The rows kept so far are 0, s, 2s, …, (capacity-1)s
            # and this one is capacity·s, a multiple of the new stride 2s, so it is kept too. In place,
            # a block at a time (row j moves to j/2, below it), so no copy of the whole table is made.
            half = capacity // 2
            for start in range(0, half, _MOVE_ROWS):
                stop = min(start + _MOVE_ROWS, half)
                data[start:stop] = data[2 * start : 2 * stop : 2]
            count, stride = half, stride * 2
        try:
            data[count] = [float(row[i]) for i in kept]
        except ValueError:  # an empty value (NaN) or not a number: the precise answer, cell by cell
            data[count] = [_number(row[i], source, line, header[i]) for i in kept]
        count += 1
    if count == 0:
        raise InputError(source, "no samples (only a header)")
    data.resize((count, width), refcheck=False)  # shrunk in place: no second table (no view of it is left)
    data[np.isinf(data)] = math.nan  # "inf" is no reading
    t = data[:, time_col] - data[0, time_col]
    values = {name: data[:, i] for i, name in enumerate(names) if name != "time"}
    gpus = sorted({int(m.group(1)) for name in names if (m := _GPU_COLUMN.match(name))})
    return Recording(source, t, values, tuple(gpus), stride, rows)


def _known(name: str) -> bool:
    if name in _HOST_COLUMNS:
        return True
    match = _GPU_COLUMN.match(name)
    return bool(match) and match.group(2) in _KNOWN_SUFFIXES  # type: ignore[union-attr]


def _number(cell: str, source: str, line: int, column: str) -> float:
    cell = cell.strip()
    if not cell:
        return math.nan
    try:
        value = float(cell)
    except ValueError:
        shown = cell if len(cell) <= 20 else cell[:20] + "…"
        raise InputError(source, f"line {line}, column {column}: {shown!r} is not a number") from None
    return value if math.isfinite(value) else math.nan


__all__ = ["MAX_CELLS", "Recording", "read_recording"]
