"""The parser's pieces: the one-line-error parser, the options several subcommands share, and the
types that check a flag's value (each a one-line usage error when wrong)."""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from rigcheck.cli.conventions import UsageError

if TYPE_CHECKING:
    from rigcheck.core.estimate.placement.types import Split


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


def _engine_build(text: str) -> int | None:
    """``--engine-build``: a llama.cpp release tag (b6096, or 6096), or ``unknown`` for a current build."""
    from rigcheck.core.engine_builds import parse_build

    try:
        return parse_build(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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
        help="weight format: bf16, fp8, int8, nf4, gptq-4bit, awq-4bit, mxfp4, Q4_K_M, … ; Unsloth Dynamic "
        "UD-<GGUF type> (UD-Q4_K_XL, UD-Q4_K_M, UD-IQ2_M, …; one without a known layout is sized as its "
        "base type, noted); a QAT release (Gemma's quantization-aware-trained Q4_0 files): UD-Q4_K_XL-QAT "
        "for Unsloth's (every tensor Q4_0), Q4_0-QAT or qat for Google's (embedding Q8_0); a .gguf file or "
        "hub GGUF is sized from its header without --quant, or when Q is its file type or a UD/QAT name over "
        "it "
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
        help="all (PEFT's all-linear: every linear layer but the head, Gated DeltaNet and MLA "
        "projections included), attention, mlp, or module names such as q,v, q,k,v,o,gate,up,down or "
        "in_proj_qkvz,out_proj, matched in each layer as PEFT matches them (default: the framework's)",
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
    train.add_argument(
        "--linear-kernels",
        choices=("fla", "torch"),
        default="fla",
        help="Gated DeltaNet kernels of a hybrid model (Qwen3.5, Qwen3-Next): fla (flash-linear-attention "
        "installed, transformers' fast path) or torch (without it: transformers' pure-torch fallback, "
        "slower and holding more GPU memory; default fla)",
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


MONITOR_MIN_INTERVAL_S = 0.1


def _monitor_interval(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not MONITOR_MIN_INTERVAL_S <= value < 10**6:
        raise argparse.ArgumentTypeError(f"must be at least {MONITOR_MIN_INTERVAL_S} seconds, got {text}")
    return value


def _window_size(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"(\d{3,5})[xX](\d{3,5})", text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"not a size like 1024x700: {text!r}")
    return int(match.group(1)), int(match.group(2))
