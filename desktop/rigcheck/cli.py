"""The ``rigcheck`` command: with no arguments it opens the desktop app; subcommands run headless.

Conventions every subcommand follows:

- ``--json`` writes machine-readable output to stdout;
- errors are one line on stderr, ``rigcheck: error: …``; exit status 2 for bad input or usage, 3 when
  the network (the Hugging Face hub) cannot be reached, 1 for an internal failure (and for
  ``fit --check`` when the model does not run), never a traceback unless ``--debug``;
- headless commands never import Qt (``tests/test_boundaries.py`` checks it).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

from rigcheck.core.errors import InputError, NetworkError

if TYPE_CHECKING:
    from rigcheck.core.catalog import Catalog, GpuSpec
    from rigcheck.core.estimate.memory import Request
    from rigcheck.core.estimate.placement.types import Split
    from rigcheck.core.monitor import Sample

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_NETWORK = 0, 1, 2, 3
#: ``fit --check``: the model does not run here (the same status as an internal failure: "not ok")
EXIT_DOES_NOT_RUN = 1
#: The desktop app's pages, in order (rigcheck.gui.main_window's table; listed here so that --help does
#: not import Qt; tests/gui/test_smoke.py checks the two agree).
GUI_PAGES = ("overview", "models", "fit", "compat", "monitor", "upgrade", "fleet")


class UsageError(Exception):
    """Bad usage, or a command that cannot run here: reported as one line with exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line instead of usage text plus a line, pointing to
    the help of the subcommand they belong to."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")

    def parse_args(self, args: Sequence[str] | None = None, namespace: object = None) -> argparse.Namespace:  # type: ignore[override]
        parsed, extra = self.parse_known_args(args, namespace)  # type: ignore[arg-type]
        if extra:
            command = getattr(parsed, "command", None)
            prog = f"{self.prog} {command}" if command else self.prog
            raise UsageError(f"unrecognized arguments: {' '.join(extra)} (see '{prog} --help')")
        return parsed


class _ModelsAction(argparse.Action):
    """``--models a b`` and ``--models a,b`` alike (and repeated): the ids in order, each once."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option: object = None,
    ) -> None:
        given = [values] if isinstance(values, str) else list(values or ())  # type: ignore[call-overload]
        ids = list(getattr(namespace, self.dest, None) or [])
        for item in given:
            ids += [m.strip() for m in str(item).split(",") if m.strip()]
        setattr(namespace, self.dest, list(dict.fromkeys(ids)))


def _models_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--models",
        metavar="ID",
        nargs="+",
        action=_ModelsAction,
        help=f"catalog model ids {what}, space- or comma-separated (see 'rigcheck models')",
    )


WORKLOAD_HELP = (
    "what to do with the model: inference (default), lora or qlora fine-tuning, or full fine-tuning"
)


def _whatif_options(parser: argparse.ArgumentParser, *, what: str = "the machine") -> None:
    """``--gpu``, ``--add-gpu``, ``--ram-gb``: the same what-if on every command that judges a model."""
    parser.add_argument(
        "--gpu",
        metavar="CATALOG_ID",
        action="append",
        help=f"replace the GPUs of {what} with these (repeatable; see 'rigcheck gpus')",
    )
    parser.add_argument(
        "--add-gpu",
        metavar="CATALOG_ID",
        action="append",
        help="add this GPU to the (possibly replaced) ones (repeatable; mixed models allowed)",
    )
    parser.add_argument(
        "--ram-gb",
        metavar="GIB",
        type=_ram_gib,
        help=f"set the RAM of {what} to this many GiB (binary gigabytes, as the probe reports)",
    )


class _VersionAction(argparse.Action):
    """``--version``, looking the version up only when asked (importlib.metadata is slow to import)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help=str(kwargs.get("help")))

    def __call__(self, parser: argparse.ArgumentParser, *_args: object, **_kwargs: object) -> None:
        import rigcheck

        sys.stdout.write(f"rigcheck {rigcheck.__version__}\n")
        parser.exit()


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1 or value > 10**8:
        raise argparse.ArgumentTypeError(f"must be between 1 and 100000000, got {text}")
    return value


def _context_arg(text: str) -> int | str:
    return "max" if text.strip().lower() == "max" else _positive_int(text)


def _positive_number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value < 10**7:
        raise argparse.ArgumentTypeError(f"must be above 0, got {text}")
    return value


ENGINE_CHOICES = (
    "llama.cpp", "vllm", "transformers", "ktransformers", "ollama", "sglang", "mlx", "exllamav3",
)  # fmt: skip


def _model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "model",
        metavar="MODEL",
        help="a .gguf file, config.json, model folder, catalog id, or a Hugging Face id: org/name, "
        "org/name:TAG (a GGUF repo, as llama.cpp -hf) or org/name/file.gguf (headers only)",
    )
    parser.add_argument(
        "--quant",
        metavar="Q",
        help="weight format: bf16, fp8, int8, nf4, gptq-4bit, awq-4bit, mxfp4, Q4_K_M, … "
        "(default: the format the model is released in, e.g. MXFP4 for gpt-oss)",
    )
    parser.add_argument(
        "--context",
        metavar="N",
        type=_context_arg,
        help="tokens of context (default 8192 or the model's maximum if smaller); "
        "fit --workload lora/qlora/full: 'max' solves for the longest that trains on this machine",
    )
    parser.add_argument(
        "--batch", metavar="N", type=_positive_int, default=1, help="concurrent sequences (default 1)"
    )
    parser.add_argument(
        "--kv-cache-type",
        metavar="T",
        default="f16",
        help="KV cache element type: f16, bf16, fp8, q8_0, q4_0",
    )
    parser.add_argument(
        "--workload", choices=("inference", "lora", "qlora", "full"), default="inference", help=WORKLOAD_HELP
    )
    _training_flags(parser)
    parser.add_argument(
        "--engine",
        choices=ENGINE_CHOICES,
        default="llama.cpp",
        help="inference engine whose overheads to use (ktransformers: mixture-of-experts models on a GPU, "
        "their routed experts in RAM on the CPU; ollama: llama.cpp's with Ollama's default context and "
        "its one-GPU-first placement; mlx: mlx-lm on Apple silicon; exllamav3: EXL3 on NVIDIA CUDA)",
    )
    parser.add_argument(
        "--speculative",
        choices=("mtp",),
        help="mtp: speculative decoding with the model's own MTP layers as the draft (vLLM, SGLang, "
        "llama.cpp), whose weights are then loaded; off by default",
    )
    parser.add_argument(
        "--rope-scaling",
        action="store_true",
        help="allow a --context beyond the model's trained maximum (you run it with RoPE scaling)",
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def _training_flags(parser: argparse.ArgumentParser) -> None:
    """How a --workload lora/qlora/full run trains; any of them without --framework means transformers."""
    from rigcheck.core.estimate.training_profiles import FRAMEWORKS, OPTIMIZERS

    train = parser.add_argument_group("training (with --workload lora, qlora or full)")
    train.add_argument(
        "--framework",
        choices=FRAMEWORKS,
        help="the training stack, with its own defaults for the options below "
        "(default: transformers, i.e. TRL + PEFT, the usual stack for lora, qlora and full)",
    )
    train.add_argument("--optimizer", choices=tuple(OPTIMIZERS), help="optimizer (default: the framework's)")
    train.add_argument(
        "--lora-rank", metavar="R", type=_positive_int, help="LoRA rank (default: the framework's)"
    )
    train.add_argument(
        "--lora-alpha",
        metavar="A",
        type=_positive_int,
        help="LoRA alpha (no memory; in the answer and its command)",
    )
    train.add_argument(
        "--lora-targets",
        metavar="T",
        help="all, attention, mlp, or projections such as q,v or q,k,v,o,gate,up,down "
        "(default: the framework's)",
    )
    train.add_argument(
        "--checkpointing",
        choices=("none", "selective", "full", "offloaded"),
        help="activation checkpointing: none keeps every activation, selective recomputes attention's "
        "scores, full keeps each layer's input, offloaded moves those inputs to RAM "
        "(default: the framework's)",
    )
    train.add_argument(
        "--precision",
        choices=("bf16", "fp16", "fp32"),
        default="bf16",
        help="weight and gradient precision of the training run (default bf16)",
    )
    train.add_argument(
        "--gpus",
        metavar="N",
        type=_positive_int,
        default=None,
        help="data-parallel GPUs the model states are sharded over (FSDP / ZeRO-3); default: fit takes the "
        "machine's GPUs for frameworks that shard by default (litgpt, torchtune), else 1",
    )
    train.add_argument(
        "--grad-accum",
        metavar="N",
        type=_positive_int,
        default=1,
        help="micro-batches per optimizer step (gradient accumulation; default 1)",
    )


def _judging_options(parser: argparse.ArgumentParser) -> None:
    """``--quant``, ``--engine``, ``--batch`` for the commands that judge many models (as 'fit' has)."""
    parser.add_argument(
        "--quant",
        metavar="Q",
        help="weight format for every model: Q4_K_M, Q8_0, bf16, fp8, … (default: the recommended format "
        "on each machine, as 'fit' gives)",
    )
    parser.add_argument(
        "--engine",
        choices=ENGINE_CHOICES,
        help="inference engine whose overheads to use (default llama.cpp; training uses its own)",
    )
    parser.add_argument(
        "--batch", metavar="N", type=_positive_int, default=1, help="concurrent sequences (default 1)"
    )


def _positive_watts(text: str) -> float:
    from rigcheck.core.machine import BOUNDS

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of watts: {text!r}") from None
    low, high = BOUNDS["psu.watts"]
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"PSU watts must be between {low:g} and {high:g}, got {text}")
    return value


class _Subcommands:
    """``add_parser`` with the options every subcommand shares (``--debug``)."""

    def __init__(self, actions: argparse._SubParsersAction[_Parser], common: argparse.ArgumentParser) -> None:
        self._actions, self._common = actions, common

    def add_parser(self, name: str, **kwargs: object) -> _Parser:
        return self._actions.add_parser(name, parents=[self._common], **kwargs)  # type: ignore[arg-type]


#: llama.cpp --split-mode values and the estimator's split (docs/multi-gpu.md: row is the older, deprecated
#: form of tensor; both split every matrix across the GPUs)
SPLIT_MODES: dict[str, Split] = {"layer": "layer", "row": "tensor", "tensor": "tensor", "none": "none"}


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text!r}")
    return value


def _tensor_split(text: str) -> tuple[float, ...]:
    """``3,1``: one non-negative share per GPU, not all zero (llama.cpp -ts)."""
    try:
        shares = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not comma-separated numbers: {text!r}") from None
    if any(not math.isfinite(s) or s < 0 for s in shares) or not any(shares):
        raise argparse.ArgumentTypeError(f"shares must be 0 or more and not all 0: {text!r}")
    return shares


def _ram_gib(text: str) -> float:
    from rigcheck.core.machine import BOUNDS, GIB

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of GiB: {text!r}") from None
    low, high = (b / GIB for b in BOUNDS["memory.total_bytes"])
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"RAM must be between {low:g} and {high:g} GiB, got {text}")
    return value


def _target(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty file name")
    return Path(text)


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


# -- commands ------------------------------------------------------------------------------------


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


def _load_catalog() -> Catalog:
    from rigcheck.core.catalog import load_catalog

    catalog = load_catalog()
    for problem in catalog.problems:
        sys.stderr.write(f"rigcheck: warning: {_one_line(problem)}\n")
    return catalog


def _cmd_gpus(args: argparse.Namespace, out: TextIO) -> int:
    from rigcheck.core.report.tables import gpu_table

    catalog = _load_catalog()
    gpus = [g for g in catalog.gpus if args.vendor in (None, g.vendor)]
    if args.json:
        _emit_json({"gpus": [asdict(g) for g in gpus], "problems": list(catalog.problems)}, out)
    else:
        out.write(gpu_table(gpus) + "\n")
    return EXIT_OK


def _hub_search_arguments(parser: argparse.ArgumentParser) -> None:
    """``models --hub QUERY``: the Hugging Face hub as a live catalog, each result with its fit here."""
    hub = parser.add_argument_group("the Hugging Face hub (online)")
    hub.add_argument(
        "--hub", metavar="QUERY", help="search the hub instead; each result is answered with its fit"
    )
    hub.add_argument("--sort", choices=("trending", "downloads"), default="trending", help="hub result order")
    hub.add_argument("--format", dest="hub_format", choices=("any", "gguf", "mlx"), default="any",
                     help="text-generation models (any), or GGUF / MLX repositories only")  # fmt: skip
    hub.add_argument("--limit", type=int, default=10, metavar="N", help="hub results to answer (default 10)")
    hub.add_argument("--machine", dest="hub_machine", metavar="FILE", type=Path,
                     help="answer for a saved snapshot instead of this machine")  # fmt: skip


def _cmd_models_hub(args: argparse.Namespace, out: TextIO) -> int:
    from rigcheck.core.machine import load_machine
    from rigcheck.core.models.hub_search import answer_hits, search_hub
    from rigcheck.core.probe import probe_machine
    from rigcheck.core.report.hub_search import hub_table

    if args.limit < 1:
        raise UsageError("--limit: expected a positive number")
    catalog = _load_catalog()
    hits = search_hub(args.hub, sort=args.sort, kind=args.hub_format, limit=args.limit)
    machine = load_machine(args.hub_machine) if args.hub_machine else probe_machine()

    def progress(message: str) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\r\033[K{_one_line(message)[:100]}")
            sys.stderr.flush()

    answers = list(answer_hits(hits, machine, catalog, progress=progress))
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
    if args.json:
        rows = [
            asdict(a.hit)
            | {
                "quant": a.quant,
                "where": a.where,
                "decode_tokens_per_s": a.decode_tokens_per_s,
                "problem": a.problem,
            }
            for a in answers
        ]
        _emit_json({"hub": rows, "sort": args.sort, "query": args.hub}, out)
    else:
        out.write(hub_table(answers, sort=args.sort, query=args.hub) + "\n")
    return EXIT_OK


def _cmd_models(args: argparse.Namespace, out: TextIO) -> int:
    from rigcheck.core.report.tables import model_table

    if getattr(args, "hub", None) is not None:
        return _cmd_models_hub(args, out)
    catalog = _load_catalog()
    models = catalog.search_models(args.search) if args.search else catalog.models
    if args.json:
        _emit_json({"models": [asdict(m) for m in models], "problems": list(catalog.problems)}, out)
    else:
        out.write(model_table(models) + "\n")
    return EXIT_OK


def _request(args: argparse.Namespace) -> Request:
    from rigcheck.core.estimate.memory import Request
    from rigcheck.core.estimate.training_profiles import parse_targets

    chosen = (args.optimizer, args.lora_rank, args.lora_targets, args.checkpointing, args.lora_alpha)
    framework = args.framework or ("transformers" if any(v is not None for v in chosen) else None)
    if args.precision != "bf16" and framework is None:
        framework = "transformers"
    return Request(
        quant=args.quant,
        context=args.context,
        batch=args.batch,
        kv_type=args.kv_cache_type,
        workload=args.workload,
        engine=args.engine,
        framework=framework if args.workload != "inference" else None,
        optimizer=args.optimizer,
        precision=args.precision,
        lora_rank=args.lora_rank,
        lora_targets=parse_targets(args.lora_targets) if args.lora_targets else None,
        checkpointing=args.checkpointing,
        lora_alpha=args.lora_alpha,
        gpus=getattr(args, "gpus", None) or 1,
        grad_accumulation=getattr(args, "grad_accum", 1),
        speculative=getattr(args, "speculative", None),
    )


def _cmd_estimate(args: argparse.Namespace, out: TextIO) -> int:
    from rigcheck.core.estimate.memory import estimate_memory
    from rigcheck.core.estimate.recommend import check_context
    from rigcheck.core.models.resolve import resolve_model
    from rigcheck.core.report.estimate import estimate_json, estimate_text

    catalog = _load_catalog()
    model = resolve_model(args.model, catalog)
    if args.context == "max":
        raise UsageError(
            "--context max solves a training run on a machine: use 'rigcheck fit --workload ...'"
        )
    check_context(model, args.context, rope_scaling=args.rope_scaling)
    est = estimate_memory(model, _request(args), catalog)
    if args.json:
        _emit_json(estimate_json(est), out)
    else:
        out.write(estimate_text(est) + "\n")
    return EXIT_OK


def _cmd_fit(args: argparse.Namespace, out: TextIO) -> int:
    from rigcheck.core.estimate.commands import commands_for
    from rigcheck.core.estimate.fit import fit
    from rigcheck.core.estimate.recommend import Rung, check_context, display_quant, recommend, where_of
    from rigcheck.core.machine import load_machine
    from rigcheck.core.models.resolve import resolve_model
    from rigcheck.core.probe import probe_machine
    from rigcheck.core.report.estimate import fit_text
    from rigcheck.core.report.recommend import recommendation_json, recommendation_text
    from rigcheck.core.whatif import upgrade

    catalog = _load_catalog()
    replaced, added = _whatif_gpus(args, catalog)
    model = resolve_model(args.model, catalog)
    whatif = replaced is not None or bool(added) or args.ram_gb is not None
    live = args.machine is None and not whatif
    machine = load_machine(args.machine) if args.machine else probe_machine()
    if whatif:
        machine = upgrade(machine, gpus=replaced, add_gpus=added, ram_gb=args.ram_gb)
    if args.power_limit is not None:
        limited = tuple(replace(g, power_limit_watts=args.power_limit) for g in machine.gpus)
        machine = replace(machine, gpus=limited)
    solve = args.context == "max"
    if solve:
        if args.workload == "inference":
            raise UsageError("--context max is for --workload lora, qlora or full")
        args.context = None
    req = replace(_request(args), backend=args.backend, threads=args.threads)
    if req.workload != "inference" and getattr(args, "gpus", None) is None:
        from rigcheck.core.estimate.training_profiles import default_framework, default_gpus

        framework = req.framework or default_framework(req.workload)
        req = replace(req, gpus=default_gpus(framework, len(machine.gpus)))
    if solve:  # the longest context whose training step fits this machine's GPU, this framework's way
        from rigcheck.core.estimate.solvers import max_context

        args.context = max_context(model, machine, req, catalog, live=live) or 512
        req = replace(req, context=args.context)
    if args.n_cpu_moe is not None and args.offload != "experts":
        raise UsageError("--n-cpu-moe needs --offload experts")
    split: Split = SPLIT_MODES[args.split_mode] if args.split_mode else args.split
    offload = args.offload
    if args.gpu_layers is not None:
        if offload not in ("auto", "layers"):
            raise UsageError("--gpu-layers needs --offload layers (or auto)")
        offload = "layers"
    check_context(model, args.context, rope_scaling=args.rope_scaling)
    rec = recommend(
        model, machine, req.workload, catalog, context=args.context, engine=req.engine, prefer=args.prefer,
        live=live, request=req, rope_scaling=True, split=split,
    )  # fmt: skip
    pinned = None
    if args.quant or offload != "auto" or args.tensor_split:
        pinned = fit(
            model, machine, req, catalog, offload=offload, live=live, split=split,
            cpu_expert_layers=args.n_cpu_moe, gpu_layers=args.gpu_layers, tensor_split=args.tensor_split,
        )  # fmt: skip
        result = pinned
    else:  # the recommended format again, now with advice
        chosen = rec.best.quant_id if rec.best else rec.ladder[-1].quant_id
        result = fit(model, machine, replace(req, quant=chosen), catalog, live=live, split=split)
    rung = Rung(display_quant(result.estimate.quant_name), req.quant, result, where_of(result))
    commands = commands_for(rec, machine, catalog, live=live, rung=rung)
    if args.measured is not None:
        from rigcheck.core.estimate.measured import apply_measured, load_llama_bench

        result = apply_measured(result, load_llama_bench(args.measured), machine, str(args.measured))
    if args.json:
        _emit_json(recommendation_json(rec, commands, result=result, pinned=pinned is not None), out)
    else:
        text = recommendation_text(rec, commands, pinned=pinned)
        out.write(text + "\n\n" + fit_text(result, machine) + "\n")
    if args.check and result.verdict == "does_not_fit":
        return EXIT_DOES_NOT_RUN
    return EXIT_OK


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


MONITOR_MIN_INTERVAL_S = 0.1


def _monitor_interval(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not MONITOR_MIN_INTERVAL_S <= value < 10**6:
        raise argparse.ArgumentTypeError(f"must be at least {MONITOR_MIN_INTERVAL_S} seconds, got {text}")
    return value


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


def _emit_json(data: object, out: TextIO) -> None:
    # allow_nan=False: NaN/Infinity are not JSON; a non-finite number (none should reach here) is null
    out.write(json.dumps(_finite(data), indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def _finite(data: object) -> object:
    """``data`` with every NaN or infinite float replaced by None (JSON null)."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {key: _finite(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [_finite(value) for value in data]
    return data


def _window_size(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"(\d{3,5})[xX](\d{3,5})", text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"not a size like 1024x700: {text!r}")
    return int(match.group(1)), int(match.group(2))


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
    try:
        return gui_main(
            [],
            machine=getattr(args, "machine", None),
            page=getattr(args, "page", None),
            screenshot=getattr(args, "screenshot", None),
            size=getattr(args, "size", None),
            debug=bool(getattr(args, "debug", False)),
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _emit(text: str, output: Path | None, out: TextIO) -> None:
    if output is None:
        out.write(text)
        return
    from rigcheck.core.fileio import write_output
    from rigcheck.core.text import terminal_safe

    try:
        write_output(output, terminal_safe(text))
    except OSError as exc:
        raise InputError(str(output), f"cannot write ({exc.strerror or exc})") from None


# -- entry point ---------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    from rigcheck.core.text import one_line

    return one_line(text)


def _fail(message: str, code: int) -> int:
    from rigcheck.core.text import one_line

    sys.stderr.write(f"rigcheck: error: {one_line(message)}\n")
    return code


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from rigcheck.core.text import SafeStream

    out = SafeStream(out or sys.stdout)  # untrusted strings never reach the terminal raw
    debug = "--debug" in argv
    if debug:
        from rigcheck.core.models import hub

        hub.SHOW_LIBRARY_LOG = True  # the hub library's own retry warnings, hidden otherwise
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
