"""The ``rigcheck`` command: with no arguments it opens the desktop app; subcommands run headless.

Conventions every subcommand follows:

- ``--json`` writes machine-readable output to stdout;
- errors are one line on stderr, ``rigcheck: error: …``; exit status 2 for bad input or usage, 3 when
  the network (the Hugging Face hub) cannot be reached, 1 for an internal failure (and for
  ``fit --check`` when the model does not run), never a traceback unless ``--debug``;
- headless commands never import Qt (``tests/test_boundaries.py`` checks it).

The parser and ``main`` are here; the commands live by group in ``machine`` (audit, gpus, compat,
monitor), ``models`` (models, estimate, fit), ``upgrade`` and ``fleet``; ``options`` holds the parser's
shared options and value types, ``conventions`` the exit statuses and output writers.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from rigcheck.cli.conventions import EXIT_INTERNAL, EXIT_NETWORK, EXIT_OK, EXIT_USAGE, GUI_PAGES, UsageError
from rigcheck.cli.conventions import _emit_json as _emit_json  # re-exported: tests/test_hardening.py
from rigcheck.cli.fleet import _cmd_fleet
from rigcheck.cli.machine import _cmd_audit, _cmd_compat, _cmd_gpus, _cmd_monitor
from rigcheck.cli.models import _cmd_estimate, _cmd_fit, _cmd_models
from rigcheck.cli.options import (
    MONITOR_MIN_INTERVAL_S,
    SPLIT_MODES,
    WORKLOAD_HELP,
    _engine_build,
    _hub_search_arguments,
    _judging_options,
    _model_arguments,
    _models_option,
    _ModelsAction,
    _monitor_interval,
    _non_negative_int,
    _Parser,
    _positive_int,
    _positive_number,
    _positive_watts,
    _Subcommands,
    _target,
    _tensor_split,
    _VersionAction,
    _whatif_options,
    _window_size,
)
from rigcheck.cli.upgrade import _cmd_upgrade
from rigcheck.core.errors import InputError, NetworkError


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rigcheck",
        description="Will this model run on this machine, how fast, and if not, what would it take? "
        "With no command, opens the desktop app.",
    )
    parser.add_argument("--version", action=_VersionAction, help="show the version and exit")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for internal errors")
    # Errors say "run with --debug": it works after the command too (rigcheck monitor --debug). SUPPRESS
    # keeps a subcommand's default from overwriting a --debug given before the command.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks for internal errors"
    )
    commands = _Subcommands(
        parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser), common
    )

    audit = commands.add_parser(
        "audit",
        help="describe this machine (GPUs, drivers, CUDA/ROCm, CPU, RAM, disks, software)",
        description="Probe this machine, or re-read a saved snapshot, and print what it has.",
    )
    audit.add_argument(
        "--json",
        action="store_true",
        help="print the bare snapshot, what was probed and nothing judged (rigcheck.machine/1; "
        "--machine reads it back; fleet reads either)",
    )
    audit.add_argument(
        "--format",
        choices=("json", "markdown", "html"),
        help="write a report instead: the snapshot with its compatibility findings and model verdicts "
        "(json: rigcheck.report/1, which fleet reads either way; html: one self-contained page)",
    )
    _models_option(audit, "for the report's verdicts (default: about 15 popular models)")
    audit.add_argument("-o", "--output", metavar="FILE", type=_target, help="write to FILE instead of stdout")
    audit.add_argument("--psu-watts", metavar="N", type=_positive_watts, help="the power supply's rating")
    audit.add_argument(
        "--redact",
        action="store_true",
        help="drop hostname, GPU UUIDs, serials and PCI bus ids (reports: also user paths in any text)",
    )
    audit.add_argument(
        "--python",
        metavar="PATH",
        action="append",
        default=[],
        help="also list the ML packages of this Python interpreter (repeatable)",
    )
    audit.add_argument(
        "--machine", metavar="FILE", type=Path, help="read a saved snapshot instead of probing this machine"
    )
    audit.add_argument(
        "--measure",
        action="store_true",
        help="run a short multi-threaded memory copy test and record the measured host bandwidth",
    )
    audit.set_defaults(handler=_cmd_audit)

    gpus = commands.add_parser(
        "gpus", help="list the GPUs in the catalog", description="List the GPUs RigCheck knows."
    )
    gpus.add_argument("--json", action="store_true", help="print the entries as JSON")
    gpus.add_argument("--vendor", choices=("nvidia", "amd", "intel", "apple"), help="only this vendor's GPUs")
    gpus.set_defaults(handler=_cmd_gpus)

    models = commands.add_parser(
        "models", help="list the models in the catalog", description="List the models RigCheck knows."
    )
    models.add_argument("--json", action="store_true", help="print the entries as JSON")
    models.add_argument("--search", metavar="TEXT", help="only models whose id, name, family or tags match")
    _hub_search_arguments(models)
    models.set_defaults(handler=_cmd_models)

    estimate = commands.add_parser(
        "estimate",
        help="memory a model needs (weights, KV cache, activations, optimizer)",
        description="Estimate the memory MODEL needs. MODEL is a .gguf file, a config.json or model folder, "
        "a catalog id (rigcheck models) or a Hugging Face id: org/name, org/name:TAG or org/name/file.gguf "
        "for a GGUF repository (llama.cpp's -hf forms; only the file headers are read).",
    )
    _model_arguments(estimate)
    estimate.set_defaults(handler=_cmd_estimate)

    fit = commands.add_parser(
        "fit",
        help="will MODEL run on this machine (or a snapshot, or a what-if), where, and how fast",
        description="Place MODEL on this machine's GPUs and RAM, or on a saved snapshot, or on a what-if "
        "with other GPUs or RAM; print the verdict, the placement, the speed and advice.",
    )
    _model_arguments(fit)
    fit.add_argument("--machine", metavar="FILE", type=Path, help="a saved snapshot instead of this machine")
    _whatif_options(fit)
    fit.add_argument(
        "--offload",
        choices=("auto", "none", "layers", "experts", "optimizer", "params", "full"),
        default="auto",
        help="where model parts may live: layers (llama.cpp -ngl), experts (MoE routed experts in RAM, "
        "llama.cpp --n-cpu-moe), optimizer (ZeRO-Offload), params (ZeRO-3 offload of parameters too), "
        "full (MegaTrain: everything in RAM, layers streamed); auto picks the least that fits, "
        "and for inference the faster of layer and expert offload",
    )
    fit.add_argument(
        "--split",
        choices=("layer", "tensor"),
        default="layer",
        help="multi-GPU: layer split or tensor parallel",
    )
    fit.add_argument(
        "--split-mode",
        choices=tuple(SPLIT_MODES),
        help="llama.cpp --split-mode: layer (its default: layers spread over every GPU by free memory), "
        "row or tensor (each matrix split across the GPUs), none (the main GPU alone); overrides --split",
    )
    fit.add_argument(
        "--tensor-split",
        metavar="A,B,...",
        type=_tensor_split,
        help="llama.cpp -ts: each GPU's share of the layers, e.g. 3,1 (default: by free memory)",
    )
    fit.add_argument(
        "--threads",
        metavar="N",
        type=_positive_int,
        help="llama.cpp -t N: CPU threads for the layers in RAM and CPU prompt processing (default: the "
        "physical cores)",
    )
    fit.add_argument(
        "--engine-build",
        metavar="bNNNN",
        type=_engine_build,
        help="the llama.cpp build you run (its release tag, e.g. b6096; 'unknown': a current one): the "
        "speed estimate is divided by each later kernel milestone that applies (catalog/engine_builds.toml)",
    )
    fit.add_argument(
        "--power-limit",
        metavar="WATTS",
        type=_positive_number,
        help="each GPU's power limit (nvidia-smi -pl): prompt processing at a power-bound rate below it",
    )
    fit.add_argument(
        "--gpu-layers",
        metavar="N",
        type=_non_negative_int,
        help="llama.cpp -ngl N: at most N layers on the GPUs, the rest in RAM (implies --offload layers)",
    )
    fit.add_argument(
        "--n-cpu-moe",
        metavar="N",
        type=_positive_int,
        help="with --offload experts: keep the routed experts of the first N layers in RAM "
        "(llama.cpp --n-cpu-moe N; default: the fewest that let the rest fit)",
    )
    fit.add_argument(
        "--measured",
        metavar="FILE",
        type=Path,
        help="your own 'llama-bench -o json' results: where they cover this model, format and machine, "
        "the measured speed is shown beside the estimate and used",
    )
    fit.add_argument(
        "--backend",
        choices=("cuda", "rocm", "metal", "vulkan", "sycl", "cpu"),
        help="GPU backend llama.cpp runs, for its speed factors (default: the vendor's usual one)",
    )
    fit.add_argument(
        "--prefer",
        choices=("quality", "speed"),
        default="quality",
        help="without --quant: the highest-quality format that runs at a usable speed (default), or the "
        "fastest (docs/recommendation.md)",
    )
    fit.add_argument(
        "--check",
        action="store_true",
        help="for scripts: exit with status 1 when the model does not run (the answer is still printed)",
    )
    fit.set_defaults(handler=_cmd_fit)

    upgrade = commands.add_parser(
        "upgrade",
        help="what an upgrade (other or more GPUs, RAM, PSU) changes, what it costs, and what renting costs",
        description="Run models on this machine (or a snapshot) and on its upgraded copy: per model the "
        "verdict, best quantization and tokens/s before and after, the PSU budget of both, what the new "
        "GPUs cost (purchase, rent, $/TFLOP-hour, $/GB, electricity, ownership, break-even), and the "
        "cheapest catalog GPUs to buy or rent for models that still do not run on the GPUs.",
    )
    upgrade.add_argument(
        "--machine", metavar="FILE", type=Path, help="a saved snapshot instead of this machine"
    )
    _whatif_options(upgrade, what="the upgraded copy")
    upgrade.add_argument(
        "--psu-watts",
        metavar="N",
        type=_positive_watts,
        help="the PSU after the upgrade (also taken as today's when the machine records none)",
    )
    _models_option(upgrade, "to compare (default: about 15 popular models from 1B to 235B)")
    upgrade.add_argument(
        "--workload", choices=("inference", "lora", "qlora", "full"), default="inference", help=WORKLOAD_HELP
    )
    _judging_options(upgrade)
    upgrade.add_argument(
        "--context",
        metavar="N",
        type=_positive_int,
        help="tokens of context (default 8192 or the model's maximum if smaller)",
    )
    upgrade.add_argument(
        "--prefer",
        choices=("quality", "speed"),
        default="quality",
        help="how each model's format is chosen, as for 'fit' (docs/recommendation.md)",
    )
    upgrade.add_argument("--json", action="store_true", help="print the whole report as JSON")
    upgrade.set_defaults(handler=_cmd_upgrade)

    compat = commands.add_parser(
        "compat",
        help="which drivers, CUDA/ROCm, PyTorch builds and LLM frameworks work on this machine",
        description="Check the catalog's compatibility rules (driver/CUDA, PyTorch wheels, ROCm, vLLM, "
        "llama.cpp, Ollama, bf16/fp8/fp4, …) against this machine or a saved snapshot.",
    )
    compat.add_argument(
        "--machine", metavar="FILE", type=Path, help="a saved snapshot instead of this machine"
    )
    compat.add_argument(
        "--python",
        metavar="PATH",
        action="append",
        default=[],
        help="also check the ML packages of this Python interpreter, e.g. ENV/bin/python (repeatable; "
        "as for 'audit --python')",
    )
    compat.add_argument("--json", action="store_true", help='print {"findings": [...]} as JSON')
    compat.set_defaults(handler=_cmd_compat)

    monitor = commands.add_parser(
        "monitor",
        help="live GPU, CPU and RAM readings: one line per tick, or CSV/JSON Lines",
        description="Sample the GPUs (utilisation, memory, power, temperature, clocks, fan, PCIe, "
        "throttling), the CPU and the RAM every interval until --duration has passed or Ctrl-C.",
    )
    monitor.add_argument(
        "--interval",
        metavar="S",
        type=_monitor_interval,
        default=1.0,
        help=f"seconds between samples (default 1.0, at least {MONITOR_MIN_INTERVAL_S})",
    )
    monitor.add_argument(
        "--duration", metavar="S", type=_positive_number, help="stop after S seconds (default: until Ctrl-C)"
    )
    monitor.add_argument(
        "--csv", metavar="FILE", type=Path, help="also write one row per sample to FILE (stable columns)"
    )
    monitor.add_argument(
        "--force", action="store_true", help="with --csv: replace FILE if it already holds a recording"
    )
    monitor.add_argument("--json", action="store_true", help="print one JSON object per sample (JSON Lines)")
    monitor.set_defaults(handler=_cmd_monitor)

    fleet = commands.add_parser(
        "fleet",
        help="many machines' audit reports side by side: versions, drift, which nodes run a model",
        description="Read the JSON reports of many machines ('rigcheck audit --format json' on each, "
        "rigcheck.report/1, or bare 'rigcheck audit --json' snapshots, rigcheck.machine/1, judged "
        "alike; files or folders of *.json) and print one row per machine (GPUs, VRAM, driver, CUDA, "
        "ROCm, torch, failing checks), the values that differ from the fleet's most common one, and "
        "which machines run which models. Unreadable files are listed and skipped. Recipes: docs/fleet.md.",
    )
    fleet.add_argument("paths", metavar="PATH", nargs="+", type=Path, help="report files or folders")
    fleet.add_argument(
        "--format", choices=("table", "json", "html"), default="table", help="output format (default table)"
    )
    fleet.add_argument("--json", action="store_true", help="the same as --format json")
    _models_option(fleet, "to check on every machine (default: the models the reports judged)")
    fleet.add_argument(
        "--model",
        metavar="ID",
        dest="models",
        action=_ModelsAction,
        help="one catalog model id (repeatable, or comma-separated): the same as --models",
    )
    _judging_options(fleet)
    _whatif_options(fleet, what="every machine (each node then judged afresh, not by its report's verdicts)")
    fleet.add_argument(
        "--context",
        metavar="N",
        type=_positive_int,
        help="tokens of context for --models (default 8192 or the model's maximum if smaller)",
    )
    fleet.add_argument("-o", "--output", metavar="FILE", type=_target, help="write to FILE instead of stdout")
    fleet.set_defaults(handler=_cmd_fleet)

    gui = commands.add_parser("gui", help="open the desktop app (the default with no command)")
    gui.add_argument(
        "file",
        nargs="?",
        metavar="FILE",
        type=_target,  # "" is an error, not Path("") (the current folder read as a model)
        help="open FILE as a drop on the window does: a monitor recording (.csv) replays on the Monitor, "
        "a saved snapshot (.json) becomes the machine, anything else is read as a model",
    )
    gui.add_argument(
        "--machine", metavar="FILE", type=Path, help="show a saved snapshot instead of this machine"
    )
    gui.add_argument(
        "--page",
        metavar="NAME",
        help=f"start on this page: {', '.join(GUI_PAGES)}",
    )
    gui.add_argument(
        "--screenshot",
        metavar="DIR",
        type=Path,
        help="render every page (or --page) to DIR/<page>.png and exit",
    )
    gui.add_argument(
        "--size",
        metavar="WxH",
        type=_window_size,
        help="window size for --screenshot, e.g. 1024x700 (default 1280x800)",
    )
    gui.set_defaults(handler=_cmd_gui)
    return parser


def _cmd_gui(args: argparse.Namespace, out: TextIO) -> int:
    try:
        from rigcheck.gui.app import main as gui_main
    except ImportError as exc:
        missing = exc.name or "PySide6"
        raise UsageError(
            f"the desktop app needs {missing}, which is not installed (pip install PySide6-Essentials); "
            "headless commands such as 'rigcheck audit' work without it"
        ) from None
    if getattr(args, "machine", None) is not None:
        from rigcheck.core.machine import load_machine

        load_machine(args.machine)  # a bad snapshot is one line and exit 2, before any window
    opened = getattr(args, "file", None)
    if opened is not None:
        if not opened.exists():
            raise UsageError(f"{opened}: no such file or folder")
        if not (opened.is_file() or opened.is_dir()):  # a reader of a pipe or device waits or never ends
            raise UsageError(
                f"{opened}: not a file or folder RigCheck can open (a pipe, a socket or a device)"
            )
        if not os.access(opened, os.R_OK):
            raise UsageError(f"{opened}: cannot read it (permission denied)")
        from rigcheck.gui.startup import looks_like_snapshot

        if looks_like_snapshot(opened):
            from rigcheck.core.machine import load_machine

            load_machine(opened)  # as --machine: one line and exit 2, never a modal box a screenshot waits on
    try:
        return gui_main(
            [],
            machine=getattr(args, "machine", None),
            open_file=opened,
            page=getattr(args, "page", None),
            screenshot=getattr(args, "screenshot", None),
            size=getattr(args, "size", None),
            debug=bool(getattr(args, "debug", False)),
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# -- entry point ---------------------------------------------------------------------------------


def _fail(message: str, code: int) -> int:
    from rigcheck.core.text import one_line

    sys.stderr.write(f"rigcheck: error: {one_line(message)}\n")
    return code


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from rigcheck.core.text import SafeStream

    out = SafeStream(out or sys.stdout)  # untrusted strings never reach the terminal raw
    debug = "--debug" in argv
    if debug or "rigcheck.core.models.hub" in sys.modules:
        from rigcheck.core.models import hub

        # the hub library's own retry warnings, hidden otherwise; set on every call, so an earlier
        # in-process call with --debug does not leave them on for the next one
        hub.SHOW_LIBRARY_LOG = debug
    command: str | None = None
    try:
        args = build_parser().parse_args(argv)
        command = getattr(args, "command", None)
        handler = getattr(args, "handler", _cmd_gui)
        return int(handler(args, out))
    except UsageError as exc:
        return _fail(str(exc), EXIT_USAGE)
    except NetworkError as exc:
        return _fail(str(exc), EXIT_NETWORK)
    except InputError as exc:
        message = str(exc)
        if command and exc.source.startswith("--") and "see '" not in message:
            message += f" (see 'rigcheck {command} --help')"  # a flag's value: its help says what it takes
        return _fail(message, EXIT_USAGE)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (``rigcheck audit | head``): not an error worth a message.
        sys.stderr.close()
        return EXIT_OK
    except Exception as exc:
        if debug:
            raise
        return _fail(
            f"internal error: {type(exc).__name__}: {exc} (run with --debug for details)", EXIT_INTERNAL
        )
