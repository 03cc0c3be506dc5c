"""load_hub_model with the real huggingface_hub client against a fake hub on 127.0.0.1.

The fake hub is a ``ThreadingHTTPServer`` serving the endpoints the client really calls (read from
huggingface_hub's source): ``GET /api/models/{repo}[/revision/{rev}]`` (``HfApi.model_info``) and
``HEAD``/``GET /{repo}/resolve/{rev}/{file}`` (``hf_hub_download``; ranged GETs from
``HfApi.parse_safetensors_file_metadata``), with the headers and error codes the real hub sends.
Weight files are virtual: a real safetensors header followed by as many zero bytes as the tensors
need, produced only for the ranges asked for. Every request is logged, so the tests can show that
no weight data was ever requested. Nothing here needs the internet.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import shlex
import socket
import struct
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import gguf
import pytest
from huggingface_hub import close_session, constants

from fakes.gguf_files import write_gguf
from rigcheck.core.errors import InputError
from rigcheck.core.models import hub_gguf, hub_limits
from rigcheck.core.models.config import parse_config
from rigcheck.core.models.files import read_gguf
from rigcheck.core.models.hub import Cancelled, load_hub_model

RANGE_FIRST_CHUNK = 100_001  # parse_safetensors_file_metadata asks for bytes=0-100000 first
GOOD_TOKEN = "hf_fake_token_for_tests"  # noqa: S105 -- what the fake hub accepts
DTYPE_BYTES = {"BF16": 2, "F16": 2, "F32": 4, "I32": 4}

# -- fixture repositories -------------------------------------------------------------------------


@dataclass(frozen=True)
class FakeFile:
    """A file of ``size`` bytes: ``prefix`` then zeros (weights are never materialised)."""

    prefix: bytes
    size: int
    #: bytes 0..header_end are the safetensors length + header (0 for other files)
    header_end: int = 0

    def read(self, start: int, end: int) -> bytes:
        """Bytes start..end inclusive."""
        end = min(end, self.size - 1)
        head = self.prefix[start : end + 1]
        return head + bytes(max(0, end + 1 - max(start, len(self.prefix))))

    @property
    def etag(self) -> str:
        return hashlib.sha256(self.prefix + str(self.size).encode()).hexdigest()


def text_file(text: str) -> FakeFile:
    data = text.encode()
    return FakeFile(data, len(data))


def json_file(value: Any) -> FakeFile:
    return text_file(json.dumps(value, indent=2))


Tensors = dict[str, tuple[str, list[int]]]


def safetensors_file(tensors: Tensors, metadata: dict[str, str] | None = None) -> FakeFile:
    """A real safetensors header for these tensors, data laid out in order (all zeros)."""
    header: dict[str, Any] = {"__metadata__": metadata or {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = math.prod(shape) * DTYPE_BYTES[dtype]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    blob = json.dumps(header).encode()
    prefix = struct.pack("<Q", len(blob)) + blob
    return FakeFile(prefix, len(prefix) + offset, header_end=len(prefix))


def tensor_bytes(tensors: Tensors) -> int:
    return sum(math.prod(shape) * DTYPE_BYTES[dtype] for dtype, shape in tensors.values())


def llama_config(**changes: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 256,
        "intermediate_size": 768,
        "num_hidden_layers": 2,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "vocab_size": 32000,
        "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }
    config.update(changes)
    return config


def llama_params(hidden: int, inter: int, layers: int, heads: int, kv_heads: int, vocab: int) -> int:
    """By hand: embedding, per layer (q, k, v, o, gate, up, down, two norms), final norm and head."""
    kv = kv_heads * (hidden // heads)
    per_layer = 2 * hidden * hidden + 2 * kv * hidden + 3 * hidden * inter + 2 * hidden
    return vocab * hidden + layers * per_layer + hidden + vocab * hidden


def llama_tensors(config: dict[str, Any], dtype: str = "BF16", norm_dtype: str | None = None) -> Tensors:
    h, i, v = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    kv = config["num_key_value_heads"] * h // config["num_attention_heads"]
    norm = norm_dtype or dtype
    tensors: Tensors = {"model.embed_tokens.weight": (dtype, [v, h])}
    for n in range(config["num_hidden_layers"]):
        p = f"model.layers.{n}."
        tensors |= {
            p + "input_layernorm.weight": (norm, [h]),
            p + "self_attn.q_proj.weight": (dtype, [h, h]),
            p + "self_attn.k_proj.weight": (dtype, [kv, h]),
            p + "self_attn.v_proj.weight": (dtype, [kv, h]),
            p + "self_attn.o_proj.weight": (dtype, [h, h]),
            p + "post_attention_layernorm.weight": (norm, [h]),
            p + "mlp.gate_proj.weight": (dtype, [i, h]),
            p + "mlp.up_proj.weight": (dtype, [i, h]),
            p + "mlp.down_proj.weight": (dtype, [h, i]),
        }
    tensors |= {"model.norm.weight": (norm, [h]), "lm_head.weight": (dtype, [v, h])}
    return tensors


def packed_tensors(config: dict[str, Any], method: str, group: int = 128) -> Tensors:
    """GPTQ/AWQ layout: int32 words of eight 4-bit weights, fp16 scales; the rest fp16."""
    h, i, v = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    kv = config["num_key_value_heads"] * h // config["num_attention_heads"]
    tensors: Tensors = {"model.embed_tokens.weight": ("F16", [v, h])}
    linears = {"self_attn.q_proj": (h, h), "self_attn.k_proj": (h, kv), "self_attn.v_proj": (h, kv)}
    linears |= {"self_attn.o_proj": (h, h), "mlp.gate_proj": (h, i), "mlp.up_proj": (h, i)}
    linears |= {"mlp.down_proj": (i, h)}
    for n in range(config["num_hidden_layers"]):
        p = f"model.layers.{n}."
        tensors |= {
            p + "input_layernorm.weight": ("F16", [h]),
            p + "post_attention_layernorm.weight": ("F16", [h]),
        }
        for name, (fan_in, fan_out) in linears.items():
            if method == "gptq":
                tensors |= {
                    f"{p}{name}.qweight": ("I32", [fan_in // 8, fan_out]),
                    f"{p}{name}.qzeros": ("I32", [fan_in // group, fan_out // 8]),
                    f"{p}{name}.scales": ("F16", [fan_in // group, fan_out]),
                    f"{p}{name}.g_idx": ("I32", [fan_in]),
                }
            else:
                tensors |= {
                    f"{p}{name}.qweight": ("I32", [fan_in, fan_out // 8]),
                    f"{p}{name}.qzeros": ("I32", [fan_in // group, fan_out // 8]),
                    f"{p}{name}.scales": ("F16", [fan_in // group, fan_out]),
                }
    tensors |= {"model.norm.weight": ("F16", [h]), "lm_head.weight": ("F16", [v, h])}
    return tensors


@dataclass
class FakeRepo:
    files: dict[str, FakeFile]
    gated: bool = False
    #: the API call waits (until the test ends) instead of answering
    stalls: bool = False
    #: the API call fails with this HTTP status (a hub outage)
    api_status: int = 200
    revisions: tuple[str, ...] = ("main",)
    commit: str = ""
    #: a hostile server (issue 17 #4): "drip" sends the API reply a byte at a time, "huge" announces a
    #: 3 GB config.json, "flood" streams one without a length, "loop" redirects config.json to itself,
    #: "portal" answers the API with an HTML page. Issue 30: "gzip-info" answers the API with a gzip
    #: bomb, "gzip-config" and "gzip-gguf" serve config.json / GGUF ranges as gzip bombs (though asked
    #: for identity), "hangup" closes the connection part-way through config.json, "info-*" answer the
    #: API with malformed model info (see MALFORMED_INFO)
    hostile: str | None = None


LLAMA = llama_config()
LLAMA_TENSORS = llama_tensors(LLAMA)
SHARDED = llama_config(num_hidden_layers=4)
SHARDED_TENSORS = llama_tensors(SHARDED, norm_dtype="F32")
SHARD_NAMES = [f"model-0000{n}-of-00003.safetensors" for n in (1, 2, 3)]
GPTQ = llama_config(
    torch_dtype="float16",
    quantization_config={
        "quant_method": "gptq",
        "bits": 4,
        "group_size": 128,
        "desc_act": False,
        "sym": True,
    },
)
GPTQ_TENSORS = packed_tensors(GPTQ, "gptq")
AWQ = llama_config(
    torch_dtype="float16",
    quantization_config={"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm"},
)
AWQ_TENSORS = packed_tensors(AWQ, "awq")


def sharded_files() -> dict[str, FakeFile]:
    """Three shards: layers 0-1 + embedding, layers 2-3, norm + head; shard 2's header is > 100 kB."""
    names = list(SHARDED_TENSORS)
    split = [names[:19], names[19:37], names[37:]]
    assert split[2] == ["model.norm.weight", "lm_head.weight"]
    files: dict[str, FakeFile] = {}
    weight_map: dict[str, str] = {}
    for shard, chunk in zip(SHARD_NAMES, split, strict=True):
        metadata = {"format": "pt"}
        if shard == SHARD_NAMES[1]:
            metadata["padding"] = "x" * 150_000  # forces the second ranged request
        files[shard] = safetensors_file({name: SHARDED_TENSORS[name] for name in chunk}, metadata)
        weight_map |= dict.fromkeys(chunk, shard)
    index = {"metadata": {"total_size": tensor_bytes(SHARDED_TENSORS)}, "weight_map": weight_map}
    return files | {"model.safetensors.index.json": json_file(index)}


@functools.cache
def gzip_bomb(prefix: bytes, decoded: int = 200 * 1024 * 1024) -> bytes:
    """``prefix`` and then spaces up to ``decoded`` bytes, gzipped: ~200 kB that inflate to 200 MB."""
    import zlib

    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [packer.compress(prefix)]
    block = b" " * (1024 * 1024)
    parts.extend(packer.compress(block) for _ in range(max(0, decoded - len(prefix)) // len(block)))
    parts.append(packer.flush())
    return b"".join(parts)


#: model-info replies the library trips over (issue 30 #3): each was "internal error", exit 1
MALFORMED_INFO = {
    "info-truncated": b'{"id": "evil/info-truncated", "sha": "',
    "info-null": b"null",
    "info-list": b"[1, 2, 3]",
    "info-shape": b'{"id": "evil/info-shape", "siblings": "config.json", "sha": "' + b"0" * 40 + b'"}',
    "info-commit": json.dumps(
        {"id": "evil/info-commit", "sha": "../../../../tmp/evil", "siblings": [{"rfilename": "config.json"}]}
    ).encode(),
    "info-path": json.dumps(
        {"id": "evil/info-path", "sha": "a" * 40, "siblings": [{"rfilename": "../../config.json"}]}
    ).encode(),
}


def many_shards(count: int, padding: int) -> dict[str, FakeFile]:
    """``count`` shards of a tiny model, each header padded to about ``padding`` bytes, and their index."""
    names = list(SHARDED_TENSORS)
    shard_names = [f"model-{n:05d}-of-{count:05d}.safetensors" for n in range(1, count + 1)]
    files: dict[str, FakeFile] = {}
    weight_map: dict[str, str] = {}
    for number, shard in enumerate(shard_names):
        chunk = names[number::count]
        files[shard] = safetensors_file({n: SHARDED_TENSORS[n] for n in chunk}, {"pad": "x" * padding})
        weight_map |= dict.fromkeys(chunk, shard)
    index = {"metadata": {}, "weight_map": weight_map}
    return files | {"config.json": json_file(SHARDED), "model.safetensors.index.json": json_file(index)}


def bad_header(kind: str) -> FakeFile:
    if kind == "not-json":
        blob = b"{this is not json" + b" " * 16
        return FakeFile(struct.pack("<Q", len(blob)) + blob, 8 + len(blob) + 64, header_end=8 + len(blob))
    if kind == "too-big":
        return FakeFile(struct.pack("<Q", 1 << 40) + b"{}", 1 << 41, header_end=8)
    # "offsets": a BF16 [256, 256] tensor that claims 10 bytes
    blob = json.dumps({"w": {"dtype": "BF16", "shape": [256, 256], "data_offsets": [0, 10]}}).encode()
    return FakeFile(struct.pack("<Q", len(blob)) + blob, 8 + len(blob) + 10, header_end=8 + len(blob))


# -- GGUF repositories: real files written by gguf-py's writer (fakes/gguf_files.py) ---------------


@functools.cache
def gguf_files(stem: str, **options: Any) -> dict[str, bytes]:
    """The bytes of ``stem.gguf`` written by write_gguf (several parts when split), by file name."""
    with tempfile.TemporaryDirectory() as folder:
        write_gguf(Path(folder) / f"{stem}.gguf", **options)
        return {path.name: path.read_bytes() for path in sorted(Path(folder).glob("*.gguf"))}


def gguf_fake(data: bytes, size: int | None = None) -> FakeFile:
    """A served GGUF: its real bytes (then zeros up to ``size``); header_end is where the data starts."""
    with tempfile.NamedTemporaryFile(suffix=".gguf") as handle:
        handle.write(data)
        handle.flush()
        data_start = gguf.GGUFReader(handle.name).data_offset  # counted by gguf-py, not the code under test
    return FakeFile(data, size or len(data), header_end=data_start)


def big_header_meta(writer: gguf.GGUFWriter) -> None:
    """~600 kB of merges: a header longer than a 64 kB first range."""
    writer.add_token_merges([f"m{i} x{i}" for i in range(30_000)])


def hostile_gguf(kind: str) -> FakeFile:
    """A header claiming a huge string: inside a 2 TB (virtual) file, or past the end of a small one."""
    head = b"GGUF" + struct.pack("<IQQ", 3, 1, 1)
    key = b"general.architecture"
    entry = struct.pack("<Q", len(key)) + key + struct.pack("<IQ", 8, 1 << 40)
    size = 1 << 41 if kind == "huge-string" else 4096
    prefix = head + entry + b"x" * 64
    return FakeFile(prefix, size, header_end=len(prefix))


def gguf_repos() -> dict[str, FakeRepo]:
    tiny = gguf_files("Tiny-Q8_0")
    split = gguf_files("Tiny-UD-Q4_K_XL", split_max_tensors=8)
    assert len(split) == 3
    bogus = FakeFile(b"GGUF", 10**9)  # never to be read: the tests assert it is not requested
    [(_, whole)] = tiny.items()
    truncated = gguf_fake(whole)
    truncated = FakeFile(
        whole[: truncated.header_end + 100], truncated.header_end + 100, truncated.header_end
    )
    return {
        "org/tiny-GGUF": FakeRepo(
            {
                "README.md": text_file("# GGUF\n"),
                # served as a 40 GB file: only the header is ever asked for
                "Tiny-Q8_0.gguf": gguf_fake(whole, 40 * 10**9),
                **{name: gguf_fake(data) for name, data in split.items()},
                "mmproj-Tiny-F16.gguf": bogus,
                "imatrix_unsloth.gguf": bogus,
            }
        ),
        "org/missing-part-GGUF": FakeRepo(
            {name: gguf_fake(data) for name, data in split.items() if "-00002-" not in name}
        ),
        "org/ambiguous-GGUF": FakeRepo({"Tiny-Q4_K_M.gguf": bogus, "Tiny-UD-Q4_K_M.gguf": bogus}),
        "org/big-header-GGUF": FakeRepo(
            {"Big-Q8_0.gguf": gguf_fake(next(iter(gguf_files("Big-Q8_0", meta=big_header_meta).values())))}
        ),
        "org/gated-GGUF": FakeRepo({"Tiny-Q8_0.gguf": gguf_fake(whole)}, gated=True),
        "bad/gguf-truncated": FakeRepo({"Tiny-Q8_0.gguf": truncated}),
        "bad/gguf-huge-string": FakeRepo({"Evil-Q8_0.gguf": hostile_gguf("huge-string")}),
        "bad/gguf-past-end": FakeRepo({"Evil-Q8_0.gguf": hostile_gguf("past-end")}),
        "evil/gzip-GGUF": FakeRepo({"Tiny-Q8_0.gguf": gguf_fake(whole, 40 * 10**9)}, hostile="gzip-gguf"),
        "evil/many-parts-GGUF": FakeRepo({name: gguf_fake(data) for name, data in split.items()}),
    }


def build_repos() -> dict[str, FakeRepo]:
    readme = text_file("# a model\n")
    repos = {
        "org/llama": FakeRepo(
            {
                "README.md": readme,
                "config.json": json_file(LLAMA),
                "model.safetensors": safetensors_file(LLAMA_TENSORS),
            },
            revisions=("main", "v1.0"),
        ),
        "org/sharded": FakeRepo({"config.json": json_file(SHARDED), **sharded_files()}),
        "org/gptq": FakeRepo(
            {"config.json": json_file(GPTQ), "model.safetensors": safetensors_file(GPTQ_TENSORS)}
        ),
        "org/awq": FakeRepo(
            {"config.json": json_file(AWQ), "model.safetensors": safetensors_file(AWQ_TENSORS)}
        ),
        "org/gguf-only": FakeRepo(
            {
                "README.md": readme,
                "llama-Q4_K_M.gguf": gguf_fake(next(iter(gguf_files("llama-Q4_K_M").values()))),
                "llama-Q8_0.gguf": FakeFile(b"GGUF", 8_000_000_000),
            }
        ),
        "org/projector-only": FakeRepo({"README.md": readme, "mmproj-F16.gguf": FakeFile(b"GGUF", 10**9)}),
        "org/gated": FakeRepo(
            {"config.json": json_file(LLAMA), "model.safetensors": safetensors_file(LLAMA_TENSORS)},
            gated=True,
        ),
        "org/no-weights": FakeRepo({"config.json": json_file(LLAMA)}),
        "org/config-and-gguf": FakeRepo(
            {"config.json": json_file(LLAMA), "llama-Q4_0.gguf": FakeFile(b"GGUF", 10**9)}
        ),
        "org/outage": FakeRepo({"config.json": json_file(LLAMA)}, api_status=500),
        "org/slow": FakeRepo({"config.json": json_file(LLAMA)}, stalls=True),
        **{
            f"evil/{kind}": FakeRepo({"config.json": json_file(LLAMA)}, hostile=kind)
            for kind in ("drip", "huge", "flood", "loop", "portal", "gzip-info", "gzip-config", "hangup")
        },
        **{
            f"evil/{kind}": FakeRepo({"config.json": json_file(LLAMA)}, hostile=kind)
            for kind in MALFORMED_INFO
        },
        "evil/many-shards": FakeRepo(many_shards(12, 600_000)),
        "bad/config": FakeRepo({"config.json": text_file('{"model_type": "llama", ')}),
    }
    for kind in ("not-json", "too-big", "offsets"):
        repos[f"bad/st-{kind}"] = FakeRepo(
            {"config.json": json_file(LLAMA), "model.safetensors": bad_header(kind)}
        )
    repos |= gguf_repos()
    for repo_id, repo in repos.items():
        repo.commit = hashlib.sha1(repo_id.encode()).hexdigest()  # noqa: S324 -- a fake git commit id
    return repos


# -- the fake hub ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    range: str | None
    authorization: str | None


@dataclass
class FakeHub:
    endpoint: str
    repos: dict[str, FakeRepo]
    log: list[Request] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    huge_bytes_sent: int = 0

    def requests_since(self, mark: int) -> list[Request]:
        return self.log[mark:]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the client expects; every reply has a Content-Length
    hub: FakeHub

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the test log below is enough

    def do_GET(self) -> None:
        self.route(head_only=False)

    def do_HEAD(self) -> None:
        self.route(head_only=True)

    def reply(
        self,
        status: int,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
        *,
        head_only: bool = False,
    ) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head_only:
            self.wfile.write(body)

    def error(self, status: int, code: str, message: str, *, head_only: bool, **extra: str) -> None:
        body = json.dumps({"error": message}).encode()
        headers = {"Content-Type": "application/json", "X-Error-Code": code, "X-Error-Message": message}
        self.reply(status, body, headers | extra, head_only=head_only)

    def route(self, *, head_only: bool) -> None:
        hub = self.hub
        hub.log.append(
            Request(
                self.command,
                unquote(urlsplit(self.path).path),
                self.headers.get("Range"),
                self.headers.get("Authorization"),
            )
        )
        parts = [unquote(part) for part in urlsplit(self.path).path.strip("/").split("/")]
        if parts[:2] == ["api", "models"] and len(parts) >= 4:
            blobs = [v.lower() for v in parse_qs(urlsplit(self.path).query).get("blobs", [])] == ["true"]
            revision = parts[5] if parts[4:5] == ["revision"] else "main"
            self.model_info(parts[2] + "/" + parts[3], revision, blobs=blobs)
        elif len(parts) >= 5 and parts[2] == "resolve":
            self.resolve(parts[0] + "/" + parts[1], parts[3], "/".join(parts[4:]), head_only=head_only)
        else:
            self.reply(404, b"Not Found", head_only=head_only)

    def find(self, repo_id: str, revision: str, *, head_only: bool) -> FakeRepo | None:
        repo = self.hub.repos.get(repo_id)
        if repo is None:
            # The real hub answers 401 (not 404) to anonymous requests for a missing or private repo.
            self.error(401, "RepoNotFound", "Repository not found", head_only=head_only)
            return None
        if revision not in (*repo.revisions, repo.commit):
            self.error(404, "RevisionNotFound", f"Invalid rev id: {revision}", head_only=head_only)
            return None
        return repo

    def model_info(self, repo_id: str, revision: str, *, blobs: bool = False) -> None:
        repo = self.find(repo_id, revision, head_only=False)
        if repo is None:
            return
        if repo.stalls:
            self.hub.release.wait(10)
        if repo.api_status != 200:
            self.reply(repo.api_status, b"Internal Error", {"Content-Type": "text/plain"})
            return
        if repo.hostile in MALFORMED_INFO:
            self.reply(200, MALFORMED_INFO[repo.hostile], {"Content-Type": "application/json"})
            return
        if repo.hostile == "portal":
            self.reply(
                200, b"<html><body>Please log in to the Wi-Fi</body></html>", {"Content-Type": "text/html"}
            )
            return
        info = {
            "_id": repo.commit[:24],
            "id": repo_id,
            "modelId": repo_id,
            "author": repo_id.split("/", 1)[0],
            "sha": repo.commit,
            "private": False,
            "gated": "manual" if repo.gated else False,
            "disabled": False,
            "tags": [],
            # with ?blobs=True (files_metadata) the hub adds each file's size
            "siblings": [
                {"rfilename": name, **({"size": file.size} if blobs else {})}
                for name, file in repo.files.items()
            ],
        }
        if repo.hostile == "gzip-info":  # valid JSON, then 200 MB of spaces, in ~200 kB of gzip
            bomb = gzip_bomb(json.dumps(info).encode())
            self.reply(200, bomb, {"Content-Type": "application/json", "Content-Encoding": "gzip"})
            return
        if repo.hostile == "drip":  # a valid reply, one byte at a time, for as long as the client waits
            body = json.dumps(info).encode() + b" " * 10_000
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for byte in body:
                if self.hub.release.wait(0.05):
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
            return
        self.reply(200, json.dumps(info).encode(), {"Content-Type": "application/json"})

    def resolve(self, repo_id: str, revision: str, filename: str, *, head_only: bool) -> None:
        repo = self.find(repo_id, revision, head_only=head_only)
        if repo is None:
            return
        if repo.gated and self.headers.get("Authorization") != f"Bearer {GOOD_TOKEN}":
            message = (
                f"Access to model {repo_id} is restricted. You must have access to it and be authenticated."
            )
            self.error(401, "GatedRepo", message, head_only=head_only)
            return
        if repo.hostile in ("huge", "flood", "loop", "gzip-config", "hangup") and filename == "config.json":
            self.hostile_file(repo, head_only=head_only)
            return
        file = repo.files.get(filename)
        if file is None:
            self.error(
                404, "EntryNotFound", "Entry not found", head_only=head_only, **{"X-Repo-Commit": repo.commit}
            )
            return
        headers = {"X-Repo-Commit": repo.commit, "ETag": f'"{file.etag}"', "Accept-Ranges": "bytes"}
        if filename.endswith(".gguf"):  # the hub names an LFS file's full size on every reply
            headers["X-Linked-Size"] = str(file.size)
        wanted = self.headers.get("Range")
        if wanted is None:
            body = b"" if head_only else file.read(0, file.size - 1)
            if head_only:  # a HEAD announces the full length without sending it
                self.send_response(200)
                for key, value in (headers | {"Content-Length": str(file.size)}).items():
                    self.send_header(key, value)
                self.end_headers()
                return
            self.reply(200, body, headers)
            return
        start_text, _, end_text = wanted.removeprefix("bytes=").partition("-")
        start, end = int(start_text), min(int(end_text or file.size - 1), file.size - 1)
        if start >= file.size:
            self.reply(416, b"", {"Content-Range": f"bytes */{file.size}"}, head_only=head_only)
            return
        headers["Content-Range"] = f"bytes {start}-{end}/{file.size}"
        if repo.hostile == "shifted-range" and start > 0:  # a later range that says and sends other bytes
            start, end = min(start + 7, file.size - 1), min(end + 7, file.size - 1)
            headers["Content-Range"] = f"bytes {start}-{end}/{file.size}"
        if repo.hostile == "gzip-gguf":
            bomb = gzip_bomb(file.read(start, end))
            self.reply(206, bomb, headers | {"Content-Encoding": "gzip"}, head_only=head_only)
            return
        self.reply(206, file.read(start, end), headers, head_only=head_only)

    def hostile_file(self, repo: FakeRepo, *, head_only: bool) -> None:
        headers = {"X-Repo-Commit": repo.commit, "ETag": '"hostile"', "Content-Type": "application/json"}
        if repo.hostile == "loop":
            self.reply(302, b"", headers | {"Location": self.path}, head_only=head_only)
            return
        if repo.hostile == "gzip-config":  # a HEAD that says 1 kB; a GET of gzip that inflates to 200 MB
            body = json.dumps(LLAMA).encode()
            if head_only:
                self.reply(200, body, headers, head_only=True)
                return
            self.reply(200, gzip_bomb(body), headers | {"Content-Encoding": "gzip"})
            return
        if repo.hostile == "hangup":  # promises 10 kB, sends 10 bytes, hangs up
            self.send_response(200)
            for key, value in (headers | {"Content-Length": "10000"}).items():
                self.send_header(key, value)
            self.end_headers()
            if not head_only:
                self.wfile.write(b'{"model_ty')
                self.wfile.flush()
                self.close_connection = True
            return
        if repo.hostile == "huge":  # announces 3 GB; sends zeros for as long as anyone reads
            self.send_response(200)
            for key, value in (headers | {"Content-Length": str(3 * 1024**3)}).items():
                self.send_header(key, value)
            self.end_headers()
            if not head_only:
                self.hub.huge_bytes_sent = 0
                while not self.hub.release.is_set() and self.hub.huge_bytes_sent < 3 * 1024**3:
                    self.wfile.write(b"\0" * 65536)
                    self.hub.huge_bytes_sent += 65536
            return
        # "flood": a HEAD that claims a small file, then a GET streamed without any length
        if head_only:
            self.send_response(200)
            for key, value in (headers | {"Content-Length": "100"}).items():
                self.send_header(key, value)
            self.end_headers()
            return
        self.send_response(200)
        for key, value in (headers | {"Transfer-Encoding": "chunked"}).items():
            self.send_header(key, value)
        self.end_headers()
        chunk = b"\0" * 65536
        for _ in range(2000):  # up to 128 MB
            if self.hub.release.is_set():
                break
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out and hung up is expected in the timeout test


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def point_client_at(monkeypatch: pytest.MonkeyPatch, endpoint: str, home: Path) -> None:
    """Aim huggingface_hub at ``endpoint``, with its cache and token under ``home``.

    huggingface_hub reads its environment once, at import, into module attributes of
    ``huggingface_hub.constants`` (``ENDPOINT`` and the resolve-URL template from HF_ENDPOINT, the cache
    and token paths from HF_HOME/HF_HUB_CACHE, ``HF_HUB_OFFLINE``), and the library reads those
    attributes at call time. It is imported long before this fixture runs, so setting the variables
    alone would change nothing; reloading the module would not help either, since a few modules
    copied values out of it with ``from ..constants import``. So we set the variables (for anything
    that does read the environment at call time, e.g. HF_TOKEN, which ``get_token()`` reads on every
    request) and patch the attributes the code paths we use read. ``HfApi()`` copies
    ``constants.ENDPOINT`` when it is created, which is why load_hub_model makes a fresh one per call
    (the module-level ``huggingface_hub.model_info`` is bound to an HfApi made at import).
    """
    cache = home / "hub"
    for name, value in {"HF_ENDPOINT": endpoint, "HF_HOME": str(home), "HF_HUB_CACHE": str(cache)}.items():
        monkeypatch.setenv(name, value)
    for name in (
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
        "HF_HUB_OFFLINE",
        "TRANSFORMERS_OFFLINE",
        "HF_OIDC_RESOURCE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(
        constants, "HUGGINGFACE_CO_URL_TEMPLATE", endpoint + "/{repo_id}/resolve/{revision}/{filename}"
    )
    monkeypatch.setattr(constants, "HF_HOME", str(home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(home / "token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(home / "stored_tokens"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)


def go_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # what is_offline_mode() returns


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    server = Server(("127.0.0.1", 0), Handler)
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    fake = FakeHub(endpoint, build_repos())
    Handler.hub = fake
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    point_client_at(monkeypatch, endpoint, tmp_path / "hf")
    try:
        yield fake
    finally:
        fake.release.set()
        close_session()  # the client pools keep-alive connections to this server: drop them
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert_headers_only(fake)


def assert_headers_only(hub: FakeHub) -> None:
    """No request ever asked for weight data: every safetensors GET is ranged, within the header."""
    for request in hub.log:
        if request.path.endswith(".gguf"):
            assert_gguf_header_only(hub, request)
            continue
        if not request.path.endswith(".safetensors"):
            continue
        assert request.method == "GET", request
        assert request.range is not None, f"unranged GET of {request.path}"
        start_text, _, end_text = request.range.removeprefix("bytes=").partition("-")
        repo_id = "/".join(request.path.strip("/").split("/")[:2])
        file = hub.repos[repo_id].files[request.path.split("/resolve/", 1)[1].split("/", 1)[1]]
        assert end_text, request
        assert int(end_text) + 1 - int(start_text) <= max(RANGE_FIRST_CHUNK, file.header_end), request
        assert int(end_text) < max(RANGE_FIRST_CHUNK, file.header_end), request


def assert_gguf_header_only(hub: FakeHub, request: Request) -> None:
    """A GGUF GET is ranged and ends within the first range or twice the header (the last doubling)."""
    assert request.method == "GET", request
    assert request.range is not None, f"unranged GET of {request.path}"
    repo_id = "/".join(request.path.strip("/").split("/")[:2])
    file = hub.repos[repo_id].files[request.path.split("/resolve/", 1)[1].split("/", 1)[1]]
    assert file.header_end, f"{request.path} should never have been asked for"
    _, _, end_text = request.range.removeprefix("bytes=").partition("-")
    assert end_text, request
    assert int(end_text) < max(hub_gguf.FIRST_RANGE, 2 * file.header_end), request


def gguf_requests(hub: FakeHub, name: str) -> list[str]:
    return [r.range or "" for r in hub.log if r.path.endswith("/" + name)]


def input_error(call: Callable[[], object]) -> str:
    with pytest.raises(InputError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message
    return message


# -- tests ----------------------------------------------------------------------------------------


def test_llama_single_file_exact_bytes_and_params(hub: FakeHub) -> None:
    steps: list[str] = []
    info = load_hub_model("org/llama", progress=steps.append)

    assert info.id == "org/llama"
    assert info.source_kind == "config"
    assert info.source == f"hf:org/llama@{hub.repos['org/llama'].commit}"
    # parameters come from config.json, by hand and through parse_config
    expected = llama_params(256, 768, 2, 8, 4, 32000)
    assert expected == 17_958_144
    assert info.arch.params_total == expected
    assert info.arch == parse_config(LLAMA, "hf:org/llama")
    weights = info.weights
    assert weights is not None
    assert weights.total_bytes == 2 * expected == 35_916_288
    assert weights.bytes_by_format == {"BF16": 35_916_288}
    assert weights.tensor_count == len(LLAMA_TENSORS) == 21
    assert weights.files == ("model.safetensors",)
    assert weights.quant_id == "bf16"
    per_layer = 2 * (2 * 256 * 256 + 2 * 128 * 256 + 3 * 256 * 768 + 2 * 256)
    assert weights.layer_bytes == (per_layer, per_layer)
    assert weights.other_bytes == 2 * (2 * 32000 * 256 + 256)
    assert sum(weights.layer_bytes) + weights.other_bytes == weights.total_bytes
    assert steps == [
        "repository files",
        "config.json",
        "safetensors headers 0/1",
        "safetensors headers 1/1",
        "done",
    ]
    # one ranged GET for the header, nothing else touched the weights
    st_requests = [r for r in hub.log if r.path.endswith(".safetensors")]
    assert [(r.method, r.range) for r in st_requests] == [("GET", "bytes=0-100000")]


def test_sharded_repo_reads_index_and_every_header(hub: FakeHub) -> None:
    steps: list[str] = []
    info = load_hub_model("org/sharded", progress=steps.append)

    weights = info.weights
    assert weights is not None
    norms = 4 * 2 * 256 + 256  # F32 norms: two per layer and the final one
    expected = llama_params(256, 768, 4, 8, 4, 32000)
    assert info.arch.params_total == expected
    assert weights.bytes_by_format == {"BF16": 2 * (expected - norms), "F32": 4 * norms}
    assert weights.total_bytes == tensor_bytes(SHARDED_TENSORS) == 2 * expected + 2 * norms
    assert weights.files == tuple(SHARD_NAMES)
    assert weights.tensor_count == len(SHARDED_TENSORS)
    assert weights.quant_id == "bf16"
    assert len(weights.layer_bytes) == 4
    assert len(set(weights.layer_bytes)) == 1
    assert steps[:3] == ["repository files", "config.json", "model.safetensors.index.json"]
    assert steps[3:] == [f"safetensors headers {n}/3" for n in range(4)] + ["done"]
    # the shard with a 150 kB header needed a second range, exactly up to the header's end
    shard = hub.repos["org/sharded"].files[SHARD_NAMES[1]]
    ranges = sorted(r.range or "" for r in hub.log if r.path.endswith(SHARD_NAMES[1]))
    assert ranges == ["bytes=0-100000", f"bytes=8-{shard.header_end - 1}"]


def test_gptq_params_from_config_not_packed_tensors(hub: FakeHub) -> None:
    info = load_hub_model("org/gptq")

    weights = info.weights
    assert weights is not None
    assert weights.quant_id == "gptq-4bit-g128"
    assert info.arch.params_total == llama_params(256, 768, 2, 8, 4, 32000)  # not the int32 word count
    int32 = sum(math.prod(s) * 4 for d, s in GPTQ_TENSORS.values() if d == "I32")
    fp16 = sum(math.prod(s) * 2 for d, s in GPTQ_TENSORS.values() if d == "F16")
    assert weights.bytes_by_format == {"F16": fp16, "I32": int32}
    assert weights.total_bytes == int32 + fp16 == tensor_bytes(GPTQ_TENSORS)
    # 4-bit layers: an eighth of the bf16 size plus scales, zeros and g_idx
    assert sum(weights.layer_bytes) < 0.3 * 2 * 2 * (2 * 256 * 256 + 2 * 128 * 256 + 3 * 256 * 768)


def test_awq_quant_id(hub: FakeHub) -> None:
    info = load_hub_model("org/awq")
    assert info.weights is not None
    assert info.weights.quant_id == "awq-4bit-g128"
    assert info.weights.total_bytes == tensor_bytes(AWQ_TENSORS)
    assert info.arch.params_total == llama_params(256, 768, 2, 8, 4, 32000)


def test_revision_is_passed_and_unknown_revision_is_an_error(hub: FakeHub) -> None:
    info = load_hub_model("org/llama", revision="v1.0")
    assert info.weights is not None
    assert any(r.path == "/api/models/org/llama/revision/v1.0" for r in hub.log)
    assert any(r.path == "/org/llama/resolve/v1.0/config.json" for r in hub.log)

    message = input_error(lambda: load_hub_model("org/llama", revision="nope"))
    assert message == "hf:org/llama: revision 'nope' not found in the repository"


def test_gguf_only_repo_without_tag_takes_llama_cpp_default(hub: FakeHub) -> None:
    """No tag: Q4_K_M first (llama.cpp's find_best_model), read from its header; no config.json asked."""
    info = load_hub_model("org/gguf-only")
    assert info.weights is not None
    assert info.weights.files == ("llama-Q4_K_M.gguf",)
    assert not any(r.path.endswith(("config.json", "llama-Q8_0.gguf")) for r in hub.log)

    message = input_error(lambda: load_hub_model("org/projector-only"))
    assert (
        message
        == "hf:org/projector-only: no config.json, and no GGUF model among its GGUF files (mmproj-F16.gguf)"
    )


def test_gated_repo_needs_a_token_and_honours_hf_token(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    message = input_error(lambda: load_hub_model("org/gated"))
    assert message == "hf:org/gated: gated: accept the licence on the model page and set HF_TOKEN"

    monkeypatch.setenv("HF_TOKEN", GOOD_TOKEN)
    info = load_hub_model("org/gated")
    assert info.weights is not None
    assert info.weights.total_bytes == tensor_bytes(LLAMA_TENSORS)
    assert hub.log[-1].authorization == f"Bearer {GOOD_TOKEN}"


def test_missing_repo(hub: FakeHub) -> None:
    message = input_error(lambda: load_hub_model("org/missing"))
    assert message == "hf:org/missing: repository not found on the hub (a private one needs HF_TOKEN)"


def test_repo_without_safetensors_gives_the_architecture_only(hub: FakeHub) -> None:
    info = load_hub_model("org/no-weights")
    assert info.weights is None
    assert info.arch.params_total == llama_params(256, 768, 2, 8, 4, 32000)
    assert info.notes == ("no model.safetensors or model.safetensors.index.json: weight sizes not read",)

    info = load_hub_model("org/config-and-gguf")
    assert info.weights is None
    assert info.notes[0].endswith(
        "; the repository has GGUF files (llama-Q4_0.gguf): name one as org/config-and-gguf:TAG"
    )


def test_hub_outage_falls_back_to_the_cache(hub: FakeHub) -> None:
    message = input_error(lambda: load_hub_model("org/outage"))
    assert message == (
        "hf:org/outage: the hub answered HTTP 500 for repository files, and config.json is not in the local cache"
    )


@pytest.mark.parametrize(
    "text",
    [
        "llama",
        "org/llama/extra",
        "org//llama",
        "/llama",
        "org/",
        "org/lla ma",
        "org/../x",
        "org/a--b",
        "org/x.git",
        "",
    ],
)
def test_bad_ids_fail_before_any_request(hub: FakeHub, text: str) -> None:
    message = input_error(lambda: load_hub_model(text))
    assert (
        message
        == f"hf:{text}: not a Hugging Face model id (expected org/name, org/name:TAG or org/name/file.gguf)"
    )
    assert hub.log == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("org/tiny-GGUF:", "hf:org/tiny-GGUF:: not a GGUF tag:  (expected e.g. Q4_K_M or UD-Q4_K_XL)"),
        (
            "org/tiny-GGUF:Q4 K",
            "hf:org/tiny-GGUF:Q4 K: not a GGUF tag: Q4 K (expected e.g. Q4_K_M or UD-Q4_K_XL)",
        ),
        ("org/tiny-GGUF/../x.gguf", "hf:org/tiny-GGUF: not a file path in a repository: ../x.gguf"),
        ("org/tiny-GGUF//x.gguf", "hf:org/tiny-GGUF: not a file path in a repository: /x.gguf"),
        (
            "o--rg/x:Q4_K_M",
            "hf:o--rg/x:Q4_K_M: not a Hugging Face model id (expected org/name, org/name:TAG or org/name/file.gguf)",
        ),
    ],
)
def test_bad_gguf_ids_fail_before_any_request(hub: FakeHub, text: str, message: str) -> None:
    assert input_error(lambda: load_hub_model(text)) == message
    assert hub.log == []


def test_malformed_config(hub: FakeHub) -> None:
    message = input_error(lambda: load_hub_model("bad/config"))
    assert message.startswith("hf:bad/config: config.json: not valid JSON (")


@pytest.mark.parametrize("kind", ["not-json", "too-big", "offsets"])
def test_malformed_safetensors_header(hub: FakeHub, kind: str) -> None:
    message = input_error(lambda: load_hub_model(f"bad/st-{kind}"))
    assert message.startswith(f"hf:bad/st-{kind}: malformed safetensors header in model.safetensors")


def test_offline_with_warm_cache_uses_cached_config(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    online = load_hub_model("org/sharded")
    go_offline(monkeypatch)
    mark = len(hub.log)

    offline = load_hub_model("org/sharded")

    assert hub.requests_since(mark) == []
    assert offline.arch == online.arch
    assert offline.weights is None
    assert offline.source == online.source  # the commit, from the cache's snapshot folder
    assert offline.notes == (
        "offline (HF_HUB_OFFLINE is set): config.json from the local cache, weight file headers not read",
    )


def test_offline_with_cold_cache_is_one_line(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    go_offline(monkeypatch)
    message = input_error(lambda: load_hub_model("org/llama"))
    assert (
        message == "hf:org/llama: offline (HF_HUB_OFFLINE is set), and config.json is not in the local cache"
    )
    assert hub.log == []


def test_unreachable_hub(hub: FakeHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    load_hub_model("org/llama")  # warms the cache
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    point_client_at(monkeypatch, dead, tmp_path / "hf")
    close_session()

    started = time.monotonic()
    cached = load_hub_model("org/llama")
    assert cached.weights is None
    assert cached.notes[0].startswith("cannot reach the hub (ConnectError")

    message = input_error(lambda: load_hub_model("org/sharded"))
    assert message.startswith("hf:org/sharded: cannot reach the hub (ConnectError")
    assert message.endswith(", and config.json is not in the local cache")
    assert time.monotonic() - started < 5  # no retries with back-off


def test_a_hub_that_does_not_answer_times_out(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub_limits, "TIMEOUT_S", 0.3)
    started = time.monotonic()
    message = input_error(lambda: load_hub_model("org/slow"))
    assert message == (
        "hf:org/slow: no answer from the hub within 0.3 s (repository files), and config.json is not in the local cache"
    )
    assert time.monotonic() - started < 5


def test_cancel_before_anything_makes_no_request(hub: FakeHub) -> None:
    with pytest.raises(Cancelled):
        load_hub_model("org/llama", cancel=lambda: True)
    assert hub.log == []


def test_cancel_between_shards(hub: FakeHub) -> None:
    steps: list[str] = []

    def cancel() -> bool:
        return "safetensors headers 1/3" in steps

    with pytest.raises(Cancelled):
        load_hub_model("org/sharded", progress=steps.append, cancel=cancel)
    assert steps[-1] == "safetensors headers 1/3"


# -- issue 17 #4: hostile servers, through the real huggingface_hub code path ------------------------


def cache_bytes(hub_home: Path) -> int:
    """Bytes the library has written to its cache (blobs and half-written ``.incomplete`` files)."""
    return sum(p.stat().st_size for p in hub_home.rglob("blobs/*") if p.is_file())


def test_a_dripping_server_meets_the_overall_deadline(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    """A byte every 50 ms never trips the per-read timeout; the look-up's deadline stops it."""
    monkeypatch.setattr(hub_limits, "DEADLINE_S", 1.0)
    started = time.monotonic()
    message = input_error(lambda: load_hub_model("evil/drip"))
    elapsed = time.monotonic() - started
    assert "took longer than 1 s in all" in message, message
    assert elapsed < 4, elapsed


def test_a_huge_config_is_refused_before_the_cache(hub: FakeHub, tmp_path: Path) -> None:
    """A "config.json" announced as 3 GB is refused from its headers: nothing reaches the cache."""
    started = time.monotonic()
    message = input_error(lambda: load_hub_model("evil/huge"))
    assert "offers 3,221,225,472 bytes, more than the 4,194,304 RigCheck reads (config.json)" in message
    assert time.monotonic() - started < 5
    assert cache_bytes(tmp_path / "hf") == 0
    assert hub.huge_bytes_sent == 0  # refused on the HEAD: the body was never even asked for


def test_a_flood_without_a_length_is_cut_at_the_cap(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that lies in the HEAD and then streams without a length is cut at the cap."""
    monkeypatch.setattr(hub_limits, "MAX_RESPONSE_BYTES", 1024 * 1024)
    message = input_error(lambda: load_hub_model("evil/flood"))
    assert "sent more than the 1,048,576 bytes RigCheck reads in one reply (config.json)" in message, message
    assert cache_bytes(tmp_path / "hf") == 0  # the cut-off part is not left for the library to resume


def test_a_redirect_loop_is_one_line(hub: FakeHub) -> None:
    """A redirect loop was an internal error (TooManyRedirects, exit 1)."""
    message = input_error(lambda: load_hub_model("evil/loop"))
    assert message == "hf:evil/loop: the hub redirected in a loop (config.json)"


def test_a_captive_portal_counts_as_unreachable(hub: FakeHub) -> None:
    """An HTML page instead of the API's JSON (a Wi-Fi login page) is an unreachable hub, one line."""
    message = input_error(lambda: load_hub_model("evil/portal"))
    assert message.startswith("hf:evil/portal: the hub answered with text/html, not JSON (repository files)")
    assert message.endswith("config.json is not in the local cache")


def test_guards_apply_only_inside_a_lookup(hub: FakeHub) -> None:
    """The client's hooks do nothing for other uses of huggingface_hub in the same process."""
    from huggingface_hub import get_session

    load_hub_model("org/llama")
    response = get_session().get(f"{hub.endpoint}/api/models/evil/portal")
    assert response.status_code == 200 and "Wi-Fi" in response.text


# -- GGUF repositories: llama.cpp's -hf ids, headers by growing ranges -----------------------------


def local_copy(tmp_path: Path, stem: str, **options: Any) -> Path:
    """The same GGUF bytes as the fake hub serves, as local files; the first part's path."""
    folder = tmp_path / "local"
    folder.mkdir(exist_ok=True)
    for name, data in gguf_files(stem, **options).items():
        (folder / name).write_bytes(data)
    return folder / sorted(gguf_files(stem, **options))[0]


def assert_same_model(remote: Any, local: Any) -> None:
    """Everything a local copy gives, but where it came from."""
    assert remote.arch == local.arch
    assert remote.weights == local.weights
    assert remote.name == local.name
    assert remote.notes == local.notes
    assert remote.weights is not None
    assert remote.weights.layer_bytes and remote.weights.bytes_by_format


def test_gguf_by_tag_equals_the_local_file(hub: FakeHub, tmp_path: Path) -> None:
    steps: list[str] = []
    info = load_hub_model("org/tiny-GGUF:Q8_0", progress=steps.append)

    local = read_gguf(local_copy(tmp_path, "Tiny-Q8_0"))
    assert_same_model(info, local)
    assert info.weights is not None
    assert info.weights.files == ("Tiny-Q8_0.gguf",)
    assert info.weights.quant_id == "q8_0"
    assert info.weights.bytes_by_format == local.weights.bytes_by_format  # type: ignore[union-attr]
    assert info.id == "org/tiny-GGUF:Q8_0"
    assert info.source == f"hf:org/tiny-GGUF@{hub.repos['org/tiny-GGUF'].commit}"
    assert steps == ["repository files", "GGUF headers 0/1", "GGUF headers 1/1", "done"]
    # the 40 GB file: one ranged GET of the first 2 MiB, no config.json, no HEAD
    assert gguf_requests(hub, "Tiny-Q8_0.gguf") == [f"bytes=0-{hub_gguf.FIRST_RANGE - 1}"]
    assert [r.path for r in hub.log if "/resolve/" in r.path] == [
        f"/org/tiny-GGUF/resolve/{hub.repos['org/tiny-GGUF'].commit}/Tiny-Q8_0.gguf"
    ]


def test_gguf_by_path_case_insensitive(hub: FakeHub, tmp_path: Path) -> None:
    by_path = load_hub_model("org/tiny-GGUF/tiny-q8_0.GGUF")
    assert by_path.weights is not None
    assert by_path.weights.files == ("Tiny-Q8_0.gguf",)
    assert_same_model(by_path, read_gguf(local_copy(tmp_path, "Tiny-Q8_0")))


def test_split_gguf_by_tag_reads_every_part(hub: FakeHub, tmp_path: Path) -> None:
    steps: list[str] = []
    info = load_hub_model("org/tiny-GGUF:ud-q4_k_xl", progress=steps.append)  # tags ignore case

    names = [f"Tiny-UD-Q4_K_XL-0000{n}-of-00003.gguf" for n in (1, 2, 3)]
    assert info.weights is not None
    assert info.weights.files == tuple(names)
    local = read_gguf(local_copy(tmp_path, "Tiny-UD-Q4_K_XL", split_max_tensors=8))
    assert_same_model(info, local)
    assert steps == ["repository files", *(f"GGUF headers {n}/3" for n in range(4)), "done"]
    for name in names:
        assert len(gguf_requests(hub, name)) == 1

    # any part, named by path, gives the whole model
    by_part = load_hub_model("org/tiny-GGUF/" + names[1])
    assert by_part.weights == info.weights


def test_gguf_tag_rule(hub: FakeHub) -> None:
    # no tag: Q4_K_M (none here), then Q8_0; projectors and imatrix files are never candidates
    assert load_hub_model("org/tiny-GGUF").weights.files == ("Tiny-Q8_0.gguf",)  # type: ignore[union-attr]

    message = input_error(lambda: load_hub_model("org/tiny-GGUF:Q6_K"))
    assert message == (
        "hf:org/tiny-GGUF: no GGUF model file matches the tag Q6_K; GGUF models there: "
        "Tiny-Q8_0.gguf, Tiny-UD-Q4_K_XL-00001-of-00003.gguf"
    )
    message = input_error(lambda: load_hub_model("org/tiny-GGUF:F16"))  # only the projector is F16
    assert message.startswith("hf:org/tiny-GGUF: no GGUF model file matches the tag F16;")

    message = input_error(lambda: load_hub_model("org/ambiguous-GGUF"))
    assert message == (
        "hf:org/ambiguous-GGUF: the default tag (Q4_K_M or Q8_0) matches 2 models: Tiny-Q4_K_M.gguf, "
        "Tiny-UD-Q4_K_M.gguf; name one as org/ambiguous-GGUF/FILE (llama.cpp -hf would take the first)"
    )
    message = input_error(lambda: load_hub_model("org/ambiguous-GGUF:q4_k_m"))
    assert "the tag q4_k_m matches 2 models" in message

    message = input_error(lambda: load_hub_model("org/tiny-GGUF/nope.gguf"))
    assert message.startswith("hf:org/tiny-GGUF: nope.gguf is not in the repository; GGUF models there: ")
    # none of the bogus files (projector, imatrix, ambiguous candidates) was ever requested: see the
    # fixture's assert_headers_only


def test_a_long_gguf_header_grows_the_range(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub_gguf, "FIRST_RANGE", 64 * 1024)
    info = load_hub_model("org/big-header-GGUF:Q8_0")
    assert info.weights is not None

    file = hub.repos["org/big-header-GGUF"].files["Big-Q8_0.gguf"]
    assert file.header_end > 8 * 64 * 1024  # the header is over 512 kB
    ranges = gguf_requests(hub, "Big-Q8_0.gguf")
    # each request asks only for new bytes, at least doubling what is at hand (more when the parse
    # knows it needs more, e.g. a whole array of string lengths), never past the file's end
    bounds = [tuple(int(x) for x in r.removeprefix("bytes=").split("-")) for r in ranges]
    assert bounds[0] == (0, 64 * 1024 - 1)
    for (_, end), (start, next_end) in itertools.pairwise(bounds):
        assert start == end + 1
        assert next_end + 1 >= 2 * (end + 1) or next_end + 1 == file.size
    assert len(ranges) <= math.ceil(math.log2(file.header_end / (64 * 1024))) + 1
    assert sum(end + 1 - start for start, end in bounds) < 2 * file.header_end


def test_a_later_range_of_other_bytes_is_refused(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first range parses; a later one that names (and sends) bytes 7 further on than asked is
    refused rather than stitched into the header (the fuzz hub's "wrong-range" fault, class 1)."""
    monkeypatch.setattr(hub_gguf, "FIRST_RANGE", 64 * 1024)
    monkeypatch.setattr(hub.repos["org/big-header-GGUF"], "hostile", "shifted-range")
    message = input_error(lambda: load_hub_model("org/big-header-GGUF:Q8_0"))
    assert message == (
        "hf:org/big-header-GGUF: the hub sent other bytes of Big-Q8_0.gguf than the range asked for"
    )
    assert len(gguf_requests(hub, "Big-Q8_0.gguf")) == 2  # the first range was read, the second refused


def test_a_gguf_header_over_the_cap_is_refused(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub_gguf, "FIRST_RANGE", 64 * 1024)
    monkeypatch.setattr(hub_gguf, "MAX_HEADER", 256 * 1024)
    message = input_error(lambda: load_hub_model("org/big-header-GGUF:Q8_0"))
    assert message.startswith(
        "hf:org/big-header-GGUF: Big-Q8_0.gguf: the GGUF header runs past 0.25 MiB (at least "
    )
    assert message.endswith("bytes), more than RigCheck reads from the hub")
    last = gguf_requests(hub, "Big-Q8_0.gguf")[-1]
    assert int(last.rsplit("-", 1)[1]) == 256 * 1024 - 1  # up to the cap, never past it

    # a string of 1 TB inside a 2 TB file: refused at the cap, after one request
    message = input_error(lambda: load_hub_model("bad/gguf-huge-string:Q8_0"))
    assert "the GGUF header runs past" in message
    assert len(gguf_requests(hub, "Evil-Q8_0.gguf")) == 1


def test_a_truncated_or_hostile_gguf_header(hub: FakeHub) -> None:
    message = input_error(lambda: load_hub_model("bad/gguf-truncated:Q8_0"))
    assert message.startswith("hf:bad/gguf-truncated: Tiny-Q8_0.gguf: truncated or corrupt: tensor ")
    assert "past the end of the file" in message

    message = input_error(lambda: load_hub_model("bad/gguf-past-end:Q8_0"))
    assert message.startswith("hf:bad/gguf-past-end: Evil-Q8_0.gguf: truncated or corrupt: the value of ")


def test_gated_gguf_repo(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    message = input_error(lambda: load_hub_model("org/gated-GGUF:Q8_0"))
    assert message == "hf:org/gated-GGUF: gated: accept the licence on the model page and set HF_TOKEN"
    monkeypatch.setenv("HF_TOKEN", GOOD_TOKEN)
    assert load_hub_model("org/gated-GGUF:Q8_0").weights is not None
    assert hub.log[-1].authorization == f"Bearer {GOOD_TOKEN}"


def test_gguf_offline_and_unreachable(hub: FakeHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    load_hub_model("org/tiny-GGUF:Q8_0")
    go_offline(monkeypatch)
    mark = len(hub.log)
    message = input_error(lambda: load_hub_model("org/tiny-GGUF:Q8_0"))
    assert message == (
        "hf:org/tiny-GGUF: offline (HF_HUB_OFFLINE is set): GGUF headers are read from the hub with ranged "
        "requests, which huggingface_hub does not cache, so they cannot be read offline"
    )
    assert hub.requests_since(mark) == []

    point_client_at(monkeypatch, f"http://127.0.0.1:{free_port()}", tmp_path / "hf")
    close_session()
    message = input_error(lambda: load_hub_model("org/tiny-GGUF/Tiny-Q8_0.gguf"))
    assert message.startswith("hf:org/tiny-GGUF: cannot reach the hub (ConnectError")


def test_gguf_cancel_and_missing_part(hub: FakeHub) -> None:
    steps: list[str] = []
    with pytest.raises(Cancelled):  # asked after each header: the look-up stops there
        load_hub_model(
            "org/tiny-GGUF/Tiny-UD-Q4_K_XL-00001-of-00003.gguf",
            progress=steps.append,
            cancel=lambda: "GGUF headers 1/3" in steps,
        )
    assert steps[-1] == "GGUF headers 1/3"  # the other parts were in flight when cancel said stop
    for n in (1, 2, 3):  # the parts are read side by side, each with one ranged request at most
        assert len(gguf_requests(hub, f"Tiny-UD-Q4_K_XL-0000{n}-of-00003.gguf")) <= 1

    message = input_error(lambda: load_hub_model("org/missing-part-GGUF:UD-Q4_K_XL"))
    assert message == (
        "hf:org/missing-part-GGUF: split GGUF of 3 parts: Tiny-UD-Q4_K_XL-00002-of-00003.gguf "
        "not in the repository"
    )


def test_cli_fit_and_estimate_take_gguf_ids(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI's MODEL reaches the hub for org/name:TAG and org/name/file.gguf (resolve_model)."""
    import io

    from rigcheck import cli

    out = io.StringIO()
    assert cli.main(["estimate", "org/tiny-GGUF:UD-Q4_K_XL", "--json"], out=out) == 0
    estimate = json.loads(out.getvalue())
    assert "org/tiny-GGUF:UD-Q4_K_XL" in json.dumps(estimate)
    assert len(gguf_requests(hub, "Tiny-UD-Q4_K_XL-00003-of-00003.gguf")) == 1

    out = io.StringIO()
    assert cli.main(["estimate", "org/tiny-GGUF/Tiny-Q8_0.gguf"], out=out) == 0
    assert len(gguf_requests(hub, "Tiny-Q8_0.gguf")) == 1

    assert cli.main(["estimate", "org/tiny-GGUF:Q6_K"], out=io.StringIO()) == 2
    assert "hf:org/tiny-GGUF: no GGUF model file matches the tag Q6_K" in capsys.readouterr().err

    # a missing local path stays a missing file, never a hub look-up
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    mark = len(hub.log)
    for text in ("models/x/y.gguf", "./a/b/c.gguf"):
        assert cli.main(["estimate", text], out=io.StringIO()) == 2
        assert f"{text}: no such file" in capsys.readouterr().err
    assert hub.requests_since(mark) == []


def test_run_it_names_the_hub_file_not_a_placeholder(hub: FakeHub) -> None:
    """A GGUF model read from the hub is run from the hub: llama.cpp's -hf with the same id (it picks the
    same file by the same rule), or --hf-repo/--hf-file for a named file (a split model by its first part);
    Ollama takes hf.co/org/name:TAG, or the named file once downloaded."""
    from rigcheck.core.catalog import load_catalog
    from rigcheck.core.estimate.commands import commands_for
    from rigcheck.core.estimate.recommend import recommend
    from rigcheck.core.machine import load_machine

    catalog = load_catalog(use_overlay=False)
    machine = load_machine(Path(__file__).parent.parent / "fixtures" / "machines" / "rtx4090-64gb.json")

    def commands(model_id: str) -> dict[str, str]:
        rec = recommend(load_hub_model(model_id), machine, "inference", catalog)
        return dict(commands_for(rec, machine, catalog).commands)

    tagged = commands("org/tiny-GGUF:UD-Q4_K_XL")
    assert shlex.split(tagged["llama.cpp"])[1:3] == ["-hf", "org/tiny-GGUF:UD-Q4_K_XL"]
    assert shlex.split(tagged["ollama"])[2] == "hf.co/org/tiny-GGUF:UD-Q4_K_XL"
    plain = commands("org/tiny-GGUF")
    assert shlex.split(plain["llama.cpp"])[1:3] == ["-hf", "org/tiny-GGUF"]
    named = commands("org/tiny-GGUF/Tiny-UD-Q4_K_XL-00002-of-00003.gguf")
    args = shlex.split(named["llama.cpp"])
    assert args[1:5] == ["--hf-repo", "org/tiny-GGUF", "--hf-file", "Tiny-UD-Q4_K_XL-00001-of-00003.gguf"]
    assert shlex.split(named["ollama"])[2] == "./Tiny-UD-Q4_K_XL-00001-of-00003.gguf"
    for found in (tagged, plain, named):
        assert "hf:" not in found["llama.cpp"] and "./org/" not in found["llama.cpp"]


# -- issue 30: caps on decoded bytes, per reply and per look-up; malformed replies; quiet retries ----


def test_a_gzip_bomb_of_model_info_is_cut_at_the_cap(hub: FakeHub) -> None:
    """~200 kB of gzip that inflate to 200 MB: was 3.1 GB of memory and exit 0 (the cap counted
    compressed bytes); now the decoded bytes stop at the cap."""
    message = input_error(lambda: load_hub_model("evil/gzip-info"))
    assert "sent more than the 33,554,432 bytes RigCheck reads in one reply (repository files)" in message


def test_a_gzip_bomb_of_config_never_reaches_the_cache(hub: FakeHub, tmp_path: Path) -> None:
    """A 1 kB config.json (its HEAD) served as a gzip bomb: was 995 MB in the cache and "cannot reach
    the hub"; now refused at config.json's own cap, and nothing is left in the cache."""
    message = input_error(lambda: load_hub_model("evil/gzip-config"))
    assert "sent more than the 4,194,304 bytes RigCheck reads in one reply (config.json)" in message, message
    assert cache_bytes(tmp_path / "hf") == 0


def test_a_gzip_bomb_of_a_gguf_range_is_cut_at_the_cap(hub: FakeHub) -> None:
    message = input_error(lambda: load_hub_model("evil/gzip-GGUF:Q8_0"))
    assert "sent more than the 33,554,432 bytes RigCheck reads in one reply (Tiny-Q8_0.gguf)" in message


def test_many_shards_share_one_cap_per_lookup(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    """Twelve 600 kB headers under a 4 MiB look-up cap: each reply is under the per-reply cap, all of
    them together are not (60 shards of 20 MB were 1.5 GB, exit 0)."""
    monkeypatch.setattr(hub_limits, "MAX_LOOKUP_BYTES", 4 * 1024 * 1024)
    message = input_error(lambda: load_hub_model("evil/many-shards"))
    assert "more than the 4,194,304 bytes RigCheck reads in one look-up" in message, message


def test_many_gguf_parts_share_one_cap_per_lookup(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = [file.size for file in hub.repos["evil/many-parts-GGUF"].files.values()]
    monkeypatch.setattr(hub_limits, "MAX_LOOKUP_BYTES", sum(sizes) - 1)
    message = input_error(lambda: load_hub_model("evil/many-parts-GGUF:UD-Q4_K_XL"))
    assert f"more than the {sum(sizes) - 1:,} bytes RigCheck reads in one look-up" in message, message
    monkeypatch.setattr(hub_limits, "MAX_LOOKUP_BYTES", sum(sizes) + 64 * 1024)  # + the file list
    assert load_hub_model("evil/many-parts-GGUF:UD-Q4_K_XL").weights is not None


@pytest.mark.parametrize("kind", sorted(MALFORMED_INFO))
def test_malformed_model_info_is_one_line(hub: FakeHub, kind: str) -> None:
    """Truncated, null, a list, the wrong shape, a commit id or file name with ../: were internal
    errors (JSONDecodeError, TypeError, "Invalid pointer path"); now one line naming the repository."""
    message = input_error(lambda: load_hub_model(f"evil/{kind}"))
    assert message.startswith(f"hf:evil/{kind}: malformed "), message


def test_hub_library_retries_stay_quiet(hub: FakeHub, caplog: pytest.LogCaptureFixture) -> None:
    """A connection closed mid-download: the library's retry warnings (12 lines on stderr before) are
    not logged; --debug (SHOW_LIBRARY_LOG) lets them through."""
    caplog.set_level("WARNING")
    message = input_error(lambda: load_hub_model("evil/hangup"))
    assert message.startswith("hf:evil/hangup: ")
    assert not [r for r in caplog.records if r.name.startswith("huggingface_hub")]
