"""The commands about this machine: ``audit`` (a snapshot or a report), ``gpus``, ``compat`` and
``monitor``."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rigcheck.cli.conventions import EXIT_OK, UsageError, _emit, _emit_json, _load_catalog, _one_line
from rigcheck.core.errors import InputError

if TYPE_CHECKING:
    from rigcheck.core.monitor import Sample


def _cmd_audit(args: argparse.Namespace, out: TextIO) -> int:
    from rigcheck.core.machine import load_machine
    from rigcheck.core.probe import probe_machine
    from rigcheck.core.report.summary import summarise

    if args.machine is not None and args.python:
        raise UsageError("--python and --machine cannot be combined: a snapshot's packages are fixed")
    _check_interpreters(args.python)
    if args.machine is not None and args.measure:
        raise UsageError(
            "--measure and --machine cannot be combined: a snapshot's memory is not here to test"
        )
    if args.format is not None:
        if args.json:
            raise UsageError(
                "--json and --format cannot be combined: --json prints the machine snapshot, "
                "--format writes a report"
            )
        return _audit_report(args, out)
    if args.models:
        raise UsageError("--models needs --format json, markdown or html: only a report lists models")
    if args.machine is not None:
        machine = load_machine(args.machine)
        if args.psu_watts is not None:
            machine = machine.with_psu(args.psu_watts)
    else:
        measure = {"measure_bandwidth": True} if args.measure else {}
        machine = probe_machine(psu_watts=args.psu_watts, pythons=tuple(args.python), **measure)
    if args.redact:
        from rigcheck.core.redact import redact_machine

        machine = redact_machine(machine, str(args.machine or "the probed machine"))
    text = machine.to_json() if args.json else summarise(machine)
    _emit(text + "\n", args.output, out)
    return EXIT_OK


def _check_interpreters(pythons: list[str]) -> None:
    """``--python`` must name an interpreter that exists: a typo would silently list no packages."""
    import os
    import shutil

    for python in pythons:
        path = Path(python)
        if path.is_dir():
            raise InputError(python, "--python: a folder; give the interpreter, e.g. ENV/bin/python")
        if not (path.is_file() and os.access(path, os.X_OK)) and shutil.which(python) is None:
            raise InputError(python, "--python: no such interpreter")


def _audit_report(args: argparse.Namespace, out: TextIO) -> int:
    """``audit --format``: a report in JSON, Markdown or HTML, written atomically to --output."""
    from rigcheck.core.estimate.upgrade import catalog_model
    from rigcheck.core.machine import load_machine
    from rigcheck.core.probe import probe_machine
    from rigcheck.core.report import report as reports

    catalog = _load_catalog()
    # Unknown ids fail here, before a probe that may take seconds.
    models = list(dict.fromkeys(catalog_model(m, catalog).id for m in args.models)) if args.models else None
    if args.machine is not None:
        machine = load_machine(args.machine)
        if args.psu_watts is not None:
            machine = machine.with_psu(args.psu_watts)
    else:
        measure = {"measure_bandwidth": True} if args.measure else {}
        machine = probe_machine(psu_watts=args.psu_watts, pythons=tuple(args.python), **measure)
    report = reports.build_report(machine, catalog, models=models)
    if args.redact:
        report = reports.redact_report(report, str(args.machine or "the probed machine"))
    render = {"json": reports.render_json, "markdown": reports.render_markdown, "html": reports.render_html}
    _emit(render[args.format](report), args.output, out)
    return EXIT_OK


def _cmd_gpus(args: argparse.Namespace, out: TextIO) -> int:
    from rigcheck.core.report.tables import gpu_table

    catalog = _load_catalog()
    gpus = [g for g in catalog.gpus if args.vendor in (None, g.vendor)]
    if args.json:
        _emit_json({"gpus": [asdict(g) for g in gpus], "problems": list(catalog.problems)}, out)
    else:
        out.write(gpu_table(gpus) + "\n")
    return EXIT_OK


def _cmd_compat(args: argparse.Namespace, out: TextIO) -> int:
    from rigcheck.core.compat import check_compat, findings_json, summarize
    from rigcheck.core.machine import load_machine
    from rigcheck.core.probe import probe_machine
    from rigcheck.core.report.compat import compat_text

    if args.machine is not None and args.python:
        raise UsageError("--python and --machine cannot be combined: a snapshot's packages are fixed")
    _check_interpreters(args.python)
    machine = load_machine(args.machine) if args.machine else probe_machine(pythons=tuple(args.python))
    catalog = _load_catalog()
    findings = check_compat(machine, catalog)
    summary = summarize(machine, catalog, findings)
    if args.json:
        _emit_json(findings_json(findings, summary), out)
    else:
        out.write(compat_text(findings, machine, summary) + "\n")
    return EXIT_OK


def _cmd_monitor(args: argparse.Namespace, out: TextIO) -> int:
    """Sample until --duration or Ctrl-C; every row written so far is flushed, so Ctrl-C loses nothing."""
    import csv
    import io

    from rigcheck.core import monitor
    from rigcheck.core.fileio import LineFile

    csv_file = LineFile(args.csv, force=args.force) if args.csv is not None else None
    row_text = io.StringIO()  # each row is formatted here, then written whole (no half row on ENOSPC)
    sampler = None
    try:
        sampler = monitor.create_sampler()
        writer: csv.DictWriter[str] | None = None
        told: set[object] = set()
        for sample in monitor.ticks(sampler, args.interval, args.duration):
            for note in sampler.notes:
                if note not in told:
                    told.add(note)
                    sys.stderr.write(f"rigcheck: note: {_one_line(f'{note.probe}: {note.message}')}\n")
            if csv_file is not None:
                if writer is None:
                    writer = csv.DictWriter(row_text, monitor.columns(sample), extrasaction="ignore")
                    writer.writeheader()
                writer.writerow({k: "" if v is None else v for k, v in monitor.row(sample).items()})
                csv_file.write(row_text.getvalue())
                row_text.seek(0)
                row_text.truncate()
            if args.json:
                out.write(json.dumps(_sample_json(sample), ensure_ascii=False, separators=(",", ":")) + "\n")
            else:
                out.write(_sample_line(sample) + "\n")
            out.flush()
    except KeyboardInterrupt:
        pass  # Ctrl-C is how a run without --duration ends
    finally:
        if sampler is not None:
            sampler.close()
        if csv_file is not None:
            csv_file.close()
    return EXIT_OK


def _sample_json(sample: Sample) -> dict[str, object]:
    data = asdict(sample)
    return {"time": data.pop("t"), **data}


def _sample_line(sample: Sample) -> str:
    """ "12:00:01  GPU0 97% 21.3/24.0 GiB 431/450 W 71°C | CPU 12% RAM 18.2/64.0 GiB"; what is not
    available is left out."""
    import time

    gib = 1024**3
    parts = [time.strftime("%H:%M:%S", time.localtime(sample.wall)) + " "]
    for gpu in sample.gpus:
        fields = [f"GPU{gpu.index}"]
        if gpu.lost:
            fields.append("lost")
        if gpu.utilization_percent is not None:
            fields.append(f"{gpu.utilization_percent:.0f}%")
        if gpu.memory_used_bytes is not None and gpu.memory_total_bytes:
            fields.append(f"{gpu.memory_used_bytes / gib:.1f}/{gpu.memory_total_bytes / gib:.1f} GiB")
        if gpu.power_watts is not None:
            limit = f"/{gpu.power_limit_watts:.0f}" if gpu.power_limit_watts else ""
            fields.append(f"{gpu.power_watts:.0f}{limit} W")
        if gpu.temperature_c is not None:
            fields.append(f"{gpu.temperature_c:.0f}°C")
        parts.append(" ".join(fields) + " |")
    system = []
    if sample.cpu_percent is not None:
        system.append(f"CPU {sample.cpu_percent:.0f}%")
    if sample.ram_used_bytes is not None and sample.ram_total_bytes:
        system.append(f"RAM {sample.ram_used_bytes / gib:.1f}/{sample.ram_total_bytes / gib:.1f} GiB")
    parts.append(" ".join(system) or "CPU/RAM n/a")
    return " ".join(parts)
