"""``upgrade``, and the what-if machine (``--gpu``, ``--add-gpu``) and judging request (``--quant``,
``--engine``, ``--batch``) that ``fit`` and ``fleet`` share with it."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

from rigcheck.cli.conventions import EXIT_OK, UsageError, _emit_json, _load_catalog

if TYPE_CHECKING:
    from rigcheck.core.catalog import Catalog, GpuSpec
    from rigcheck.core.estimate.memory import Request


def _catalog_gpus(catalog: Catalog, ids: list[str], option: str) -> list[GpuSpec]:
    specs = []
    for gpu_id in ids:
        spec = catalog.gpu(gpu_id.lower())
        if spec is None:
            close = [g.id for g in catalog.gpus if gpu_id.lower() in g.id][:4]
            hint = f"; did you mean {', '.join(close)}?" if close else "; see 'rigcheck gpus'"
            raise UsageError(f"{option}: unknown catalog GPU {gpu_id!r}{hint}")
        specs.append(spec)
    return specs


def _whatif_gpus(args: argparse.Namespace, catalog: Catalog) -> tuple[list[GpuSpec] | None, list[GpuSpec]]:
    """``--gpu`` (None: keep the machine's) and ``--add-gpu`` as catalog entries; unknown ids are usage
    errors with a did-you-mean."""
    replaced = _catalog_gpus(catalog, args.gpu, "--gpu") if args.gpu else None
    return replaced, _catalog_gpus(catalog, args.add_gpu or [], "--add-gpu")


def _judging_request(args: argparse.Namespace) -> Request | None:
    """``--quant/--engine/--batch`` of upgrade and fleet as a Request (None when none is given)."""
    from rigcheck.core.estimate.memory import Request

    if args.quant is None and args.engine is None and args.batch == 1:
        return None
    return Request(quant=args.quant, batch=args.batch, engine=args.engine or "llama.cpp")


def _cmd_upgrade(args: argparse.Namespace, out: TextIO) -> int:
    from rigcheck.core.estimate.upgrade import catalog_model, compare
    from rigcheck.core.machine import load_machine
    from rigcheck.core.probe import probe_machine
    from rigcheck.core.report.upgrade import upgrade_json, upgrade_text
    from rigcheck.core.whatif import upgrade

    catalog = _load_catalog()
    replaced, added = _whatif_gpus(args, catalog)
    models = [catalog_model(m, catalog).id for m in args.models] if args.models else None
    machine = load_machine(args.machine) if args.machine else probe_machine()
    if machine.psu.watts is None and args.psu_watts is not None:
        machine = machine.with_psu(args.psu_watts)
    after = upgrade(machine, gpus=replaced, add_gpus=added, ram_gb=args.ram_gb, psu_watts=args.psu_watts)
    report = compare(
        machine, after, catalog, models=models, workload=args.workload, context=args.context,
        prefer=args.prefer, request=_judging_request(args),
    )  # fmt: skip
    if args.json:
        _emit_json(upgrade_json(report), out)
    else:
        out.write(upgrade_text(report) + "\n")
    return EXIT_OK
