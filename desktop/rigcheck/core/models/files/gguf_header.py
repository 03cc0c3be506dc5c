"""The GGUF header, read with ``mmap`` and ``struct`` under the limits (its metadata and tensor table),
and a split model's parts found and checked against each other."""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rigcheck.core.errors import InputError
from rigcheck.core.models.files.helpers import (
    _check_overlaps,
    _first_line,
    _int_or,
    _is_int,
    _os_reason,
    _show,
)
from rigcheck.core.models.files.limits import (
    _ARRAY,
    _DECODE_ARRAY,
    _DECODE_STRING,
    _DEFAULT_ALIGNMENT,
    _GGUF_MAGIC,
    _GGUF_VERSIONS,
    _MAX_ARRAY_DEPTH,
    _MAX_ARRAY_STRINGS,
    _MAX_DIMS,
    _MAX_ELEMENTS,
    _MAX_KEY,
    _MAX_KV,
    _MAX_NESTED_ARRAYS,
    _MAX_TENSOR_NAME,
    _MAX_TENSORS,
    _MIN_KV,
    _MIN_TENSOR,
    _SCALAR_FORMATS,
    _SPLIT,
    _STRING,
)


@dataclass(frozen=True)
class _Array:
    """A metadata array: its item type, its length and, for short numeric arrays, its values."""

    item_type: int
    length: int
    values: tuple[Any, ...] | None


@dataclass(frozen=True)
class _Tensor:
    name: str
    #: dimensions in GGUF order (ne0, the contiguous one, first)
    dims: tuple[int, ...]
    ggml_type: int
    type_name: str
    n_elements: int
    n_bytes: int


@dataclass(frozen=True)
class _Header:
    path: Path
    metadata: dict[str, Any]
    tensors: tuple[_Tensor, ...]
    #: metadata array items counted up to and including this part (the cap is for all parts)
    array_items: int = 0


class NeedMoreBytesError(Exception):
    """The header runs past the bytes at hand (a prefix of a remote file), not past the file's end.

    ``upto`` is the byte offset the parse needed to reach; the caller fetches at least that much and
    parses again. Never raised for a local file, where all its bytes are at hand.
    """

    def __init__(self, upto: int) -> None:
        super().__init__(f"the header needs bytes up to {upto:,}")
        self.upto = upto


class _Cursor:
    """Bounded reads from a GGUF file, mapped or a prefix of it: every length is checked against the
    bytes left in the file (``size``, its real size); running past the bytes at hand (``len(data)``,
    shorter than ``size`` only for a prefix fetched from the hub) is :class:`NeedMoreBytesError`."""

    def __init__(self, data: mmap.mmap | bytes, size: int, source: str, items: int = 0) -> None:
        self.data = data
        self.size = size
        self.available = min(len(data), size)
        self.source = source
        self.pos = 0
        self.order = "<"
        #: array items counted so far: ``items`` were counted in the split model's earlier parts
        self.strings = items
        self.carried = items
        self.nested = 0
        self._structs: dict[str, struct.Struct] = {}

    def fail(self, problem: str) -> InputError:
        return InputError(self.source, problem)

    def big_endian(self) -> None:
        self.order = ">"
        self._structs.clear()

    def need(self, count: int, what: str) -> None:
        if self.pos + count > self.size:
            raise self.fail(
                f"truncated or corrupt: {what} at byte {self.pos:,} needs {count:,} bytes, "
                f"past the end of the file ({self.size:,} bytes)"
            )
        if self.pos + count > self.available:
            raise NeedMoreBytesError(self.pos + count)

    def unpack(self, fmt: str, what: str) -> Any:
        packer = self._structs.get(fmt)
        if packer is None:
            packer = self._structs[fmt] = struct.Struct(self.order + fmt)
        self.need(packer.size, what)
        value = packer.unpack_from(self.data, self.pos)[0]
        self.pos += packer.size
        return value

    def string(self, what: str, limit: int = _DECODE_STRING) -> str | None:
        """A string; None (skipped, not read) when it is longer than ``limit`` bytes."""
        length = self.unpack("Q", f"the length of {what}")
        self.need(length, f"{what} ({length:,} bytes)")
        start = self.pos
        self.pos += length
        if length > limit:
            return None
        return bytes(self.data[start : self.pos]).decode("utf-8", errors="replace")

    def value(self, value_type: int, key: str, depth: int = 0) -> Any:
        fmt = _SCALAR_FORMATS.get(value_type)
        if fmt is not None:
            return self.unpack(fmt, f"the value of {key}")
        if value_type == _STRING:
            return self.string(f"the value of {key}")
        if value_type != _ARRAY:
            raise self.fail(f"metadata {key}: unknown value type {value_type}")
        if depth >= _MAX_ARRAY_DEPTH:
            raise self.fail(f"metadata {key}: arrays nested more than {_MAX_ARRAY_DEPTH} deep")
        item_type = self.unpack("I", f"the item type of {key}")
        length = self.unpack("Q", f"the length of {key}")
        fmt = _SCALAR_FORMATS.get(item_type)
        if fmt is not None:
            width = struct.calcsize(fmt)
            self.need(length * width, f"array {key} ({length:,} items)")
            values = None
            if length <= _DECODE_ARRAY:
                values = struct.unpack_from(f"{self.order}{length}{fmt}", self.data, self.pos)
            self.pos += length * width
            return _Array(item_type, length, values)
        if item_type not in (_STRING, _ARRAY):
            raise self.fail(f"metadata {key}: unknown array item type {item_type}")
        self.need(length * (8 if item_type == _STRING else 12), f"array {key} ({length:,} items)")
        self.strings += length
        if self.strings > _MAX_ARRAY_STRINGS:
            raise self.fail(
                f"metadata arrays hold over {_MAX_ARRAY_STRINGS:,} items"
                + (" (the parts of the split model together)" if self.carried else "")
                + ": not a model RigCheck reads"
            )
        if item_type == _ARRAY:
            self.nested += length
            if self.nested > _MAX_NESTED_ARRAYS:
                raise self.fail(
                    f"metadata arrays hold over {_MAX_NESTED_ARRAYS:,} nested arrays: "
                    "not a model RigCheck reads"
                )
            for _ in range(length):
                self.value(_ARRAY, key, depth + 1)
            return _Array(item_type, length, None)
        # the hot loop of a large vocabulary: lengths only, nothing decoded
        data, size, available, pos = self.data, self.size, self.available, self.pos
        read_length = struct.Struct(self.order + "Q").unpack_from
        for index in range(length):
            if pos + 8 > available:
                self.pos = pos
                self.need(8, f"item {index:,} of {key}")
            pos += 8 + read_length(data, pos)[0]
            if pos > available:
                if pos > size:
                    self.pos = pos
                    raise self.fail(
                        f"truncated or corrupt: item {index:,} of {key} runs past the end of the file"
                    )
                raise NeedMoreBytesError(pos)
        self.pos = pos
        return _Array(item_type, length, None)


def _read_gguf_header(path: Path, items: int = 0) -> _Header:
    source = str(path)
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size == 0:
                raise InputError(source, "empty file, not a GGUF model")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _parse_gguf(_Cursor(data, size, source, items), path)
    except InputError:
        raise
    except OSError as error:
        raise InputError(source, f"cannot read ({_os_reason(error)})") from error
    except (ValueError, IndexError, OverflowError, struct.error, MemoryError, RecursionError) as error:
        # not expected: every read above is bounds-checked; a last net so no traceback escapes
        raise InputError(
            source, f"not a readable GGUF file ({type(error).__name__}: {_first_line(error)})"
        ) from error


def parse_gguf_prefix(data: bytes, size: int, path: Path) -> _Header:
    """The header of a GGUF file of ``size`` bytes from its first bytes ``data`` (a remote file's prefix).

    The same checks as for a local file, against the real ``size``; raises :class:`NeedMoreBytesError`
    when the header runs past ``data`` but not past ``size``, and :class:`InputError` (source
    ``str(path)``) for anything wrong with the file.
    """
    source = str(path)
    if size <= 0:
        raise InputError(source, "empty file, not a GGUF model")
    try:
        return _parse_gguf(_Cursor(data, size, source), path)
    except (InputError, NeedMoreBytesError):
        raise
    except (ValueError, IndexError, OverflowError, struct.error, MemoryError, RecursionError) as error:
        raise InputError(
            source, f"not a readable GGUF file ({type(error).__name__}: {_first_line(error)})"
        ) from error


def _parse_gguf(cur: _Cursor, path: Path) -> _Header:
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    if cur.size >= 4 and cur.available < min(cur.size, 24):
        raise NeedMoreBytesError(min(cur.size, 24))
    if cur.size < 4 or bytes(cur.data[:4]) != _GGUF_MAGIC:
        raise cur.fail(f"not a GGUF file (it starts with {bytes(cur.data[:4])!r}, not b'GGUF')")
    if cur.size < 24:
        raise cur.fail(f"truncated: {cur.size} bytes, shorter than a GGUF header")
    cur.pos = 4
    version = cur.unpack("I", "the version")
    if version & 0xFFFF == 0:  # written on a big-endian machine (as gguf-py reads it)
        cur.big_endian()
        version = int.from_bytes(version.to_bytes(4, "little"), "big")
    if version not in _GGUF_VERSIONS:
        raise cur.fail(f"GGUF version {version} is not supported (RigCheck reads versions 2 and 3)")
    tensor_count = cur.unpack("Q", "the tensor count")
    kv_count = cur.unpack("Q", "the metadata count")
    if tensor_count > _MAX_TENSORS or kv_count > _MAX_KV:
        raise cur.fail(
            f"the header claims {tensor_count:,} tensors and {kv_count:,} metadata entries, more than the "
            f"{_MAX_TENSORS:,} of each RigCheck reads (the largest real models have a few thousand)"
        )
    room = cur.size - cur.pos
    if tensor_count * _MIN_TENSOR + kv_count * _MIN_KV > room:
        raise cur.fail(
            f"the header claims {tensor_count:,} tensors and {kv_count:,} metadata entries, "
            f"more than a {cur.size:,}-byte file can hold"
        )

    metadata: dict[str, Any] = {}
    for index in range(kv_count):
        key = cur.string(f"metadata key {index + 1}", limit=_MAX_KEY)
        if key is None:
            raise cur.fail(f"metadata key {index + 1} is absurdly long")
        value_type = cur.unpack("I", f"the type of {_show(key)}")
        if key in metadata:
            raise cur.fail(f"metadata {_show(key)} appears twice")
        metadata[key] = cur.value(value_type, _show(key))

    raw: list[tuple[str, tuple[int, ...], int, int]] = []
    for index in range(tensor_count):
        name = cur.string(f"the name of tensor {index + 1}", limit=_MAX_TENSOR_NAME)
        if name is None:
            raise cur.fail(f"tensor {index + 1} has an absurdly long name")
        n_dims = cur.unpack("I", f"the dimension count of {_show(name)}")
        if n_dims > _MAX_DIMS:
            raise cur.fail(f"tensor {_show(name)} has {n_dims} dimensions (GGUF allows {_MAX_DIMS})")
        dims = tuple(cur.unpack("Q", f"the dimensions of {_show(name)}") for _ in range(n_dims))
        ggml_type = cur.unpack("I", f"the type of {_show(name)}")
        offset = cur.unpack("Q", f"the data offset of {_show(name)}")
        raw.append((name, dims, ggml_type, offset))

    alignment = metadata.get("general.alignment", _DEFAULT_ALIGNMENT)
    if not _is_int(alignment) or alignment <= 0 or alignment & (alignment - 1):
        raise cur.fail(f"general.alignment {_show(alignment)} is not a power of two")
    data_start = -(-cur.pos // alignment) * alignment

    tensors: list[_Tensor] = []
    spans: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for name, dims, ggml_type, offset in raw:
        shown = _show(name)
        if name in seen:
            raise cur.fail(f"tensor {shown} appears twice")
        seen.add(name)
        try:
            qtype = GGMLQuantizationType(ggml_type)
            block, type_size = GGML_QUANT_SIZES[qtype]
        except (ValueError, KeyError):
            raise cur.fail(f"tensor {shown} has unknown type {ggml_type}") from None
        n_elements = 1
        for dim in dims:
            n_elements *= dim
            if n_elements > _MAX_ELEMENTS:
                raise cur.fail(f"tensor {shown} has absurd dimensions {list(dims)}")
        if dims and dims[0] % block:
            raise cur.fail(
                f"tensor {shown}: dimension {dims[0]} is not a multiple of the {qtype.name} block ({block})"
            )
        n_bytes = n_elements // block * type_size
        end = data_start + offset + n_bytes
        if end > cur.size:
            raise cur.fail(
                f"truncated or corrupt: tensor {shown} ({qtype.name} {list(dims)}) ends at byte {end:,}, "
                f"past the end of the file ({cur.size:,} bytes)"
            )
        tensors.append(_Tensor(name, dims, ggml_type, qtype.name, n_elements, n_bytes))
        spans.append((offset, offset + n_bytes, name))
    _check_overlaps(spans, cur.source)
    return _Header(path=path, metadata=metadata, tensors=tuple(tensors), array_items=cur.strings)


# -- GGUF: split files --------------------------------------------------------------------------------


def _gguf_parts(path: Path) -> list[Path]:
    """Every part of the GGUF model ``path`` belongs to, in order (just ``path`` when not split)."""
    source = str(path)
    try:
        if not path.is_file():
            raise InputError(source, "no such file" if not path.exists() else "not a file")
    except OSError as error:
        raise InputError(source, f"cannot look at it ({_os_reason(error)})") from error
    match = _SPLIT.fullmatch(path.name)
    if match is None:
        return [path]
    number, count = int(match["no"]), int(match["count"])
    if count == 0 or not 1 <= number <= count:
        raise InputError(source, f"the name says part {number} of {count}, which cannot be")
    names = [f"{match['stem']}-{i:05d}-of-{match['count']}{path.suffix}" for i in range(1, count + 1)]
    parts = [path.with_name(name) for name in names]
    missing = [part.name for part in parts if not part.is_file()]
    if missing:
        shown = ", ".join(missing[:3]) + (f" (+{len(missing) - 3} more)" if len(missing) > 3 else "")
        raise InputError(
            source,
            f"split GGUF of {count} parts: {shown} {'is' if len(missing) == 1 else 'are'} not in the folder",
        )
    return parts


def _check_split(parts: Sequence[Path], headers: Sequence[_Header]) -> None:
    first = headers[0].metadata
    if len(parts) == 1:
        count = first.get("split.count")
        if _is_int(count) and count > 1:
            raise InputError(
                str(parts[0]),
                f"this is part {_int_or(first.get('split.no'), 0) + 1} of a {count}-part split GGUF, but its "
                "name does not end in -0000N-of-0000M.gguf, so the other parts cannot be found",
            )
        return
    for number, (part, header) in enumerate(zip(parts, headers, strict=True)):
        said_no, said_count = header.metadata.get("split.no"), header.metadata.get("split.count")
        if (_is_int(said_no) and said_no != number) or (_is_int(said_count) and said_count != len(parts)):
            raise InputError(
                str(part),
                f"its header says part {_int_or(said_no, -1) + 1} of {said_count}, its name {number + 1} "
                f"of {len(parts)}: parts of different splits?",
            )
    expected = first.get("split.tensors.count")
    total = sum(len(header.tensors) for header in headers)
    if _is_int(expected) and expected != total:
        raise InputError(
            str(parts[0]),
            f"the parts hold {total} tensors, the first part expects {expected}: parts of other downloads?",
        )
    seen: dict[str, Path] = {}
    for header in headers:
        for tensor in header.tensors:
            if tensor.name in seen:
                raise InputError(
                    str(header.path), f"tensor {_show(tensor.name)} is also in {seen[tensor.name].name}"
                )
            seen[tensor.name] = header.path


def _gguf_models(folder: Path) -> list[Path]:
    """One path per GGUF model in a folder (the first part of a split one); projectors skipped."""
    models: dict[str, Path] = {}
    for path in sorted(folder.glob("*.gguf")) + sorted(folder.glob("*.GGUF")):
        if not path.is_file() or path.name.lower().startswith("mmproj"):
            continue
        match = _SPLIT.fullmatch(path.name)
        key = match["stem"] if match else path.name
        if key not in models or (match and int(match["no"]) == 1):
            models[key] = path
    return [models[key] for key in sorted(models)]
