"""Reports: a Machine snapshot with its compatibility findings and model fit verdicts, as one document.

Schema id ``rigcheck.report/1``::

    {"schema": "rigcheck.report/1", "app_version": "0.1.0", "created_at": "2026-11-29T19:00:00Z",
     "machine": {…rigcheck.machine/1…}, "findings": [{…Finding…}], "fits": [{…ModelFit…}]}

:func:`build_report` makes one, :func:`report_to_dict`/:func:`report_from_dict` convert it (loading
validates like the machine snapshot: an ``InputError`` naming the source and the field), and
:func:`render_json`, :func:`render_markdown` and :func:`render_html` write it out. :func:`redact_report`
removes host names, UUIDs, serials, PCI bus ids and user paths from every string; files are written
with :func:`rigcheck.core.fileio.write_atomic`, so a crash never leaves a half-written one in place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rigcheck.core.catalog import Catalog
from rigcheck.core.compat import Finding, check_compat
from rigcheck.core.errors import InputError
from rigcheck.core.fileio import load_json, read_text_file
from rigcheck.core.machine import (
    GPU,
    MAX_STRING,
    REPORT_SCHEMA,
    Machine,
    check_machine,
    now_iso,
    record_strings,
    strings_clean,
)
from rigcheck.core.machine import SCHEMA as MACHINE_SCHEMA
from rigcheck.core.records import decode
from rigcheck.core.redact import REDACTED, known_pattern, redact_text, scrub, secrets_of  # noqa: F401
from rigcheck.core.report.summary import memory_text
from rigcheck.core.text import text_problem
from rigcheck.core.unified import unified_share
from rigcheck.core.units import fmt_bytes, fmt_watts
from rigcheck.core.verdict_words import Words, placement_words, verdict_where

#: the longest sentence a finding or fit may hold: it names a GPU, a path and a version, each up to a
#: snapshot's MAX_STRING, so a report made from any snapshot the loader takes is one fleet reads
MAX_FINDING_TEXT = 4 * MAX_STRING
#: every verdict a fit may have, best first
VERDICTS = ("fits", "fits_with_offload", "does_not_fit")
#: finding statuses with a glyph and a word
STATUS_LABEL = {"fail": "✗ fail", "warn": "⚠ warn", "unknown": "? unknown", "ok": "✓ ok"}


@dataclass(frozen=True)
class ModelFit:
    """One model on the report's machine: the recommendation (``upgrade.outcome``, ``recommend``)."""

    model_id: str
    name: str
    workload: str
    quant: str | None
    #: "fits", "fits_with_offload" or "does_not_fit"
    verdict: str
    decode_tokens_per_s: float | None
    train_tokens_per_s: float | None
    #: gpu, gpu+ram or cpu (recommend.where_of); None when it does not run (or an older report)
    where: str | None = None
    #: the command that runs it (llama.cpp for inference, TRL for training), built from the placement
    command: str | None = None
    #: bytes of weight files to download for that format
    download_bytes: int | None = None


@dataclass(frozen=True)
class Report:
    machine: Machine
    findings: tuple[Finding, ...]
    fits: tuple[ModelFit, ...]
    app_version: str
    #: ISO 8601 UTC with a ``Z``
    created_at: str


def _app_version() -> str:
    import rigcheck

    return str(rigcheck.__version__)


def build_report(
    machine: Machine, catalog: Catalog, *, models: Sequence[str] | None = None, live: bool = False
) -> Report:
    """The report of ``machine``: its findings and, for each model (catalog ids, default the popular
    ones), the recommended way to run it (:func:`rigcheck.core.estimate.recommend.recommend`).

    An unknown model id is an ``InputError`` naming it; ``live`` counts the memory free now (a probed
    machine) instead of its capacity.
    """
    from rigcheck.core.estimate.commands import commands_for
    from rigcheck.core.estimate.recommend import recommend
    from rigcheck.core.estimate.upgrade import POPULAR_MODELS, catalog_model

    ids = list(models) if models else [m for m in POPULAR_MODELS if catalog.model(m) is not None]
    infos = {info.id: info for info in (catalog_model(model_id, catalog) for model_id in ids)}
    fits = []
    for info in infos.values():
        # the one answer every surface gives (docs/recommendation.md), with its command
        rec = recommend(info, machine, "inference", catalog, live=live, rope_scaling=True)
        best = rec.best
        commands = commands_for(rec, machine, catalog, live=live)
        fits.append(
            ModelFit(
                model_id=info.id,
                name=info.name,
                workload="inference",
                quant=best.quant if best else None,
                verdict=rec.result.verdict if best else "does_not_fit",
                decode_tokens_per_s=best.result.speed.decode_tokens_per_s if best else None,
                train_tokens_per_s=None,
                where=best.where if best else None,
                command=commands.commands.get("llama.cpp") or next(iter(commands.commands.values()), None),
                download_bytes=commands.download_bytes,
            )
        )
    return Report(
        machine=machine,
        findings=check_compat(machine, catalog),
        fits=tuple(fits),
        app_version=_app_version(),
        created_at=now_iso(),
    )


# -- JSON -----------------------------------------------------------------------------------------


def report_to_dict(report: Report) -> dict[str, Any]:
    return {
        "schema": REPORT_SCHEMA,
        "app_version": report.app_version,
        "created_at": report.created_at,
        "machine": report.machine.to_dict(),
        "findings": [asdict(f) for f in report.findings],
        "fits": [asdict(f) for f in report.fits],
    }


def _string(data: Mapping[str, Any], key: str, source: str) -> str:
    if key not in data:
        raise InputError(source, f"{key}: required field missing")
    value = data[key]
    if not isinstance(value, str):
        raise InputError(source, f"{key}: expected a string, got {type(value).__name__}")
    return value


def _records(
    data: Mapping[str, Any], key: str, cls: type[Any], source: str, *, failing_only: bool = False
) -> list[Any]:
    if key not in data:
        raise InputError(source, f"{key}: required field missing")
    items = data[key]
    if not isinstance(items, list):
        raise InputError(source, f"{key}: expected a list")
    if failing_only:
        for i, item in enumerate(items):
            # (a dict's class first: isinstance against the Mapping ABC is slow, ~80 findings a report)
            if not (item.__class__ is dict or isinstance(item, Mapping)) or not isinstance(
                item.get("status"), str
            ):
                raise InputError(source, f"{key}[{i}]: expected an object with a status")
        items = [(i, item) for i, item in enumerate(items) if item["status"] == "fail"]
        return [decode(cls, item, source, where=f"{key}[{i}]") for i, item in items]
    return [decode(cls, item, source, where=f"{key}[{i}]") for i, item in enumerate(items)]


def report_from_dict(
    data: object, source: str, *, strings_checked: bool = False, failing_only: bool = False
) -> Report:
    """Validate and build a Report; anything wrong is an ``InputError`` naming ``source`` and the field.

    ``strings_checked``: the JSON text already passed :func:`rigcheck.core.text.json_strings_clean`.
    ``failing_only``: only the findings whose status is "fail" are decoded and kept (the others are
    checked to be objects with a status); a fleet counts those and needs no others."""
    if not isinstance(data, Mapping):
        raise InputError(source, "not a RigCheck report (expected a JSON object)")
    schema = data.get("schema")
    if schema != REPORT_SCHEMA:
        if schema is None:
            raise InputError(source, f'schema: missing; expected "{REPORT_SCHEMA}"')
        if schema == MACHINE_SCHEMA:
            raise InputError(
                source,
                f'schema: "{MACHINE_SCHEMA}" is a machine snapshot, not a report; expected "{REPORT_SCHEMA}" '
                "(make one with 'rigcheck audit --format json')",
            )
        raise InputError(source, f'schema: unsupported version {schema!r}; expected "{REPORT_SCHEMA}"')
    app_version = _string(data, "app_version", source)
    created_at = _string(data, "created_at", source)
    raw_machine = data.get("machine")
    if raw_machine is None:
        raise InputError(source, "machine: required field missing")
    if not isinstance(raw_machine, Mapping):
        raise InputError(source, "machine: expected an object")
    if raw_machine.get("schema") != MACHINE_SCHEMA:
        raise InputError(
            source, f'machine.schema: expected "{MACHINE_SCHEMA}", got {raw_machine.get("schema")!r}'
        )
    machine = decode(Machine, dict(raw_machine), source, where="machine")
    check_machine(machine, source, where="machine", strings_checked=strings_checked)
    findings = _records(data, "findings", Finding, source, failing_only=failing_only)
    fits = _records(data, "fits", ModelFit, source)
    texts = {"findings": findings, "fits": fits}
    clean = strings_checked or strings_clean(texts, MAX_FINDING_TEXT, multiline=True)
    for path, text in () if clean else record_strings(texts):
        problem = text_problem(text, MAX_FINDING_TEXT, multiline=True)
        if problem:
            raise InputError(source, f"{path}: {problem}")
    for i, fit in enumerate(fits):
        if fit.verdict not in VERDICTS:
            raise InputError(
                source, f"fits[{i}].verdict: expected one of {', '.join(VERDICTS)}, got {fit.verdict!r}"
            )
    return Report(machine, tuple(findings), tuple(fits), app_version, created_at)


def load_report(path: str | Path) -> Report:
    """Read and validate a report file; every problem is an ``InputError`` naming the file."""
    path = Path(path)
    return report_from_dict(load_json(read_text_file(path, "report"), str(path)), str(path))


# -- renderers ------------------------------------------------------------------------------------


def render_json(report: Report) -> str:
    return json.dumps(report_to_dict(report), indent=2, ensure_ascii=False) + "\n"


def render_markdown(report: Report) -> str:
    from rigcheck.core.report.markdown import markdown_report

    return markdown_report(report)


def render_html(report: Report) -> str:
    from rigcheck.core.report.html import html_report

    return html_report(report)


# -- redaction ------------------------------------------------------------------------------------


def redact_report(report: Report, source: str = "<redacted report>") -> Report:
    """A copy for sharing: the machine's own :meth:`~Machine.redacted` fields gone, and the host name,
    UUIDs, serials, PCI bus ids and user paths replaced wherever they appear in text (notes, findings,
    sources, kernel and OS strings; see :mod:`rigcheck.core.redact`). ``source`` names the input in
    the (unexpected) case that the redacted copy is refused."""
    known = known_pattern(secrets_of(report.machine))
    redacted = Report(
        report.machine.redacted(), report.findings, report.fits, report.app_version, report.created_at
    )
    return report_from_dict(scrub(report_to_dict(redacted), known), source)


# -- files ----------------------------------------------------------------------------------------


# -- facts the renderers share (plain text; each renderer escapes it) -----------------------------


@dataclass(frozen=True)
class MemoryUse:
    total_bytes: int | None
    #: None when the free memory is unknown
    used_bytes: int | None
    #: "1.5 GiB used of 24.0 GiB", "24.0 GiB (use unknown)", "unknown"
    words: str


def memory_use(gpu: GPU, ram_total: int | None = None) -> MemoryUse:
    """``ram_total``: the machine's RAM, for a unified GPU whose size the probe could not read: its
    platform's rule (core/unified.py), the figure the estimates use, said as a rule."""
    total, free = gpu.memory_total_bytes, gpu.memory_free_bytes
    share = unified_share(gpu, ram_total) if ram_total else None
    if share is not None and ram_total:
        how = "by rule; " if share.by_rule else ""
        words = f"{fmt_bytes(share.bytes)} of {fmt_bytes(ram_total)} unified for the GPU ({how}use unknown)"
        return MemoryUse(share.bytes, None, words)
    if total is None:
        return MemoryUse(None, None, "unknown" + (" (unified memory)" if gpu.unified_memory else ""))
    kind = " unified" if gpu.unified_memory else ""
    if free is None or free > total:
        return MemoryUse(total, None, f"{fmt_bytes(total)}{kind} (use unknown)")
    used = total - free
    return MemoryUse(total, used, f"{fmt_bytes(used)} used of {fmt_bytes(total)}{kind}")


def ram_use(machine: Machine) -> MemoryUse:
    total, free = machine.memory.total_bytes, machine.memory.available_bytes
    if free is None or free > total:
        return MemoryUse(total, None, f"{fmt_bytes(total)} (use unknown)")
    return MemoryUse(total, total - free, f"{fmt_bytes(total - free)} used of {fmt_bytes(total)}")


def gpu_facts(gpu: GPU) -> list[tuple[str, str]]:
    """The same labels for every GPU, so they line up as table columns."""
    arch = " · ".join(
        x for x in (gpu.compute_capability and f"CC {gpu.compute_capability}", gpu.gfx_target) if x
    )
    power = fmt_watts(gpu.power_limit_watts)
    if gpu.power_max_limit_watts is not None and gpu.power_max_limit_watts != gpu.power_limit_watts:
        power += f" (max {fmt_watts(gpu.power_max_limit_watts)})"
    link = f"PCIe {gpu.pcie_gen}.0 x{gpu.pcie_width}" if gpu.pcie_gen and gpu.pcie_width else "unknown"
    extras = [
        f"{gpu.nvlink_links} NVLink links" if gpu.nvlink_links else "",
        gpu.driver_model or "",
        "MIG enabled" if gpu.mig_enabled else "",
    ]
    return [
        ("Vendor", gpu.vendor),
        ("Architecture", arch or "unknown"),
        ("Power limit", power),
        ("Link", " · ".join(x for x in (link, *extras) if x)),
    ]


def machine_facts(machine: Machine) -> list[tuple[str, str]]:
    host, cpu, mem, drv, sw = machine.host, machine.cpu, machine.memory, machine.drivers, machine.software
    system = [host.os_version or host.os or "unknown OS"]
    if host.kernel:
        system.append(f"kernel {host.kernel}")
    if host.python:
        system.append(f"Python {host.python}")
    if host.container:
        system.append(f"in {host.container}")
    cores = f"{cpu.logical_cores} logical cores" + (
        f" ({cpu.physical_cores} physical)" if cpu.physical_cores else ""
    )
    cpu_text = ", ".join(x for x in (cpu.model or "unknown CPU", cores, cpu.arch) if x)
    if cpu.max_mhz:
        cpu_text += f", up to {cpu.max_mhz:.0f} MHz"
    memory = memory_text(mem)
    drivers = []
    if drv.nvidia or drv.cuda_driver:
        drivers.append(f"NVIDIA {drv.nvidia or 'unknown'} (supports CUDA {drv.cuda_driver or 'unknown'})")
    if drv.amdgpu:
        drivers.append(f"amdgpu {drv.amdgpu}")
    if drv.rocm:
        drivers.append(f"ROCm {drv.rocm}")
    toolkits = ", ".join(f"CUDA {t.version}" + (f" ({t.path})" if t.path else "") for t in sw.cuda_toolkits)
    psu = machine.psu
    return [
        ("System", ", ".join(system)),
        ("CPU", cpu_text),
        ("CPU flags", " ".join(cpu.flags) or "none of note"),
        ("Memory", memory),
        ("Drivers", "; ".join(drivers) or "no GPU driver found"),
        ("CUDA toolkits", toolkits or "none found"),
        ("Python packages", ", ".join(f"{k} {v}" for k, v in sw.python_packages.items()) or "none of note"),
        (
            "Tools",
            ", ".join(f"{k} {v.version or '(version unknown)'} ({v.path})" for k, v in sw.executables.items())
            or "none on PATH",
        ),
        ("PSU", f"{fmt_watts(psu.watts)} ({psu.source})" if psu.watts else "not entered"),
    ]


def words_of(fit: ModelFit) -> Words:
    """The shared placement vocabulary (:mod:`rigcheck.core.verdict_words`) for one model's verdict; a
    report written before ``where`` existed keeps its verdict."""
    training = fit.workload != "inference"
    tps = fit.train_tokens_per_s if training else fit.decode_tokens_per_s
    return placement_words(verdict_where(fit.verdict, fit.where), tps, workload=fit.workload)


def fit_label(fit: ModelFit) -> str:
    """Where it runs in a glyph and words: "✓ runs on the GPU", "◔ runs, too slow to chat (on the CPU)"."""
    return words_of(fit).label


def model_speed(fit: ModelFit) -> str:
    """ "~19 tokens/s", "~1,400 tokens/s training", "speed unknown: …"; "—" when it does not run."""
    return words_of(fit).speed or "—"


def scope_of(machine: Machine, gpu_index: int | None) -> str:
    """ "machine", or "GPU 0 · NVIDIA GeForce RTX 4090" for a finding about one GPU."""
    if gpu_index is None:
        return "machine"
    for pos, gpu in enumerate(machine.gpus):
        if (gpu.index if gpu.index is not None else pos) == gpu_index:
            return f"GPU {gpu_index} · {gpu.name}"
    return f"GPU {gpu_index}"
