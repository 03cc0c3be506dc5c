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

The readers above are here; ``limits`` holds every bound and name pattern, ``helpers`` the bounded
reads and wording all of them share, ``gguf_header`` the GGUF header and split parts, ``gguf_model``
a model from GGUF headers, ``safetensors`` the safetensors header, shards and summary.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.models.files.gguf_header import (
    NeedMoreBytesError,
    _check_split,
    _gguf_models,
    _gguf_parts,
    _Header,
    _read_gguf_header,
    parse_gguf_prefix,
)
from rigcheck.core.models.files.gguf_model import _gguf_model
from rigcheck.core.models.files.helpers import (
    _first_line,
    _model_name,
    _os_reason,
    _parse_config,
    _read_at_most,
    _read_json_object,
    _show,
    _starts_with,
)
from rigcheck.core.models.files.limits import (
    _FTYPE_IDS,
    _GGUF_MAGIC,
    _MAX_LISTED,
    CONFIG_FILE,
    MAX_CONFIG_BYTES,
    MAX_JSON_BYTES,
    MAX_LAYERS,
    SAFETENSORS_INDEX,
    SAFETENSORS_MAX_HEADER,
    SAFETENSORS_MAX_HEADERS,
)
from rigcheck.core.models.files.safetensors import (
    _safetensors_model,
    _safetensors_shards,
    _st_layer,
    read_safetensors_header,
    summarise_safetensors,
)
from rigcheck.core.models.spec import ModelInfo

#: the public readers, and the private names hub.py, hub_gguf.py and the tests import from here
__all__ = [
    "CONFIG_FILE",
    "MAX_CONFIG_BYTES",
    "MAX_JSON_BYTES",
    "MAX_LAYERS",
    "SAFETENSORS_INDEX",
    "SAFETENSORS_MAX_HEADER",
    "SAFETENSORS_MAX_HEADERS",
    "_FTYPE_IDS",
    "NeedMoreBytesError",
    "_Header",
    "_check_split",
    "_first_line",
    "_gguf_model",
    "_read_at_most",
    "_read_json_object",
    "_show",
    "_st_layer",
    "load_model_path",
    "parse_gguf_prefix",
    "read_config_json",
    "read_gguf",
    "read_model_folder",
    "read_safetensors_header",
    "summarise_safetensors",
]


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
