"""The fuzz suite's loopback hub, second half (issue 30 #1, #2, #16): GGUF range replies, many-part
repositories and connections closed mid-body, drawn by hypothesis and held to the CLI's contract.

Each example sets up one repository on a loopback server: a GGUF model (one file, or split into up
to ~270 parts) or a safetensors model (up to 300 shards behind an index, headers drawn up to the
library's 25 MB header limit), and a fault for each kind of reply (truncated, gzip bomb with
Content-Encoding, wrong Content-Range, more bytes than asked, the range ignored, the connection
closed part-way through the body). The run must keep tests/fakes/fuzz.py's contract (a fit, or exit
2/3 with one line naming the repository, no traceback) and more: Python's traced memory stays under
:data:`MEMORY_BOUND` (the look-up cap is 64 MiB; the bug was 1.5 GB), nothing is left in the
library's cache from a reply that was refused, and the library's retry chatter never reaches a log.

Derandomised under CI as test_fuzz.py is (its FUZZ settings); ``RIGCHECK_FUZZ_SCALE`` scales it.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
import shutil
import struct
import tracemalloc
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fakes import fuzz
from fakes.gguf_files import write_gguf
from fakes.loopback_hub import QuietHandler, aimed_hub
from test_fuzz import BOX, FUZZ, LLAMA

COMMIT = "d" * 40
#: Python-traced memory one look-up may peak at: a small multiple of the 64 MiB look-up cap (the JSON
#: of the headers read, and the decoded bytes). 60 shards of 20 MB took 1.5 GB before the caps.
MEMORY_BOUND = 512 * 1024**2
#: faults of a ranged GGUF or safetensors reply
RANGE_FAULTS = ("ok", "ok", "ok", "short", "gzip", "gzip-bomb", "wrong-range", "more", "ignore-range", "hangup")  # fmt: skip
#: faults of a whole-file download (config.json, the index)
FILE_FAULTS = ("ok", "ok", "ok", "gzip", "gzip-bomb", "hangup", "short")
BOMB = 40 * 1024 * 1024  # inflates to more than the 32 MiB per-reply cap


@dataclass
class _File:
    """A file of the repository as byte segments (a big header is one shared template, never copied)."""

    segments: list[bytes]
    fault: str = "ok"

    @property
    def size(self) -> int:
        return sum(len(s) for s in self.segments)

    def pieces(self, start: int, end: int) -> Iterator[memoryview]:
        """Bytes ``start..end`` (inclusive), in pieces that share the segments' memory."""
        at = 0
        for segment in self.segments:
            lo, hi = max(start - at, 0), min(end + 1 - at, len(segment))
            if lo < hi:
                yield memoryview(segment)[lo:hi]
            at += len(segment)


@dataclass
class _Repo:
    repo_id: str = "fuzz/none"
    files: dict[str, _File] = field(default_factory=dict)
    served: list[str] = field(default_factory=list)


_REPO = _Repo()


def _write_pieces(handler: Any, pieces: Iterator[memoryview], limit: int | None = None) -> None:
    sent = 0
    for piece in pieces:
        if limit is not None and sent + len(piece) > limit:
            handler.wfile.write(piece[: limit - sent])
            return
        handler.wfile.write(piece)
        sent += len(piece)


def _gzip_bomb(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [packer.compress(data)]
    parts.extend(packer.compress(bytes(1024 * 1024)) for _ in range(BOMB // (1024 * 1024)))
    return b"".join([*parts, packer.flush()])


@pytest.fixture(scope="module")
def hub_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A loopback hub serving :data:`_REPO`; the library aimed at it (and its cache at a scratch folder)."""

    class Handler(QuietHandler):
        def reply(self, status: int, headers: dict[str, str], body: bytes, head: bool) -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def serve(self, *, head: bool) -> None:
            repo = _REPO
            base = {"X-Repo-Commit": COMMIT, "ETag": '"e"'}
            if self.path.startswith(f"/api/models/{repo.repo_id}"):
                siblings = [{"rfilename": name, "size": file.size} for name, file in repo.files.items()]
                info = {"id": repo.repo_id, "sha": COMMIT, "siblings": siblings}
                self.reply(200, base | {"Content-Type": "application/json"}, json.dumps(info).encode(), head)
                return
            match = re.fullmatch(rf"/{re.escape(repo.repo_id)}/resolve/[^/]+/(.+)", self.path)
            file = repo.files.get(match[1]) if match else None
            if file is None:
                self.reply(404, base | {"X-Error-Code": "EntryNotFound"}, b"not found", head)
                return
            repo.served.append(match[1])  # type: ignore[index]
            base["ETag"] = f'"{zlib.crc32(match[1].encode()):08x}{file.size:x}"'  # type: ignore[index]
            ranged = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
            start, end = (
                (int(ranged[1]), min(int(ranged[2]), file.size - 1)) if ranged else (0, file.size - 1)
            )
            fault = file.fault
            if fault == "ignore-range" or not ranged:
                status, extra = 200, {}
            else:
                status, extra = 206, {"Content-Range": f"bytes {start}-{end}/{file.size}"}
            headers = base | {"Content-Type": "application/octet-stream"} | extra
            if head:
                self.send_response(200)
                for key, value in (base | {"Content-Length": str(file.size)}).items():
                    self.send_header(key, value)
                self.end_headers()
                return
            length = end + 1 - start
            if fault in ("gzip", "gzip-bomb"):
                plain = b"".join(file.pieces(start, end))
                body = _gzip_bomb(plain) if fault == "gzip-bomb" else gzip.compress(plain)
                self.reply(status, headers | {"Content-Encoding": "gzip"}, body, False)
                return
            if fault == "wrong-range" and ranged:  # says, and sends, bytes 7 further on than asked
                start, end = min(start + 7, file.size - 1), min(end + 7, file.size - 1)
                headers["Content-Range"] = f"bytes {start}-{end}/{file.size}"
                length = end + 1 - start
            if fault == "more" and ranged:
                end = file.size - 1 if end + 1 < file.size else end
                length = end + 1 - start + 1000
                headers["Content-Range"] = f"bytes {start}-{end + 1000}/{file.size}"
            if fault == "ignore-range":
                start, end, length = 0, file.size - 1, file.size
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(length if fault != "short" else max(length // 2, 1)))
            self.end_headers()
            if fault == "hangup":  # the body stops part-way; the connection closes
                _write_pieces(self, file.pieces(start, end), limit=max(length // 3, 1))
                self.close_connection = True
                return
            if fault == "short":
                _write_pieces(self, file.pieces(start, end), limit=max(length // 2, 1))
                return
            _write_pieces(self, file.pieces(start, end))
            if fault == "more" and ranged:
                self.wfile.write(bytes(1000))

    home = tmp_path_factory.mktemp("hf-hub-fuzz")
    with aimed_hub(Handler, home):
        yield home / "hub"


@pytest.fixture(scope="module", autouse=True)
def report() -> Iterator[None]:
    yield
    if os.environ.get("RIGCHECK_FUZZ_REPORT"):
        fuzz.write_report(os.environ["RIGCHECK_FUZZ_REPORT"])


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            self.lines.append(record.getMessage())


def _run_contract(cache: Path, argv: list[str], repo_id: str, plain: set[bytes]) -> fuzz.Outcome:
    """fuzz.check's contract, plus: bounded memory, no retry chatter, nothing cached from a refusal."""
    records = _Records()
    library = logging.getLogger("huggingface_hub")
    library.addHandler(records)
    tracemalloc.start()
    try:
        outcome = fuzz.check(f"{argv[0]} (hub: {argv[1].split('/')[0]})", argv, names=[f"hf:{repo_id}"])
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        library.removeHandler(records)
    fuzz.TALLY["hub: peak traced MiB"][f"<= {1 << max(peak, 1).bit_length() >> 20} MiB"] += 1
    assert peak < MEMORY_BOUND, f"{peak / 2**20:.0f} MiB traced in one look-up: {outcome.err[:300]}"
    assert not records.lines, f"the hub library logged {records.lines[:2]}"
    assert "Retry" not in outcome.err and "thrown while requesting" not in outcome.err
    if outcome.code:
        assert f"hf:{repo_id}" in outcome.err.splitlines()[-1]
    left = [p for p in cache.rglob("*") if p.is_file() and p.parent.name == "blobs"]
    assert not [p for p in left if p.name.endswith(".incomplete")], "a half-written download was left"
    for blob in left:  # only whole files served as they are (never a bomb's or a hang-up's bytes)
        assert blob.read_bytes() in plain, (
            f"{blob.name} ({blob.stat().st_size:,} bytes) is not a file served whole"
        )
    return outcome


def _fresh(cache: Path, repo_id: str, files: dict[str, _File]) -> None:
    shutil.rmtree(cache, ignore_errors=True)
    _REPO.repo_id, _REPO.files, _REPO.served = repo_id, files, []


# -- GGUF range replies, one file or many parts --------------------------------------------------------


@pytest.fixture(scope="module")
def gguf_models(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, bytes]]:
    """Tiny models from the GGUF fixture builder: one file, and split into 39 and 273 parts."""
    models: dict[int, dict[str, bytes]] = {}
    for layers, split in ((1, 0), (4, 1), (30, 1)):
        folder = tmp_path_factory.mktemp(f"gguf-{layers}")
        write_gguf(folder / "Tiny-Q8_0.gguf", layers=layers, split_max_tensors=split)
        parts = {path.name: path.read_bytes() for path in sorted(folder.iterdir())}
        models[len(parts)] = parts
    return models


@settings(FUZZ, max_examples=fuzz.examples(20))
@given(
    parts=st.sampled_from([1, 39, 273]),
    fault=st.sampled_from(RANGE_FAULTS),
    faulty=st.sampled_from(["first", "last", "every"]),
    cut=st.one_of(st.none(), st.integers(0, 4096)),
)
# what every run covers, whatever is drawn: a bomb and a hang-up, in one file and among many parts
@example(parts=1, fault="gzip-bomb", faulty="every", cut=None)
@example(parts=273, fault="gzip-bomb", faulty="last", cut=None)
@example(parts=39, fault="hangup", faulty="first", cut=None)
@example(parts=273, fault="ok", faulty="every", cut=None)
def test_hostile_gguf_range_replies(
    hub_home: Path,
    gguf_models: dict[int, dict[str, bytes]],
    parts: int,
    fault: str,
    faulty: str,
    cut: int | None,
) -> None:
    """Truncated, bombed, mis-ranged and cut-off GGUF ranges, in one file or hundreds of parts."""
    model = gguf_models[parts]
    names = sorted(model)
    files = {name: _File([data]) for name, data in model.items()}
    if cut is not None:  # a part whose bytes stop inside the header (the listing gives its real size)
        files[names[-1]] = _File([model[names[-1]][:cut]])
    for name in {"first": names[:1], "last": names[-1:], "every": names}[faulty]:
        files[name].fault = fault
    _fresh(hub_home, "fuzz/gguf", files)
    fuzz.TALLY["hub: GGUF scenario"][f"{parts} parts, {fault} ({faulty})"] += 1
    outcome = _run_contract(
        hub_home, ["fit", "fuzz/gguf:Q8_0", "--machine", str(BOX), "--json"], "fuzz/gguf", set()
    )
    if fault in ("ok", "gzip") and cut is None:
        assert outcome.code == 0, outcome.err
    if fault == "gzip-bomb" or (fault not in {"ok", "gzip"} and faulty == "every"):
        assert outcome.code != 0, "a hostile reply made a fit"


# -- many-part safetensors repositories ----------------------------------------------------------------


def _config() -> bytes:
    return json.dumps(LLAMA | {"quantization_config": None, "num_hidden_layers": 2}).encode()


def _shard_files(count: int, pad: int, fault: str, faulty: int) -> dict[str, _File]:
    """``count`` shards behind an index, each header padded to about ``pad`` bytes (one shared padding)."""
    names = [f"model-{n:05d}-of-{count:05d}.safetensors" for n in range(1, count + 1)]
    padding = b"x" * pad
    files: dict[str, _File] = {}
    weight_map = {}
    for n, name in enumerate(names):
        tensor = f"model.layers.{n}.mlp.down_proj.weight"
        weight_map[tensor] = name
        head = json.dumps({tensor: {"dtype": "BF16", "shape": [8, 8], "data_offsets": [0, 128]}})[:-1]
        prefix = (head + ', "__metadata__": {"pad": "').encode()
        suffix = b'"}}'
        length = len(prefix) + pad + len(suffix)
        files[name] = _File([struct.pack("<Q", length) + prefix, padding, suffix + bytes(128)])
    files["model.safetensors.index.json"] = _File([json.dumps({"weight_map": weight_map}).encode()])
    files["config.json"] = _File([_config()])
    for name in names if faulty < 0 else [names[min(faulty, count - 1)]]:
        files[name].fault = fault
    return files


@settings(FUZZ, max_examples=fuzz.examples(10))
@given(
    count=st.sampled_from([1, 2, 8, 60, 163, 300]),
    pad=st.sampled_from([0, 100, 200_000, 2_000_000, 20_000_000, 24_900_000]),
    fault=st.sampled_from(RANGE_FAULTS),
    faulty=st.integers(-1, 300),
    file_fault=st.sampled_from(FILE_FAULTS),
    which=st.sampled_from(["config.json", "model.safetensors.index.json"]),
)
# always covered: 60 shards of 20 MB (1.5 GB before the per-look-up cap), bombs, a hang-up
@example(count=60, pad=20_000_000, fault="ok", faulty=0, file_fault="ok", which="config.json")
@example(count=300, pad=200_000, fault="ok", faulty=0, file_fault="gzip-bomb", which="config.json")
@example(count=8, pad=100, fault="gzip-bomb", faulty=3, file_fault="ok", which="config.json")
@example(count=163, pad=100, fault="hangup", faulty=-1, file_fault="hangup", which="config.json")
@example(count=2, pad=100, fault="ok", faulty=0, file_fault="hangup", which="model.safetensors.index.json")
def test_many_part_repositories(
    hub_home: Path, count: int, pad: int, fault: str, faulty: int, file_fault: str, which: str
) -> None:
    """Hundreds of shards with headers up to the library's limit: the per-look-up cap holds memory down,
    and a hostile shard, index or config.json (bombed, cut off, hung up) is one line."""
    files = _shard_files(count, pad, fault, faulty)
    files[which].fault = file_fault
    whole = [f for name, f in files.items() if name.endswith(".json") and f.fault in ("ok", "gzip")]
    plain = {b"".join(f.segments) for f in whole}
    _fresh(hub_home, "fuzz/shards", files)
    big = "over" if count * pad > 64 * 1024**2 else "under"
    fuzz.TALLY["hub: shards scenario"][f"{big} the look-up cap, shard {fault}, {which} {file_fault}"] += 1
    outcome = _run_contract(
        hub_home, ["fit", "fuzz/shards", "--machine", str(BOX), "--json"], "fuzz/shards", plain
    )
    if count * pad > 64 * 1024**2:
        assert outcome.code != 0, "more header bytes than one look-up reads made a fit"
    if file_fault == "gzip-bomb":
        assert outcome.code != 0
