"""What a model file may hold: every bound a reader applies, the GGUF value types and file types,
and the name patterns of split files and layers."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

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
