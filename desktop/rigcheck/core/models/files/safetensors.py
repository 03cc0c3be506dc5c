"""Safetensors: one header checked, a folder's shards found, their tensors summarised into a model,
and the weight format from ``quantization_config``."""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rigcheck.core.catalog import Catalog
from rigcheck.core.errors import InputError
from rigcheck.core.fileio import check_depth
from rigcheck.core.models.files.helpers import (
    _check_overlaps,
    _first_line,
    _is_int,
    _model_name,
    _os_reason,
    _parse_config,
    _read_json_object,
    _safetensors_header_length,
    _show,
)
from rigcheck.core.models.files.limits import (
    _DTYPE_BYTES,
    _DTYPE_QUANT,
    _NOT_DECODER,
    _ST_LAYER,
    _ST_SPLIT,
    MAX_CONFIG_BYTES,
    SAFETENSORS_INDEX,
    SAFETENSORS_MAX_HEADER,
    SAFETENSORS_MAX_HEADERS,
)
from rigcheck.core.models.spec import ArchConfig, ModelInfo, WeightsInfo
from rigcheck.core.models.tensors import count_from_tensors
from rigcheck.core.untrusted import JSON_CHECKS as _JSON_CHECKS


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
            named = f"{len(shards)} shard{'' if len(shards) == 1 else 's'}"
            verb = "is" if len(missing) == 1 else "are"
            raise InputError(str(index_path), f"names {named}; {shown} {verb} not there")
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
                f"({len(shards)} shard{'' if len(shards) == 1 else 's'}): more than RigCheck reads",
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
