"""Reading monitor recordings back: the CLI's own CSV round-trips; bad files are one-line errors."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from rigcheck.core.errors import InputError
from rigcheck.core.monitor import GpuSample, History, Sample, columns, row
from rigcheck.core.replay import MAX_LINE_CHARS, read_recording

GIB = 1024**3


def samples(count: int, step: float = 1.0, gpus: int = 2) -> list[Sample]:
    found = []
    for n in range(count):
        cards = tuple(
            GpuSample(
                index=i,
                name=f"GPU {i}",
                utilization_percent=float((n * 7 + i * 30) % 101),
                memory_used_bytes=(4 + i) * GIB,
                memory_total_bytes=24 * GIB,
                power_watts=100.0 + n + i,
                power_limit_watts=450.0,
                temperature_c=None if n == 3 else 50.0 + i,  # a missing reading: an empty cell
                temperature_slowdown_c=95.0,
            )
            for i in range(gpus)
        )
        found.append(Sample(1000.0 + n * step, 1.8e9 + n * step, cards, 12.5, 8 * GIB, 64 * GIB))
    return found


def write_like_the_cli(path: Path, recorded: list[Sample]) -> Path:
    """What ``rigcheck monitor --csv`` writes (cli._cmd_monitor): a DictWriter over columns()/row()."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, columns(recorded[0]), extrasaction="ignore")
        writer.writeheader()
        for sample in recorded:
            writer.writerow({k: "" if v is None else v for k, v in row(sample).items()})
    return path


def test_a_cli_recording_reads_back_as_the_live_history_had_it(tmp_path: Path) -> None:
    recorded = samples(20)
    recording = read_recording(write_like_the_cli(tmp_path / "run.csv", recorded))
    history = History(window_s=100, interval_s=1)
    for sample in recorded:
        history.append(sample)
    assert recording.gpus == (0, 1) and len(recording) == 20 and recording.stride == 1
    assert recording.t[0] == 0.0 and recording.duration_s == 19.0  # seconds from the first row
    for key in (
        "gpu0_util_percent",
        "gpu1_power_w",
        "gpu0_mem_total_bytes",
        "gpu1_temp_slowdown_c",
        "cpu_percent",
    ):
        np.testing.assert_array_equal(recording.series(key)[1], history.series(key)[1])
    assert math.isnan(recording.series("gpu0_temp_c")[1][3])  # the empty cell
    assert recording.series("no_such_series")[1].size == 0
    assert recording.index_at(4.5) == 4 and recording.index_at(-1) == 0 and recording.index_at(99) == 19


def test_a_recording_from_before_the_newer_columns_still_opens(tmp_path: Path) -> None:
    path = tmp_path / "old.csv"
    path.write_text(
        "time,wall,cpu_percent,ram_used_bytes,gpu0_util_percent,gpu0_power_w\n"
        "5.0,1800000000.0,10,100,50,200.5\n6.0,1800000001.0,11,100,60,\n",
        encoding="utf-8",
    )
    recording = read_recording(path)
    assert recording.gpus == (0,) and list(recording.t) == [0.0, 1.0]
    assert recording.series("gpu0_power_w")[1][0] == 200.5
    assert math.isnan(recording.series("gpu0_power_w")[1][1])
    assert recording.series("gpu0_mem_total_bytes")[1].size == 0  # not recorded then


def test_a_long_recording_is_thinned_to_the_memory_budget_but_spans_the_whole_run(tmp_path: Path) -> None:
    recorded = samples(5000, gpus=1)
    path = write_like_the_cli(tmp_path / "long.csv", recorded)
    width = len(columns(recorded[0]))
    recording = read_recording(path, max_cells=400 * width)
    assert recording.rows_read == 5000
    assert len(recording) <= 400 and recording.stride >= 16
    assert recording.t[0] == 0.0 and recording.duration_s >= 4999 - recording.stride
    steps = np.diff(recording.t)
    assert np.all(steps == recording.stride)  # evenly thinned: every stride-th row


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "empty file"),
        (b"time,wall\n", "no samples"),
        (b"name,size\nllama,7\n", "not a RigCheck monitor recording"),
        (b"\xff\xfe\x00garbage", "not a text file"),
        (b"time,wall,cpu_percent\n1,2,3\n2,3\n", "line 3: 2 values under 3 columns"),
        (b"time,wall,cpu_percent\n1,2,hot\n", "line 2, column cpu_percent: 'hot' is not a number"),
        (b"time,wall\n5,1\n4,2\n", "line 3: time goes backwards"),
        (b"time,wall\n,1\n", "line 2: no time"),
        (b"time,time\n1,1\n", "appears twice"),
        (b"time," + b"x" * (MAX_LINE_CHARS + 10) + b"\n", "longer than"),
        (b"time," + b",".join(b"c%d" % i for i in range(2000)) + b"\n", "columns, more than"),
    ],
)
def test_bad_files_are_one_line_errors_naming_the_file(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(InputError) as caught:
        read_recording(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and problem in message and "\n" not in message


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_recording(tmp_path / "absent.csv")
    with pytest.raises(InputError, match="is a folder"):
        read_recording(tmp_path)
