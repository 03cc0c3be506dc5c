"""Parsing one catalog file into checked records: each problem names the file, the entry and the field."""

from __future__ import annotations

import re
import tomllib
from typing import Any

from rigcheck.core.catalog.hardware import GpuSpec, pattern_problem
from rigcheck.core.catalog.table import KINDS
from rigcheck.core.errors import InputError
from rigcheck.core.records import decode

_ID = re.compile(r"[a-z0-9][a-z0-9._+-]*")
_CC = re.compile(r"\d+\.\d+")
_GFX = re.compile(r"gfx[0-9a-f]{3,4}")
_PCI_ID = re.compile(r"[0-9a-f]{4}:[0-9a-f]{4}")


def parse_file(name: str, text: str) -> dict[str, list[Any]]:
    """Parse one catalog file into records by kind; every problem is an ``InputError`` naming it."""
    return _records(name, load_toml(name, text))


def load_toml(name: str, text: str) -> dict[str, Any]:
    """TOML text as plain data; nesting past :data:`MAX_DEPTH` or a huge number is an ``InputError``."""
    from rigcheck.core.fileio import check_depth

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(name, f"not valid TOML ({exc})") from None
    except RecursionError:
        raise InputError(name, "not valid TOML (nested too deeply)") from None
    except ValueError as exc:  # an integer of thousands of digits (sys.get_int_max_str_digits)
        raise InputError(name, f"not valid TOML ({exc})") from None
    check_depth(data, name)
    return data


def _records(name: str, data: dict[str, Any]) -> dict[str, list[Any]]:
    result: dict[str, list[Any]] = {}
    for kind, entries in data.items():
        if kind not in KINDS:
            raise InputError(name, f"unknown table [[{kind}]] (known: {', '.join(KINDS)})")
        if not isinstance(entries, list):
            raise InputError(name, f"{kind}: expected an array of tables, written [[{kind}]]")
        cls, key = KINDS[kind]
        records = []
        for position, entry in enumerate(entries, 1):
            label = _entry_label(kind, entry, position)
            try:
                record = decode(cls, entry, name, strict=True)
            except InputError as exc:
                raise InputError(name, f"{label}: {exc.problem}") from None
            problem = _check(kind, record)
            if problem:
                raise InputError(name, f"{label}: {problem}")
            records.append(record)
        seen: set[str] = set()
        for record in records:
            if key(record) in seen:
                raise InputError(name, f"{kind} {key(record)!r}: duplicate id in this file")
            seen.add(key(record))
        result[kind] = records
    return result


def _entry_label(kind: str, entry: object, position: int) -> str:
    if isinstance(entry, dict):
        for key in ("id", "version", "major", "gfx_target", "branch"):
            if key in entry:
                return f"{kind} {str(entry[key])!r}"
    return f"{kind} #{position}"


#: fields shown on one line (a GPU's name in a table row): no line breaks either
_ONE_LINE_FIELDS = frozenset({"id", "name", "match_names", "vendor", "family", "arch"})


def _text_problem(record: Any) -> str | None:
    """A control character (a line break in a name, ESC anywhere) or an absurdly long string."""
    from rigcheck.core.machine import record_strings
    from rigcheck.core.text import text_problem

    for path, text in record_strings(record):
        field_name = path.split(".", 1)[0].split("[", 1)[0]
        problem = text_problem(text, 16384, multiline=field_name not in _ONE_LINE_FIELDS)
        if problem:
            return f"{path}: {problem}"
    return None


def _check(kind: str, record: Any) -> str | None:
    """Checks beyond types: ids, formats, and what each kind must have (compat entries: a quote too)."""
    problem = _text_problem(record) or _check_format(kind, record)
    if problem is None and kind in COMPAT_KINDS:
        problem = _check_compat(kind, record)
    return problem


def _check_format(kind: str, record: Any) -> str | None:
    if hasattr(record, "id") and not _ID.fullmatch(record.id):
        return f"id: {record.id!r} is not a lower-case id (letters, digits, . _ + -)"
    if not record.source.strip():
        return "source: must name a URL or repo/path"
    if kind == "gpu":
        if record.compute_capability is not None and not _CC.fullmatch(record.compute_capability):
            return f"compute_capability: {record.compute_capability!r} is not like '8.9'"
        if record.gfx_target is not None and not _GFX.fullmatch(record.gfx_target):
            return f"gfx_target: {record.gfx_target!r} is not like 'gfx1100'"
        bad = [p for p in record.pci_ids if not _PCI_ID.fullmatch(p)]
        if bad:
            return f"pci_ids: {bad[0]!r} is not like '10de:2684'"
        unknown = sorted(set(record.field_confidence) - set(GpuSpec.__dataclass_fields__))
        if unknown:
            return f"field_confidence: {unknown[0]!r} is not a GPU field"
        return _check_prices(record)
    if kind == "model":
        return _check_config(record.config)
    for name in ("min_cc", "max_cc", "listed_max_cc", "applies_min_cc", "applies_max_cc"):
        value = getattr(record, name, None)
        if value is not None and not _CC.fullmatch(value):
            return f"{name}: {value!r} is not like '8.0'"
    if kind == "arch":
        bad = [cc for cc, cuda in record.min_cuda.items() if not (_CC.fullmatch(cc) and _CC.match(cuda))]
        if bad:
            return f"min_cuda: {bad[0]!r} = {record.min_cuda[bad[0]]!r} is not like '8.9' = '11.8'"
    if kind == "speed_factor":
        for name in ("decode_bandwidth_efficiency", "decode_compute_efficiency"):
            value = getattr(record, name)
            if not 0.0 < value <= 1.0:
                return f"{name}: {value!r} is not a share of the peak (above 0, at most 1)"
        # Prefill is measured against the catalog's FP16/BF16 tensor figure with FP32 accumulate; GeForce
        # cards run llama.cpp's int8/FP16-accumulate kernels at up to twice that (docs/catalog.md#speed).
        value = record.prefill_compute_efficiency
        if value is not None and not 0.0 < value <= 2.0:
            return f"prefill_compute_efficiency: {value!r} is not between 0 and 2 times the listed peak"
        for name in (
            "prefill_float_factor",
            "prefill_moe_factor",
            "prefill_float_moe_factor",
            "prefill_coopmat_moe_factor",
        ):
            if not 0.0 < getattr(record, name) <= 2.0:
                return f"{name}: {getattr(record, name)!r} must be above 0 and at most 2"
        if not 0.0 <= record.prefill_expert_us <= 1000.0:
            return f"prefill_expert_us: {record.prefill_expert_us!r} is not between 0 and 1000"
        if not 0.0 < record.prefill_coopmat_factor <= 16.0:
            return f"prefill_coopmat_factor: {record.prefill_coopmat_factor!r} must be above 0 and at most 16"
        if not 0.0 < record.decode_bf16_factor <= 2.0:
            return f"decode_bf16_factor: {record.decode_bf16_factor!r} must be above 0 and at most 2"
        for name in ("decode_unreordered_factor", "decode_unaligned_factor"):
            if not 0.0 < getattr(record, name) <= 2.0:
                return f"{name}: {getattr(record, name)!r} must be above 0 and at most 2"
        nodp4a = record.decode_nodp4a_efficiency
        if nodp4a is not None and not 0.0 < nodp4a <= 1.0:
            return (
                f"decode_nodp4a_efficiency: {nodp4a!r} is not a share of the FP32 peak (above 0, at most 1)"
            )
        scan = record.prefill_scan_efficiency
        if scan is not None and not 0.0 < scan <= 1.0:
            return f"prefill_scan_efficiency: {scan!r} is not a share of the FP32 peak (above 0, at most 1)"
        watt = record.prefill_tflops_per_watt
        if watt is not None and not 0.0 < watt <= 10.0:
            return f"prefill_tflops_per_watt: {watt!r} is not between 0 and 10 TFLOPS per watt"
        if not 0.0 <= record.prefill_moe_exponent <= 1.0:
            return f"prefill_moe_exponent: {record.prefill_moe_exponent!r} is not between 0 and 1"
        if record.per_layer_us < 0 or record.per_gpu_us < 0 or record.moe_layer_us < 0:
            return "per_layer_us, per_gpu_us, moe_layer_us: must not be negative"
    if kind == "maturity" and not (0.0 < record.decode_factor <= 2.0 and 0.0 < record.prefill_factor <= 2.0):
        return "decode_factor, prefill_factor: must be above 0 and at most 2"
    if kind == "cpu_platform":
        if not (0 < record.channels <= 32 and 0 < record.mt_per_s <= 20000):
            return "channels, mt_per_s: out of range (1-32 channels, at most 20000 MT/s)"
        if record.bus_bits is not None and not (16 <= record.bus_bits <= 2048 and record.bus_bits % 16 == 0):
            return "bus_bits: not a memory bus width (16-2048 bits, a multiple of 16)"
        if record.memory_class not in (None, "server", "client", "soc"):
            return f"memory_class: {record.memory_class!r} is not server, client or soc"
        for name, low, high in (
            ("cores", 1, 512),
            ("boost_mhz", 200, 7000),
            ("fp32_flops_per_cycle", 2, 128),
        ):
            value = getattr(record, name)
            if value is not None and not low <= value <= high:
                return f"{name}: {value!r} is out of range ({low}-{high})"
        for pattern in record.match:
            try:
                re.compile(pattern)
            except re.error as exc:
                return f"match: {pattern!r} is not a regular expression ({exc})"
            problem = pattern_problem(pattern)
            if problem:
                return f"match: {pattern[:80]!r}: {problem}"
    if kind == "power_factor" and not 1.0 <= record.factor <= 3.0:
        # PCIe CEM 5.0 lets a card exceed its sustained power by at most 3× (for 100 µs): docs/catalog.md#psu
        return f"factor: {record.factor!r} is not between 1.0 and 3.0"
    if kind == "gfx_override":
        for name in ("gfx_target", "runs_as"):
            if not _GFX.fullmatch(getattr(record, name)):
                return f"{name}: {getattr(record, name)!r} is not like 'gfx1030'"
        if not re.fullmatch(r"\d+\.\d+\.\d+", record.override):
            return f"override: {record.override!r} is not like '10.3.0'"
    return None


#: the compatibility tables: each entry quotes its source and names it so a reader can follow it
COMPAT_KINDS = frozenset(
    {"cuda_release", "cuda_major", "arch", "torch_release", "torch_variant", "rocm_release", "framework",
     "gfx_override", "driver_branch", "wheel"}
)  # fmt: skip
_FOLLOWABLE = re.compile(r"https?://\S+|[\w.-]+/[\w.-]+/\S+@[\w.-]+")
_INTERNAL = re.compile(r"search-index|file id", re.IGNORECASE)
_DATE = re.compile(r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])")


def _check_compat(kind: str, record: Any) -> str | None:
    """What the compatibility rules need of every entry (docs/catalog.md#compat)."""
    for text in (record.source, *record.sources):
        if _INTERNAL.search(text) or not _FOLLOWABLE.fullmatch(text.strip()):
            return f"source: {text!r} is not a URL or repo/path@commit a reader can follow"
    if not (record.quote and record.quote.strip()):
        return "quote: required, the source's own words (or table line) that support this entry"
    if len(record.quote) > 300:
        return "quote: keep it short (300 characters at most)"
    if kind == "torch_release" and not record.prerelease:
        if not (record.latest_patch and record.released and record.variants):
            return (
                "latest_patch, released, variants: required for a released series (or set prerelease = true)"
            )
        if not _DATE.fullmatch(record.released):
            return f"released: {record.released!r} is not like '2025-04-23'"
        if not record.latest_patch.startswith(record.version + ".") and record.latest_patch != record.version:
            return f"latest_patch: {record.latest_patch!r} is not a release of {record.version}"
    if (
        kind == "driver_branch"
        and record.eol is not None
        and not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", record.eol)
    ):
        return f"eol: {record.eol!r} is not like '2028-06'"
    if kind == "wheel" and not _DATE.fullmatch(record.read):
        return f"read: {record.read!r} is not like '2026-12-01' (the day the metadata was read)"
    return None


_PRICE_DATE = re.compile(r"\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?")


def _check_prices(gpu: GpuSpec) -> str | None:
    """A cloud or street price says when and where it was seen (docs/catalog.md#prices)."""
    for kind, price in (("cloud", gpu.cloud_price_usd_hour), ("street", gpu.street_price_usd)):
        date, source = getattr(gpu, f"{kind}_price_date"), getattr(gpu, f"{kind}_price_source")
        if price is not None and not (date and source and source.strip()):
            return f"{kind}_price_date, {kind}_price_source: required with a {kind} price"
        if date is not None and not _PRICE_DATE.fullmatch(date):
            return f"{kind}_price_date: {date!r} is not like '2025-06' or '2025-06-30'"
    high = gpu.street_price_high_usd
    if high is not None and (gpu.street_price_usd is None or high < gpu.street_price_usd):
        return "street_price_high_usd: needs street_price_usd (the low end) and must not be below it"
    return None


_CONFIG_INTS = ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size")


def _check_config(config: dict[str, Any]) -> str | None:
    if not isinstance(config.get("model_type"), str):
        return "config.model_type: required, a string such as 'llama'"
    for key in _CONFIG_INTS:
        value = config.get(key)
        if key == "num_hidden_layers" and value is None and isinstance(config.get("layers_block_type"), list):
            continue  # Nemotron 3 Ultra: the block list gives the layers (models/config/ counts them)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            return f"config.{key}: required, a whole number above 0"
    return None
