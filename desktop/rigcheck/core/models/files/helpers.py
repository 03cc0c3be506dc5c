"""What every reader shares: bounded reads of JSON and headers, the tensor-overlap check, and one-line
wording of values and errors."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, TypeGuard

from rigcheck.core.errors import InputError
from rigcheck.core.fileio import check_depth
from rigcheck.core.models.files.limits import MAX_JSON_BYTES
from rigcheck.core.models.spec import ArchConfig
from rigcheck.core.untrusted import JSON_CHECKS as _JSON_CHECKS


def _check_overlaps(spans: list[tuple[int, int, str]], source: str) -> None:
    """Refuse tensors whose data overlap: each byte of weights belongs to one tensor (GGUF, safetensors)."""
    spans.sort()
    for (_start, end, name), (next_start, next_end, next_name) in itertools.pairwise(spans):
        if next_start < end and next_end > next_start:
            raise InputError(
                source, f"corrupt: the data of tensors {_show(name)} and {_show(next_name)} overlap"
            )


# -- shared helpers -----------------------------------------------------------------------------------


def _parse_config(config: Mapping[str, Any], source: str) -> ArchConfig:
    from rigcheck.core.models.config import parse_config

    return parse_config(config, source)


#: bytes read at a time when a file's size is not known in advance (a pipe, a procfs-like file)
_READ_CHUNK: Final = 1024 * 1024


def _read_at_most(handle: Any, limit: int) -> bytes:
    """Up to ``limit`` bytes. ``read(limit)`` would allocate ``limit`` bytes up front (64 MiB for
    a 1 kB config.json): size the first read by the file's own size and go on in chunks."""
    try:
        size = os.fstat(handle.fileno()).st_size
    except (OSError, AttributeError, ValueError):
        size = 0
    chunks: list[bytes] = []
    total = 0
    want = min(size + 1, limit) if size else min(_READ_CHUNK, limit)
    while total < limit:
        chunk = handle.read(want)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if size and len(chunk) < want:
            break  # a regular file read short of what its size promised: that was all of it
        want = min(_READ_CHUNK, limit - total)
    return b"".join(chunks)


def _safetensors_header_length(path: Path) -> int:
    with path.open("rb") as handle:
        return int.from_bytes(handle.read(8), "little")


def _read_json_object(path: Path, limit: int | None = None) -> dict[str, Any]:
    source = str(path)
    limit = MAX_JSON_BYTES if limit is None else limit
    try:
        with path.open("rb") as handle:
            raw = _read_at_most(handle, limit + 1)
    except OSError as error:
        raise InputError(source, f"cannot read ({_os_reason(error)})") from error
    if len(raw) > limit:
        raise InputError(source, f"over {limit // 2**20} MiB: not a model's JSON file RigCheck reads")
    try:
        value = json.loads(raw.decode("utf-8"), **_JSON_CHECKS)
    except UnicodeDecodeError as error:
        raise InputError(source, f"not UTF-8 text (byte {error.start})") from error
    except json.JSONDecodeError as error:
        raise InputError(source, f"not valid JSON ({error.msg}, line {error.lineno})") from error
    except RecursionError as error:
        raise InputError(source, "not valid JSON (nested too deeply)") from error
    except ValueError as error:  # an integer of thousands of digits (sys.get_int_max_str_digits)
        raise InputError(source, f"not valid JSON ({_first_line(error)})") from error
    if not isinstance(value, dict):
        raise InputError(source, "not a JSON object")
    check_depth(value, source)
    return value


def _model_name(folder: Path) -> str:
    """A folder's model name; ``org/name`` for a hub cache snapshot (models--org--name/snapshots/x)."""
    folder = folder.absolute()
    if folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("models--"):
        return folder.parent.parent.name[len("models--") :].replace("--", "/", 1)
    return folder.name or str(folder)


def _starts_with(path: Path, magic: bytes) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(magic)) == magic
    except OSError:
        return False


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_or(value: object, default: int) -> int:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else default


def _show(value: object, limit: int = 60) -> str:
    """A value from a file, safe on one line: control characters escaped, long ones cut."""
    text = value if isinstance(value, str) else repr(value)
    text = text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return _show(text.splitlines()[0] if text else type(error).__name__, 160)


def _os_reason(error: OSError) -> str:
    return error.strerror or _first_line(error)
