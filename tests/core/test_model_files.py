"""Models from local files: GGUF (whole, split, hostile), safetensors folders, config.json.

Every file is generated here, in tmp_path: GGUF files with gguf-py's own writer (real Q8_0/F16/F32
tensors), safetensors files by hand (8-byte length, JSON header, zero bytes for the data). gguf-py's
reader serves as the oracle for tensor sizes.
"""

from __future__ import annotations

import json
import math
import struct
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import gguf
import pytest
from gguf import LlamaFileType
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fakes.gguf_files import FF, HIDDEN, VOCAB, Model, write_gguf
from fakes.safetensors_files import DTYPE_BYTES, write_safetensors
from rigcheck.core.catalog import Catalog, load_catalog
from rigcheck.core.errors import InputError
from rigcheck.core.models.files import (
    load_model_path,
    read_config_json,
    read_gguf,
    read_model_folder,
    read_safetensors_header,
)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def expect_input_error(path: Path, call: Callable[[], object]) -> InputError:
    with pytest.raises(InputError) as caught:
        call()
    error = caught.value
    assert error.source == str(path), error
    assert "\n" not in str(error) and error.problem.strip(), error
    return error


# -- GGUF: what is read -----------------------------------------------------------------------------


def test_dense_llama_exact_bytes_and_params(tmp_path: Path, catalog: Catalog) -> None:
    path = tmp_path / "tiny-Q8_0.gguf"
    model = write_gguf(path)
    info = read_gguf(path, catalog=catalog)
    arch, weights = info.arch, info.weights
    assert weights is not None
    assert info.source_kind == "file" and info.source == str(path)
    assert info.id == "tiny-Q8_0" and info.name == "Tiny Test Model"

    assert weights.total_bytes == model.total_bytes()
    assert weights.bytes_by_format == model.by_format()
    assert set(weights.bytes_by_format) == {"Q8_0", "F16", "F32"}
    assert weights.tensor_count == len(model.tensors)
    assert weights.layer_bytes == (model.layer(0, model.nbytes), model.layer(1, model.nbytes))
    assert weights.other_bytes == sum(
        model.nbytes(n) for n in ("token_embd.weight", "output_norm.weight", "output.weight")
    )
    assert weights.quant_id == "q8_0"
    assert weights.files == ("tiny-Q8_0.gguf",)

    assert arch.params_total == model.total_elements()
    assert arch.embed_params == VOCAB * HIDDEN
    assert arch.head_params == VOCAB * HIDDEN + HIDDEN
    assert arch.layer_params == (model.layer(0, model.elements), model.layer(1, model.elements))
    assert arch.layer_active_params == arch.layer_params
    assert arch.params_active == arch.params_total
    assert not arch.tie_word_embeddings
    assert (arch.model_type, arch.num_layers, arch.hidden_size) == ("llama", 2, HIDDEN)
    assert (arch.num_heads, arch.num_kv_heads, arch.head_dim) == (4, 2, 16)
    assert arch.vocab_size == VOCAB  # from the token list
    assert arch.max_context == 4096
    assert arch.intermediate_size == FF
    assert arch.layer_kinds == ("full", "full")
    assert arch.sliding_window is None and not arch.is_moe and arch.moe_layers == (False, False)
    assert "head_dim" in arch.assumed  # no key_length: embedding_length / head_count


def test_sizes_agree_with_gguf_py_reader(tmp_path: Path, catalog: Catalog) -> None:
    path = tmp_path / "m.gguf"
    write_gguf(path, experts=(4, 2))
    oracle = gguf.GGUFReader(path)
    info = read_gguf(path, catalog=catalog)
    assert info.weights is not None
    assert info.weights.total_bytes == sum(int(t.n_bytes) for t in oracle.tensors)
    assert info.arch.params_total == sum(int(t.n_elements) for t in oracle.tensors)
    formats: dict[str, int] = {}
    for tensor in oracle.tensors:
        formats[tensor.tensor_type.name] = formats.get(tensor.tensor_type.name, 0) + int(tensor.n_bytes)
    assert info.weights.bytes_by_format == formats


def test_tied_embeddings_and_vocab_key(tmp_path: Path, catalog: Catalog) -> None:
    path = tmp_path / "tied.gguf"
    model = write_gguf(path, tied=True, meta=lambda w: w.add_vocab_size(100))
    arch = read_gguf(path, catalog=catalog).arch
    assert arch.tie_word_embeddings
    assert arch.head_params == HIDDEN  # the final norm only
    assert arch.params_total == model.total_elements()
    assert arch.vocab_size == 100  # the key wins over the token list


def test_moe_experts_and_active_params(tmp_path: Path, catalog: Catalog) -> None:
    path = tmp_path / "moe.gguf"
    model = write_gguf(path, experts=(4, 2), file_type=LlamaFileType.MOSTLY_Q4_K_M)
    info = read_gguf(path, catalog=catalog)
    arch = info.arch
    assert arch.is_moe and arch.num_experts == 4 and arch.experts_per_token == 2
    assert arch.moe_layers == (True, True)
    one_expert = 3 * FF * HIDDEN
    assert arch.expert_params == one_expert
    routed = 4 * one_expert
    for i in range(2):
        assert arch.layer_params[i] == model.layer(i, model.elements)
        assert arch.layer_active_params[i] == arch.layer_params[i] - routed + 2 * one_expert
    assert arch.params_total == model.total_elements()
    assert arch.params_active == arch.params_total - 2 * 2 * one_expert
    assert info.weights is not None and info.weights.total_bytes == model.total_bytes()
    assert info.weights.quant_id == "q4_k_m"  # general.file_type names the mix, whatever the tensors are


def test_kv_heads_per_layer_and_attention_free_layers(tmp_path: Path, catalog: Catalog) -> None:
    path = tmp_path / "deci.gguf"
    write_gguf(path, layers=3, kv_heads=[2, 0, 4])
    info = read_gguf(path, catalog=catalog)
    assert info.arch.num_kv_heads == 4
    assert info.arch.layer_kinds == ("full", "none", "full")
    assert any("differ by layer" in note for note in info.notes)


def test_hybrid_recurrent_layers(tmp_path: Path, catalog: Catalog) -> None:
    def ssm(w: gguf.GGUFWriter) -> None:
        w.add_ssm_conv_kernel(4)
        w.add_ssm_inner_size(128)
        w.add_ssm_state_size(16)
        w.add_ssm_group_count(1)

    path = tmp_path / "hybrid.gguf"
    write_gguf(path, arch="granitehybrid", layers=3, kv_heads=[0, 2, 0], meta=ssm)
    arch = read_gguf(path, catalog=catalog).arch
    assert arch.layer_kinds == ("linear", "full", "linear")
    # llama.cpp: (d_conv - 1) * (d_inner + 2 * n_group * d_state) + d_state * d_inner
    assert arch.linear_state_elements == 3 * (128 + 2 * 16) + 16 * 128


def test_gemma3_sliding_window_from_llama_cpp_rule(tmp_path: Path, catalog: Catalog) -> None:
    path = tmp_path / "gemma3.gguf"
    write_gguf(path, arch="gemma3", layers=12, context=32768, meta=lambda w: w.add_sliding_window(512))
    info = read_gguf(path, catalog=catalog)
    kinds = info.arch.layer_kinds
    assert [i for i, kind in enumerate(kinds) if kind == "full"] == [5, 11]
    assert kinds.count("sliding") == 10
    assert info.arch.sliding_window == 512
    assert "sliding_window_pattern" in info.arch.assumed


def test_gemma2_default_window(tmp_path: Path, catalog: Catalog) -> None:
    path = tmp_path / "gemma2.gguf"
    write_gguf(path, arch="gemma2", layers=4, context=8192)
    arch = read_gguf(path, catalog=catalog).arch
    assert arch.layer_kinds == ("sliding", "full", "sliding", "full")
    assert arch.sliding_window == 4096 and "sliding_window" in arch.assumed


def test_llama4_chunked_attention(tmp_path: Path, catalog: Catalog) -> None:
    path = tmp_path / "llama4.gguf"
    write_gguf(path, arch="llama4", layers=4, context=65536, meta=lambda w: w.add_sliding_window(1024))
    arch = read_gguf(path, catalog=catalog).arch
    assert arch.layer_kinds == ("sliding", "sliding", "sliding", "full")
    assert arch.sliding_window == 8192  # llama.cpp's fixed chunk, whatever the key says
    off = tmp_path / "mobile.gguf"
    write_gguf(off, arch="llama4", layers=4, context=65536, meta=lambda w: w.add_sliding_window(0))
    assert read_gguf(off, catalog=catalog).arch.layer_kinds == ("full",) * 4


def test_sliding_window_pattern_keys(tmp_path: Path, catalog: Catalog) -> None:
    array = tmp_path / "array.gguf"
    write_gguf(
        array,
        layers=4,
        meta=lambda w: (w.add_sliding_window(128), w.add_sliding_window_pattern([True, False, False, True])),
    )
    assert read_gguf(array, catalog=catalog).arch.layer_kinds == ("sliding", "full", "full", "sliding")

    period = tmp_path / "period.gguf"
    write_gguf(
        period,
        arch="gpt-oss",
        layers=4,
        meta=lambda w: (w.add_sliding_window(128), w.add_sliding_window_pattern(4)),
    )
    assert read_gguf(period, catalog=catalog).arch.layer_kinds == ("sliding", "sliding", "sliding", "full")

    unknown = tmp_path / "unknown.gguf"
    write_gguf(unknown, layers=2, meta=lambda w: w.add_sliding_window(128))
    info = read_gguf(unknown, catalog=catalog)
    assert info.arch.layer_kinds == ("full", "full") and info.arch.sliding_window is None
    assert any("applies no window" in note for note in info.notes)

    never_binds = tmp_path / "wide.gguf"
    write_gguf(never_binds, arch="gemma2", layers=2, context=2048, meta=lambda w: w.add_sliding_window(4096))
    assert read_gguf(never_binds, catalog=catalog).arch.layer_kinds == ("full", "full")


def test_mla_keys(tmp_path: Path, catalog: Catalog) -> None:
    def mla(w: gguf.GGUFWriter) -> None:
        w.add_kv_lora_rank(32)
        w.add_rope_dimension_count(8)
        w.add_key_length(40)  # kv_lora_rank + rope: the absorbed layout llama.cpp writes
        w.add_value_length(32)
        w.add_key_length_mla(24)
        w.add_value_length_mla(16)

    path = tmp_path / "ds.gguf"
    write_gguf(path, arch="deepseek2", kv_heads=1, meta=mla)
    arch = read_gguf(path, catalog=catalog).arch
    assert arch.layer_kinds == ("mla", "mla")
    assert (arch.kv_lora_rank, arch.qk_rope_head_dim, arch.head_dim, arch.v_head_dim) == (32, 8, 24, 16)


@pytest.mark.parametrize(
    ("file_type", "quant_id"),
    [
        (LlamaFileType.MOSTLY_Q4_K_M, "q4_k_m"),
        (LlamaFileType.MOSTLY_Q6_K, "q6_k-mix"),
        (LlamaFileType.MOSTLY_Q2_K, "q2_k-mix"),
        (LlamaFileType.MOSTLY_F16, "fp16"),
        (LlamaFileType.ALL_F32, "fp32"),
        (LlamaFileType.MOSTLY_BF16, "bf16"),
        (LlamaFileType.MOSTLY_IQ4_XS, "iq4_xs"),
        (LlamaFileType.MOSTLY_IQ3_M, "iq3_m"),
        (LlamaFileType.MOSTLY_Q2_K_S, "q2_k_s"),
        (LlamaFileType.MOSTLY_MXFP4_MOE, "mxfp4"),
        (LlamaFileType.MOSTLY_Q4_K_M | 1024, "q4_k_m"),  # LLAMA_FTYPE_GUESSED
    ],
)
def test_quant_id_from_file_type(tmp_path: Path, catalog: Catalog, file_type: int, quant_id: str) -> None:
    path = tmp_path / "q.gguf"
    write_gguf(path, layers=1, file_type=file_type)
    info = read_gguf(path, catalog=catalog)
    assert info.weights is not None and info.weights.quant_id == quant_id


def test_quant_id_from_dominant_type_without_file_type(tmp_path: Path, catalog: Catalog) -> None:
    path = tmp_path / "q.gguf"
    write_gguf(path, layers=1, file_type=None)
    info = read_gguf(path, catalog=catalog)
    assert info.weights is not None and info.weights.quant_id == "q8_0"
    assert any("Q8_0" in note for note in info.notes)
    path2 = tmp_path / "tq1.gguf"
    write_gguf(path2, layers=1, file_type=LlamaFileType.MOSTLY_TQ1_0)  # no catalog entry
    info2 = read_gguf(path2, catalog=catalog)
    assert info2.weights is not None and info2.weights.quant_id == "q8_0"
    assert any("MOSTLY_TQ1_0" in note for note in info2.notes)


def test_every_mapped_file_type_is_in_the_catalog(catalog: Catalog) -> None:
    from rigcheck.core.models.files import _FTYPE_IDS

    ids = {q.id for q in catalog.quants}
    assert set(_FTYPE_IDS.values()) <= ids
    names = {ft.name.removeprefix("MOSTLY_").removeprefix("ALL_").lower() for ft in LlamaFileType}
    assert set(_FTYPE_IDS) <= names


def test_big_endian_file(tmp_path: Path, catalog: Catalog) -> None:
    path = tmp_path / "be.gguf"
    model = write_gguf(path, endianess=gguf.GGUFEndian.BIG)
    info = read_gguf(path, catalog=catalog)
    assert info.weights is not None and info.weights.total_bytes == model.total_bytes()
    assert info.arch.num_kv_heads == 2 and info.arch.vocab_size == VOCAB


def test_large_vocabulary_is_fast(tmp_path: Path, catalog: Catalog) -> None:
    """A 262,144-token vocabulary and as many merges: only lengths are read (gguf-py's reader takes ~20 s)."""
    items = 262_144
    strings = b"".join(struct.pack("<Q", 6) + b"tok%03d" % (i % 1000) for i in range(items))
    kvs = [
        *ARCH_KV,
        ("llama.block_count", 4, struct.pack("<I", 1)),
        ("llama.embedding_length", 4, struct.pack("<I", 32)),
        ("llama.attention.head_count", 4, struct.pack("<I", 2)),
        ("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, items) + strings),
        ("tokenizer.ggml.merges", 9, struct.pack("<IQ", 8, items) + strings),
        ("tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, items) + b"\x00" * 4 * items),
    ]
    path = tmp_path / "big-vocab.gguf"
    path.write_bytes(gguf_bytes(kvs, [("blk.0.attn_q.weight", [32, 32], 0, 0)], b"\x00" * 4096))
    started = time.perf_counter()
    info = read_gguf(path, catalog=catalog)
    assert time.perf_counter() - started < 3
    assert info.arch.vocab_size == items


# -- GGUF: split files --------------------------------------------------------------------------------


def write_split(tmp_path: Path) -> tuple[Model, list[Path]]:
    model = write_gguf(tmp_path / "split.gguf", layers=2, split_max_tensors=8)
    parts = sorted(tmp_path.glob("split-*-of-*.gguf"))
    assert len(parts) == 3, parts
    return model, parts


def test_split_parts_are_summed_from_any_part(tmp_path: Path, catalog: Catalog) -> None:
    model, parts = write_split(tmp_path)
    for part in parts:
        info = read_gguf(part, catalog=catalog)
        assert info.weights is not None
        assert info.weights.total_bytes == model.total_bytes()
        assert info.weights.tensor_count == len(model.tensors)
        assert info.weights.files == tuple(p.name for p in parts)
        assert info.arch.params_total == model.total_elements()
        assert info.arch.layer_params == (model.layer(0, model.elements), model.layer(1, model.elements))
        assert info.id == "split" and info.source == str(parts[0])


def test_split_missing_part(tmp_path: Path, catalog: Catalog) -> None:
    _, parts = write_split(tmp_path)
    parts[1].unlink()
    error = expect_input_error(parts[0], lambda: read_gguf(parts[0], catalog=catalog))
    assert parts[1].name in error.problem and "not in the folder" in error.problem
    error = expect_input_error(parts[2], lambda: read_gguf(parts[2], catalog=catalog))
    assert parts[1].name in error.problem


def test_split_parts_from_different_splits(tmp_path: Path, catalog: Catalog) -> None:
    _, parts = write_split(tmp_path)
    parts[2].write_bytes(parts[1].read_bytes())  # part 2 copied over part 3
    error = expect_input_error(parts[2], lambda: read_gguf(parts[0], catalog=catalog))
    assert "part 2" in error.problem


def test_renamed_split_part(tmp_path: Path, catalog: Catalog) -> None:
    _, parts = write_split(tmp_path)
    lone = tmp_path / "lone.gguf"
    parts[0].rename(lone)
    error = expect_input_error(lone, lambda: read_gguf(lone, catalog=catalog))
    assert "part 1 of a 3-part split" in error.problem


# -- GGUF: hostile files -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_gguf(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("small") / "small.gguf"
    write_gguf(path, layers=1)
    return path.read_bytes()


def hostile(tmp_path: Path, data: bytes, catalog: Catalog) -> InputError:
    path = tmp_path / "hostile.gguf"
    path.write_bytes(data)
    return expect_input_error(path, lambda: read_gguf(path, catalog=catalog))


def test_empty_and_wrong_magic(tmp_path: Path, catalog: Catalog, small_gguf: bytes) -> None:
    assert "empty" in hostile(tmp_path, b"", catalog).problem
    assert "not a GGUF file" in hostile(tmp_path, b"GGML" + small_gguf[4:], catalog).problem
    assert "not a GGUF file" in hostile(tmp_path, b"\x00" * 3, catalog).problem
    assert "not a GGUF file" in hostile(tmp_path, b'{"json": true}' * 10, catalog).problem


def test_unsupported_versions(tmp_path: Path, catalog: Catalog, small_gguf: bytes) -> None:
    for version in (1, 4, 0xFFFF):
        data = bytearray(small_gguf)
        struct.pack_into("<I", data, 4, version)
        assert "version" in hostile(tmp_path, bytes(data), catalog).problem


def test_truncated_at_many_offsets(tmp_path: Path, catalog: Catalog, small_gguf: bytes) -> None:
    path = tmp_path / "whole.gguf"
    path.write_bytes(small_gguf)
    oracle = gguf.GGUFReader(path)
    last_end = max(int(t.data_offset) + int(t.n_bytes) for t in oracle.tensors)
    data_start = int(oracle.data_offset)
    cuts = [4, 8, 12, 20, 23, 24, 30, 60, 200, data_start - 1, data_start, data_start + 10, last_end - 1]
    cuts += list(range(24, data_start, max(1, (data_start - 24) // 40)))
    for cut in sorted(set(cuts)):
        assert 0 < cut < last_end
        error = hostile(tmp_path, small_gguf[:cut], catalog)
        assert "truncated" in error.problem or "more than" in error.problem, (cut, error)


def test_absurd_counts(tmp_path: Path, catalog: Catalog, small_gguf: bytes) -> None:
    for offset, value in ((8, 2**60), (16, 2**60), (8, 2**64 - 1), (16, 10**6)):
        data = bytearray(small_gguf)
        struct.pack_into("<Q", data, offset, value)
        error = hostile(tmp_path, bytes(data), catalog)
        assert "more than" in error.problem or "truncated" in error.problem, error


def test_string_length_beyond_the_file(tmp_path: Path, catalog: Catalog, small_gguf: bytes) -> None:
    data = bytearray(small_gguf)
    struct.pack_into("<Q", data, 24, 2**62)  # the first key's length
    error = hostile(tmp_path, bytes(data), catalog)
    assert "past the end of the file" in error.problem


def gguf_bytes(
    kvs: list[tuple[str, int, bytes]] = (),  # type: ignore[assignment]
    tensors: list[tuple[str, list[int], int, int]] = (),  # type: ignore[assignment]
    data: bytes = b"",
    *,
    version: int = 3,
    tensor_count: int | None = None,
) -> bytes:
    """A GGUF written by hand: kvs as (key, type, encoded value), tensors as (name, dims, type, offset)."""

    def string(text: str) -> bytes:
        raw = text.encode()
        return struct.pack("<Q", len(raw)) + raw

    out = b"GGUF" + struct.pack(
        "<IQQ", version, len(tensors) if tensor_count is None else tensor_count, len(kvs)
    )
    for key, vtype, value in kvs:
        out += string(key) + struct.pack("<I", vtype) + value
    for name, dims, ttype, offset in tensors:
        out += string(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", ttype, offset)
    out += b"\x00" * (-len(out) % 32)
    return out + data


ARCH_KV = [("general.architecture", 8, struct.pack("<Q", 5) + b"llama")]


def test_hand_written_file_reads(tmp_path: Path, catalog: Catalog) -> None:
    kvs = [
        *ARCH_KV,
        ("llama.block_count", 4, struct.pack("<I", 1)),
        ("llama.embedding_length", 4, struct.pack("<I", 32)),
        ("llama.attention.head_count", 4, struct.pack("<I", 2)),
    ]
    data = gguf_bytes(kvs, [("blk.0.attn_q.weight", [32, 32], 0, 0)], b"\x00" * 4096)
    path = tmp_path / "hand.gguf"
    path.write_bytes(data)
    info = read_gguf(path, catalog=catalog)
    assert info.weights is not None and info.weights.total_bytes == 4096
    assert info.arch.params_total == 1024


@pytest.mark.parametrize(
    ("tensors", "problem"),
    [
        ([("blk.0.w", [2**40, 2**40], 0, 0)], "absurd dimensions"),
        ([("blk.0.w", [32, 2**40], 0, 0)], "past the end of the file"),
        ([("blk.0.w", [32, 2**40], 8, 0)], "past the end of the file"),
        ([("blk.0.w", [32, 32], 0, 2**63)], "past the end of the file"),
        ([("blk.0.w", [1] * 100, 0, 0)], "dimensions"),
        ([("blk.0.w", [32], 999, 0)], "unknown type 999"),
        ([("blk.0.w", [33], 8, 0)], "not a multiple"),
        ([("blk.0.w", [32], 0, 0), ("blk.0.w", [32], 0, 128)], "twice"),
    ],
)
def test_hostile_tensor_infos(tmp_path: Path, catalog: Catalog, tensors: list[Any], problem: str) -> None:
    error = hostile(tmp_path, gguf_bytes(ARCH_KV, tensors, b"\x00" * 1024), catalog)
    assert problem in error.problem, error


@pytest.mark.parametrize(
    ("kvs", "problem"),
    [
        ([("a", 9, struct.pack("<IQ", 0, 2**60))], "past the end"),  # u8 array of 2**60 items
        ([("a", 9, struct.pack("<IQ", 8, 2**40))], "past the end"),  # string array
        ([("a", 9, struct.pack("<IQ", 8, 3) + struct.pack("<Q", 2**62))], "past the end"),
        ([("a", 9, struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 9, 1) * 4 + b"\x00" * 64)], "nested"),
        ([("a", 77, b"\x00" * 8)], "unknown value type 77"),
        ([("a", 9, struct.pack("<IQ", 77, 1) + b"\x00" * 8)], "unknown array item type"),
        ([("a", 4, b"\x00" * 4), ("a", 4, b"\x00" * 4)], "twice"),
        ([("general.alignment", 4, struct.pack("<I", 3))], "power of two"),
        ([("general.alignment", 4, struct.pack("<I", 0))], "power of two"),
    ],
)
def test_hostile_metadata(tmp_path: Path, catalog: Catalog, kvs: list[Any], problem: str) -> None:
    error = hostile(tmp_path, gguf_bytes(kvs, [], b"\x00" * 64), catalog)
    assert problem in error.problem, error


def test_too_many_strings(tmp_path: Path, catalog: Catalog) -> None:
    items = 4_000_001
    kvs = [("tokens", 9, struct.pack("<IQ", 8, items) + b"\x00" * (8 * items))]
    error = hostile(tmp_path, gguf_bytes(kvs), catalog)
    assert "items" in error.problem


@pytest.mark.parametrize(
    ("kvs", "problem"),
    [
        ([], "general.architecture"),
        (ARCH_KV, "llama.block_count is missing"),
        ([*ARCH_KV, ("llama.block_count", 4, struct.pack("<I", 10**6))], "llama.block_count"),
        ([*ARCH_KV, ("llama.block_count", 8, struct.pack("<Q", 2) + b"xx")], "llama.block_count"),
        (
            [
                *ARCH_KV,
                ("llama.block_count", 4, struct.pack("<I", 2)),
                ("llama.embedding_length", 4, struct.pack("<I", 32)),
                ("llama.attention.head_count", 4, struct.pack("<I", 2)),
                ("llama.attention.head_count_kv", 9, struct.pack("<IQ", 4, 3) + b"\x00" * 12),
            ],
            "entries for 2 layers",
        ),
    ],
)
def test_missing_or_bad_model_metadata(
    tmp_path: Path, catalog: Catalog, kvs: list[Any], problem: str
) -> None:
    error = hostile(tmp_path, gguf_bytes(kvs, [("blk.0.w", [32], 0, 0)], b"\x00" * 128), catalog)
    assert problem in error.problem, error


def test_no_tensors(tmp_path: Path, catalog: Catalog) -> None:
    assert "no tensors" in hostile(tmp_path, gguf_bytes(ARCH_KV), catalog).problem


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_damage_never_escapes_as_a_traceback(
    tmp_path: Path, catalog: Catalog, small_gguf: bytes, data: st.DataObject
) -> None:
    damaged = bytearray(small_gguf)
    for _ in range(data.draw(st.integers(1, 8))):
        offset = data.draw(st.integers(0, min(len(damaged) - 1, 2000)))
        damaged[offset] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(damaged)))
    path = tmp_path / "damaged.gguf"
    path.write_bytes(bytes(damaged[:cut]))
    try:
        read_gguf(path, catalog=catalog)
    except InputError as error:
        assert error.source == str(path) and "\n" not in str(error)


# -- safetensors ------------------------------------------------------------------------------------


LLAMA_CONFIG: dict[str, Any] = {
    "model_type": "llama",
    "hidden_size": HIDDEN,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": FF,
    "vocab_size": VOCAB,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": False,
}


def llama_tensors(dtype: str = "BF16", layers: range = range(2)) -> dict[str, tuple[str, list[int]]]:
    tensors: dict[str, tuple[str, list[int]]] = {}
    if layers.start == 0:
        tensors["model.embed_tokens.weight"] = (dtype, [VOCAB, HIDDEN])
    for i in layers:
        p = f"model.layers.{i}."
        tensors[p + "input_layernorm.weight"] = (dtype, [HIDDEN])
        tensors[p + "self_attn.q_proj.weight"] = (dtype, [HIDDEN, HIDDEN])
        tensors[p + "self_attn.k_proj.weight"] = (dtype, [32, HIDDEN])
        tensors[p + "self_attn.v_proj.weight"] = (dtype, [32, HIDDEN])
        tensors[p + "self_attn.o_proj.weight"] = (dtype, [HIDDEN, HIDDEN])
        tensors[p + "post_attention_layernorm.weight"] = (dtype, [HIDDEN])
        tensors[p + "mlp.gate_proj.weight"] = (dtype, [FF, HIDDEN])
        tensors[p + "mlp.up_proj.weight"] = (dtype, [FF, HIDDEN])
        tensors[p + "mlp.down_proj.weight"] = (dtype, [HIDDEN, FF])
    if layers.stop == 2:
        tensors["model.norm.weight"] = (dtype, [HIDDEN])
        tensors["lm_head.weight"] = (dtype, [VOCAB, HIDDEN])
    return tensors


def layer_bytes(tensors: Mapping[str, tuple[str, list[int]]], i: int) -> int:
    return sum(
        math.prod(shape) * DTYPE_BYTES[dtype]
        for name, (dtype, shape) in tensors.items()
        if name.startswith(f"model.layers.{i}.")
    )


def test_bf16_folder(tmp_path: Path, catalog: Catalog) -> None:
    from rigcheck.core.models.config import parse_config

    (tmp_path / "config.json").write_text(json.dumps(LLAMA_CONFIG))
    tensors = llama_tensors()
    total = write_safetensors(tmp_path / "model.safetensors", tensors)
    info = read_model_folder(tmp_path, catalog=catalog)
    assert info.weights is not None
    assert info.source_kind == "config" and info.source == str(tmp_path)
    assert info.arch == parse_config(LLAMA_CONFIG, str(tmp_path / "config.json"))
    assert info.weights.total_bytes == total
    assert info.weights.bytes_by_format == {"BF16": total}
    assert info.weights.quant_id == "bf16"
    assert info.weights.tensor_count == len(tensors)
    assert info.weights.layer_bytes == (layer_bytes(tensors, 0), layer_bytes(tensors, 1))
    assert info.weights.other_bytes == total - sum(info.weights.layer_bytes)
    # the element count matches config.json's parameter count, so no note about it
    assert info.arch.params_total == sum(math.prod(shape) for _, shape in tensors.values())
    assert "parameters: from the tensor table" in " ".join(info.notes)
    assert load_model_path(tmp_path / "model.safetensors", catalog=catalog) == info


def test_sharded_folder_with_index(tmp_path: Path, catalog: Catalog) -> None:
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_CONFIG))
    first, second = llama_tensors("F16", range(1)), llama_tensors("F16", range(1, 2))
    total = write_safetensors(tmp_path / "model-00001-of-00002.safetensors", first)
    total += write_safetensors(tmp_path / "model-00002-of-00002.safetensors", second)
    weight_map = dict.fromkeys(first, "model-00001-of-00002.safetensors")
    weight_map |= dict.fromkeys(second, "model-00002-of-00002.safetensors")
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}))
    (tmp_path / "consolidated.safetensors").write_bytes(b"not read")  # not in the index: ignored
    info = read_model_folder(tmp_path, catalog=catalog)
    assert info.weights is not None
    assert info.weights.total_bytes == total and info.weights.quant_id == "fp16"
    assert info.weights.files == ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
    assert info.weights.layer_bytes == (layer_bytes(first, 0), layer_bytes(second, 1))

    index.write_text(
        json.dumps({"weight_map": {**weight_map, "extra.weight": "model-00002-of-00002.safetensors"}})
    )
    assert (
        "extra.weight"
        in expect_input_error(index, lambda: read_model_folder(tmp_path, catalog=catalog)).problem
    )

    index.write_text(json.dumps({"weight_map": weight_map}))
    (tmp_path / "model-00002-of-00002.safetensors").unlink()
    error = expect_input_error(index, lambda: read_model_folder(tmp_path, catalog=catalog))
    assert "model-00002-of-00002.safetensors" in error.problem


def test_shards_without_index_must_all_be_there(tmp_path: Path, catalog: Catalog) -> None:
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_CONFIG))
    write_safetensors(tmp_path / "model-00001-of-00002.safetensors", llama_tensors("F16", range(1)))
    error = expect_input_error(tmp_path, lambda: read_model_folder(tmp_path, catalog=catalog))
    assert "model-00002-of-00002.safetensors" in error.problem


def gptq_tensors(hidden: int, ff: int, layers: int, vocab: int) -> dict[str, tuple[str, list[int]]]:
    tensors: dict[str, tuple[str, list[int]]] = {"model.embed_tokens.weight": ("F16", [vocab, hidden])}
    for i in range(layers):
        p = f"model.layers.{i}."
        tensors[p + "input_layernorm.weight"] = ("F16", [hidden])
        tensors[p + "post_attention_layernorm.weight"] = ("F16", [hidden])
        for proj, fan_in, fan_out in (
            ("self_attn.q_proj", hidden, hidden),
            ("self_attn.k_proj", hidden, hidden // 2),
            ("self_attn.v_proj", hidden, hidden // 2),
            ("self_attn.o_proj", hidden, hidden),
            ("mlp.gate_proj", hidden, ff),
            ("mlp.up_proj", hidden, ff),
            ("mlp.down_proj", ff, hidden),
        ):
            tensors[f"{p}{proj}.qweight"] = ("I32", [fan_in // 8, fan_out])
            tensors[f"{p}{proj}.qzeros"] = ("I32", [fan_in // 128, fan_out // 8])
            tensors[f"{p}{proj}.scales"] = ("F16", [fan_in // 128, fan_out])
            tensors[f"{p}{proj}.g_idx"] = ("I32", [fan_in])
    tensors["model.norm.weight"] = ("F16", [hidden])
    tensors["lm_head.weight"] = ("F16", [vocab, hidden])
    return tensors


@pytest.mark.parametrize("method", ["gptq", "awq"])
def test_gptq_and_awq_params_from_config_bytes_from_headers(
    tmp_path: Path, catalog: Catalog, method: str
) -> None:
    from rigcheck.core.models.config import parse_config

    config = {
        **LLAMA_CONFIG,
        "hidden_size": 256,
        "intermediate_size": 512,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "quantization_config": {"quant_method": method, "bits": 4, "group_size": 128, "desc_act": False},
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    tensors = gptq_tensors(256, 512, 2, VOCAB)
    total = write_safetensors(tmp_path / "model.safetensors", tensors)
    info = read_model_folder(tmp_path, catalog=catalog)
    assert info.weights is not None
    assert info.arch == parse_config(config, str(tmp_path / "config.json"))
    packed = sum(math.prod(shape) for _, shape in tensors.values())
    assert info.arch.params_total != packed  # int32 words are not parameters
    assert info.weights.total_bytes == total
    assert set(info.weights.bytes_by_format) == {"I32", "F16"}
    assert info.weights.quant_id == f"{method}-4bit-g128"
    assert sum(info.weights.layer_bytes) + info.weights.other_bytes == total


def test_unknown_quantization_gets_a_note(tmp_path: Path, catalog: Catalog) -> None:
    config = {**LLAMA_CONFIG, "quantization_config": {"quant_method": "gptq", "bits": 3, "group_size": 64}}
    (tmp_path / "config.json").write_text(json.dumps(config))
    write_safetensors(tmp_path / "model.safetensors", llama_tensors())
    info = read_model_folder(tmp_path, catalog=catalog)
    assert info.weights is not None and info.weights.quant_id is None
    assert any("gptq-3bit-g64" in note for note in info.notes)


def test_vision_tower_bytes_are_not_layers(tmp_path: Path, catalog: Catalog) -> None:
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_CONFIG))
    tensors = llama_tensors()
    tensors["vision_tower.encoder.layers.0.mlp.weight"] = ("BF16", [HIDDEN, HIDDEN])
    tensors["model.layers.2.mtp.weight"] = ("BF16", [HIDDEN])  # past num_hidden_layers
    total = write_safetensors(tmp_path / "model.safetensors", tensors)
    info = read_model_folder(tmp_path, catalog=catalog)
    assert info.weights is not None
    assert info.weights.layer_bytes == (layer_bytes(tensors, 0), layer_bytes(tensors, 1))
    assert info.weights.other_bytes == total - sum(info.weights.layer_bytes)
    # the tower and the MTP layer are loaded but not decoded: counted apart from the decoder's parameters
    assert f"{HIDDEN * HIDDEN:,} in multimodal towers" in " ".join(info.notes)
    assert f"{HIDDEN:,} in MTP layers" in " ".join(info.notes)
    assert (info.arch.tower_params, info.arch.mtp_params) == (HIDDEN * HIDDEN, HIDDEN)
    assert info.arch.tower_source == info.arch.mtp_source == "tensor_table"


def test_safetensors_header_only_is_read(tmp_path: Path) -> None:
    path = tmp_path / "m.safetensors"
    write_safetensors(path, {"a": ("F32", [4, 4]), "b": ("BF16", [3])})
    header = read_safetensors_header(path)
    assert header["a"] == {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]}
    assert header["__metadata__"] == {"format": "pt"}


def raw_safetensors(path: Path, header: bytes, length: int | None = None, data: bytes = b"") -> Path:
    path.write_bytes(struct.pack("<Q", len(header) if length is None else length) + header + data)
    return path


@pytest.mark.parametrize(
    ("header", "length", "data", "problem"),
    [
        (b"{}", 2**40, b"", "over 32 MiB"),
        (b"{}", 32 * 2**20 + 1, b"", "over 32 MiB"),
        (b'{"a": NaN}', None, b"", "not valid JSON"),
        (b'{"a": 1' + b"0" * 5000 + b"}", None, b"", "not valid JSON"),
        (b"{}", 5000, b"", "truncated"),
        (b"{not json", None, b"", "not valid JSON"),
        (b"\xff\xfe{}", None, b"", "not UTF-8"),
        (b"[1, 2]", None, b"", "not a JSON object"),
        (b"[" * 100_000 + b"]" * 100_000, None, b"", "not valid JSON"),
        (b'{"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}', None, b"\x00" * 8, "truncated"),
        (b'{"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 8]}}', None, b"\x00" * 16, "spans"),
        (b'{"a": {"dtype": "F32", "shape": [-4], "data_offsets": [0, 8]}}', None, b"\x00" * 16, "shape"),
        (
            b'{"a": {"dtype": "F32", "shape": [4], "data_offsets": [8, 0]}}',
            None,
            b"\x00" * 16,
            "data_offsets",
        ),
        (b'{"a": {"shape": [4], "data_offsets": [0, 16]}}', None, b"\x00" * 16, "dtype"),
        (b'{"a": [1]}', None, b"", "not a JSON object"),
        (b'{"__metadata__": 5}', None, b"", "__metadata__"),
    ],
)
def test_hostile_safetensors_headers(
    tmp_path: Path, header: bytes, length: int | None, data: bytes, problem: str
) -> None:
    path = raw_safetensors(tmp_path / "bad.safetensors", header, length, data)
    error = expect_input_error(path, lambda: read_safetensors_header(path))
    assert problem in error.problem, error


def test_safetensors_too_short(tmp_path: Path) -> None:
    path = tmp_path / "short.safetensors"
    path.write_bytes(b"\x01\x02")
    assert "too short" in expect_input_error(path, lambda: read_safetensors_header(path)).problem


# -- folders, config.json, dispatch ------------------------------------------------------------------------


def test_folder_with_one_gguf(tmp_path: Path, catalog: Catalog) -> None:
    model = write_gguf(tmp_path / "tiny-Q8_0.gguf")
    (tmp_path / "mmproj-tiny-f16.gguf").write_bytes(b"GGUF projector, skipped")
    info = read_model_folder(tmp_path, catalog=catalog)
    assert info.weights is not None and info.weights.total_bytes == model.total_bytes()
    assert info.source == str(tmp_path / "tiny-Q8_0.gguf")


def test_folder_with_a_split_gguf_is_one_model(tmp_path: Path, catalog: Catalog) -> None:
    model, _ = write_split(tmp_path)
    info = load_model_path(tmp_path, catalog=catalog)
    assert info.weights is not None and info.weights.total_bytes == model.total_bytes()


def test_folder_with_several_ggufs_asks_which(tmp_path: Path, catalog: Catalog) -> None:
    write_gguf(tmp_path / "m-Q8_0.gguf", layers=1)
    write_gguf(tmp_path / "m-F16.gguf", layers=1, file_type=LlamaFileType.MOSTLY_F16)
    error = expect_input_error(tmp_path, lambda: read_model_folder(tmp_path, catalog=catalog))
    assert "m-Q8_0.gguf" in error.problem and "m-F16.gguf" in error.problem


def test_folder_with_config_and_gguf_uses_the_gguf(tmp_path: Path, catalog: Catalog) -> None:
    write_gguf(tmp_path / "m.gguf", layers=1)
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_CONFIG))
    info = read_model_folder(tmp_path, catalog=catalog)
    assert info.source_kind == "file" and info.arch.num_layers == 1
    assert any("config.json not used" in note for note in info.notes)


def test_folder_with_config_only(tmp_path: Path, catalog: Catalog) -> None:
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_CONFIG))
    info = read_model_folder(tmp_path, catalog=catalog)
    assert info.source_kind == "config" and info.weights is None
    assert info.arch.num_layers == 2 and info.name == tmp_path.name


def test_folder_with_safetensors_but_no_config(tmp_path: Path, catalog: Catalog) -> None:
    write_safetensors(tmp_path / "model.safetensors", llama_tensors())
    assert (
        "no config.json"
        in expect_input_error(tmp_path, lambda: read_model_folder(tmp_path, catalog=catalog)).problem
    )


def test_empty_folder(tmp_path: Path, catalog: Catalog) -> None:
    assert (
        "no config.json"
        in expect_input_error(tmp_path, lambda: read_model_folder(tmp_path, catalog=catalog)).problem
    )


def test_bare_config_json(tmp_path: Path) -> None:
    folder = tmp_path / "models--org--Tiny-1B" / "snapshots" / "abc123"
    folder.mkdir(parents=True)
    path = folder / "config.json"
    path.write_text(json.dumps(LLAMA_CONFIG))
    info = read_config_json(path)
    assert info.source_kind == "config" and info.source == str(path)
    assert info.name == "org/Tiny-1B"
    assert load_model_path(path) == info


@pytest.mark.parametrize(
    ("text", "problem"),
    [("{", "not valid JSON"), ("[]", "not a JSON object"), ("{}", "model_type")],
)
def test_bad_config_json(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(text)
    assert problem in expect_input_error(path, lambda: read_config_json(path)).problem


def test_load_model_path_dispatch(tmp_path: Path, catalog: Catalog) -> None:
    missing = tmp_path / "nope.gguf"
    assert expect_input_error(missing, lambda: load_model_path(missing)).problem == "no such file or folder"
    blob = tmp_path / "sha256-0123"  # an Ollama blob: a GGUF without the extension
    model = write_gguf(blob, layers=1)
    info = load_model_path(blob, catalog=catalog)
    assert info.weights is not None and info.weights.total_bytes == model.total_bytes()
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    assert "not a GGUF file" in expect_input_error(other, lambda: load_model_path(other)).problem


def test_layer_numbers_skip_towers_and_prediction_heads() -> None:
    from rigcheck.core.models.files import _st_layer

    assert _st_layer("model.layers.3.self_attn.q_proj.weight") == 3
    assert _st_layer("model.visual.blocks.2.attn.qkv.weight") is None
    assert _st_layer("mtp.layers.0.mlp.gate.weight") is None  # Qwen3-Next multi-token prediction


# -- reading JSON without the 64 MiB allocation ----------------------------------------------------


def test_json_reads_the_file_not_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from rigcheck.core.models import files as files_module

    config = tmp_path / "config.json"
    config.write_text(json.dumps({"pad": "x" * 3000, "model_type": "llama"}), encoding="utf-8")
    with config.open("rb") as handle:
        assert files_module._read_at_most(handle, 10**9) == config.read_bytes()
    # no size to go by (a pipe): chunk by chunk, still capped
    monkeypatch.setattr(files_module.helpers, "_READ_CHUNK", 7)
    stream = io.BytesIO(b"y" * 100)
    assert files_module._read_at_most(stream, 50) == b"y" * 50
    assert files_module._read_at_most(io.BytesIO(b"z" * 20), 50) == b"z" * 20
    # over the cap: one line naming the file
    monkeypatch.setattr(files_module.helpers, "MAX_JSON_BYTES", 1000)
    with pytest.raises(InputError, match="over 0 MiB"):
        files_module._read_json_object(config)


# -- issue 17: forged counts, overlapping data, impossible heads ---------------------------------------


def test_tensor_count_bomb_is_refused_before_parsing(
    tmp_path: Path, catalog: Catalog, small_gguf: bytes
) -> None:
    """Issue 17 #3: the tensor count was bounded only by the file size; every record was parsed first.

    A sparse file of 64 GiB claiming 2**31 tensors (each forged record the minimum 24 bytes) was
    walked record by record; it is now refused from the header alone, before reading one record.
    """
    path = tmp_path / "bomb.gguf"
    data = bytearray(small_gguf)
    struct.pack_into("<Q", data, 8, 2**31)
    with path.open("wb") as handle:
        handle.write(data)
        handle.truncate(64 * 1024**3)  # sparse: no disk space is used
    started = time.perf_counter()
    error = expect_input_error(path, lambda: read_gguf(path, catalog=catalog))
    assert "2,147,483,648 tensors" in error.problem and "more than the 65,536" in error.problem
    assert time.perf_counter() - started < 5  # a guard against a hang, not a speed target


def _overlap(small_gguf: bytes) -> bytes:
    """``small_gguf`` with its second tensor's data offset set to its first one's."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.gguf"
        path.write_bytes(small_gguf)
        tensors = gguf.GGUFReader(path).tensors
        first, second = tensors[0], tensors[1]
        # the offset field of a tensor record is its last 8 bytes: find it by the record's name
        data = bytearray(small_gguf)
        offsets = []
        for tensor in (first, second):
            name = tensor.name.encode()
            at = data.index(struct.pack("<Q", len(name)) + name)
            end = at + 8 + len(name) + 4 + 8 * len(tensor.shape) + 4
            offsets.append(end)
        first_offset = struct.unpack_from("<Q", data, offsets[0])[0]
        struct.pack_into("<Q", data, offsets[1], first_offset)
        return bytes(data)


def test_overlapping_gguf_tensors_are_refused(tmp_path: Path, catalog: Catalog, small_gguf: bytes) -> None:
    """Issue 17 #9: two tensors sharing bytes counted their weights twice."""
    error = hostile(tmp_path, _overlap(small_gguf), catalog)
    assert "overlap" in error.problem, error


def test_overlapping_safetensors_are_refused(tmp_path: Path) -> None:
    """Issue 17 #9: the same for safetensors data offsets."""
    header = (
        b'{"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},'
        b' "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}}'
    )
    path = raw_safetensors(tmp_path / "overlap.safetensors", header, None, b"\x00" * 24)
    error = expect_input_error(path, lambda: read_safetensors_header(path))
    assert "tensors a and b overlap" in error.problem, error


@pytest.mark.parametrize(
    ("heads", "kv_heads", "problem"),
    [(4, 8, "head_count_kv (8) is above head_count (4)"), (0, 2, "is 0 in every layer")],
)
def test_impossible_attention_heads_are_refused(
    tmp_path: Path, catalog: Catalog, heads: int, kv_heads: int, problem: str
) -> None:
    """Issue 17 #9: head_count_kv > head_count, or head_count 0 (a 0-byte KV cache and a FITS verdict)."""
    path = tmp_path / "heads.gguf"
    write_gguf(path, heads=heads or 4, kv_heads=kv_heads)
    data = bytearray(path.read_bytes())
    key = b"llama.attention.head_count"
    at = data.index(struct.pack("<Q", len(key)) + key) + 8 + len(key)
    assert struct.unpack_from("<I", data, at)[0] == 4  # GGUF_TYPE_UINT32
    struct.pack_into("<I", data, at + 4, heads)
    path.write_bytes(bytes(data))
    error = expect_input_error(path, lambda: read_gguf(path, catalog=catalog))
    assert problem in error.problem, error


def test_gguf_name_with_control_characters_stays_on_one_line(tmp_path: Path, catalog: Catalog) -> None:
    """Issue 17 #5: ESC/OSC/BEL and CR/LF in general.name reached the terminal raw (forged rows)."""
    path = tmp_path / "named.gguf"
    write_gguf(path)
    hostile = b"\x1b]0;x\x07\nrow\r!!!!"
    assert len(hostile) == len(b"Tiny Test Model")
    path.write_bytes(path.read_bytes().replace(b"Tiny Test Model", hostile))
    info = read_gguf(path, catalog=catalog)
    assert info.name == "\\x1b]0;x\\x07\\x0arow\\x0d!!!!"
