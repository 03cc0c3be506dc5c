"""Turn what the user typed (a path, a catalog id, a Hugging Face id) into a ModelInfo.

Order: an existing path (a .gguf file, a config.json, or a model folder); a catalog id; a Hugging Face
id ``org/name``, ``org/name:TAG`` or ``org/name/path/file.gguf`` (llama.cpp's ``-hf`` forms for GGUF
files on the hub). Anything else is a one-line error saying what was tried.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rigcheck.core.catalog import Catalog, ModelSpec
from rigcheck.core.errors import InputError
from rigcheck.core.models.spec import ModelInfo

_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+(?::[\w.+-]+)?")
#: a file in a hub repository, e.g. unsloth/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf
_HUB_FILE = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+/[^\\:]+\.gguf", re.IGNORECASE)


def from_catalog(spec: ModelSpec) -> ModelInfo:
    from rigcheck.core.models.config import parse_config

    arch = parse_config(spec.config, f"catalog:{spec.id}")
    return ModelInfo(
        id=spec.id,
        name=spec.name,
        arch=arch,
        source_kind="catalog",
        source=f"catalog:{spec.id}",
        native_quant=spec.native_format or released_format(spec.config),
    )


#: quantization_config.quant_method -> our quant id (4-bit GPTQ/AWQ checked by ``bits``)
_QUANT_METHODS = {"mxfp4": "mxfp4", "fp8": "fp8-e4m3", "fbgemm_fp8": "fp8-e4m3"}
_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}


def released_format(config: Mapping[str, Any]) -> str | None:
    """The format a checkpoint ships in, from its config.json: the quantization method, else the dtype."""
    quant = config.get("quantization_config")
    if isinstance(quant, Mapping):
        method = str(quant.get("quant_method", "")).lower()
        if method in _QUANT_METHODS:
            return _QUANT_METHODS[method]
        if method in ("gptq", "awq") and quant.get("bits") == 4:
            group = quant.get("group_size")
            return f"{method}-4bit-g128" if group in (128, None) else None
        return None  # a method we do not size: let the caller fall back
    dtype = config.get("torch_dtype", config.get("dtype"))
    return _DTYPES.get(str(dtype).lower()) if dtype is not None else None


def resolve_model(
    text: str,
    catalog: Catalog,
    *,
    progress: Callable[[str], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> ModelInfo:
    """The model ``text`` names (a path, a catalog id, a hub id), its untrusted names on one line.

    A GGUF ``general.architecture``, a config's ``model_type`` or a file name may hold a line break;
    printed as is it would forge a line of the answer, so every control character is escaped here.
    ``source`` stays the real path: run commands quote it, and refuse one with control characters.
    """
    return _one_line_names(_resolve(text, catalog, progress=progress, cancel=cancel))


def _one_line_names(info: ModelInfo) -> ModelInfo:
    from dataclasses import replace

    from rigcheck.core.text import one_line

    arch = info.arch
    if arch.model_type != one_line(arch.model_type):
        arch = replace(arch, model_type=one_line(arch.model_type))
    return replace(
        info,
        id=one_line(info.id),
        name=one_line(info.name),
        arch=arch,
        notes=tuple(one_line(note) for note in info.notes),
    )


def _resolve(
    text: str,
    catalog: Catalog,
    *,
    progress: Callable[[str], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> ModelInfo:
    text = text.strip()
    if not text:
        raise InputError("MODEL", "empty model name")
    try:
        path = Path(text).expanduser()
    except RuntimeError:  # "~name" for a user who does not exist: not a path, so try it as an id
        path = Path(text)
    try:
        exists = path.exists()
    except OSError:  # a name too long for a path (ENAMETOOLONG) is not a file: try it as an id
        exists = False
    if exists:
        from rigcheck.core.models.files import load_model_path

        return load_model_path(path)
    spec = catalog.model(text.lower())
    if spec is not None:
        return from_catalog(spec)
    hub_file = _HUB_FILE.fullmatch(text) is not None and not _looks_local(text)
    if path.suffix.lower() in (".gguf", ".json", ".safetensors") and not hub_file:
        raise InputError(text, "no such file")
    if _HUB_ID.fullmatch(text) or hub_file:
        from rigcheck.core.models.hub import load_hub_model

        return load_hub_model(text, progress=progress, cancel=cancel)
    close = [m.id for m in catalog.search_models(text)][:5]
    hint = f"; did you mean {', '.join(close)}?" if close else "; see 'rigcheck models'"
    raise InputError(
        text, f"not a file, a catalog model id, or a Hugging Face id (org/name or org/name:TAG){hint}"
    )


def _looks_local(text: str) -> bool:
    """A missing ``a/b/c.gguf`` is a local path (a typo) when it starts like one or its folder exists."""
    if text.startswith(("/", ".", "~")):
        return True
    try:
        return Path(text.split("/", 1)[0]).is_dir()
    except OSError:
        return False
