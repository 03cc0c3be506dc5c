"""``fleet``: many machines' reports or snapshots read together, one table of what runs where."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import TextIO

from rigcheck.cli.conventions import EXIT_OK, _emit, _load_catalog, _one_line
from rigcheck.cli.upgrade import _judging_request, _whatif_gpus
from rigcheck.core.errors import InputError


def _cmd_fleet(args: argparse.Namespace, out: TextIO) -> int:
    from rigcheck.core.report.fleet import paused_gc

    with paused_gc():  # thousands of reports' records: no full collection walking them all, again and again
        return _fleet(args, out)


def _fleet(args: argparse.Namespace, out: TextIO) -> int:
    from rigcheck.core.report.fleet import (
        ModelColumn,
        load_fleet,
        render_fleet_html,
        render_fleet_json,
        render_table,
    )

    model_ids = args.models or []
    catalog = _load_catalog()
    fleet = load_fleet(args.paths, catalog)
    for problem in fleet.problems:
        sys.stderr.write(f"rigcheck: warning: skipped {_one_line(problem)}\n")
    if not fleet.nodes:
        where = ", ".join(str(p) for p in args.paths)
        raise InputError(where, f"no readable reports ({fleet.files} files, all skipped)")
    replaced, added = _whatif_gpus(args, catalog)
    if replaced is not None or added or args.ram_gb is not None:
        from rigcheck.core.whatif import upgrade

        # the reports' verdicts are the real machines': a what-if node is judged as a bare snapshot
        nodes = tuple(
            replace(
                n, machine=upgrade(n.machine, gpus=replaced, add_gpus=added, ram_gb=args.ram_gb), report=None
            )
            for n in fleet.nodes
        )
        fleet = replace(fleet, nodes=nodes)
    columns: tuple[ModelColumn, ...] = (
        fleet.matrix(
            model_ids, catalog, quant=args.quant, context=args.context, request=_judging_request(args)
        )
        if model_ids
        else fleet.report_matrix(catalog)
    )
    form = "json" if args.json else args.format
    if form == "json":
        text = render_fleet_json(fleet, model_rows=columns) + "\n"
    elif form == "html":
        text = render_fleet_html(fleet, model_rows=columns)
    else:
        text = render_table(fleet, model_rows=columns) + "\n"
    _emit(text, args.output, out)
    return EXIT_OK
