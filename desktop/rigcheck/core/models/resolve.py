"""Turn what the user typed (a path, a catalog id, a Hugging Face id) into a ModelInfo.

Order: an existing path (a .gguf file, a config.json, or a model folder); a catalog model by any name
people type for it (its id, an Ollama name such as ``qwen3:30b``, its Hugging Face id, or an unambiguous
spelling; core/models/names.py), offline; a Hugging Face id ``org/name``, ``org/name:TAG`` or
``org/name/path/file.gguf`` (llama.cpp's ``-hf`` forms for GGUF files on the hub; Ollama's ``hf.co/`` prefix
is accepted). Anything else is a one-line error saying what was tried and the closest catalog ids.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rigcheck.core.catalog import Catalog, ModelSpec
from rigcheck.core.errors import InputError
from rigcheck.core.models.spec import ModelInfo

#: "qat" as a word of a repository or file name (unsloth/gemma-4-26B-A4B-it-qat-GGUF)
_QAT = re.compile(r"(?:^|[-_./])qat(?=$|[-_./:])")

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
#: compressed-tensors formats that name their own layout
_CT_FORMATS = {"nvfp4-pack-quantized": "nvfp4", "mxfp4-pack-quantized": "mxfp4", "mxfp8-quantized": "mxfp8"}
#: NVIDIA ModelOpt quant_algo -> our quant id
_MODELOPT = {"nvfp4": "nvfp4", "fp8": "fp8-e4m3", "mxfp8": "mxfp8", "w4a16_awq": "awq-4bit-g128"}


def released_format(config: Mapping[str, Any]) -> str | None:
    """The format a checkpoint ships in, from its config.json (top level or text_config): its
    quantization_config, else its dtype. None when the method is one RigCheck does not size."""
    quant = config.get("quantization_config")
    text = config.get("text_config")
    if not isinstance(quant, Mapping) and isinstance(text, Mapping):
        quant = text.get("quantization_config")
    if isinstance(quant, Mapping):
        expert_dtype = config.get("expert_dtype")
        return _quant_id({**quant, "expert_dtype": expert_dtype} if expert_dtype else quant)
    dtype = config.get("torch_dtype", config.get("dtype"))
    if dtype is None and isinstance(text, Mapping):
        dtype = text.get("torch_dtype", text.get("dtype"))
    return _DTYPES.get(str(dtype).lower()) if dtype is not None else None


def _quant_id(quant: Mapping[str, Any]) -> str | None:
    method = str(quant.get("quant_method", "")).lower()
    if method == "fp8" and str(quant.get("expert_dtype", "")).lower() == "fp4":
        return "fp8-fp4-experts"  # DeepSeek-V4: FP8 block-scaled weights, FP4 (E8M0-scaled) routed experts
    if method in _QUANT_METHODS:
        return _QUANT_METHODS[method]
    if method in ("gptq", "awq") and quant.get("bits") == 4:
        group = quant.get("group_size")
        return f"{method}-4bit-g128" if group in (128, None) else None
    if method == "compressed-tensors":
        return _compressed_tensors(quant)
    if method == "modelopt":
        algo = str(quant.get("quant_algo", "")).lower()
        if algo == "mixed_precision":
            algo = _dominant_algo(quant.get("quantized_layers"))
        return _MODELOPT.get(algo)
    if method == "bitsandbytes":
        if quant.get("load_in_4bit"):
            kind = str(quant.get("bnb_4bit_quant_type", "fp4")).lower()
            return f"{kind}-dq" if quant.get("bnb_4bit_use_double_quant") else kind
        return "int8" if quant.get("load_in_8bit") else None
    return None  # a method we do not size: let the caller fall back


def _dominant_algo(layers: object) -> str:
    """ModelOpt MIXED_PRECISION: the algorithm of the expert layers (most of the weights), else the
    most common one. W4A16_NVFP4 and NVFP4 store weights alike."""
    if not isinstance(layers, Mapping):
        return ""
    algos = [
        (str(name), str(entry.get("quant_algo", "")).lower())
        for name, entry in list(layers.items())[:100_000]
        if isinstance(entry, Mapping)
    ]
    experts = [algo for name, algo in algos if "expert" in name]
    pool = experts or [algo for _, algo in algos]
    if not pool:
        return ""
    best = max(set(pool), key=pool.count)
    return "nvfp4" if "nvfp4" in best else best


def _compressed_tensors(quant: Mapping[str, Any]) -> str | None:
    """compressed-tensors: the format of the group that quantizes the most (the first that names
    Linear, else the first). Mixed groups (FP8 attention + FP4 experts) are sized by that group."""
    fmt = str(quant.get("format", "")).lower()
    if fmt in _CT_FORMATS:
        return _CT_FORMATS[fmt]
    groups = quant.get("config_groups")
    if not isinstance(groups, Mapping) or not groups:
        return None
    chosen = next(
        (g for g in groups.values() if isinstance(g, Mapping) and "Linear" in (g.get("targets") or [])),
        next(iter(groups.values())),
    )
    weights = chosen.get("weights") if isinstance(chosen, Mapping) else None
    if not isinstance(weights, Mapping):
        return None
    group_fmt = str(chosen.get("format", "") or "").lower()
    if group_fmt in _CT_FORMATS:
        return _CT_FORMATS[group_fmt]
    bits, kind, size = weights.get("num_bits"), str(weights.get("type", "int")), weights.get("group_size")
    if kind == "float" and bits == 8:
        return "fp8-e4m3"
    if kind == "float" and bits == 4:
        return "nvfp4" if size == 16 else "mxfp4" if size == 32 else None
    if kind == "int" and bits == 4 and size in (32, 128):
        return f"w4a16-g{size}"
    if kind == "int" and bits == 8:
        return "int8"
    return None


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
    from rigcheck.core.models.names import find_model, suggest_models

    spec = find_model(text, catalog)
    if spec is not None:
        return from_catalog(spec)
    if text.lower().startswith(("hf.co/", "huggingface.co/")):  # Ollama's spelling of a hub repository
        text = text.split("/", 1)[1]
        path = Path(text)
    hub_file = _HUB_FILE.fullmatch(text) is not None and not _looks_local(text)
    if path.suffix.lower() in (".gguf", ".json", ".safetensors") and not hub_file:
        raise InputError(text, "no such file")
    if _HUB_ID.fullmatch(text) or hub_file:
        from rigcheck.core.models.hub import load_hub_model
        from rigcheck.core.models.names import catalog_for_repository

        try:
            return load_hub_model(text, progress=progress, cancel=cancel)
        except InputError as error:
            held = catalog_for_repository(text, catalog)
            if held is None:
                raise
            # a QAT repository's files are laid out apart (core/estimate/ud_names.py): say how to ask for them
            qat = "; its QAT files: --quant UD-Q4_K_XL-QAT" if _QAT.search(text.lower()) else ""
            raise InputError(
                error.source, f"{error.problem}; the catalog has this model offline as {held.id!r}{qat}"
            ) from None
    close = suggest_models(text, catalog)
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
