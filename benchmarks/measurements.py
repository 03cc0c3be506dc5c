"""The cited measurement set (``benchmarks/data/measurements.csv``): load, validate, split.

One row per published number: a decode or prefill speed, a GGUF file size, or a GPU memory reading,
with the device, engine build, model, format and offload flags as run, the source a reader can open,
where in it the number is, and the text as read. Nothing here is estimated: a row is a copy.

``load()`` checks every row and raises ``MeasurementError`` naming the file, line, row id and the
problem. ``Measurement.split`` keeps a deterministic quarter of the rows out of any fitting: a row is
``holdout`` when the SHA-256 of its id, read as an integer, is divisible by 4. It depends only on the
id, so adding rows never moves an existing row between the halves.

``benchmarks/data/blind.csv`` (``load_blind()``) holds rows from sources no fitted number was ever taken from
(issue 28): same columns, split ``blind`` for every row, so no fitter (each takes ``split == "fit"`` rows of
``load()`` only) can see them; ``estimate_accuracy.py`` scores them beside the fit and held-out rows.
"""

from __future__ import annotations

import csv
import hashlib
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Literal, TypeVar

from rigcheck.core.estimate.memory_types import LLAMA_CPP_UBATCH
from rigcheck.core.estimate.ud_names import qat_variant

R = TypeVar("R")
E = TypeVar("E", bound=ValueError)

DATA = Path(__file__).resolve().parent / "data" / "measurements.csv"
BLIND = DATA.parent / "blind.csv"

DEVICE_CLASSES = frozenset(
    {
        "nvidia-discrete",
        "amd-discrete",
        "intel-discrete",
        "intel-integrated",
        "apple",
        "strix-halo",
        "gb10",
        "cpu",
    }
)
#: intel-integrated: Lunar Lake / Arrow Lake iGPUs, which share the host's memory
UNIFIED_CLASSES = frozenset({"apple", "strix-halo", "gb10", "intel-integrated"})
BACKENDS = frozenset({"cuda", "rocm", "metal", "vulkan", "cpu", "sycl"})
METRICS = frozenset({"decode_tokens_per_s", "prefill_tokens_per_s", "file_bytes", "gpu_memory_bytes"})
SPEED_METRICS = frozenset({"decode_tokens_per_s", "prefill_tokens_per_s"})
OFFLOAD_KINDS = frozenset({"none", "layers", "experts"})
REQUIRED = (
    "id",
    "engine",
    "model",
    "format",
    "test",
    "metric",
    "value",
    "source_url",
    "locator",
    "verbatim",
)

Split = Literal["fit", "holdout", "blind"]


class MeasurementError(ValueError):
    """A row of the measurement set is malformed; the message names the file, line and row."""


@dataclass(frozen=True)
class Measurement:
    id: str
    device: str
    device_class: str
    #: catalog GPU id (``rigcheck gpus``), empty when the catalog lacks the device or it is a CPU
    gpu_id: str
    #: GPUs used by the run; 0 for CPU-only rows
    gpu_count: int
    #: CPU, RAM and memory setup as published ("EPYC 9654, 12×DDR5-4800"); free text
    host: str
    #: host RAM in GB as published, when it is
    ram_gb: float | None
    engine: str
    build: str
    backend: str
    model: str
    #: catalog model id (``rigcheck models``), empty when the catalog lacks the model
    model_id: str
    moe: bool
    #: weight format as published: Q4_K_M, MXFP4, BF16, UD-Q3_K_XL …
    format: str
    #: the offload flags as run ("none", "-ngl 20", "--n-cpu-moe 12", "-ot exps=CPU")
    offload: str
    #: what the flags amount to: ``none`` (everything on the GPUs, or CPU-only), ``layers`` or ``experts``
    offload_kind: str
    #: the benchmark's test name as printed: pp512, tg128, tg32, size …
    test: str
    metric: str
    value: float
    source_url: str
    locator: str
    verbatim: str
    notes: str
    #: llama.cpp's prompt micro-batch as run (llama-bench -ub, the effective n_ubatch, at most its -b), from
    #: the optional ``ubatch`` column; None (empty, or a file without the column) = the engine's default,
    #: llama-bench's 512
    ubatch: int | None = None
    #: from ``blind.csv``: a source never used for fitting (not a CSV column; set by ``load_blind``)
    blind: bool = False

    @property
    def split(self) -> Split:
        return "blind" if self.blind else split_of(self.id)

    @property
    def unified(self) -> bool:
        return self.device_class in UNIFIED_CLASSES

    @property
    def offloaded(self) -> bool:
        return self.offload_kind in ("layers", "experts")

    @property
    def speed(self) -> bool:
        return self.metric in SPEED_METRICS

    @property
    def llama_cpp(self) -> bool:
        """The run is llama.cpp's as the estimator models it: llama.cpp itself, or Ollama, which runs GGUF
        models on a vendored copy of llama.cpp's ggml kernels (ollama/ollama ml/backend/ggml/ggml/src) and
        whose users get the estimator's one GGUF engine, "llama.cpp". Ollama builds some architectures'
        graphs in Go rather than llama.cpp's C++ (qwen3next: ollama/ollama
        model/models/qwen3next/deltanet.go@bc82a5507ed2f7439966d9409d678800a0d097fe), so its rows speak for
        what an Ollama user sees, not for llama.cpp's own graph. Forks with kernels of their own
        (ik_llama.cpp) are not llama.cpp."""
        return self.engine.startswith(("llama.cpp", "Ollama"))

    @property
    def ollama(self) -> bool:
        """The run is Ollama's: llama.cpp's kernels under Ollama's own graphs and defaults (llama_cpp above).
        benchmarks/fit_speed.py keeps these rows out of llama.cpp's class and maturity fits and fits Ollama's
        own engine × architecture maturity from them."""
        return self.engine.startswith("Ollama")

    @property
    def engine_build(self) -> int | None:
        """The llama.cpp build a llama.cpp row ran (row_build on its ``build`` column); None for other
        engines (Ollama's, ik_llama.cpp's and MLX's versions are not llama.cpp's) and unstated builds."""
        if not self.engine.startswith("llama.cpp"):
            return None
        return row_build(self.build)

    @property
    def tokens(self) -> int | None:
        """The first token count in the test name: 512 for pp512, 128 for tg128, 2048 for tg@ctx2048."""
        found = re.search(r"\d+", self.test)
        return int(found.group()) if self.test[:2] in ("pp", "tg") and found and int(found.group()) else None

    def subsets(self) -> tuple[str, ...]:
        """The report's subsets this row belongs to (a row may be in several)."""
        if self.metric == "file_bytes":
            return ("file sizes",)
        if self.metric == "gpu_memory_bytes":
            return ("GPU memory",)
        found = ["all speed"]
        if self.moe:
            found.append("MoE")
        if self.unified:
            found.append("unified memory")
        if self.offloaded:
            found.append("offload")
        if self.device_class == "cpu":
            found.append("CPU-only")
        if self.device_class == "amd-discrete":
            found.append("AMD discrete")
        if self.device_class == "nvidia-discrete":
            found.append("NVIDIA discrete")
        if self.device_class == "intel-discrete":
            found.append("Intel discrete")
        if self.gpu_count > 1:
            found.append("multi-GPU")
        return tuple(found)


#: a build number as the rows print it: "a0dd7795 (5589)", "(9039); SYCL", "b8724 (b54cb2e3d)", "b6652.amd0",
#: "6792; AMDVLK ...", "llama.cpp build 7973"
_BUILD_NUMBER = re.compile(r"\((\d{4,5})[;) ]|\bb(\d{4,5})\b|^(\d{4,5})\b|\bbuild (\d{4,5})\b")
#: a run on a PR's branch ("PR #19375 branch gg/qwen3-next-opt on b7946") has that PR's change
_PR_BRANCH = re.compile(r"PR #(\d+) branch")
#: a PR's own "t/s master" column ("master at the time of PR #16649 (Oct 2025)") was run without that PR
_PR_MASTER = re.compile(r"master at the time of PR #(\d+)")


def row_build(text: str) -> int | None:
    """The llama.cpp build number a ``build`` column names, None where it names none (the row is then taken
    to be on a current build). A run on a PR's branch counts as the build that PR first shipped in
    (catalog/engine_builds.toml), when that is later than the branch's base; a run on master at the time of
    a catalogued PR, with no number, as the build before that PR's first build."""
    found = _BUILD_NUMBER.search((text or "").strip())
    number = next((int(g) for g in found.groups() if g), None) if found else None
    for pr in _PR_BRANCH.findall(text or ""):
        shipped = _first_build(int(pr))
        if shipped is not None and number is not None:
            number = max(number, shipped)
    if number is None and (master := _PR_MASTER.search(text or "")) is not None:
        shipped = _first_build(int(master.group(1)))
        number = shipped - 1 if shipped is not None else None
    return number


def _first_build(pr: int) -> int | None:
    """The first llama.cpp build catalog/engine_builds.toml gives PR #``pr`` (None: not catalogued)."""
    from rigcheck.core.engine_builds import load_milestones

    return next((m.first_build for m in load_milestones() if m.pr == pr), None)


def split_of(row_id: str) -> Split:
    """The held-out quarter: a row is held out when the SHA-256 of its id is 0 modulo 4 (every data set
    here uses this one rule, so a row's split never depends on which file or script reads it)."""
    digest = int.from_bytes(hashlib.sha256(row_id.encode("utf-8")).digest(), "big")
    return "holdout" if digest % 4 == 0 else "fit"


def row_error(error: type[E], path: Path, line: int, row_id: str, problem: str) -> E:
    where = f"row '{row_id}'" if row_id else "row without an id"
    return error(f"{path}:{line}: {where}: {problem}")


def _fail(path: Path, line: int, row_id: str, problem: str) -> MeasurementError:
    return row_error(MeasurementError, path, line, row_id, problem)


def _parse(raw: dict[str, str], path: Path, line: int) -> Measurement:
    row_id = (raw.get("id") or "").strip()
    for name in REQUIRED:
        if not (raw.get(name) or "").strip():
            raise _fail(path, line, row_id, f"missing {name}")
    metric = raw["metric"].strip()
    if metric not in METRICS:
        raise _fail(path, line, row_id, f"unknown metric '{metric}' (one of {', '.join(sorted(METRICS))})")
    cls = (raw.get("device_class") or "").strip()
    if metric != "file_bytes" and not (raw.get("device") or "").strip():
        raise _fail(path, line, row_id, "missing device")
    if (metric != "file_bytes" or cls) and cls not in DEVICE_CLASSES:
        raise _fail(
            path, line, row_id, f"unknown device_class '{cls}' (one of {', '.join(sorted(DEVICE_CLASSES))})"
        )
    backend = (raw.get("backend") or "").strip()
    if metric in SPEED_METRICS and backend not in BACKENDS:
        raise _fail(path, line, row_id, f"unknown backend '{backend}' (one of {', '.join(sorted(BACKENDS))})")
    kind = (raw.get("offload_kind") or "").strip()
    if metric in SPEED_METRICS and kind not in OFFLOAD_KINDS:
        raise _fail(path, line, row_id, f"unknown offload_kind '{kind}' (one of none, layers, experts)")
    if metric in SPEED_METRICS and not (raw.get("offload") or "").strip():
        raise _fail(path, line, row_id, "missing offload (the flags as run, or 'none')")
    url = raw["source_url"].strip()
    if not url.startswith("https://"):
        raise _fail(path, line, row_id, f"source_url '{url}' is not an https address a reader can open")
    try:
        value = float(raw["value"])
    except ValueError:
        raise _fail(path, line, row_id, f"value '{raw['value']}' is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise _fail(path, line, row_id, f"value {raw['value']} is not a positive number")
    moe = (raw.get("moe") or "").strip()
    if moe not in ("yes", "no"):
        raise _fail(path, line, row_id, f"moe must be 'yes' or 'no', not '{moe}'")
    try:
        count = int(raw.get("gpu_count") or ("1" if cls not in ("cpu", "") else "0"))
        ram = float(raw["ram_gb"]) if (raw.get("ram_gb") or "").strip() else None
    except ValueError as exc:
        raise _fail(path, line, row_id, f"bad number: {exc}") from None
    ubatch_text = (raw.get("ubatch") or "").strip()
    if ubatch_text and not (ubatch_text.isdigit() and int(ubatch_text) >= 1):
        raise _fail(path, line, row_id, f"ubatch '{ubatch_text}' is not a positive whole number of tokens")
    if cls == "cpu" and count != 0:
        raise _fail(path, line, row_id, "a CPU-only row uses 0 GPUs")
    if cls not in ("cpu", "") and count < 1:
        raise _fail(path, line, row_id, f"a {cls} row uses at least one GPU")
    return Measurement(
        id=row_id,
        device=(raw.get("device") or "").strip(),
        device_class=cls,
        gpu_id=(raw.get("gpu_id") or "").strip(),
        gpu_count=count,
        host=(raw.get("host") or "").strip(),
        ram_gb=ram,
        engine=raw["engine"].strip(),
        build=(raw.get("build") or "").strip(),
        backend=backend,
        model=raw["model"].strip(),
        model_id=(raw.get("model_id") or "").strip(),
        moe=moe == "yes",
        format=raw["format"].strip(),
        offload=(raw.get("offload") or "").strip(),
        offload_kind=kind,
        test=raw["test"].strip(),
        metric=metric,
        value=value,
        source_url=url,
        locator=raw["locator"].strip(),
        verbatim=raw["verbatim"],
        notes=(raw.get("notes") or "").strip(),
        ubatch=int(ubatch_text) if ubatch_text else None,
    )


#: columns a file may leave out (blind.csv and older copies have no ``ubatch``)
OPTIONAL_COLUMNS = frozenset({"ubatch"})
COLUMNS = tuple(f.name for f in fields(Measurement) if f.name != "blind" and f.name not in OPTIONAL_COLUMNS)


def read_rows(
    path: Path,
    columns: Sequence[str],
    parse: Callable[[dict[str, str], Path, int], R],
    error: type[ValueError],
    row_id: Callable[[R], str],
) -> list[R]:
    """Every row of the CSV ``path`` through ``parse``; ``error`` at the first unreadable file, missing
    column, over-long row or duplicate id, naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
    reader = csv.DictReader(text.splitlines())
    missing = [c for c in columns if c not in (reader.fieldnames or [])]
    if missing:
        raise error(f"{path}:1: header lacks column(s) {', '.join(missing)}")
    rows: list[R] = []
    seen: dict[str, int] = {}
    for raw in reader:
        line = reader.line_num
        if None in raw:
            raise row_error(error, path, line, raw.get("id") or "", "more cells than the header has columns")
        row = parse(raw, path, line)
        key = row_id(row)
        if key in seen:
            raise row_error(error, path, line, key, f"duplicate id (first on line {seen[key]})")
        seen[key] = line
        rows.append(row)
    return rows


def load(path: Path = DATA) -> list[Measurement]:
    """Every row of ``path``, validated; raises ``MeasurementError`` at the first bad row."""
    return read_rows(path, COLUMNS, _parse, MeasurementError, lambda row: row.id)


def load_blind(path: Path = BLIND) -> list[Measurement]:
    """Every row of the blind set, validated as ``load`` does, each with split ``blind``."""
    return [replace(row, blind=True) for row in load(path)]


def source_of(row: Measurement) -> str:
    """The source a row was read from, as a reader would name it: the page without its anchor, and for a
    GitHub file the repository and path without the commit (two commits of one README are one source)."""
    page = row.source_url.split("#")[0].rstrip("/")
    found = re.match(r"https://github\.com/([^/]+/[^/]+)/(?:blob|raw|tree)/[^/]+/(.+)", page)
    return f"https://github.com/{found.group(1)}/{found.group(2)}" if found else page


def count_by(rows: Iterable[Measurement], subset: str) -> int:
    return sum(1 for r in rows if subset in r.subsets())


def holdout_share(rows: Sequence[Measurement]) -> float:
    return sum(1 for r in rows if r.split == "holdout") / len(rows) if rows else 0.0


def row_quant(row: Measurement) -> str:
    """The format a row ran, as a --quant name: its format column, or that format's QAT release where the
    model's name says QAT (a Q4_0 or UD-Q4_K_XL file of a quantization-aware-trained Gemma is laid out apart:
    rigcheck.core.estimate.ud_names)."""
    return qat_variant(row.format, row.model)


def row_micro_batch(row: Measurement) -> int:
    """The tokens of one prompt micro-batch of the row, as the estimator takes them (speed/prefill.py
    prompt_ubatch): its n_ubatch (llama-bench's default 512 when unstated), fewer when its test is shorter."""
    ubatch = row.ubatch or LLAMA_CPP_UBATCH
    return max(min(ubatch, row.tokens or ubatch), 1)


def row_context(row: Measurement) -> int:
    """The context a row ran at, as estimate_accuracy.py sizes it (its test's tokens, 512 when unstated): the
    KV cache a decode token reads is the row's, not a fixed 4,096 tokens' (which made small models' reads
    look several times larger to the fit than to the estimate it is judged by).

    A decode row keeps a floor of 128 tokens; a prefill row is its prompt's length. llama.cpp runs a prompt
    shorter than its micro-batch as one micro-batch of that many tokens (the estimator's micro-batch is
    min(512, context)), and each micro-batch pays one copy of the host-resident weights the scheduler
    offloads (ggml-org/llama.cpp ggml/src/ggml-backend.cpp@0054c01, ggml_backend_sched_compute_splits), so
    an 85-token prompt spreads that copy over 85 tokens, not 128."""
    if row.metric == "prefill_tokens_per_s" and row.tokens:
        return row.tokens
    return max(row.tokens or 512, 128)
