"""Tiny GGUF files written with gguf-py's own writer (real Q8_0/F16/F32 tensors), for tests.

``Model`` records what was written, counted independently of the reader under test.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import gguf
import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import LlamaFileType

HIDDEN = 64
VOCAB = 96
FF = 128

# bytes of one element group of each type: (block, bytes per block)
SIZES = {T.F32: (1, 4), T.F16: (1, 2), T.Q8_0: (32, 34)}


# -- writing GGUF files ---------------------------------------------------------------------------


class Model:
    """What a generated GGUF holds, counted independently of the reader under test."""

    def __init__(self) -> None:
        self.tensors: dict[str, tuple[tuple[int, ...], T]] = {}

    def elements(self, name: str) -> int:
        return math.prod(self.tensors[name][0])

    def nbytes(self, name: str) -> int:
        shape, qtype = self.tensors[name]
        block, size = SIZES[qtype]
        return math.prod(shape) // block * size

    def total_bytes(self) -> int:
        return sum(self.nbytes(n) for n in self.tensors)

    def total_elements(self) -> int:
        return sum(self.elements(n) for n in self.tensors)

    def layer(self, i: int, what: Callable[[str], int]) -> int:
        return sum(what(n) for n in self.tensors if n.startswith(f"blk.{i}."))

    def by_format(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for name, (_, qtype) in self.tensors.items():
            out[qtype.name] = out.get(qtype.name, 0) + self.nbytes(name)
        return out


def _add(writer: gguf.GGUFWriter, model: Model, name: str, shape: tuple[int, ...], qtype: T) -> None:
    """A tensor of numpy ``shape`` (rows last), stored as ``qtype``."""
    rng = np.random.default_rng(len(model.tensors))
    data = rng.standard_normal(shape).astype(np.float32)
    if qtype == T.F32:
        writer.add_tensor(name, data)
    elif qtype == T.F16:
        writer.add_tensor(name, data.astype(np.float16))
    else:
        writer.add_tensor(name, gguf.quants.quantize(data, qtype), raw_dtype=qtype)
    model.tensors[name] = (shape, qtype)


def write_gguf(
    path: Path,
    *,
    arch: str = "llama",
    layers: int = 2,
    heads: int = 4,
    kv_heads: int | list[int] = 2,
    context: int = 4096,
    tied: bool = False,
    experts: tuple[int, int] | None = None,
    file_type: int | None = LlamaFileType.MOSTLY_Q8_0,
    split_max_tensors: int = 0,
    endianess: gguf.GGUFEndian = gguf.GGUFEndian.LITTLE,
    meta: Callable[[gguf.GGUFWriter], None] | None = None,
) -> Model:
    """A tiny llama-like model: Q8_0 matrices, an F16 down projection, F32 norms (and MoE experts)."""
    writer = gguf.GGUFWriter(path, arch, split_max_tensors=split_max_tensors, endianess=endianess)
    writer.add_name("Tiny Test Model")
    writer.add_block_count(layers)
    writer.add_embedding_length(HIDDEN)
    writer.add_feed_forward_length(FF)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_context_length(context)
    if file_type is not None:
        writer.add_file_type(file_type)
    writer.add_token_list([f"t{i}" for i in range(VOCAB)])
    if experts:
        writer.add_expert_count(experts[0])
        writer.add_expert_used_count(experts[1])
    if meta:
        meta(writer)
    model = Model()
    head_dim = HIDDEN // heads
    kv_list = kv_heads if isinstance(kv_heads, list) else [kv_heads] * layers
    _add(writer, model, "token_embd.weight", (VOCAB, HIDDEN), T.Q8_0)
    for i in range(layers):
        _add(writer, model, f"blk.{i}.attn_norm.weight", (HIDDEN,), T.F32)
        if kv_list[i]:
            _add(writer, model, f"blk.{i}.attn_q.weight", (heads * head_dim, HIDDEN), T.Q8_0)
            _add(writer, model, f"blk.{i}.attn_k.weight", (kv_list[i] * head_dim, HIDDEN), T.Q8_0)
            _add(writer, model, f"blk.{i}.attn_v.weight", (kv_list[i] * head_dim, HIDDEN), T.Q8_0)
            _add(writer, model, f"blk.{i}.attn_output.weight", (HIDDEN, heads * head_dim), T.Q8_0)
        _add(writer, model, f"blk.{i}.ffn_norm.weight", (HIDDEN,), T.F32)
        if experts:
            n = experts[0]
            _add(writer, model, f"blk.{i}.ffn_gate_inp.weight", (n, HIDDEN), T.F32)
            _add(writer, model, f"blk.{i}.ffn_gate_exps.weight", (n, FF, HIDDEN), T.Q8_0)
            _add(writer, model, f"blk.{i}.ffn_up_exps.weight", (n, FF, HIDDEN), T.Q8_0)
            _add(writer, model, f"blk.{i}.ffn_down_exps.weight", (n, HIDDEN, FF), T.Q8_0)
            _add(writer, model, f"blk.{i}.ffn_up_shexp.weight", (FF, HIDDEN), T.Q8_0)
        else:
            _add(writer, model, f"blk.{i}.ffn_gate.weight", (FF, HIDDEN), T.Q8_0)
            _add(writer, model, f"blk.{i}.ffn_up.weight", (FF, HIDDEN), T.Q8_0)
            _add(writer, model, f"blk.{i}.ffn_down.weight", (HIDDEN, FF), T.F16)
    _add(writer, model, "output_norm.weight", (HIDDEN,), T.F32)
    if not tied:
        _add(writer, model, "output.weight", (VOCAB, HIDDEN), T.Q8_0)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return model
