"""The recording reader's fast path: rows thinning drops are only checked, quoted lines still follow the
csv rules, and a thinned read keeps exactly the rows a full read has at those positions."""

from __future__ import annotations

import math
import re
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from rigcheck.core.errors import InputError
from rigcheck.core.replay import read_recording

HEADER = "time,wall,cpu_percent,ram_used_bytes,gpu0_util_percent,gpu0_mem_used_bytes\n"


def write(path: Path, rows: int, *, bad: dict[int, str] | None = None) -> Path:
    lines = [HEADER]
    for n in range(rows):
        lines.append((bad or {}).get(n, f"{n * 0.5},{1.7e9 + n},{n % 100}.5,{8e9 + n},{n % 101},{2e9 + n}\n"))
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_a_thinned_read_keeps_every_stride_th_row_exactly(tmp_path: Path) -> None:
    path = write(tmp_path / "r.csv", 5000)
    full = read_recording(path)
    thin = read_recording(path, max_cells=6 * 300)
    assert full.stride == 1 and thin.stride == 32 and thin.rows_read == full.rows_read == 5000
    for key in full.values:
        assert np.array_equal(thin.values[key], full.values[key][:: thin.stride][: len(thin)])
    assert np.array_equal(thin.t, full.t[:: thin.stride][: len(thin)])


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("4000.0,1,2,3\n", "line 3003: 4 values under 6 columns"),
        ("1.0,1,2,3,4,5\n", "line 3003: time goes backwards"),
        (",1,2,3,4,5\n", "line 3003: no time"),
        ("1e300,1,2,3,4,5\n", "line 3003: time 1e+300 is out of range"),
    ],
)
def test_a_row_thinning_drops_is_still_checked(tmp_path: Path, row: str, problem: str) -> None:
    # row 3001 (line 3003) is read when the stride is already 16 (3001 % 16 = 9): it is not kept, but it is checked
    path = write(tmp_path / "r.csv", 5000, bad={3001: row})
    with pytest.raises(InputError, match=re.escape(problem)):
        read_recording(path, max_cells=6 * 300)


def test_quoted_values_empty_cells_and_infinities_read_as_the_csv_rules_say(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text(
        HEADER + '0,1,"12.5",8e9,,inf\n1,2, 13 ,"8e9",7,-inf\r\n\n2,3,nan,1,2,3\n', encoding="utf-8"
    )
    recording = read_recording(path)
    assert recording.values["cpu_percent"][:2].tolist() == [12.5, 13.0]
    assert math.isnan(recording.values["cpu_percent"][2])
    assert (
        math.isnan(recording.values["gpu0_util_percent"][0]) and recording.values["gpu0_util_percent"][1] == 7
    )
    assert np.isnan(recording.values["gpu0_mem_used_bytes"][:2]).all()  # no reading, not an infinity
    assert len(recording) == 3 and recording.t.tolist() == [0.0, 1.0, 2.0]


def test_a_bad_value_in_a_kept_row_names_its_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path / "r.csv", 10, bad={4: "4,1,2,3,warm,5\n"})
    with pytest.raises(InputError, match="line 6, column gpu0_util_percent: 'warm' is not a number"):
        read_recording(path)


def test_thinning_moves_rows_in_place_without_a_second_table(tmp_path: Path) -> None:
    # a 1.2 MB table: the old halving copied half of it at once (numpy's copy of an overlapping view), and
    # the rows kept were copied whole at the end
    path = write(tmp_path / "r.csv", 60_000)
    cells = 6 * 25_000
    tracemalloc.start()
    try:
        recording = read_recording(path, max_cells=cells)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert recording.stride == 4
    table = cells * 8
    assert peak < 1.3 * table  # the table and small change
