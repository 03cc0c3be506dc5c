"""The standing fuzz suite (issue 17): hostile snapshots, reports, configs, GGUF and safetensors
headers, catalog overlay files and command lines, all held to one contract (tests/fakes/fuzz.py):
a valid answer, or exit 2 with one line naming the file; never a traceback or a hang.

About 30 s in the normal run; ``RIGCHECK_FUZZ_SCALE=20 python3 dev.py test tests/test_fuzz.py`` is the
long profile, and ``RIGCHECK_FUZZ_REPORT=fuzz.json`` writes the counts per command and outcome.
The worst cases found so far are replayed from ``tests/fuzz_corpus/`` in a subprocess whose address
space is capped, so unbounded memory fails there instead of swapping the machine.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fakes import fuzz
from fakes.fuzz import HOSTILE, check, dumps, examples, mutated
from fakes.gguf_files import write_gguf
from fakes.loopback_hub import QuietHandler, aimed_hub

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "machines"
BOX = FIXTURES / "rtx4090-64gb.json"
CORPUS = Path(__file__).parent / "fuzz_corpus"
SNAPSHOT = json.loads(BOX.read_text())
FUZZ = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    database=None,  # each run explores afresh; the corpus keeps the cases worth keeping
    # ...except in CI (.ci/run sets CI=true), where a submission must not pass or fail by chance: the same
    # examples every run. Developers' runs keep exploring and add what they find to the corpus.
    derandomize=bool(os.environ.get("CI")),
)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module", autouse=True)
def offline_hub() -> Iterator[None]:
    """An ``org/name`` a strategy makes up must not reach the network: the hub is offline."""
    from huggingface_hub import constants

    saved, os.environ["HF_HUB_OFFLINE"] = os.environ.get("HF_HUB_OFFLINE"), "1"
    was, constants.HF_HUB_OFFLINE = constants.HF_HUB_OFFLINE, True
    yield
    constants.HF_HUB_OFFLINE = was
    if saved is None:
        os.environ.pop("HF_HUB_OFFLINE", None)
    else:
        os.environ["HF_HUB_OFFLINE"] = saved


@pytest.fixture(scope="module", autouse=True)
def report() -> Iterator[None]:
    yield
    if os.environ.get("RIGCHECK_FUZZ_REPORT"):
        fuzz.write_report(os.environ["RIGCHECK_FUZZ_REPORT"])


def _write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    return path


# -- snapshots ------------------------------------------------------------------------------------

SNAPSHOT_COMMANDS = st.sampled_from(
    [
        ("compat", ["compat", "--machine", "{f}", "--json"]),
        ("compat", ["compat", "--machine", "{f}"]),
        ("audit", ["audit", "--machine", "{f}"]),
        ("audit", ["audit", "--machine", "{f}", "--json", "--redact"]),
        ("audit --format", ["audit", "--machine", "{f}", "--format", "markdown", "--models", "qwen3-4b"]),
        ("audit --format", ["audit", "--machine", "{f}", "--format", "json", "--models", "qwen3-4b"]),
        ("audit --format", ["audit", "--machine", "{f}", "--format", "html", "--models", "qwen3-4b"]),
        ("fit", ["fit", "qwen3-8b", "--machine", "{f}"]),
        ("fit", ["fit", "llama-3.1-70b", "--machine", "{f}", "--json"]),
        (
            "upgrade",
            ["upgrade", "--machine", "{f}", "--models", "qwen3-8b", "--add-gpu", "nvidia-geforce-rtx-4090"],
        ),
    ]
)


@settings(FUZZ, max_examples=examples(120))
@given(data=mutated(SNAPSHOT), command=SNAPSHOT_COMMANDS)
def test_hostile_snapshots(scratch: Path, data: Any, command: tuple[str, list[str]]) -> None:
    path = _write(scratch, "snapshot.json", dumps(data))
    name, argv = command
    check(name, [a.replace("{f}", str(path)) for a in argv], names=[str(path)])


# -- reports, in a fleet next to a good one ---------------------------------------------------------


@pytest.fixture(scope="module")
def good_report(scratch: Path) -> dict[str, Any]:
    out = scratch / "good.json"
    outcome = check(
        "audit --format",
        ["audit", "--machine", str(BOX), "--format", "json", "--models", "qwen3-4b", "-o", str(out)],
    )
    assert outcome.code == 0
    data: dict[str, Any] = json.loads(out.read_text())
    out.unlink()
    return data


@settings(FUZZ, max_examples=examples(60))
@given(data=st.data(), form=st.sampled_from(["table", "json", "html"]))
def test_one_hostile_report_never_aborts_a_fleet(
    scratch: Path, good_report: dict[str, Any], data: st.DataObject, form: str
) -> None:
    folder = scratch / "fleet"
    folder.mkdir(exist_ok=True)
    good = _write(folder, "a-good.json", json.dumps(good_report))
    bad = _write(folder, "b-bad.json", dumps(data.draw(mutated(good_report))))
    outcome = check("fleet", ["fleet", str(folder), "--format", form], names=[str(bad)])
    assert outcome.code == 0, "the good report alone makes a fleet"
    assert str(good) not in outcome.err
    if "b-bad.json" in outcome.err:
        assert f"rigcheck: warning: skipped {bad}: " in outcome.err


# -- config.json -------------------------------------------------------------------------------------

LLAMA = {
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "rope_scaling": {"factor": 8.0, "rope_type": "llama3"},
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
    "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128},
}


@settings(FUZZ, max_examples=examples(80))
@given(data=mutated(LLAMA), fit=st.booleans())
def test_hostile_configs(scratch: Path, data: Any, fit: bool) -> None:
    folder = scratch / "config"
    folder.mkdir(exist_ok=True)
    path = _write(folder, "config.json", dumps(data))
    argv = ["fit", str(path), "--machine", str(BOX), "--json"] if fit else ["estimate", str(path), "--json"]
    check(argv[0] + " (config.json)", argv, names=[str(path)])


# -- llama-bench JSON for --measured (issue 30 #4) ------------------------------------------------

BENCH = [
    {
        "model_type": "llama 8B Q4_K - Medium",
        "model_n_params": 8030261248,
        "gpu_info": "NVIDIA GeForce RTX 4090",
        "backends": "CUDA",
        "n_gpu_layers": 99,
        "n_prompt": 0,
        "n_gen": 128,
        "avg_ts": 130.5,
    }
]


@settings(FUZZ, max_examples=examples(40))
@given(data=mutated(BENCH))
def test_hostile_llama_bench_files(scratch: Path, data: Any) -> None:
    """NaN, Infinity, -5, 10^400, 5000 digits, deep nesting: one line naming the file, valid JSON out."""
    path = _write(scratch, "bench.json", dumps(data))
    argv = [
        "fit",
        "llama-3.1-8b",
        "--quant",
        "q4_k_m",
        "--machine",
        str(BOX),
        "--measured",
        str(path),
        "--json",
    ]
    check("fit --measured", argv, names=[str(path)])


# -- hub replies from a loopback fake hub (issue 30 #1-3) ----------------------------------------------

COMMIT = "c" * 40


class _HubReplies:
    """What the fuzz hub serves next: the model info body, config.json's body, and their encodings."""

    info: bytes = b"{}"
    config: bytes = b"{}"
    gzip_info: bool = False
    gzip_config: bool = False


def _gzip(data: bytes, pad: int = 0) -> bytes:
    import zlib

    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [packer.compress(data)]
    parts.extend(packer.compress(b" " * 1024 * 1024) for _ in range(pad))
    return b"".join([*parts, packer.flush()])


@pytest.fixture(scope="module")
def fuzz_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[type[_HubReplies]]:
    """A loopback hub whose replies each example sets; the library aimed at it for this module."""

    class Handler(QuietHandler):
        def serve(self, *, head: bool) -> None:
            replies = _HubReplies
            headers = {"Content-Type": "application/json", "X-Repo-Commit": COMMIT, "ETag": '"e"'}
            if self.path.startswith("/api/models/"):
                body, packed = replies.info, replies.gzip_info
            elif self.path.endswith("/config.json"):
                body, packed = replies.config, replies.gzip_config
            else:
                body, packed = b"not found", False
                headers["X-Error-Code"] = "EntryNotFound"
            if packed:
                headers["Content-Encoding"] = "gzip"
            self.send_response(200 if "X-Error-Code" not in headers else 404)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

    with aimed_hub(Handler, tmp_path_factory.mktemp("hf")):
        yield _HubReplies


INFO = {"id": "fuzz/model", "sha": COMMIT, "siblings": [{"rfilename": "config.json", "size": 400}]}


@settings(FUZZ, max_examples=examples(25))
@given(
    info=st.one_of(mutated(INFO), HOSTILE),
    config=st.one_of(mutated(LLAMA), HOSTILE),
    raw=st.sampled_from([None, b"", b"{", b"\x1f\x8b garbage", b"[]" * 1000]),
    packing=st.sampled_from(["plain", "gzip", "gzip-info-bomb", "gzip-config-bomb"]),
)
def test_hostile_hub_replies(
    fuzz_hub: type[_HubReplies], info: Any, config: Any, raw: bytes | None, packing: str
) -> None:
    """Malformed, truncated, compressed and bomb replies: a fit, or one line naming the repository."""
    info_body = raw if raw is not None else dumps(info).encode("utf-8", "surrogatepass")
    config_body = dumps(config).encode("utf-8", "surrogatepass")
    fuzz_hub.gzip_info = packing in ("gzip", "gzip-info-bomb")
    fuzz_hub.gzip_config = packing in ("gzip", "gzip-config-bomb")
    fuzz_hub.info = (
        _gzip(info_body, 40 if packing == "gzip-info-bomb" else 0) if fuzz_hub.gzip_info else info_body
    )
    fuzz_hub.config = (
        _gzip(config_body, 40 if packing == "gzip-config-bomb" else 0)
        if fuzz_hub.gzip_config
        else config_body
    )
    argv = ["fit", "fuzz/model", "--machine", str(BOX), "--json"]
    check("fit (hub reply)", argv, names=["hf:fuzz/model"])


# -- GGUF headers --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_gguf(scratch: Path) -> bytes:
    path = scratch / "small.gguf"
    write_gguf(path, layers=1)
    return path.read_bytes()


@settings(FUZZ, max_examples=examples(80))
@given(data=st.data())
def test_hostile_gguf_headers(scratch: Path, small_gguf: bytes, data: st.DataObject) -> None:
    raw = bytearray(small_gguf)
    header_end = min(len(raw), 2048)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(4, header_end - 8))
        value = data.draw(
            st.sampled_from([0, 1, 0xFF, 2**31, 2**32 - 1, 2**40, 2**63, 2**64 - 1])
            | st.integers(0, 2**64 - 1)
        )
        width = data.draw(st.sampled_from([1, 4, 8]))
        raw[at : at + width] = (value % 256**width).to_bytes(width, "little")
    if data.draw(st.booleans()):
        raw = raw[: data.draw(st.integers(0, len(raw)))]
    path = _write(scratch, "hostile.gguf", bytes(raw))
    check("estimate (GGUF)", ["estimate", str(path), "--json"], names=[str(path)])


# -- safetensors headers -------------------------------------------------------------------------------

DTYPES = st.sampled_from(["F32", "BF16", "F16", "I8", "U8", "F8_E4M3", "I64", "BOOL", "Q4", "", "f32"])
NAMES = st.sampled_from(
    ["model.embed_tokens.weight", "lm_head.weight", "model.layers.0.self_attn.q_proj.weight",
     "model.layers.0.mlp.down_proj.weight", "model.norm.weight", "__metadata__", "x" * 300]
)  # fmt: skip
DIMS = st.one_of(st.integers(0, 5000), st.sampled_from([-1, 2**40, 2**63]), HOSTILE)


@st.composite
def safetensors_headers(draw: st.DrawFn) -> dict[str, Any]:
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for _ in range(draw(st.integers(0, 6))):
        shape = draw(st.lists(DIMS, max_size=3))
        start = draw(st.one_of(st.just(offset), st.integers(0, 10_000), HOSTILE))
        end = draw(st.one_of(st.integers(0, 20_000), HOSTILE))
        header[draw(NAMES)] = draw(
            st.one_of(
                st.fixed_dictionaries(
                    {"dtype": DTYPES, "shape": st.just(shape), "data_offsets": st.just([start, end])}
                ),
                HOSTILE,
            )
        )
        offset = end if isinstance(end, int) else offset
    return header


@settings(FUZZ, max_examples=examples(80))
@given(
    header=safetensors_headers(),
    data_size=st.integers(0, 20_000),
    length_lie=st.sampled_from([0, 0, 0, 1, -1, 2**40]),
)
def test_hostile_safetensors_headers(
    scratch: Path, header: dict[str, Any], data_size: int, length_lie: int
) -> None:
    folder = scratch / "st"
    folder.mkdir(exist_ok=True)
    _write(folder, "config.json", json.dumps(LLAMA | {"quantization_config": None}))
    raw = dumps(header).encode("utf-8", "surrogatepass")
    length = max(0, len(raw) + length_lie) % 2**64
    path = _write(folder, "model.safetensors", struct.pack("<Q", length) + raw + bytes(data_size))
    check("estimate (safetensors)", ["estimate", str(folder), "--json"], names=[str(path), str(folder)])


# -- catalog overlay files -------------------------------------------------------------------------------

GOOD_GPU = """[[gpu]]
id = "fuzz-gpu"
vendor = "nvidia"
name = "Fuzz GPU"
memory_gb = [24]
bandwidth_gbs = 1008
source = "https://example.com/spec"
"""
TOML_VALUES = st.one_of(
    st.sampled_from(
        [
            "1" + "0" * 5000,
            "inf",
            "nan",
            "-1",
            "1e400",
            '"\\u001b]0;x\\u0007"',
            "[" * 2000 + "]" * 2000,
            "{a={b={c={d=1}}}}",
            '"',
            "[[",
            "true",
            "1979-05-27T07:32:00Z",
            '"' + "x" * 10000 + '"',
            "0x7fffffffffffffff",
        ]
    ),
    st.integers().map(str),
    st.text(max_size=20),
)


@settings(FUZZ, max_examples=examples(40))
@given(
    field=st.sampled_from(["id", "vendor", "name", "memory_gb", "bandwidth_gbs", "source", "extra"]),
    value=TOML_VALUES,
    raw=st.booleans(),
)
def test_hostile_overlay_files_never_stop_the_app(scratch: Path, field: str, value: str, raw: bool) -> None:
    folder = scratch / "overlay"
    folder.mkdir(exist_ok=True)
    lines = [line for line in GOOD_GPU.splitlines() if not line.startswith(f"{field} =")]
    text = value if raw else "\n".join([*lines, f"{field} = {value}"])
    path = _write(folder, "fuzz.toml", text)
    old = os.environ.get("RIGCHECK_CATALOG_OVERLAY")
    os.environ["RIGCHECK_CATALOG_OVERLAY"] = str(folder)
    try:
        outcome = check("gpus (overlay)", ["gpus", "--json"])
    finally:
        if old is None:
            os.environ.pop("RIGCHECK_CATALOG_OVERLAY", None)
        else:
            os.environ["RIGCHECK_CATALOG_OVERLAY"] = old
    assert outcome.code == 0, "a bad overlay file never stops a command"
    problems = json.loads(outcome.out)["problems"]
    assert all(p.startswith(str(path)) for p in problems), problems


# -- command lines ------------------------------------------------------------------------------------

ARG_VALUES = st.one_of(
    st.sampled_from(
        [
            "0",
            "-1",
            "1",
            "nan",
            "inf",
            "-inf",
            "1e-300",
            "1e309",
            "9" * 5000,
            "",
            " ",
            "\x1b[2J",
            "1.5",
            "4096",
            "8192",
            "100000000",
            "0x10",
            "\uff11\uff12",
        ]
    ),
    st.text(max_size=12),
)
MODELS = st.one_of(
    st.sampled_from(["qwen3-8b", "llama-3.1-70b", "QWEN3-4B", "org/name", "a/b/c.gguf", ".", str(BOX)]),
    st.text(max_size=12),
)
OPTIONS: dict[str, list[tuple[str, st.SearchStrategy[str] | None]]] = {
    "estimate": [("--quant", ARG_VALUES | st.sampled_from(["q4_k_m", "nf4", "bf16"])), ("--context", ARG_VALUES), ("--batch", ARG_VALUES),
                 ("--kv-cache-type", ARG_VALUES | st.sampled_from(["q8_0", "f16"])), ("--workload", st.sampled_from(["lora", "full", "x"])),
                 ("--engine", st.sampled_from(["vllm", "llama.cpp", "y"])), ("--json", None)],
    "fit": [("--ram-gb", ARG_VALUES), ("--gpu", ARG_VALUES | st.sampled_from(["nvidia-geforce-rtx-4090", "amd-radeon-rx-7900-xtx"])),
            ("--offload", st.sampled_from(["auto", "none", "full", "z"])), ("--split", st.sampled_from(["layer", "tensor"])),
            ("--context", ARG_VALUES), ("--json", None)],
    "upgrade": [("--gpu", st.sampled_from(["nvidia-geforce-rtx-4090", "nvidia-h100-sxm5-80gb", "x"])), ("--add-gpu", ARG_VALUES),
                ("--ram-gb", ARG_VALUES), ("--psu-watts", ARG_VALUES), ("--models", st.sampled_from(["qwen3-8b", "zzz"])),
                ("--context", ARG_VALUES), ("--json", None)],
    "compat": [("--json", None)],
    "audit": [("--format", st.sampled_from(["json", "markdown", "html", "pdf"])), ("--models", MODELS), ("--psu-watts", ARG_VALUES),
              ("--redact", None), ("--json", None), ("-o", st.sampled_from(["", " ", ".", "/dev/null", "{tmp}/out.txt", "{tmp}"]))],
    "gpus": [("--vendor", st.sampled_from(["nvidia", "amd", "ibm"])), ("--json", None)],
    "models": [("--search", ARG_VALUES), ("--json", None)],
    "fleet": [("--model", MODELS), ("--quant", ARG_VALUES), ("--context", ARG_VALUES), ("--format", st.sampled_from(["table", "json", "html"])),
              ("--json", None)],
}  # fmt: skip
FIRST = {
    "estimate": ["{model}"],
    "fit": ["{model}", "--machine", str(BOX)],
    "upgrade": ["--machine", str(BOX)],
    "compat": ["--machine", str(BOX)],
    "audit": ["--machine", str(BOX)],
    "gpus": [],
    "models": [],
    "fleet": [str(FIXTURES)],
}


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    command = draw(st.sampled_from(sorted(OPTIONS)))
    model = draw(MODELS)
    argv = [command, *(a.replace("{model}", model) for a in FIRST[command])]
    for option, values in draw(st.lists(st.sampled_from(OPTIONS[command]), max_size=4)):
        argv.append(option)
        if values is not None:
            argv.append(draw(values))
    if draw(st.integers(0, 9)) == 0:
        argv.insert(draw(st.integers(0, len(argv))), draw(ARG_VALUES))
    return argv


@settings(FUZZ, max_examples=examples(150))
@given(argv=command_lines())
def test_hostile_command_lines(scratch: Path, argv: list[str]) -> None:
    tmp = scratch / "cli"
    tmp.mkdir(exist_ok=True)
    command = next(a for a in argv if a in OPTIONS)
    check(f"{command} (arguments)", [a.replace("{tmp}", str(tmp)) for a in argv])


# -- monitor recordings, replayed (issue 30 #7, #14) ---------------------------------------------------

RECORDING_HEADER = "time,wall,cpu_percent,ram_used_bytes,gpu0_util_percent,gpu0_temp_c"
RECORDING_CELLS = st.sampled_from(
    ["0", "1.5", "-1", "", "nan", "inf", "-inf", "1e308", "-1e308", "1e400", "9" * 400, "x", '"', '"a,b"',
     '"line\nbreak"', "\u202e", "\x00", "\ufeff", " 2 ", "0x10", "1_000"]
)  # fmt: skip


@st.composite
def recordings(draw: st.DrawFn) -> bytes:
    """A recording as ``monitor --csv`` writes it, with cells, lines and bytes made hostile."""
    rows = [RECORDING_HEADER]
    for n in range(draw(st.integers(0, 12))):
        cells = [f"{n * 0.5}", "1.7e9", "12.5", "8589934592", f"{n % 100}", "60"]
        if draw(st.integers(0, 5)) == 0:  # a hostile cell in one row of six: both outcomes are seen
            cells[draw(st.integers(0, len(cells) - 1))] = draw(RECORDING_CELLS)
        if draw(st.integers(0, 9)) == 0:
            cells = cells[: draw(st.integers(0, len(cells)))] or [""]
        rows.append(",".join(cells))
    if draw(st.integers(0, 5)) == 0:
        rows[0] = draw(st.sampled_from(["", "time,time", "wall,cpu", "time," + ",".join(["x"] * 3000)]))
    text = "\n".join(rows) + draw(st.sampled_from(["\n", "", "\n\n", "\r\n"]))
    raw = text.encode("utf-8")
    if draw(st.integers(0, 9)) == 0:
        cut = draw(st.integers(0, len(raw)))
        raw = (
            raw[:cut] + draw(st.sampled_from([b"\xff", b"\xc3", b"\x00", b"\r", b"\xef\xbb\xbf"])) + raw[cut:]
        )
    return raw


@settings(FUZZ, max_examples=examples(150))
@given(raw=recordings())
def test_hostile_recordings_replay_or_are_one_problem(scratch: Path, raw: bytes) -> None:
    """A recording opens (finite times from 0, a value per row in every series) or is one InputError
    naming the file; never another exception or a hang."""
    import math

    from rigcheck.core.errors import InputError
    from rigcheck.core.replay import read_recording

    path = _write(scratch, "run.csv", raw)
    try:
        with fuzz.deadline():
            recording = read_recording(path)
    except InputError as exc:
        assert exc.source == str(path) and "\n" not in str(exc)
        fuzz.TALLY["replay"]["refused (one line)"] += 1
        return
    assert len(recording) >= 1 and recording.t[0] == 0.0
    assert all(math.isfinite(t) for t in recording.t.tolist())
    assert all(len(values) == len(recording) for values in recording.values.values())
    fuzz.TALLY["replay"]["opened"] += 1


# -- redaction (issue 30 #8): an identifier planted in any free-text field never survives --redact ------

HEX = st.text("0123456789abcdef", min_size=8, max_size=8)
#: names no answer holds by chance (a drawn "cuda" or "nvid" would be found in the output)
HOST_NAMES = st.builds("{}-{}".format, st.sampled_from(["lab", "ws", "node", "gpu"]), HEX)
USERS = HEX.map("u{}x".format)
FREE_TEXT = [("cpu", "model"), ("gpus", 0, "name"), ("gpus", 0, "source"), ("host", "os_version"),
             ("host", "kernel"), ("notes", 0, "message")]  # fmt: skip
SEPARATORS = st.sampled_from([" ", "(", "=", "/", ", ", ": ", "'", "[", "-", "@"])


@st.composite
def planted_snapshots(draw: st.DrawFn) -> tuple[dict[str, Any], list[str]]:
    """The fixture snapshot with identifiers of drawn kinds and values planted in drawn free-text
    fields; returns it with the substrings that must not survive redaction."""
    import copy

    data = copy.deepcopy(SNAPSHOT)
    host, user, uuid = draw(HOST_NAMES), draw(USERS), draw(HEX) + "-1111-2222-3333-444455556666"
    serial = str(draw(st.integers(10**12, 10**13 - 1)))
    bus = f"00000000:{draw(st.integers(16, 255)):02x}:00.0"
    data["host"]["hostname"] = host
    data["host"].setdefault("kernel", "6.8.0")
    data["gpus"][0] |= {"uuid": f"GPU-{uuid}", "serial": serial, "pci_bus_id": bus}
    data["notes"] = [{"probe": "gpu", "level": "info", "message": "seen"}]
    kinds = {
        "host": (draw(st.sampled_from([host, host.upper(), host.capitalize()])), [host]),
        "uuid": (draw(st.sampled_from([f"GPU-{uuid}", f"MIG-GPU-{uuid}/1/0", uuid])), [uuid[:8]]),
        "serial": (serial, [serial]),
        "bus": (draw(st.sampled_from([bus, bus[4:]])), [bus[9:]]),
        "home": (draw(st.sampled_from([f"/home/{user}", f"/Users/{user}", f"c:\\users\\{user}"])), [user]),
    }
    secrets: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(sorted(kinds)))
        path = draw(st.sampled_from(FREE_TEXT))
        parent: Any = data
        for step in path[:-1]:
            parent = parent[step]
        value, survivors = kinds[kind]
        parent[path[-1]] = f"{parent[path[-1]]}{draw(SEPARATORS)}{value}{draw(SEPARATORS)}x"
        secrets.extend(survivors)
    return data, secrets


@settings(FUZZ, max_examples=examples(40))
@given(
    planted=planted_snapshots(),
    form=st.sampled_from([["--json"], ["--format", "json"], ["--format", "markdown"], ["--format", "html"]]),
)
def test_planted_identifiers_never_survive_redaction(
    scratch: Path, planted: tuple[dict[str, Any], list[str]], form: list[str]
) -> None:
    data, secrets = planted
    path = _write(scratch, "planted.json", json.dumps(data))
    outcome = check("audit --redact (planted)", ["audit", "--machine", str(path), *form, "--redact"])
    assert outcome.code == 0, outcome.err
    text = (outcome.out + outcome.err).lower().replace("\\\\", "\\")
    for secret in secrets:
        assert secret.lower() not in text, (
            secret,
            [line for line in text.splitlines() if secret.lower() in line],
        )


# -- the corpus: the worst cases, replayed with capped memory ---------------------------------------------


def test_the_corpus_replays_within_bounded_memory_and_time(tmp_path: Path) -> None:
    """Every case of tests/fuzz_corpus (and the generated ones too big to commit) in one subprocess
    whose address space is capped at 3 GiB; each case must keep the contract within 10 s."""
    report = tmp_path / "corpus.json"
    env = {**os.environ, "RIGCHECK_CORPUS_REPORT": str(report), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, str(Path(__file__).parent / "fakes" / "fuzz_corpus.py"), str(CORPUS), str(tmp_path)],
        capture_output=True, text=True, timeout=300, env=env, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads(report.read_text())
    assert len(results) >= 20, results
    for case, outcome in results.items():
        fuzz.TALLY[f"corpus: {outcome['command']}"][outcome["kind"]] += 1
        assert outcome["ok"], f"{case}: {outcome}"
