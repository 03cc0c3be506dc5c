"""Models on disk: GGUF files (whole or split), safetensors folders and ``config.json``.

:func:`load_model_path` looks at what a path is and hands it to one of:

* :func:`read_gguf`: a GGUF file, or any part of a split one (``name-00002-of-00003.gguf``; every part
  must be there). The architecture comes from the metadata, the parameter counts from the tensors'
  element counts and the bytes from their types, all exact; no config.json is needed.
* :func:`read_model_folder`: a folder with ``config.json`` and safetensors files (one file, or shards
  named by ``model.safetensors.index.json``), or with GGUF files. The architecture comes from
  ``config.json`` through :func:`rigcheck.core.models.config.parse_config`; the parameters from the
  safetensors headers' tensor table (:mod:`rigcheck.core.models.tensors`: packed integers unpacked,
  scales skipped), config arithmetic the fallback; the bytes, per dtype and per layer, from the
  headers (:func:`read_safetensors_header`), never from the tensor data.
* :func:`read_config_json`: a bare ``config.json``.

Every file is hostile until proven otherwise: whatever is wrong with it (truncated, wrong magic, a
count or a length the file cannot hold, absurd dimensions, bad JSON) becomes one
:class:`InputError` naming the file, with a one-line problem; work and memory are bounded by the
file's size and by the limits below, never by a number read from the file.

The GGUF header is read here, with ``mmap`` and ``struct``, rather than by ``gguf.GGUFReader``: the
reader builds a numpy view for every element of every metadata array, so a 262,144-token vocabulary
(Gemma 3) costs it about 20 s and 1 GB, where only the array's length is needed. The ``gguf`` package
(llama.cpp's gguf-py) still supplies what changes as llama.cpp grows: the tensor types and their block
sizes (``GGMLQuantizationType``, ``GGML_QUANT_SIZES``) and the file types (``LlamaFileType``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import mmap
import os
import re
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, TypeGuard

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.fileio import check_depth
from rigcheck.core.models.spec import ArchConfig, LayerKind, ModelInfo, WeightsInfo
from rigcheck.core.models.tensors import count_from_tensors
from rigcheck.core.text import one_line
from rigcheck.core.untrusted import JSON_CHECKS as _JSON_CHECKS

#: the format allows 100 MB, but real headers are kilobytes to ~15 MB (100k tensors); the hub library
#: refuses over 25 MB (SAFETENSORS_MAX_HEADER_LENGTH). A parsed header costs ~10x its bytes.
SAFETENSORS_MAX_HEADER: Final = 32 * 1024 * 1024
#: all the headers of one model folder together (six 30 MB shards would cost gigabytes)
SAFETENSORS_MAX_HEADERS: Final = 64 * 1024 * 1024
#: an index larger than this is not one (DeepSeek-V3's, 91k tensors, is ~9 MB)
MAX_JSON_BYTES: Final = 32 * 1024 * 1024
#: a config.json is 1-100 kB; larger is not one (and would cost ~50x its size to parse)
MAX_CONFIG_BYTES: Final = 4 * 1024 * 1024
MAX_LAYERS: Final = 10_000

CONFIG_FILE: Final = "config.json"
SAFETENSORS_INDEX: Final = "model.safetensors.index.json"

# -- GGUF limits ----------------------------------------------------------------------------------
_GGUF_MAGIC = b"GGUF"
_GGUF_VERSIONS = (2, 3)
#: GGML_MAX_DIMS
_MAX_DIMS = 4
#: llama.cpp's own limit is 64 bytes (GGML_MAX_NAME); this only keeps a hostile name short
_MAX_TENSOR_NAME = 4096
_MAX_KEY = 65_536
#: far above any real model (DeepSeek-V3 has 1,025 tensors, a 405B dense model ~1,140, Mixtral with
#: per-expert tensors ~1,000), and low enough that a forged count cannot make the parse run for minutes
_MAX_TENSORS = 65_536
#: real files hold a few dozen metadata entries; the big ones (vocabularies) are single arrays
_MAX_KV = 65_536
#: strings in metadata arrays, all arrays together. Real vocabularies with merges stay near 1e6.
_MAX_ARRAY_STRINGS = 4_000_000
#: arrays inside metadata arrays, all together: llama.cpp writes none; each costs a Python call, so
#: 4M empty ones (48 MB) took 15 s
_MAX_NESTED_ARRAYS = 65_536
_MAX_ARRAY_DEPTH = 3
#: numeric arrays up to this length are decoded (per-layer values); longer ones are only counted
_DECODE_ARRAY = 65_536
#: strings longer than this are skipped, not decoded (a chat template is ~10 kB)
_DECODE_STRING = 1 << 20
_MAX_ELEMENTS = 1 << 62
_DEFAULT_ALIGNMENT = 32
#: smallest encoding of one metadata entry (key length, type, a one-byte value) and one tensor info
#: (name length, dimension count, type, offset)
_MIN_KV = 8 + 4 + 1
_MIN_TENSOR = 8 + 4 + 4 + 8

# GGUF metadata value types (gguf_type in ggml/include/gguf.h): struct formats of the scalars.
_SCALAR_FORMATS: Final = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
_STRING: Final = 8
_ARRAY: Final = 9

_SPLIT = re.compile(r"(?P<stem>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf", re.IGNORECASE)
_GGUF_LAYER = re.compile(r"blk\.(\d+)\.")
#: tensors of the output head; everything else outside the blocks is the input side
_GGUF_HEAD = frozenset({"output.weight", "output.bias", "output_norm.weight", "output_norm.bias"})

#: llama.cpp file types (LLAMA_FTYPE_MOSTLY_*) whose RigCheck quant id is not their lower-cased name
_FTYPE_IDS: Final = {
    "f32": "fp32",
    "f16": "fp16",
    "q2_k": "q2_k-mix",
    "q6_k": "q6_k-mix",
    "mxfp4_moe": "mxfp4",
}
#: LLAMA_FTYPE_GUESSED: or-ed into general.file_type when the converter guessed it
_FTYPE_GUESSED = 1024

#: Sliding-window layers llama.cpp assumes per architecture when the GGUF has no
#: ``attention.sliding_window_pattern`` (``hparams.set_swa_pattern(n)`` in its model loader): layer i is
#: full attention when (i + 1) % n == 0, windowed otherwise. Value: (n, window when the GGUF has
#: no ``attention.sliding_window``, layer count the rule is limited to). A pattern key in the file
#: wins; llama.cpp's "dense first" phase (``set_swa_pattern(n, true)``, a few newer archs) is not
#: modelled: such a file is counted with the usual phase (the same share of full layers).
_SWA_RULES: Final[Mapping[str, tuple[int, int | None, int | None]]] = {
    "gemma2": (2, 4096, None),
    "gemma3": (6, None, None),
    "gemma3n": (5, None, None),
    "cohere2": (4, None, None),
    "gpt-oss": (2, None, None),
    # chunked attention in 8192-token chunks on 3 layers of 4: a bounded cache, like a window
    "llama4": (4, 8192, None),
    # only the 32B (64 layers) uses windows
    "exaone4": (4, 4096, 64),
}
#: architectures whose window llama.cpp fixes, whatever ``attention.sliding_window`` says (unless 0)
_FIXED_WINDOW: Final = frozenset({"llama4"})
#: architectures whose every layer is a recurrent state (no attention, no KV cache)
_RECURRENT_ARCHS: Final = frozenset({"mamba", "mamba2", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7"})

# -- safetensors ----------------------------------------------------------------------------------
_ST_SPLIT = re.compile(r"(?P<stem>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.safetensors", re.IGNORECASE)
#: which decoder layer a tensor is in: model.layers.3., transformer.h.3., model.language_model.layers.3.
_ST_LAYER = re.compile(r"(?:^|\.)(?:layers|h|blocks)\.(\d+)\.")
#: ... unless it is in a vision or audio tower, or a multi-token-prediction head (Qwen3-Next "mtp."),
#: whose layers are not the decoder's
_NOT_DECODER = re.compile(r"vision|visual|image|audio|speech|mm_projector|(?:^|\.)mtp\b", re.IGNORECASE)
#: bytes per element of the safetensors dtypes that have a whole number of bytes
_DTYPE_BYTES: Final = {
    "F64": 8, "I64": 8, "U64": 8,
    "F32": 4, "I32": 4, "U32": 4,
    "F16": 2, "BF16": 2, "I16": 2, "U16": 2,
    "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "I8": 1, "U8": 1, "BOOL": 1,
}  # fmt: skip
#: RigCheck quant ids of plain dtypes (the dominant one names an unquantized checkpoint)
_DTYPE_QUANT: Final = {"BF16": "bf16", "F16": "fp16", "F32": "fp32", "F8_E4M3": "fp8-e4m3"}
_MAX_LISTED = 6


# -- public API -----------------------------------------------------------------------------------


def load_model_path(path: Path, *, catalog: Catalog | None = None) -> ModelInfo:
    """A model from a local path: a GGUF file (or a part of a split one), a model folder, a
    ``config.json`` or a ``.safetensors`` file (read with the rest of its folder)."""
    source = str(path)
    try:
        exists, is_dir = path.exists(), path.is_dir()
    except OSError as error:
        raise InputError(source, f"cannot look at it ({_os_reason(error)})") from error
    if not exists:
        raise InputError(source, "no such file or folder")
    if is_dir:
        return read_model_folder(path, catalog=catalog)
    name = path.name.lower()
    if name.endswith(".gguf"):
        return read_gguf(path, catalog=catalog)
    if name.endswith(".safetensors") or name == SAFETENSORS_INDEX:
        return read_model_folder(path.parent, catalog=catalog)
    if name.endswith(".json"):
        return read_config_json(path)
    if _starts_with(path, _GGUF_MAGIC):  # a GGUF without the extension, e.g. an Ollama blob
        return read_gguf(path, catalog=catalog)
    raise InputError(source, "not a GGUF file, a safetensors file, a config.json or a model folder")


def read_gguf(path: Path, *, catalog: Catalog | None = None) -> ModelInfo:
    """Architecture, exact parameter counts and exact bytes of a GGUF model, from its header only.

    ``path`` may be any part of a split GGUF (``name-00001-of-00003.gguf``): every part is then read
    from the same folder, and a missing one is an error naming it.
    """
    parts = _gguf_parts(path)
    headers: list[_Header] = []
    items = 0  # one cap on metadata array items for all the parts of a split model together
    for part in parts:
        headers.append(_read_gguf_header(part, items))
        items = headers[-1].array_items
    _check_split(parts, headers)
    return _gguf_model(parts, headers, catalog if catalog is not None else load_catalog())


def read_safetensors_header(path: Path) -> dict[str, Any]:
    """The JSON header of a safetensors file, checked: the 8-byte length and the header, nothing more.

    Refuses a header over 100 MB or past the end of the file, bad JSON, and tensor entries whose
    dtype, shape or data offsets are malformed or point past the end of the file.
    """
    source = str(path)
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            prefix = handle.read(8)
            if len(prefix) < 8:
                raise InputError(source, f"too short for a safetensors file ({size} bytes)")
            length = int.from_bytes(prefix, "little")
            if length > SAFETENSORS_MAX_HEADER:
                raise InputError(
                    source,
                    f"header length {length:,} is over {SAFETENSORS_MAX_HEADER // 2**20} MiB: not a "
                    "safetensors file RigCheck reads, or a damaged one",
                )
            if length > size - 8:
                raise InputError(
                    source,
                    f"truncated: the header should be {length:,} bytes, {size - 8:,} follow its length",
                )
            raw = handle.read(length)
    except OSError as error:
        raise InputError(source, f"cannot read ({_os_reason(error)})") from error
    if len(raw) != length:
        raise InputError(source, "truncated while reading the header")
    try:
        header = json.loads(raw.decode("utf-8"), **_JSON_CHECKS)
    except UnicodeDecodeError as error:
        raise InputError(source, f"the header is not UTF-8 text (byte {error.start})") from error
    except json.JSONDecodeError as error:
        raise InputError(
            source, f"the header is not valid JSON ({error.msg}, at byte {error.pos})"
        ) from error
    except RecursionError as error:
        raise InputError(source, "the header is not valid JSON (nested too deeply)") from error
    except ValueError as error:  # an integer of thousands of digits (sys.get_int_max_str_digits)
        raise InputError(source, f"the header is not valid JSON ({_first_line(error)})") from error
    if not isinstance(header, dict):
        raise InputError(source, "the header is not a JSON object")
    check_depth(header, source)
    data_size = size - 8 - length
    spans: list[tuple[int, int, str]] = []
    for name, entry in header.items():
        if name == "__metadata__":
            if not isinstance(entry, dict):
                raise InputError(source, "__metadata__ is not a JSON object")
            continue
        n_bytes = _st_tensor_bytes(source, name, entry, data_size)
        start = entry["data_offsets"][0]
        spans.append((start, start + n_bytes, name))
    _check_overlaps(spans, source)
    return header


def read_model_folder(path: Path, *, catalog: Catalog | None = None) -> ModelInfo:
    """A model folder: config.json with safetensors weights, or GGUF files, or config.json alone."""
    try:
        return _read_model_folder(path, catalog)
    except OSError as error:  # an unreadable folder (EACCES), a vanished share (ESTALE), …
        raise InputError(str(path), f"cannot read the folder ({_os_reason(error)})") from error


def _read_model_folder(path: Path, catalog: Catalog | None) -> ModelInfo:
    source = str(path)
    if not path.is_dir():
        raise InputError(source, "not a folder")
    catalog = catalog if catalog is not None else load_catalog()
    config_path = path / CONFIG_FILE
    has_config = config_path.is_file()
    shards, notes = _safetensors_shards(path)
    if shards:
        if not has_config:
            raise InputError(
                source,
                "holds safetensors files but no config.json, which RigCheck needs for the architecture",
            )
        return _safetensors_model(path, config_path, shards, notes, catalog)
    models = _gguf_models(path)
    if len(models) == 1:
        info = read_gguf(models[0], catalog=catalog)
        if has_config:
            note = "config.json not used: the GGUF header describes the model"
            return replace(info, notes=(*info.notes, note))
        return info
    if len(models) > 1:
        names = [model.name for model in models]
        shown = ", ".join(names[:_MAX_LISTED]) + (
            f" (+{len(names) - _MAX_LISTED} more)" if len(names) > _MAX_LISTED else ""
        )
        raise InputError(source, f"holds {len(names)} GGUF models: {shown}; pass the file you want")
    if has_config:
        bins = sorted(p.name for p in path.glob("*.bin") if p.is_file())
        why = (
            "weights in PyTorch .bin files are not read"
            if bins
            else "no safetensors or GGUF files in the folder"
        )
        info = read_config_json(config_path)
        return replace(info, notes=(*info.notes, f"{why}: weight sizes estimated from config.json"))
    raise InputError(source, "no config.json, safetensors or GGUF files in this folder")


def read_config_json(path: Path) -> ModelInfo:
    """A bare ``config.json``: the architecture and parameter counts it describes, no weights."""
    config = _read_json_object(path, MAX_CONFIG_BYTES)
    arch = _parse_config(config, str(path))
    name = _model_name(path.parent)
    from rigcheck.core.models.resolve import released_format

    return ModelInfo(
        id=name,
        name=name,
        arch=arch,
        source_kind="config",
        source=str(path),
        native_quant=released_format(config),
    )


# -- GGUF: the header -------------------------------------------------------------------------------


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


def _check_overlaps(spans: list[tuple[int, int, str]], source: str) -> None:
    """Refuse tensors whose data overlap: each byte of weights belongs to one tensor (GGUF, safetensors)."""
    spans.sort()
    for (_start, end, name), (next_start, next_end, next_name) in itertools.pairwise(spans):
        if next_start < end and next_end > next_start:
            raise InputError(
                source, f"corrupt: the data of tensors {_show(name)} and {_show(next_name)} overlap"
            )


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


# -- GGUF: the model ----------------------------------------------------------------------------------


class _Meta:
    """Typed look-ups in GGUF metadata, under the architecture's prefix."""

    def __init__(self, metadata: Mapping[str, Any], arch: str, source: str) -> None:
        self.metadata = metadata
        self.arch = arch
        self.source = source

    def raw(self, key: str) -> Any:
        return self.metadata.get(f"{self.arch}.{key}")

    def required(self, key: str, limit: int = 2**40) -> int:
        """A whole number 1..limit under ``{arch}.key``; an error when absent."""
        value = self.count(key, limit=limit)
        if not value:
            full = f"{self.arch}.{key}"
            problem = "is 0" if value == 0 else "is missing"
            raise InputError(
                self.source, f"metadata {full} {problem}: not a language model GGUF RigCheck reads"
            )
        return value

    def count(self, key: str, *, limit: int = 2**40) -> int | None:
        """A whole number 0..limit under ``{arch}.key``; None when absent."""
        full = f"{self.arch}.{key}"
        value = self.metadata.get(full)
        if value is None:
            return None
        if isinstance(value, _Array) and value.values is not None and len(set(value.values)) == 1:
            value = value.values[0]  # the same value for every layer
        if not _is_int(value) or not 0 <= value <= limit:
            raise InputError(
                self.source, f"metadata {full} is {_show(value)}, not a whole number up to {limit:,}"
            )
        return int(value)

    def per_layer(self, key: str, layers: int) -> list[int] | None:
        """A value that may be one number or an array with one per layer; None when absent."""
        full = f"{self.arch}.{key}"
        value = self.metadata.get(full)
        if value is None:
            return None
        if isinstance(value, _Array):
            if value.values is None or len(value.values) != layers:
                raise InputError(
                    self.source, f"metadata {full} has {value.length:,} entries for {layers} layers"
                )
            items = list(value.values)
        else:
            items = [value] * layers
        for item in items:
            if not _is_int(item) or not 0 <= item <= 2**31:
                raise InputError(self.source, f"metadata {full} holds {_show(item)}, not a whole number")
        return [int(item) for item in items]


def _gguf_model(parts: Sequence[Path], headers: Sequence[_Header], catalog: Catalog) -> ModelInfo:
    source = str(parts[0])
    metadata = headers[0].metadata
    arch_name = metadata.get("general.architecture")
    if not isinstance(arch_name, str) or not arch_name:
        raise InputError(source, "metadata lacks general.architecture")
    tensors = [tensor for header in headers for tensor in header.tensors]
    if not tensors:
        raise InputError(source, "holds no tensors (a vocabulary-only GGUF?)")
    meta = _Meta(metadata, arch_name, source)
    notes: list[str] = []
    assumed: list[str] = []

    layers = meta.required("block_count", limit=MAX_LAYERS)
    hidden = meta.required("embedding_length")
    heads = meta.per_layer("attention.head_count", layers)
    if heads is None:
        if arch_name not in _RECURRENT_ARCHS:
            raise InputError(source, f"metadata {arch_name}.attention.head_count is missing")
        heads = [0] * layers
    kv_heads = meta.per_layer("attention.head_count_kv", layers) or list(heads)
    for layer, (q, kv) in enumerate(zip(heads, kv_heads, strict=True)):
        if kv > q and q:
            raise InputError(
                source,
                f"metadata {arch_name}.attention.head_count_kv ({kv}) is above head_count ({q}) "
                f"in layer {layer}: each key/value head serves one or more query heads",
            )
    if arch_name not in _RECURRENT_ARCHS and not any(q and kv for q, kv in zip(heads, kv_heads, strict=True)):
        raise InputError(
            source,
            f"metadata {arch_name}.attention.head_count or head_count_kv is 0 in every layer: "
            "no attention, which a transformer needs",
        )
    num_heads = max(heads, default=0)
    num_kv = max((kv for kv in kv_heads if kv), default=0)
    if len({kv for kv in kv_heads if kv}) > 1:
        notes.append(
            f"key/value heads differ by layer ({min(kv for kv in kv_heads if kv)}..{num_kv}): {num_kv} used"
        )

    # -- attention dims, MLA --
    kv_lora = meta.count("attention.kv_lora_rank") or None
    if kv_lora:
        head_dim = meta.count("attention.key_length_mla") or meta.count("attention.key_length") or 0
        value_dim = meta.count("attention.value_length_mla") or meta.count("attention.value_length")
        qk_rope = meta.count("rope.dimension_count")
    else:
        head_dim = meta.count("attention.key_length") or 0
        value_dim = meta.count("attention.value_length")
        qk_rope = None
    if not head_dim and num_heads:
        head_dim = hidden // num_heads
        assumed.append("head_dim")
        notes.append(
            f"no {arch_name}.attention.key_length: head_dim = embedding_length / head_count = {head_dim}"
        )
    v_head_dim = value_dim if value_dim and value_dim != head_dim else None

    # -- vocabulary, context --
    vocab = meta.count("vocab_size")
    if not vocab:
        tokens = metadata.get("tokenizer.ggml.tokens")
        if isinstance(tokens, _Array) and tokens.length:
            vocab = tokens.length
        else:
            embd = next((t for t in tensors if t.name == "token_embd.weight"), None)
            vocab = embd.dims[1] if embd is not None and len(embd.dims) >= 2 else 0
            assumed.append("vocab_size")
    context = meta.count("context_length") or None

    # -- the tensors: parameters and bytes --
    counts = _count_tensors(tensors, layers, source)
    n_experts = meta.count("expert_count") or counts.experts_in_tensors or None
    per_token = meta.count("expert_used_count") or None
    if counts.moe_layers and per_token is None:
        assumed.append("experts_per_token")
        notes.append("no expert_used_count: every expert counted as active")
    layer_active = tuple(
        total - routed + (per_token * one if per_token else routed)
        for total, routed, one in zip(counts.layer_params, counts.routed, counts.per_expert, strict=True)
    )

    # -- layer kinds --
    window = meta.count("attention.sliding_window")
    kinds, window = _gguf_layer_kinds(
        meta,
        layers,
        heads=heads,
        kv_heads=kv_heads,
        mla=bool(kv_lora),
        window=window,
        notes=notes,
        assumed=assumed,
    )
    if window is not None and context is not None and window >= context:
        kinds = tuple("full" if kind == "sliding" else kind for kind in kinds)  # a window that never binds
        window = None
    if "sliding" not in kinds:
        window = None
    linear_state = _linear_state(meta, hidden) if "linear" in kinds else None

    ffn = meta.per_layer("feed_forward_length", layers)
    intermediate = max(ffn) if ffn else meta.count("expert_feed_forward_length")
    # NextN/MTP layers are the last block_count entries: llama.cpp creates their tensors with TENSOR_SKIP
    # and runs n_layer - nextn_predict_layers layers unless MTP drafting is on (ggml-org/llama.cpp
    # src/models/glm4-moe.cpp, deepseek2.cpp: "skip all tensors in the NextN layers")
    nextn = meta.count("nextn_predict_layers", limit=layers - 1) or 0
    decoder = layers - nextn
    if nextn:
        notes.append(
            f"{arch_name}.nextn_predict_layers {nextn}: the last {nextn} block(s) are MTP layers, "
            f"{sum(counts.layer_params[decoder:]):,} parameters counted apart from the decoder"
        )
        counts.other_bytes += sum(counts.layer_bytes[decoder:])  # still in the file's weights
    arch = ArchConfig(
        model_type=arch_name,
        hidden_size=hidden,
        num_layers=decoder,
        num_heads=num_heads,
        num_kv_heads=num_kv,
        head_dim=head_dim,
        vocab_size=vocab,
        layer_kinds=kinds[:decoder],
        tie_word_embeddings=not counts.has_output,
        intermediate_size=intermediate or None,
        max_context=context,
        sliding_window=window,
        v_head_dim=v_head_dim,
        kv_lora_rank=kv_lora,
        qk_rope_head_dim=qk_rope,
        linear_state_elements=linear_state,
        num_experts=n_experts if counts.moe_layers else None,
        experts_per_token=per_token if counts.moe_layers else None,
        moe_layers=tuple(counts.moe_layers_flags[:decoder]),
        embed_params=counts.embed,
        head_params=counts.head,
        layer_params=tuple(counts.layer_params[:decoder]),
        layer_active_params=layer_active[:decoder],
        expert_params=max(counts.per_expert, default=0),
        assumed=tuple(assumed),
        mtp_params=sum(counts.layer_params[decoder:]),
        mtp_source="tensor_table" if nextn else "",
    )
    quant_id, quant_note = _gguf_quant_id(metadata, tensors, catalog)
    if quant_note:
        notes.append(quant_note)
    weights = WeightsInfo(
        total_bytes=sum(t.n_bytes for t in tensors),
        bytes_by_format=dict(sorted(counts.bytes_by_format.items(), key=lambda item: -item[1])),
        tensor_count=len(tensors),
        files=tuple(part.name for part in parts),
        quant_id=quant_id,
        layer_bytes=tuple(counts.layer_bytes[:decoder]) if counts.in_layers else (),
        other_bytes=counts.other_bytes if counts.in_layers else 0,
    )
    # File names and general.name are anyone's text: shown on one line, controls escaped (issue 17 #5)
    stem = one_line(_gguf_stem(parts[0]))
    name = metadata.get("general.name")
    return ModelInfo(
        id=stem,
        name=one_line(name.strip()[:200]) if isinstance(name, str) and name.strip() else stem,
        arch=arch,
        source_kind="file",
        source=source,
        weights=weights,
        notes=tuple(notes),
    )


@dataclass
class _Counts:
    layer_params: list[int]
    #: elements of routed-expert tensors per layer, and of one expert
    routed: list[int]
    per_expert: list[int]
    layer_bytes: list[int]
    moe_layers_flags: list[bool]
    embed: int = 0
    head: int = 0
    other_bytes: int = 0
    has_output: bool = False
    in_layers: bool = False
    experts_in_tensors: int = 0
    bytes_by_format: dict[str, int] = field(default_factory=dict)

    @property
    def moe_layers(self) -> bool:
        return any(self.moe_layers_flags)


def _count_tensors(tensors: Iterable[_Tensor], layers: int, source: str) -> _Counts:
    counts = _Counts(
        layer_params=[0] * layers,
        routed=[0] * layers,
        per_expert=[0] * layers,
        layer_bytes=[0] * layers,
        moe_layers_flags=[False] * layers,
    )
    by_format = counts.bytes_by_format
    for tensor in tensors:
        by_format[tensor.type_name] = by_format.get(tensor.type_name, 0) + tensor.n_bytes
        match = _GGUF_LAYER.match(tensor.name)
        layer = int(match[1]) if match else None
        if layer is not None and layer < layers:
            counts.in_layers = True
            counts.layer_params[layer] += tensor.n_elements
            counts.layer_bytes[layer] += tensor.n_bytes
            if "_exps." in tensor.name and len(tensor.dims) >= 2:
                # routed experts are stacked on the last dimension: [.., n_expert]
                n_expert = tensor.dims[-1]
                if n_expert == 0:
                    continue
                counts.routed[layer] += tensor.n_elements
                counts.per_expert[layer] += tensor.n_elements // n_expert
                counts.moe_layers_flags[layer] = True
                counts.experts_in_tensors = max(counts.experts_in_tensors, n_expert)
            continue
        counts.other_bytes += tensor.n_bytes
        if tensor.name in _GGUF_HEAD:
            counts.head += tensor.n_elements
            counts.has_output = counts.has_output or tensor.name == "output.weight"
        else:
            counts.embed += tensor.n_elements
    if not counts.in_layers:
        raise InputError(source, "no tensor belongs to a layer (blk.N.*): not a model RigCheck reads")
    return counts


def _gguf_layer_kinds(
    meta: _Meta,
    layers: int,
    *,
    heads: Sequence[int],
    kv_heads: Sequence[int],
    mla: bool,
    window: int | None,
    notes: list[str],
    assumed: list[str],
) -> tuple[tuple[LayerKind, ...], int | None]:
    """How each layer attends, and the window of the sliding ones, as llama.cpp would load them."""
    recurrent_keys = any(
        meta.count(key) for key in ("ssm.inner_size", "ssm.state_size", "wkv.head_size", "shortconv.l_cache")
    )
    interval = meta.count("full_attention_interval")
    attention: LayerKind = "mla" if mla else "full"
    if meta.arch in _RECURRENT_ARCHS or (recurrent_keys and not any(heads)):
        linear: LayerKind = "linear"
        return (linear,) * layers, None

    swa = _swa_layers(meta, layers, window=window, notes=notes, assumed=assumed)
    if swa is not None and (not window or meta.arch in _FIXED_WINDOW):
        window = _SWA_RULES[meta.arch][1]
    kinds: list[LayerKind] = []
    for layer in range(layers):
        if interval and (layer + 1) % interval:
            kinds.append("linear")
        elif heads[layer] == 0 or kv_heads[layer] == 0:
            # no attention in this layer: a recurrent block (Jamba, LFM2, Granite 4) or only an MLP
            kinds.append("linear" if recurrent_keys else "none")
        elif swa is not None and swa[layer] and not mla:
            kinds.append("sliding")
        else:
            kinds.append(attention)
    return tuple(kinds), window if swa is not None else None


def _swa_layers(
    meta: _Meta, layers: int, *, window: int | None, notes: list[str], assumed: list[str]
) -> list[bool] | None:
    """Which layers use the sliding window: the GGUF's pattern key, else llama.cpp's rule for the arch."""
    key = f"{meta.arch}.attention.sliding_window_pattern"
    pattern = meta.raw("attention.sliding_window_pattern")
    rule = _SWA_RULES.get(meta.arch)
    if rule is not None and rule[2] is not None and rule[2] != layers:
        rule = None
    default_window = rule[1] if rule else None
    if window == 0:
        return None  # no window at all (Llama 4's MobileLLM variant writes 0)
    if window is None and default_window is None:
        if pattern is not None:
            notes.append(f"{key} without a window size: every layer counted as full attention")
        return None
    if window is None:
        assumed.append("sliding_window")
        notes.append(
            f"no {meta.arch}.attention.sliding_window: llama.cpp's default of {default_window} tokens used"
        )
    if isinstance(pattern, _Array):
        if pattern.values is None or len(pattern.values) != layers:
            raise InputError(
                meta.source, f"metadata {key} has {pattern.length:,} entries for {layers} layers"
            )
        return [bool(value) for value in pattern.values]
    if pattern is not None:
        period = meta.count("attention.sliding_window_pattern", limit=MAX_LAYERS)
    elif rule is not None:
        period = rule[0]
        assumed.append("sliding_window_pattern")
        notes.append(
            f"windowed layers placed as llama.cpp does for {meta.arch}: 1 layer in {period} full attention"
        )
    else:
        notes.append(
            f"{meta.arch}.attention.sliding_window is set, but llama.cpp applies no window to {meta.arch}: "
            "every layer counted as full attention"
        )
        return None
    if not period:
        return [True] * layers  # llama.cpp: a period of 0 windows every layer
    return [(layer + 1) % period != 0 for layer in range(layers)]


def _linear_state(meta: _Meta, hidden: int) -> int | None:
    """Elements of recurrent state per linear layer per sequence: llama.cpp's n_embd_r() + n_embd_s()."""
    wkv = meta.count("wkv.head_size") or 0
    if wkv:
        return (meta.count("token_shift_count") or 2) * hidden + hidden * wkv
    l_cache = meta.count("shortconv.l_cache") or 0
    if l_cache:
        return hidden * (l_cache - 1)
    conv = meta.count("ssm.conv_kernel") or 0
    inner = meta.count("ssm.inner_size") or 0
    state = meta.count("ssm.state_size") or 0
    groups = meta.count("ssm.group_count") or 0
    total = (conv - 1 if conv else 0) * (inner + 2 * groups * state) + state * inner
    return total or None


def _gguf_quant_id(
    metadata: Mapping[str, Any], tensors: Sequence[_Tensor], catalog: Catalog
) -> tuple[str | None, str | None]:
    """RigCheck's quant id: from general.file_type (llama.cpp's LLAMA_FTYPE names), else from the type
    holding most bytes among the matrices."""
    from gguf import LlamaFileType

    known = {quant.id for quant in catalog.quants}
    file_type = metadata.get("general.file_type")
    ftype_name = None
    if _is_int(file_type):
        try:
            ftype_name = LlamaFileType(file_type & ~_FTYPE_GUESSED).name
        except ValueError:
            ftype_name = f"#{file_type}"
        base = ftype_name.removeprefix("MOSTLY_").removeprefix("ALL_").lower()
        quant_id = _FTYPE_IDS.get(base, base)
        if quant_id in known:
            return quant_id, None
    by_type: dict[int, int] = {}
    for tensor in tensors:
        if len(tensor.dims) >= 2:
            by_type[tensor.ggml_type] = by_type.get(tensor.ggml_type, 0) + tensor.n_bytes
    if not by_type:
        return None, None
    dominant = max(by_type, key=lambda t: by_type[t])
    type_name = next(t.type_name for t in tensors if t.ggml_type == dominant)
    why = f"file type {ftype_name} has no RigCheck quant id" if ftype_name else "no general.file_type"
    for quant in catalog.quants:
        if quant.ggml_type == dominant:
            return quant.id, f"{why}: named after the type of most weights, {type_name}"
    return None, f"{why}, nor has {type_name}, the type of most weights"


def _gguf_stem(path: Path) -> str:
    match = _SPLIT.fullmatch(path.name)
    if match:
        return match["stem"]
    return path.name[: -len(".gguf")] if path.name.lower().endswith(".gguf") else path.name


# -- safetensors ----------------------------------------------------------------------------------


def _st_tensor_bytes(source: str, name: str, entry: object, data_size: int) -> int:
    """A tensor's exact bytes from its data offsets, checked against its shape where the dtype allows."""
    shown = _show(name)
    if not isinstance(entry, dict):
        raise InputError(source, f"header entry {shown} is not a JSON object")
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if not isinstance(dtype, str):
        raise InputError(source, f"tensor {shown} has no dtype")
    if not isinstance(shape, list) or len(shape) > 16 or not all(_is_int(dim) and dim >= 0 for dim in shape):
        raise InputError(source, f"tensor {shown} has a malformed shape {_show(shape)}")
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(_is_int(offset) for offset in offsets)
        or not 0 <= offsets[0] <= offsets[1]
    ):
        raise InputError(source, f"tensor {shown} has malformed data_offsets {_show(offsets)}")
    if offsets[1] > data_size:
        raise InputError(
            source,
            f"truncated: tensor {shown} ends at byte {offsets[1]:,} of the data, which holds {data_size:,}",
        )
    size: int = offsets[1] - offsets[0]
    per_element = _DTYPE_BYTES.get(dtype)
    if per_element is not None and math.prod(shape) * per_element != size:
        raise InputError(source, f"tensor {shown} is {dtype} {shape} but spans {size:,} bytes")
    return size


def _safetensors_shards(folder: Path) -> tuple[list[Path], list[str]]:
    """The safetensors files of the model in ``folder``: the index's shards, else the files there."""
    index_path = folder / SAFETENSORS_INDEX
    if index_path.is_file():
        index = _read_json_object(index_path)
        weight_map = index.get("weight_map")
        if not isinstance(weight_map, dict) or not weight_map:
            raise InputError(str(index_path), "has no weight_map")
        for shard in weight_map.values():
            if (
                not isinstance(shard, str)
                or not shard.endswith(".safetensors")
                or "/" in shard
                or "\\" in shard
            ):
                raise InputError(str(index_path), f"names an odd shard {_show(shard)}")
        shards = sorted(set(weight_map.values()))
        missing = [shard for shard in shards if not (folder / shard).is_file()]
        if missing:
            shown = ", ".join(missing[:3]) + (f" (+{len(missing) - 3} more)" if len(missing) > 3 else "")
            raise InputError(
                str(index_path),
                f"names {len(shards)} shards; {shown} {'is' if len(missing) == 1 else 'are'} not there",
            )
        return [folder / shard for shard in shards], []
    files = sorted(path for path in folder.glob("*.safetensors") if path.is_file())
    if not files:
        return [], []
    single = folder / "model.safetensors"
    if single in files:
        return [single], []
    notes: list[str] = []
    consolidated = [path for path in files if path.name.startswith("consolidated")]
    if consolidated and len(consolidated) < len(files):
        files = [path for path in files if path not in consolidated]
        notes.append("consolidated*.safetensors skipped (Mistral's own format, the same weights again)")
    for path in files:
        match = _ST_SPLIT.fullmatch(path.name)
        if match:
            count = int(match["count"])
            expected = [
                f"{match['stem']}-{i:05d}-of-{match['count']}.safetensors" for i in range(1, count + 1)
            ]
            missing = [name for name in expected if not (folder / name).is_file()]
            if missing:
                raise InputError(
                    str(folder),
                    f"shard {missing[0]} of {count} is missing (and there is no {SAFETENSORS_INDEX})",
                )
    return files, notes


def summarise_safetensors(
    headers: Mapping[str, Mapping[str, Any]],
    config: Mapping[str, Any],
    arch: ArchConfig,
    catalog: Catalog,
    *,
    source: str,
) -> tuple[WeightsInfo, list[str], ArchConfig]:
    """Exact bytes per dtype and per layer from safetensors headers (file name -> header JSON), and
    ``arch`` with its parameters from the tensor table where it can be used (:mod:`.tensors`).

    Shared by local folders and hub repos, so both count and name formats the same way.
    """
    by_format: dict[str, int] = {}
    layer_bytes = [0] * arch.num_layers
    other = count = 0
    in_layers = False
    seen: dict[str, str] = {}
    for shard, header in headers.items():
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            if name in seen:
                raise InputError(source, f"tensor {_show(name)} is in both {seen[name]} and {shard}")
            seen[name] = shard
            size = _st_tensor_bytes(shard, name, entry, _NO_DATA_LIMIT)
            dtype = entry["dtype"]
            by_format[dtype] = by_format.get(dtype, 0) + size
            count += 1
            layer = _st_layer(name)
            # layers past num_layers (DeepSeek's multi-token-prediction layer) are not run per token
            if layer is not None and layer < arch.num_layers:
                layer_bytes[layer] += size
                in_layers = True
            else:
                other += size
    notes: list[str] = []
    quant_id, quant_note = _quant_from_config(config, catalog)
    if quant_note:
        notes.append(quant_note)
    quantized = isinstance(config.get("quantization_config"), dict)
    if quant_id is None and not quantized and by_format:
        dominant = max(by_format, key=lambda dtype: by_format[dtype])
        candidate = _DTYPE_QUANT.get(dominant)
        quant_id = candidate if candidate is not None and catalog.quant(candidate) is not None else None
    arch, params_note = count_from_tensors(headers, config, arch)
    notes.append(params_note)
    weights = WeightsInfo(
        total_bytes=sum(by_format.values()),
        bytes_by_format=dict(sorted(by_format.items(), key=lambda item: -item[1])),
        tensor_count=count,
        files=tuple(headers),
        quant_id=quant_id,
        layer_bytes=tuple(layer_bytes) if in_layers else (),
        other_bytes=other if in_layers else 0,
    )
    return weights, notes, arch


#: no bound on a tensor's end offset when the data section's size is unknown (headers from the hub)
_NO_DATA_LIMIT = 2**63


def _safetensors_model(
    folder: Path, config_path: Path, shards: Sequence[Path], notes: list[str], catalog: Catalog
) -> ModelInfo:
    config = _read_json_object(config_path, MAX_CONFIG_BYTES)
    arch = _parse_config(config, str(config_path))
    headers = {}
    header_bytes = 0
    for shard in shards:
        with contextlib.suppress(OSError):
            header_bytes += _safetensors_header_length(shard)
        if header_bytes > SAFETENSORS_MAX_HEADERS:
            raise InputError(
                str(folder),
                f"the safetensors headers total over {SAFETENSORS_MAX_HEADERS // 2**20} MiB "
                f"({len(shards)} shards): more than RigCheck reads",
            )
        headers[shard] = read_safetensors_header(shard)
    index_path = folder / SAFETENSORS_INDEX
    if index_path.is_file():
        _check_index(index_path, headers)

    named = {shard.name: header for shard, header in headers.items()}
    weights, extra_notes, arch = summarise_safetensors(named, config, arch, catalog, source=str(folder))
    notes.extend(extra_notes)
    name = _model_name(folder)
    return ModelInfo(
        id=name,
        name=name,
        arch=arch,
        source_kind="config",
        source=str(folder),
        weights=weights,
        notes=tuple(notes),
    )


def _check_index(index_path: Path, headers: Mapping[Path, Mapping[str, Any]]) -> None:
    weight_map = _read_json_object(index_path)["weight_map"]
    by_name = {shard.name: header for shard, header in headers.items()}
    for tensor, shard in weight_map.items():
        if tensor not in by_name[shard]:
            raise InputError(
                str(index_path), f"puts tensor {_show(tensor)} in {shard}, which does not hold it"
            )


def _st_layer(name: str) -> int | None:
    match = _ST_LAYER.search(name)
    if match is None or _NOT_DECODER.search(name[: match.start()]):
        return None
    return int(match[1])


def _quant_from_config(config: Mapping[str, Any], catalog: Catalog) -> tuple[str | None, str | None]:
    """RigCheck's quant id from ``quantization_config``, when the catalog has it; else a note."""
    qc = config.get("quantization_config")
    if not isinstance(qc, dict):
        return None, None
    method = str(qc.get("quant_method", "")).lower()
    from rigcheck.core.models.resolve import released_format

    quant_id: str | None = released_format(config)
    if quant_id is not None and catalog.quant(quant_id) is not None:
        return quant_id, None
    quant_id = None
    if method in ("gptq", "awq"):
        bits = qc.get("bits", qc.get("w_bit"))
        group = qc.get("group_size", qc.get("q_group_size"))
        if _is_int(bits):
            grouped = f"-g{group}" if _is_int(group) and group > 0 else ""
            quant_id = f"{method}-{bits}bit{grouped}"
    elif method == "fp8":
        quant_id = f"fp8-{str(qc.get('fmt', 'e4m3')).lower()}"
    elif method == "mxfp4":
        quant_id = "mxfp4"
    elif method == "bitsandbytes":
        if qc.get("load_in_4bit"):
            kind = str(qc.get("bnb_4bit_quant_type", "fp4")).lower()
            quant_id = f"{kind}-dq" if qc.get("bnb_4bit_use_double_quant") else kind
        elif qc.get("load_in_8bit"):
            quant_id = "int8"
    if quant_id is not None and catalog.quant(quant_id) is not None:
        return quant_id, None
    described = quant_id or f"quant_method {method or '(none)'!r}"
    return None, f"quantization_config ({described}) has no RigCheck quant id; bytes from the headers"


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
