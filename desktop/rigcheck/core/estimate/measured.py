"""Measured beats estimated: the user's own ``llama-bench -o json`` results, where they cover the question.

llama-bench writes one JSON object per test (tools/llama-bench/llama-bench.cpp ``test::get_fields``):
``model_type`` ("llama 8B Q4_K - Medium"), ``model_n_params``, ``gpu_info``, ``backends``,
``n_gpu_layers``, ``n_cpu_moe`` (newer builds), ``n_prompt``/``n_gen`` (a ``pp512`` test has
``n_prompt`` 512 and ``n_gen`` 0; ``tg128`` the reverse) and ``avg_ts``, tokens per second.

A row covers a fit when it is the same model (parameter count within 2%), the same weight format
(llama.cpp's file-type name, e.g. "Q4_K - Medium" for Q4_K_M), the same GPUs (``gpu_info`` names the
GPUs the fit uses, or the run was CPU-only and so is the fit) and the same offload (everything on the
GPUs, layers, or experts with the same N). Where one does, its number is shown beside the estimate and
used as the answer.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rigcheck.core.errors import InputError
from rigcheck.core.estimate.fit import FitResult
from rigcheck.core.machine import Machine
from rigcheck.core.untrusted import finite_quantity

#: a llama-bench JSON file is a few kB per test; anything this large is not one
MAX_BYTES = 16 * 1024**2
#: model_type, gpu_info and backends are short names ("llama 8B Q4_K - Medium", "NVIDIA RTX 4090")
_MAX_TEXT = 1024
#: llama_model_ftype_name (src/llama-model-loader.cpp) -> our quant id
_FTYPES = {
    "all f32": "fp32",
    "f16": "fp16",
    "bf16": "bf16",
    "q4_0": "q4_0",
    "q4_1": "q4_1",
    "q5_0": "q5_0",
    "q5_1": "q5_1",
    "q8_0": "q8_0",
    "q2_k - medium": "q2_k-mix",
    "q3_k - small": "q3_k_s",
    "q3_k - medium": "q3_k_m",
    "q3_k - large": "q3_k_l",
    "q4_k - small": "q4_k_s",
    "q4_k - medium": "q4_k_m",
    "q5_k - small": "q5_k_s",
    "q5_k - medium": "q5_k_m",
    "q6_k": "q6_k-mix",
    "iq2_xxs - 2.0625 bpw": "iq2_xxs",
    "iq2_xs - 2.3125 bpw": "iq2_xs",
    "iq2_s - 2.5 bpw": "iq2_s",
    "iq3_xxs - 3.0625 bpw": "iq3_xxs",
    "iq3_s - 3.4375 bpw": "iq3_s",
    "iq4_nl - 4.5 bpw": "iq4_nl",
    "iq4_xs - 4.25 bpw": "iq4_xs",
    "iq1_s - 1.5625 bpw": "iq1_s",
    "iq1_m - 1.75 bpw": "iq1_m",
    "mxfp4 moe": "mxfp4",
}
_NAME_PREFIXES = ("nvidia ", "amd ", "apple ", "intel(r) ", "intel ")


@dataclass(frozen=True)
class BenchRow:
    model_type: str
    n_params: int
    quant_id: str | None
    gpu_info: str
    backends: str
    n_gpu_layers: int
    n_cpu_moe: int
    n_prompt: int
    n_gen: int
    n_depth: int
    tokens_per_s: float


def _name_key(name: str) -> str:
    key = " ".join(name.lower().split())
    for prefix in _NAME_PREFIXES:
        key = key.removeprefix(prefix)
    return key


def _int(row: dict[str, Any], key: str, default: int = 0) -> int:
    value = row.get(key, default)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _text(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    return value[:_MAX_TEXT] if isinstance(value, str) else ""


def load_llama_bench(path: str | Path) -> tuple[BenchRow, ...]:
    """The test rows of a ``llama-bench -o json`` file; every problem is an ``InputError`` naming it."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise InputError(str(path), "no such file") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read ({exc.strerror or exc})") from None
    if size > MAX_BYTES:
        raise InputError(str(path), f"too large for llama-bench output ({size:,} bytes)")
    from rigcheck.core.fileio import read_text_file
    from rigcheck.core.untrusted import parse_json

    text = read_text_file(path, "llama-bench", MAX_BYTES)
    try:
        data = parse_json(text, str(path), limit=4 * MAX_BYTES, what="the file")
    except InputError as error:  # too deep, 5000 digits, 1e400, NaN: one line, never an internal error
        raise InputError(str(path), f"not llama-bench JSON: {error.problem}; use -o json") from None
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise InputError(str(path), "not llama-bench JSON: expected a list of test results")
    rows = []
    for position, raw in enumerate(data, 1):
        if not isinstance(raw, dict):
            raise InputError(str(path), f"test {position}: not an object")
        speed = finite_quantity(raw.get("avg_ts"))
        model_type = raw.get("model_type")
        if speed is None or not isinstance(model_type, str):
            raise InputError(
                str(path), f"test {position}: needs avg_ts (a number, 0 or more) and model_type (text)"
            )
        if len(model_type) > _MAX_TEXT:
            raise InputError(str(path), f"test {position}: model_type is {len(model_type):,} characters long")
        ftype = re.sub(r"^\S+ \S+ ", "", model_type).strip().lower()  # "llama 8B Q4_K - Medium" -> the type
        rows.append(
            BenchRow(
                model_type=model_type,
                n_params=_int(raw, "model_n_params"),
                quant_id=_FTYPES.get(ftype),
                gpu_info=_text(raw, "gpu_info"),
                backends=_text(raw, "backends"),
                n_gpu_layers=_int(raw, "n_gpu_layers", 99),
                n_cpu_moe=_int(raw, "n_cpu_moe"),
                n_prompt=_int(raw, "n_prompt"),
                n_gen=_int(raw, "n_gen"),
                n_depth=_int(raw, "n_depth"),
                tokens_per_s=speed,
            )
        )
    if not rows:
        raise InputError(str(path), "no test results in it")
    return tuple(rows)


def covers(row: BenchRow, result: FitResult, machine: Machine) -> bool:
    """Whether ``row`` measured what ``result`` estimates: model, format, devices and offload."""
    est, placement = result.estimate, result.placement
    arch = est.model.arch
    if not row.n_params or abs(row.n_params - arch.params_total) > 0.02 * arch.params_total:
        return False
    asked = (
        est.quant.id if est.quant is not None else (est.model.weights.quant_id if est.model.weights else None)
    )
    if row.quant_id is None or row.quant_id != asked:
        return False
    used = [g for g, b in zip(machine.gpus, placement.gpu_bytes, strict=False) if b > 0]
    cpu_run = row.n_gpu_layers == 0 or not row.gpu_info.strip() or row.backends.strip().lower() == "cpu"
    if not used:
        return cpu_run
    if cpu_run:
        return False
    listed = [_name_key(part) for part in row.gpu_info.split(",") if part.strip()]
    if sorted(listed) != sorted(_name_key(g.name) for g in used):
        return False
    if placement.offload == "experts":
        return row.n_cpu_moe == placement.cpu_expert_layers
    if placement.offload == "layers":
        return row.n_cpu_moe == 0 and row.n_gpu_layers == placement.gpu_layers
    return row.n_cpu_moe == 0 and (row.n_gpu_layers < 0 or row.n_gpu_layers >= placement.total_layers)


def apply_measured(result: FitResult, rows: tuple[BenchRow, ...], machine: Machine, source: str) -> FitResult:
    """``result`` with measured decode/prefill speeds used where ``rows`` cover it, estimates kept beside."""
    if result.verdict == "does_not_fit" or result.estimate.workload != "inference":
        return result
    matching = [r for r in rows if covers(r, result, machine)]
    shallow = [r for r in matching if r.n_depth == 0] or matching
    decode = [r.tokens_per_s for r in shallow if r.n_gen > 0 and r.n_prompt == 0]
    prefill = [r.tokens_per_s for r in shallow if r.n_prompt > 0 and r.n_gen == 0]
    if not decode and not prefill:
        return replace(
            result,
            reasons_said=(
                *result.reasons_said,
                f"{source}: no llama-bench test there covers this model, format and machine",
            ),
        )
    s = result.speed
    measured_decode = statistics.median(decode) if decode else None
    measured_prefill = statistics.median(prefill) if prefill else None
    lines = []
    if measured_decode is not None:
        estimate = f"{s.decode_tokens_per_s:.1f}" if s.decode_tokens_per_s else "none"
        lines.append(f"decode measured {measured_decode:.1f} tokens/s (estimate {estimate}), {source}")
    if measured_prefill is not None:
        estimate = f"{s.prefill_tokens_per_s:,.0f}" if s.prefill_tokens_per_s else "none"
        lines.append(f"prefill measured {measured_prefill:,.0f} tokens/s (estimate {estimate}), {source}")
    speed = replace(
        s,
        decode_tokens_per_s=measured_decode if measured_decode is not None else s.decode_tokens_per_s,
        prefill_tokens_per_s=measured_prefill if measured_prefill is not None else s.prefill_tokens_per_s,
        estimated_decode_tokens_per_s=s.decode_tokens_per_s,
        estimated_prefill_tokens_per_s=s.prefill_tokens_per_s,
        measured_from=source,
        explanation_said=(*lines, *s.explanation_said),
    )
    return replace(result, speed=speed)
