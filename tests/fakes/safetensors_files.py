"""Tiny safetensors checkpoints for tests: a real header (names, dtypes, shapes, offsets) over zeros."""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: bytes per element of the dtypes the tests write
DTYPE_BYTES = {
    "BF16": 2,
    "F16": 2,
    "F32": 4,
    "I32": 4,
    "I64": 8,
    "U8": 1,
    "I8": 1,
    "F8_E4M3": 1,
    "F8_E8M0": 1,
}

Tensors = Mapping[str, tuple[str, list[int]]]


def write_safetensors(path: Path, tensors: Tensors) -> int:
    """A safetensors file whose data is zeros; returns the bytes of its tensors."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = math.prod(shape) * DTYPE_BYTES[dtype]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\x00" * offset)
    return offset


def write_checkpoint(folder: Path, config: Mapping[str, Any], tensors: Tensors) -> None:
    """A one-file checkpoint folder: ``model.safetensors`` and ``config.json``."""
    write_safetensors(folder / "model.safetensors", tensors)
    (folder / "config.json").write_text(json.dumps(config))
