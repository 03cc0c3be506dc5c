"""The command that runs a recommendation: llama.cpp, Ollama, vLLM, ktransformers, and transformers/PEFT for
training.

Every flag comes from the placement ``fit`` worked out, never from a template with guesses: llama.cpp's
``-ngl`` is the layers placed on the GPUs (all of them and the output: 999, which llama.cpp caps), its
``--n-cpu-moe`` the layers whose experts stay in RAM, ``--tensor-split`` each GPU's share, ``-c`` the
context (times the parallel sequences, which share it); Ollama's ``num_gpu`` is the same layer count and
``num_ctx`` the context; vLLM's ``--tensor-parallel-size`` is the GPUs it uses, ``--max-model-len`` the
context, ``--cpu-offload-gb`` what ``fit`` put in RAM. Model names come from the catalog (the Hugging Face
repository, its GGUF repositories); a model without one gets a placeholder path the user fills in.

Flag references: llama.cpp tools/server/README.md (``-hf repo:quant``, ``-ngl``, ``--n-cpu-moe``,
``-c``, ``-fa on``, ``-ctk/-ctv``, ``-np``, ``-ts``, ``-sm``); Ollama docs/modelfile.md (``num_ctx``,
``num_gpu``: layers sent to the GPUs) and docs/import.md (``hf.co/{repo}:{quant}``); vLLM ``vllm serve``
engine arguments; TRL ``trl sft`` (its CLI over SFTTrainer, PEFT's LoRA and bitsandbytes 4-bit loading).

Asked for MTP speculative decoding (``--speculative mtp``, whose draft weights the estimate counted), each
engine's own switch is added with its smallest draft, one token: vLLM ``--speculative-config
'{"method":"mtp","num_speculative_tokens":1}'`` (https://docs.vllm.ai/en/stable/features/speculative_decoding/mtp/),
SGLang ``--speculative-algorithm EAGLE --speculative-num-steps 1 --speculative-eagle-topk 1
--speculative-num-draft-tokens 2`` ("the minimum configuration", sgl-project/sglang
docs/basic_usage/deepseek.md, "Multi-token Prediction"; the MiMo example of https://docs.sglang.io/docs/advanced_features/speculative_decoding),
llama.cpp ``--spec-type draft-mtp`` (ggml-org/llama.cpp PR #22673, merged 2026-05-16).
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from rigcheck.core.catalog import Catalog, ModelSpec
from rigcheck.core.errors import InputError
from rigcheck.core.estimate.exllamav3 import cache_tokens
from rigcheck.core.estimate.fit import FitResult
from rigcheck.core.estimate.memory import GIB
from rigcheck.core.estimate.mlx import mlx_repo
from rigcheck.core.estimate.recommend import Recommendation, Rung, display_quant
from rigcheck.core.estimate.training_commands import training_commands
from rigcheck.core.estimate.ud_names import file_tag, gguf_repo, needs_qat_repository
from rigcheck.core.machine import Machine
from rigcheck.core.models.hub_gguf import split_gguf_id
from rigcheck.core.models.spec import ModelInfo
from rigcheck.core.said import Joined, Text, render, say

#: vLLM's default share of each GPU's memory (--gpu-memory-utilization, placement.budget.VLLM_GPU_UTILIZATION)
VLLM_UTILIZATION = 0.9
#: llama.cpp: an -ngl above the layer count offloads every layer and the output layer
ALL_LAYERS = 999


@dataclass(frozen=True)
class Commands:
    #: engine -> the command line ("llama.cpp", "ollama", "vllm", "sglang", "mlx", "transformers"), a
    #: comment in it as said: :attr:`commands` in words
    commands_said: dict[str, Text]
    #: bytes to download for the recommended format (the weight files)
    download_bytes: int | None
    #: engine -> why there is no command for it here, as said: :attr:`notes` in words
    notes_said: dict[str, Text]

    @property
    def commands(self) -> dict[str, str]:
        return {engine: render(command) for engine, command in self.commands_said.items()}

    @property
    def notes(self) -> dict[str, str]:
        return {engine: render(note) for engine, note in self.notes_said.items()}


def _q(text: str) -> str:
    return shlex.quote(text)


def _gguf_source(rung: Rung, catalog: Catalog) -> tuple[str, str]:
    """(llama.cpp model flag, Ollama model name) for a GGUF rung."""
    model = rung.result.estimate.model
    own = _own_gguf(model)
    if own is not None:
        return own
    spec = catalog.model(model.id)
    tag = display_quant(rung.quant).split()[0]
    quant = rung.result.estimate.quant
    if (
        quant is not None
        and quant.id == "mxfp4"
        and spec
        and spec.gguf_repos
        and spec.native_format == "mxfp4"
    ):
        tag = ""  # the released-format GGUF has a single file (ggml-org's gpt-oss repositories)
    shown = tag
    if quant is not None and tag:
        tag = file_tag(quant.id, tag)  # a QAT format's file is named as its repository names it
    held = gguf_repo(quant.id, spec.gguf_repos) if quant is not None and spec is not None else None
    if quant is not None and needs_qat_repository(quant.id) and held is None:
        # no QAT repository listed: the tag in another repository is the ordinary UD file, not this one
        path = f"./{model.id}-{shown}.gguf"
        return f"-m {_q(path)}", path
    if spec is not None and spec.gguf_repos:
        # a UD or QAT file is in Unsloth's repository where the catalog lists one (core/estimate/ud_names.py)
        repo = held or spec.gguf_repos[0]
        ref = f"{repo}:{tag}" if tag else repo
        return f"-hf {_q(ref)}", f"hf.co/{ref}"
    path = f"./{model.id}-{tag or 'model'}.gguf"
    return f"-m {_q(path)}", path


def _own_gguf(model: ModelInfo) -> tuple[str, str] | None:
    """The flag and Ollama source of a GGUF the user pointed at: a file on disk, or one read from the hub."""
    if model.weights is not None and model.source_kind == "file":
        return f"-m {_q(model.source)}", model.source
    return _hub_gguf(model)


def has_gguf_source(rung: Rung, catalog: Catalog) -> bool:
    """Whether llama.cpp can be pointed at a real GGUF for this rung: its own file or hub GGUF, or a
    catalog entry naming a repository that publishes GGUF files."""
    model = rung.result.estimate.model
    spec = catalog.model(model.id)
    # a model read from its own files keeps the file-name placeholder: the user has the weights at hand
    return spec is None or bool(spec.gguf_repos) or _own_gguf(model) is not None


def no_gguf_note(rung: Rung, catalog: Catalog) -> str:
    """What to do when no published GGUF of a catalog model is known (no made-up file name)."""
    spec = catalog.model(rung.result.estimate.model.id)
    origin = spec.hf_id if spec is not None else "its checkpoint"
    tag = display_quant(rung.quant).split()[0]
    return (
        "no published GGUF of this model is known; llama.cpp's convert_hf_to_gguf.py makes one from "
        f"{origin} (then llama-quantize … {tag}) where llama.cpp supports its architecture"
    )


def _hub_gguf(model: ModelInfo) -> tuple[str, str] | None:
    """The llama.cpp flag and Ollama source for a GGUF model read from the hub (``org/name:TAG``,
    ``org/name`` or ``org/name/path/file.gguf``, as hub_gguf reads them): llama.cpp picks the same file
    from the same id by the same rule (``-hf``), or is given the file (``--hf-repo``/``--hf-file``);
    Ollama's ``hf.co/org/name:TAG`` takes a tag, so a named file is given to it as the downloaded file."""
    weights = model.weights
    if not model.source.startswith("hf:") or weights is None or not weights.files:
        return None
    if not all(name.lower().endswith(".gguf") for name in weights.files):
        return None
    try:
        ref = split_gguf_id(model.id)
    except InputError:
        return None
    if ref is None:  # a repository of GGUF files only, by llama.cpp's default tag
        return f"-hf {_q(model.id)}", f"hf.co/{model.id}"
    if ref.tag is not None:
        text = f"{ref.repo}:{ref.tag}"
        return f"-hf {_q(text)}", f"hf.co/{text}"
    # a split model is named by its first part (llama.cpp fetches the others); the parts' names are
    # file names, in the folder of the file given
    file = ref.file or weights.files[0]
    if len(weights.files) > 1:
        folder = str(Path(file).parent)
        file = weights.files[0] if folder in ("", ".") else f"{folder}/{weights.files[0]}"
    return f"--hf-repo {_q(ref.repo)} --hf-file {_q(file)}", f"./{Path(file).name}"


def llama_cpp_command(rung: Rung, catalog: Catalog) -> str:
    result = rung.result
    est, p = result.estimate, result.placement
    model_flag, _ = _gguf_source(rung, catalog)
    used = [i for i, b in enumerate(p.gpu_bytes) if b]
    if not used:
        ngl = 0
    elif p.gpu_layers >= p.total_layers:
        ngl = ALL_LAYERS
    else:
        ngl = p.gpu_layers
    parts = ["llama-server", model_flag, f"-ngl {ngl}"]
    if p.offload == "experts" and p.cpu_expert_layers:
        parts.append(f"--n-cpu-moe {p.cpu_expert_layers}")
    if len(used) > 1:
        if p.split == "tensor":
            parts.append("-sm row")
        total = sum(p.gpu_bytes)
        shares = [round(b / total * 100) for b in p.gpu_bytes]
        parts.append("-ts " + ",".join(str(s) for s in shares))
    elif len(used) == 1 and len(p.gpu_bytes) > 1:
        parts.append(f"-mg {used[0]} -sm none")
    parts.append(f"-c {est.context * est.batch}")
    if est.batch > 1:
        parts.append(f"-np {est.batch}")
    if est.threads:
        parts.append(f"-t {est.threads}")
    parts.append("-fa on")
    if est.kv_type not in ("f16",):
        parts.append(f"-ctk {est.kv_type} -ctv {est.kv_type}")
    if est.speculative == "mtp":
        parts.append(LLAMA_CPP_MTP)
    return " ".join(parts)


def ktransformers_command(rung: Rung, machine: Machine, catalog: Catalog) -> str:
    """ktransformers' local chat as its tutorial runs it (kvcache-ai/ktransformers
    doc/en/DeepseekR1_V3_tutorial.md@034a116, "V0.3 Showcase": ``python -m ktransformers.local_chat
    --model_path <your model path> --gguf_path <your gguf path> --cpu_infer 65``): the Hugging Face repository
    for the configuration, the directory holding the GGUF files ("notice it's the dir path"), and the CPU
    cores its expert kernels use ("adjust it slightly lower to your actual number of cores")."""
    est = rung.result.estimate
    spec = catalog.model(est.model.id)
    repo = spec.hf_id if spec else est.model.source
    if est.model.weights is not None and est.model.source_kind == "file":
        gguf_dir = str(Path(est.model.source).parent)
    else:
        gguf_dir = f"./{est.model.id}-{display_quant(rung.quant).split()[0]}/"
    parts = ["python -m ktransformers.local_chat", f"--model_path {_q(repo)}", f"--gguf_path {_q(gguf_dir)}"]
    cores = machine.cpu.physical_cores
    if cores:
        parts.append(f"--cpu_infer {cores}")
    return " ".join(parts)


def _ollama_name(text: str) -> str:
    """An Ollama model name: lower case letters, digits, '.', '_' and '-'."""
    name = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-.")
    return name or "model"


def ollama_library_tag(spec: ModelSpec | None) -> str | None:
    """The catalog's plain Ollama library tag for the model (``qwen3.6:27b``), not a variant built for another
    engine or format (``…-mlx``, ``…-q8``, ``…-nvfp4``); None when it lists none."""
    plain = re.compile(r"^[a-z0-9][a-z0-9._-]*(:[0-9.]+[bm]|:latest)?$")
    return next((t for t in (spec.ollama if spec else ()) if plain.match(t)), None)


def ollama_command(rung: Rung, catalog: Catalog) -> str | None:
    """Ollama offloads whole layers only: None for an expert-offload placement."""
    result = rung.result
    est, p = result.estimate, result.placement
    if p.offload == "experts":
        return None
    _, source = _gguf_source(rung, catalog)
    used = any(p.gpu_bytes)
    layers = 0 if not used else (p.total_layers + 1 if p.gpu_layers >= p.total_layers else p.gpu_layers)
    quant = display_quant(rung.quant)
    # a file's own name often ends in its format already ("tiny-qwen3-q8_0"): not "-q8_0-q8_0"
    named = est.model.id.lower().endswith(quant.lower())
    name = _ollama_name(est.model.id if named else f"{est.model.id}-{quant}")
    modelfile = r"FROM %s\nPARAMETER num_ctx %d\nPARAMETER num_gpu %d\n"
    return (
        f"printf '{modelfile}' {_q(source)} {est.context} {layers} > Modelfile && "
        f"ollama create {name} -f Modelfile && ollama run {name}"
    )


#: each engine's switch for MTP speculative decoding with a one-token draft (sources: the module's docstring)
LLAMA_CPP_MTP = "--spec-type draft-mtp"
VLLM_MTP = "--speculative-config " + _q('{"method":"mtp","num_speculative_tokens":1}')
SGLANG_MTP = (
    "--speculative-algorithm EAGLE --speculative-num-steps 1 --speculative-eagle-topk 1 "
    "--speculative-num-draft-tokens 2"
)

_VLLM_QUANT = {"fp8-e4m3": "fp8", "awq-4bit-g128": "awq", "gptq-4bit-g128": "gptq"}


def vllm_command(result: FitResult, catalog: Catalog) -> str:
    est, p = result.estimate, result.placement
    spec = catalog.model(est.model.id)
    repo = spec.hf_id if spec else est.model.source
    used = sum(1 for b in p.gpu_bytes if b)
    parts = ["vllm serve", _q(repo), f"--max-model-len {est.context}"]
    parts.append(f"--gpu-memory-utilization {VLLM_UTILIZATION:.2f}")
    if used > 1:
        parts.append(f"--tensor-parallel-size {used}")
    if p.cpu_bytes:
        parts.append(f"--cpu-offload-gb {math.ceil(p.cpu_bytes / GIB)}")
    quant = est.quant.id if est.quant else None
    if quant in _VLLM_QUANT and not (spec and spec.native_format == quant):
        parts.append(f"--quantization {_VLLM_QUANT[quant]}")
    if est.batch > 1:
        parts.append(f"--max-num-seqs {est.batch}")
    if est.kv_type.startswith("fp8"):
        parts.append("--kv-cache-dtype fp8")
    if est.speculative == "mtp":
        parts.append(VLLM_MTP)
    return " ".join(parts)


def sglang_command(result: FitResult, catalog: Catalog) -> str:
    """SGLang's server (python -m sglang.launch_server): the checkpoint, the context, the GPUs it shards
    over (--tp), FP8 quantization at load, and the parallel requests."""
    est, p = result.estimate, result.placement
    spec = catalog.model(est.model.id)
    repo = spec.hf_id if spec else est.model.source
    used = sum(1 for b in p.gpu_bytes if b)
    parts = ["python -m sglang.launch_server", "--model-path", _q(repo), f"--context-length {est.context}"]
    if used > 1:
        parts.append(f"--tp {used}")
    quant = est.quant.id if est.quant else None
    if quant == "fp8-e4m3" and not (spec and spec.native_format == quant):
        parts.append("--quantization fp8")
    if est.batch > 1:
        parts.append(f"--max-running-requests {est.batch}")
    if est.speculative == "mtp":
        parts.append(SGLANG_MTP)
    return " ".join(parts)


def mlx_command(result: FitResult, catalog: Catalog) -> str:
    """mlx-lm's OpenAI-compatible server on the catalog's MLX conversion for this format; without one,
    mlx_lm.convert quantizes the Hugging Face checkpoint first (-q --q-bits N, group 64)."""
    est = result.estimate
    spec = catalog.model(est.model.id)
    quant = est.quant.id if est.quant else None
    repo = mlx_repo(spec.mlx_repos, quant) if spec else None
    if repo is not None:
        return f"mlx_lm.server --model {_q(repo)}"
    source = spec.hf_id if spec else est.model.source
    if quant is not None and quant.startswith("mlx-"):
        bits = quant.removeprefix("mlx-").removesuffix("bit")
        out = _q(f"./{est.model.id}-{bits}bit-mlx")
        return (
            f"mlx_lm.convert --hf-path {_q(source)} -q --q-bits {bits} --mlx-path {out} && "
            f"mlx_lm.server --model {out}"
        )
    return f"mlx_lm.server --model {_q(source)}"


def exllamav3_command(result: FitResult, catalog: Catalog) -> str:
    """ExLlamaV3's own route: download the checkpoint (hf download), quantize it to the EXL3 width
    (convert.py -b), and chat with it (examples/chat.py, cache -cs in whole 256-token pages)."""
    est = result.estimate
    spec = catalog.model(est.model.id)
    source = spec.hf_id if spec else est.model.source
    bpw = est.quant.id.removeprefix("exl3-").removesuffix("bpw") if est.quant else "4.0"
    local = _q(f"./{est.model.id}")
    out = _q(f"./{est.model.id}-exl3-{bpw}bpw")
    cache = cache_tokens(est.context, est.batch)
    parts = [
        f"hf download {_q(source)} --local-dir {local} &&",
        f"python convert.py -i {local} -o {out} -w ./exl3-work -b {bpw} &&",
        f"python examples/chat.py -m {out} -mode raw -cs {cache}",
    ]
    if sum(1 for b in result.placement.gpu_bytes if b) > 1:
        parts.append("-gs auto")
    return " ".join(parts)


def commands_for(
    rec: Recommendation, machine: Machine, catalog: Catalog, *, live: bool = False, rung: Rung | None = None
) -> Commands:
    """The command for each engine that can run the recommendation (or ``rung``) on ``machine``."""
    out: dict[str, Text] = {}
    notes: dict[str, Text] = {}
    best = rung if rung is not None else rec.best
    if best is not None and not best.runs:
        best = None
    if best is None:
        return Commands({}, None, {"all": "nothing runs on this machine"})
    result = best.result
    est = result.estimate
    download = est.total("weights") if est.workload == "inference" else None
    if est.workload != "inference":
        stack_commands, stack_notes = training_commands(result, catalog)
        return Commands(dict(stack_commands), None, dict(stack_notes))
    gguf = est.quant is None or est.quant.kind in ("gguf", "mx") or est.quant.id in ("bf16", "fp16")
    if rec.engine == "ktransformers" and result.placement.offload == "experts":
        out["ktransformers"] = ktransformers_command(best, machine, catalog)
    if rec.engine in ("llama.cpp", "ollama") and gguf and not has_gguf_source(best, catalog):
        # a placeholder file is no command: say where the GGUF would come from instead
        notes["llama.cpp"] = no_gguf_note(best, catalog)
        tag = ollama_library_tag(catalog.model(est.model.id))
        if tag:
            # Ollama's library has its own build of the model: a command that downloads and runs it
            out["ollama"] = Joined(
                "  # ",
                (f"ollama run {_q(tag)}", say("Ollama's library build: its format and context are Ollama's")),
            )
        else:
            notes["ollama"] = say("Ollama runs GGUF files: the same as for llama.cpp")
    elif rec.engine in ("llama.cpp", "ollama") and gguf:
        out["llama.cpp"] = llama_cpp_command(best, catalog)
        if est.speculative == "mtp" and not (est.model.source_kind == "file" and est.model.arch.mtp_params):
            # many GGUF conversions drop the MTP layers; --spec-type draft-mtp then fails at load
            keeps = say("needs a GGUF that keeps the MTP layers (nextn_predict_layers)")
            out["llama.cpp"] = Joined("  # ", (out["llama.cpp"], keeps))
        ollama = ollama_command(best, catalog)
        if ollama:
            out["ollama"] = ollama
        else:
            notes["ollama"] = "Ollama offloads whole layers, not experts: use llama.cpp's --n-cpu-moe"
    if rec.engine == "sglang" and machine.gpus:
        out["sglang"] = sglang_command(result, catalog)
    if rec.engine == "exllamav3" and est.quant is not None and est.quant.id.startswith("exl3-"):
        out["exllamav3"] = exllamav3_command(result, catalog)
        download = None  # the 16-bit checkpoint convert.py reads, not the EXL3 size
    if rec.engine == "mlx":
        out["mlx"] = mlx_command(result, catalog)
    weights = rec.model.weights
    if weights is not None and any(f.lower().endswith(".gguf") for f in weights.files):
        notes["vllm"] = "vLLM serves Hugging Face checkpoints; its GGUF loading is experimental"
    elif not any(machine.gpus):
        notes["vllm"] = say("vLLM needs a GPU")
    else:
        vllm = _vllm_fit(rec, machine, catalog, live=live, asked=rung)
        if vllm is None:
            notes["vllm"] = "no format vLLM serves fits this machine"
        else:
            out["vllm"] = vllm_command(vllm, catalog)
    shown, why = _printable(out, notes)
    return Commands(shown, download, why)


def _printable(out: dict[str, Text], notes: dict[str, Text]) -> tuple[dict[str, Text], dict[str, Text]]:
    """A command with a control character in it (a path from disk) is not printed to a terminal (only
    its command part is checked: a said comment is the program's own words)."""
    for engine, command in list(out.items()):
        line = command.parts[0] if isinstance(command, Joined) else command
        if not str(line).isprintable():
            del out[engine]
            notes[engine] = "a path or name holds control characters: not shown as a command"
    return out, notes


def _vllm_fit(
    rec: Recommendation, machine: Machine, catalog: Catalog, *, live: bool, asked: Rung | None = None
) -> FitResult | None:
    """The recommendation's model under vLLM: the format asked for (``asked``, a format the user chose)
    where vLLM serves it and it runs, else vLLM's own rule over its formats."""
    if rec.engine == "vllm" and asked is not None and asked.runs:
        return asked.result
    if rec.engine == "vllm" and rec.best is not None:
        return rec.best.result
    from rigcheck.core.estimate.recommend import recommend

    vllm = recommend(
        rec.model, machine, "inference", catalog, context=rec.context, engine="vllm", prefer=rec.prefer,
        live=live, request=rec.request, rope_scaling=True,
    )  # fmt: skip
    wanted = asked.result.estimate.quant.id if asked is not None and asked.result.estimate.quant else None
    for rung in vllm.ladder:
        quant = rung.result.estimate.quant
        if rung.runs and quant is not None and quant.id == wanted:
            return rung.result
    return vllm.best.result if vllm.best is not None else None


def commands_json(commands: Commands) -> dict[str, object]:
    return {
        "commands": dict(commands.commands),
        "download_bytes": commands.download_bytes,
        "command_notes": dict(commands.notes),
    }
